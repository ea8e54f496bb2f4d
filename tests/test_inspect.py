"""`trace-explorer inspect`: the published aggregates of LLMPerf and AIPerf are reproduced, bad
input gives clear messages naming the file / line / field, good files still report, exit codes,
no traceback, inputs unchanged."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.__main__ import main
from explorer.core.store import sha256_of


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["inspect", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def llmperf_doc(real):
    """One `inspect --json` over every LLMPerf individual file (module scoped: it runs once)."""
    import contextlib
    import io
    files = sorted((real / "llmperf_leaderboard" / "individual").glob("*.json"))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["inspect", "--json", *map(str, files)])
    return code, files, json.loads(buf.getvalue())


def test_llmperf_ttft_mean_equals_published_summary(llmperf_doc, real):
    code, files, doc = llmperf_doc
    assert code == 0 and len(doc["files"]) == len(files) == 19
    for f, entry in zip(files, doc["files"]):
        summary = json.loads((real / "llmperf_leaderboard" / "summary" / f.name).read_text())
        assert entry["path"] == str(f) and entry["format"] == "llmperf"
        ttft = entry["metrics"]["ttft_ms"]
        assert abs(ttft["mean"] / (1000 * summary["results_ttft_s_mean"]) - 1) < 1e-6, f.name
        assert ttft["n"] == summary["results_num_completed_requests"], f.name
        e2e = entry["metrics"]["e2e_ms"]
        assert abs(e2e["mean"] / (1000 * summary["results_end_to_end_latency_s_mean"]) - 1) < 1e-6


def test_llmperf_json_document_shape(llmperf_doc):
    _, _, doc = llmperf_doc
    entry = doc["files"][0]
    for key in ("path", "format", "runs", "rows_loaded", "rows_skipped", "skipped_reasons",
                "columns", "metrics"):
        assert key in entry
    assert entry["columns"]["ttft_s"] == "ttft_ms (x1000)"
    assert set(entry["metrics"]["ttft_ms"]) == {"n", "mean", "p50", "p90", "p99"}


def test_aiperf_means_equal_profile_export_aiperf_json(real, capsys):
    code, out, _ = run_cli(capsys, "--json", real / "aiperf_example/profile_export.jsonl")
    assert code == 0
    m = json.loads(out)["files"][0]["metrics"]
    ref = json.loads((real / "aiperf_example/profile_export_aiperf.json").read_text())["records"]
    for ours, theirs in (("ttft_ms", "ttft"), ("tpot_ms", "inter_token_latency"),
                         ("e2e_ms", "request_latency")):
        assert ref[theirs]["unit"] == "ms"
        assert m[ours]["mean"] == pytest.approx(ref[theirs]["avg"], rel=1e-9), ours
        assert m[ours]["n"] == ref[theirs]["count"]
        for p in ("p50", "p90", "p99"):
            assert m[ours][p] == pytest.approx(ref[theirs][p], rel=1e-9), (ours, p)



def test_aiperf_token_statistics_are_recomputed_beside_the_published(real, capsys):
    """AIPerf publishes every statistic of input / output_sequence_length: inspect recomputes
    each from the requests (89 successful), as numpy over the per-request file's own values."""
    import numpy as np
    code, out, _ = run_cli(capsys, "--json", real / "aiperf_example/profile_export.jsonl")
    assert code == 0
    rec = {(r["metric"], r["stat"]): r for r in
           json.loads(out)["files"][0]["run_details"][0]["recomputed"]}
    ref = json.loads((real / "aiperf_example/profile_export_aiperf.json").read_text())["records"]
    lines = [json.loads(ln) for ln in
             (real / "aiperf_example/profile_export.jsonl").read_text().splitlines() if ln.strip()]
    for ours, theirs in (("prompt_tokens", "input_sequence_length"),
                         ("completion_tokens", "output_sequence_length")):
        own = np.array([r["metrics"][theirs]["value"] for r in lines if not r.get("error")], float)
        assert len(own) == 89
        for stat in ("avg", "min", "max", "std", "p1", "p5", "p25", "p50", "p75", "p90", "p99"):
            got = rec[(ours, "mean" if stat == "avg" else stat)]
            assert got["published"] == pytest.approx(ref[theirs][stat], rel=1e-9), (ours, stat)
            assert got["recomputed"] == pytest.approx(ref[theirs][stat], rel=1e-9, abs=1e-9), (
                ours, stat)
        assert rec[(ours, "mean")]["recomputed"] == pytest.approx(own.mean(), rel=1e-12)
        assert rec[(ours, "p5")]["recomputed"] == pytest.approx(np.percentile(own, 5), rel=1e-12)

@pytest.fixture
def bad_inputs(tmp_path):
    files = {
        "empty.json": b"",
        "truncated.json": b'[{"ttft_s": 0.5, "end_to_end_latency_s": 1.2, "number_input_tokens": 5,'
                          b' "number_output_tokens": 3, "error_code": null},\n {"ttft_s": 0.',
        "binary.bin": bytes(range(256)) * 32,
        "nocols.csv": b"colour,shape\nred,round\nblue,square\n",
        "wrongtypes.csv": b"request_id,ttft_ms,e2e_ms\na,12.5,100\nb,fast,200\nc,13.0,\n",
        "allwrong.jsonl": b'{"timestamp": "soon", "input_length": 5, "output_length": 2, "hash_ids": [1]}\n',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path, files


def test_bad_inputs_give_clear_messages(bad_inputs, capsys):
    d, files = bad_inputs
    before = {n: sha256_of(d / n) for n in files}
    code, out, err = run_cli(capsys, "--json", *(d / n for n in files))
    assert code == 1
    assert "Traceback" not in out + err
    entries = {Path(e["path"]).name: e for e in json.loads(out)["files"]}
    msg = {n: entries[n]["error"] or "" for n in files}
    assert "empty.json" in msg["empty.json"] and "empty" in msg["empty.json"].split(":", 1)[1]
    assert "truncated.json:2" in msg["truncated.json"] and "invalid JSON" in msg["truncated.json"]
    assert "binary.bin" in msg["binary.bin"] and "binary" in msg["binary.bin"]
    assert "nocols.csv" in msg["nocols.csv"] and "no usable column" in msg["nocols.csv"]
    assert "allwrong.jsonl" in msg["allwrong.jsonl"] and "line 1" in msg["allwrong.jsonl"] \
        and "timestamp" in msg["allwrong.jsonl"]
    # wrong types in some rows: the file loads, the bad row is skipped with line and field
    w = entries["wrongtypes.csv"]
    assert w["error"] is None and w["rows_loaded"] == 2 and w["rows_skipped"] == 1
    assert w["skipped_reasons"] == ["line 3: field 'ttft_ms': not a number: 'fast'"]
    assert {n: sha256_of(d / n) for n in files} == before  # inputs unchanged


def test_good_file_still_reported_next_to_a_bad_one(real, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"ttfts": [0.1, 0.2], "itls": [[0.01]], ')
    good = real / "llmperf_leaderboard/individual/groq_70b.json"
    code, out, err = run_cli(capsys, good, bad)
    assert code == 1 and "Traceback" not in out + err
    assert str(good) in out and "llmperf" in out and "ttft_ms" in out
    assert "FAILED" in out and str(bad) in err and "1 failed" in out


def test_text_output_lists_mapping_and_skips(real, capsys):
    code, out, _ = run_cli(capsys, real / "sglang_bench_one_batch/result_bs1_128.jsonl")
    assert code == 0
    assert "format: sglang" in out and "32 loaded, 2 skipped" in out
    assert "line 1: text line 'torch:'" in out
    assert "median_decode_latency -> tpot_ms (x1000)" in out


def test_missing_file_exit_code(tmp_path, capsys):
    code, out, err = run_cli(capsys, tmp_path / "nope.jsonl")
    assert code == 1 and "nope.jsonl" in err and "no such file" in err


def test_eval_files_list_evals_with_clusters_and_bound_counts(tmp_path, capsys):
    """An eval file next to its trace: the eval entry counts cases, correct answers and, per
    badcase cluster, how many badcases were bound to a request of the trace."""
    trace = tmp_path / "trace.csv"
    trace.write_text("request_id,ttft_ms,e2e_ms\n" +
                     "".join(f"req-{i},{10 + i},{100 + i}\n" for i in range(6)))
    rows = [("c1", "req-0", "true", ""), ("c2", "req-1", "false", "cache"),
            ("c3", "req-2", "false", "cache"), ("c4", "gone-9", "false", "cache"),
            ("c5", "req-4", "false", "sched"), ("c6", "", "true", "")]
    ev = tmp_path / "eval.csv"
    ev.write_text("case_id,request_id,correct,cluster\n" +
                  "".join(",".join(r) + "\n" for r in rows))
    code, out, _ = run_cli(capsys, "--json", trace, ev)
    assert code == 0
    entry = next(f for f in json.loads(out)["files"] if f["path"] == str(ev))
    [e] = entry["evals"]
    assert e["cases"] == 6 and e["correct"] == 2
    clusters = {c["name"]: (c["badcases"], c["bound"]) for c in e["clusters"]}
    trace_ids = {f"req-{i}" for i in range(6)}
    expect = {}
    for _, rid, ok, cl in rows:
        if ok == "false":
            b, n = expect.get(cl, (0, 0))
            expect[cl] = (b + 1, n + (rid in trace_ids))
    assert clusters == expect == {"cache": (3, 2), "sched": (1, 1)}


def test_folder_ignores_aggregate_files_and_lists_them(real, capsys):
    """AIPerf's own aggregate exports next to its per-request JSONL are listed as ignored with a
    reason, the folder does not fail, and the text output says so."""
    folder = real / "aiperf_example"
    code, out, err = run_cli(capsys, "--json", folder)
    assert code == 0, err
    doc = json.loads(out)
    assert [Path(f["path"]).name for f in doc["files"]] == ["profile_export.jsonl"]
    ign = {Path(g["path"]).name: g["reason"] for g in doc["ignored"]}
    assert set(ign) == {"profile_export_aiperf.csv", "profile_export_aiperf.json"}
    assert all("aggregate summary" in why for why in ign.values()), ign
    code, out, _ = run_cli(capsys, folder)
    assert code == 0 and "profile_export_aiperf.json:" in out and "2 ignored" in out
    # named on its own, the aggregates load as a run of published numbers (formats/published.py)
    code, out, err = run_cli(capsys, "--json", folder / "profile_export_aiperf.csv")
    assert code == 0, err
    pub = {(p["metric"], p["stat"]): p["value"]
           for p in json.loads(out)["files"][0]["run_details"][0]["published"]}
    assert pub[("ttft_ms", "p99")] == 3833.39 and pub[("requests", "failed")] == 11


def test_text_output_has_one_number_format(real, capsys):
    """Thousands separators, fixed decimals, units; never scientific notation."""
    import re
    import numpy as np
    code, out, _ = run_cli(capsys, real / "azure_llm_2023/AzureLLMInferenceTrace_code.csv")
    assert code == 0
    assert not re.search(r"\d[eE][+-]\d", out)
    import pandas as pd
    raw = pd.read_csv(real / "azure_llm_2023/AzureLLMInferenceTrace_code.csv")
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("prompt_tokens"))
    assert "tokens" in line and f"{len(raw):,}" in line
    assert f"{np.mean(raw['ContextTokens']):,.0f}" in line
    assert f"rows: {len(raw):,} loaded" in out


def test_a_folder_given_twice_is_loaded_once_and_not_called_a_failure(real, capsys):
    """The second copy of a folder is a duplicate (same content): listed as ignored with the
    reason, never reported as a folder without any trace or eval."""
    folder = real / "aiperf_example"
    code, out, err = run_cli(capsys, "--json", folder, folder)
    assert code == 0, err
    doc = json.loads(out)
    assert [Path(f["path"]).name for f in doc["files"]] == ["profile_export.jsonl"]
    assert any("already loaded" in g["reason"] for g in doc["ignored"])
    assert "no trace or eval file found" not in out + err


def test_report_cli_says_a_duplicate_was_ignored(real, tmp_path, capsys):
    f = real / "mmlu_pro_outputs" / "Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json"
    code = main(["report", str(f), str(f), "--out", str(tmp_path), "--format", "json",
                 "--no-whatif"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"ignored {f}: same content as {f}" in err
    assert "None, 0 rows" not in err
