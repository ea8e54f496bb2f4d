"""Eval files read from `[cases.*]` vocabulary entries (formats/_records.py): a new eval tool
with known fields is an entry, not a module (issue 29)."""
from __future__ import annotations

import json
import tomllib

import pandas as pd
import pytest

from explorer.core.formats import _vocab, all_formats, detect_format
from explorer.core.store import Store

JUDGE = '''
[cases.judge9000]
kind = "jsonl"
require = ["sample", "verdict", "judge"]
confidence = [0.9, 0.9]
bad_record = "not a judged sample"
correct = ["verdict"]
text = true
names = ['^(?P<model>.+?)_judged$']
fields = {local_id = ["sample", "line{line}"], request_id = ["trace.request_id"], model = ["@model"], benchmark = ["=judge9000"], category = ["topic", "judge"], prompt = ["q"], prediction = ["a"], timestamp_s = ["t_ms", 1000.0]}
extra = ["judge"]
empty = "no usable judged samples"
eval_id = ["judge9000:{model}", "judge9000:{stem}"]
benchmark = "judge9000"
columns = {verdict = "correct", "trace.request_id" = "request_id"}
'''


@pytest.fixture
def judge_entry(monkeypatch):
    entry = tomllib.loads(JUDGE)["cases"]
    monkeypatch.setitem(_vocab.VOCAB, "cases", {**_vocab.VOCAB.get("cases", {}), **entry})
    all_formats.cache_clear()
    yield
    monkeypatch.undo()
    all_formats.cache_clear()


def _write(tmp_path):
    recs = [{"sample": "s1", "verdict": "pass", "judge": "gpt", "topic": "math", "q": "1+1",
             "a": "2", "t_ms": 1_700_000_000_000, "trace": {"request_id": "r-1"}},
            {"sample": "s2", "verdict": "fail", "judge": "gpt", "q": "2+2", "a": "5",
             "trace": {"request_id": "r-2"}},
            {"sample": "s3", "verdict": "perhaps", "judge": "gpt"},
            {"verdict": True, "judge": "gpt", "topic": "code"}]
    p = tmp_path / "tiny-7b_judged.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return p, recs


def test_an_eval_tool_added_by_a_cases_entry_alone(tmp_path, judge_entry):
    """A made-up judge tool's per-sample verdicts load as one eval after one TOML entry: every
    case's correctness, ids, model (from the file name), category and time as the file says."""
    p, recs = _write(tmp_path)
    assert detect_format(p).NAME == "judge9000"
    store = Store()
    rep = store.load_file(p)
    assert rep.error is None and rep.kind == "eval"
    assert rep.eval_ids == ["judge9000:tiny-7b"]
    assert rep.skipped_reasons == ["line 3: field 'verdict': not a correctness value: 'perhaps'"]
    got = store.df("SELECT case_id, correct, request_id, model, benchmark, category, "
                   "timestamp_s, extra FROM cases ORDER BY case_id")
    # independent: the verdicts as the tool means them (pass / fail / a bool)
    want = pd.DataFrame({"case_id": ["judge9000:tiny-7b:line4", "judge9000:tiny-7b:s1",
                                     "judge9000:tiny-7b:s2"],
                         "correct": [True, True, False]})
    assert got.case_id.tolist() == want.case_id.tolist()
    assert got.correct.tolist() == want.correct.tolist()
    assert got.request_id.isna().tolist() == [True, False, False]
    assert got.request_id.tolist()[1:] == ["r-1", "r-2"]
    assert set(got.model) == {"tiny-7b"} and set(got.benchmark) == {"judge9000"}
    assert got.category.tolist() == ["code", "math", "gpt"]  # topic, else the judge
    assert got.timestamp_s.iloc[1] == pytest.approx(recs[0]["t_ms"] / 1000.0)
    assert json.loads(got.extra.iloc[1]) == {"judge": "gpt"}
    ev = store.df("SELECT model, benchmark, format FROM evals").iloc[0].tolist()
    assert ev == ["tiny-7b", "judge9000", "judge9000"]


def test_without_the_entry_the_file_is_not_that_tool(tmp_path):
    p, _ = _write(tmp_path)
    assert "judge9000" not in {m.NAME for m in all_formats()}
    rep = Store().load_file(p)
    assert rep.format != "judge9000"


def test_aiperf_accuracy_export_cases_bound_to_their_requests(tmp_path):
    """AIPerf's accuracy_export.jsonl (src/aiperf/accuracy/models.py AccuracyRecordsData, one
    line per graded response, profiling phase only) beside its profile_export_aiperf.json: the
    cases carry the requests' X-Request-IDs, the model and benchmark of the sidecar; a warmup
    record and an ungraded one are skipped with their line."""
    run = tmp_path / "run1"
    run.mkdir()
    rows = [dict(session_num=0, x_request_id="a1", benchmark_phase="profiling", task="gsm8k",
                 grader_name="math", passed=True, unparsed=False, expected="4", actual="4",
                 model_output="The answer is 4.", timestamp_ns=1_764_000_000_500_000_000),
            dict(session_num=1, x_request_id="a2", benchmark_phase="warmup", grader_name="math",
                 passed=False),
            dict(session_num=2, x_request_id="a3", benchmark_phase="profiling", task="gsm8k",
                 grader_name="math", passed=False, unparsed=True, expected="7", actual="9",
                 model_output="9"),
            dict(session_num=3, x_request_id="a4", benchmark_phase="profiling",
                 grader_name="math", passed=None)]
    f = run / "accuracy_export.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (run / "profile_export_aiperf.json").write_text(json.dumps({"input_config": {
        "endpoint": {"model_names": ["qwen-0.5b"]}, "accuracy": {"benchmark": "gsm8k"}}}))
    assert detect_format(f).NAME == "aiperf_accuracy"
    store = Store()
    rep = store.load_file(f)
    assert rep.eval_ids == ["aiperf:accuracy:run1"]
    assert rep.skipped_reasons == ["line 2: field 'benchmark_phase': not a profiling-phase record",
                                   "line 4: field 'passed': missing"]
    got = store.df("SELECT request_id, correct, model, benchmark, category, reference, "
                   "prediction, timestamp_s, extra FROM cases ORDER BY request_id")
    assert got.request_id.tolist() == ["a1", "a3"]
    assert got.correct.tolist() == [True, False]
    assert set(got.model) == {"qwen-0.5b"} and set(got.benchmark) == {"gsm8k"}
    assert got.reference.tolist() == ["4", "7"]
    assert got.timestamp_s.iloc[0] == pytest.approx(rows[0]["timestamp_ns"] / 1e9)
    assert json.loads(got.extra.iloc[1])["unparsed"] is True
