"""The core's text that reaches the window and the report besides the conclusion: a request
timeline's notes, phase notes and derived event details, the loaders' column-mapping notes and
skip reasons, counted messages (real plurals, not "(s)"). English stays as it was written;
zh_CN leaves no English phrase (tests/i18n_check.english_phrases)."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from explorer.core import i18n
from explorer.core import timeline as tl
from explorer.core.store import Store
from tests.conftest import REAL  # ../shared/data/real, beside the clone
from tests.i18n_check import english_phrases

RUN = "run-1"
ZH = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh():
    i18n.set_language("zh_CN")
    yield
    i18n.set_language("en")


@pytest.fixture
def timelines_store(store):
    """Requests whose timelines need every note: derived from the row (with 1 and with 2
    preemptions, without arrival_s, without a first-token time) and from events that lack
    scheduled / first-token / finish times or a 'resumed' event."""
    store.append("requests", pd.DataFrame([
        {"run_id": RUN, "request_id": "d2", "arrival_s": 5.0, "queue_ms": 40.0,
         "prefill_ms": 60.0, "e2e_ms": 1000.0, "num_preemptions": 2},
        {"run_id": RUN, "request_id": "d1", "ttft_ms": 250.0, "e2e_ms": 2250.0,
         "num_preemptions": 1},
        {"run_id": RUN, "request_id": "u", "e2e_ms": 500.0},
        {"run_id": RUN, "request_id": "ev", "arrival_s": 10.0, "queue_ms": 20.0,
         "ttft_ms": 50.0, "e2e_ms": 400.0},
        {"run_id": RUN, "request_id": "ev2", "arrival_s": 20.0}]))
    ev = [("ev", 10.0, "arrived"), ("ev", 10.1, "preempted"),
          ("ev2", 20.0, "arrived"), ("ev2", 20.1, "preempted")]
    store.append("request_events", pd.DataFrame(
        {"run_id": RUN, "request_id": [r for r, _, _ in ev], "ts_s": [t for _, t, _ in ev],
         "kind": [k for _, _, k in ev], "detail": None}))
    store.append("token_latencies", pd.DataFrame(
        {"run_id": RUN, "request_id": "ev2", "token_index": [1, 2], "itl_ms": [10.0, 12.0]}))
    return store


def _texts(store) -> dict[str, list[str]]:
    """request -> its notes, phase notes and derived event details, in order."""
    out = {}
    for rid in ("d2", "d1", "u", "ev", "ev2"):
        t = tl.request_timeline(store, RUN, rid, index=False)
        out[rid] = (list(t.notes) + [p.note for p in t.phases if p.note and p.kind != "preempted"]
                    + [p.note for p in t.preemptions if p.note]
                    + [e.detail for e in t.events if e.derived and e.detail])
    return out


ENGLISH = {
    "d2": ["derived from the requests row (no request_events): queue_ms, prefill_ms, e2e_ms",
           "no per-token latencies for this request",
           "2 preemptions recorded; their times are unknown (no request_events)"],
    "d1": ["derived from the requests row (no request_events): ttft_ms, e2e_ms",
           "no per-token latencies for this request",
           "no arrival_s: times are relative; the swimlane cannot place this request",
           "1 preemption recorded; its time is unknown (no request_events)",
           "queueing not separable: TTFT span"],
    "u": ["derived from the requests row (no request_events): e2e_ms",
          "no per-token latencies for this request",
          "no arrival_s: times are relative; the swimlane cannot place this request",
          "no first-token time: prefill and decode not separable, nor queueing"],
    "ev": ["scheduled time derived from queue_ms", "first token time derived from ttft_ms",
           "finish time derived from e2e_ms", "no per-token latencies for this request",
           "no 'resumed' event: ends at 'finished'",
           "from queue_ms", "from ttft_ms", "from e2e_ms"],
    "ev2": ["first token time unknown: token times start at arrival", "never resumed"],
}


def test_timeline_notes_read_as_before_in_english(timelines_store):
    assert _texts(timelines_store) == ENGLISH


def test_timeline_notes_are_chinese(timelines_store, zh):
    got = _texts(timelines_store)
    assert [len(v) for v in got.values()] == [len(v) for v in ENGLISH.values()]
    for rid, texts in got.items():
        for zh_text, en_text in zip(texts, ENGLISH[rid]):
            assert zh_text != en_text and ZH.search(zh_text), (rid, zh_text)
            assert not english_phrases(zh_text), zh_text
    assert "记录了 2 次抢占" in got["d2"][2] and "记录了 1 次抢占" in got["d1"][3]


def test_report_timeline_phases_and_stratified_tests_in_chinese(zh):
    from explorer.core import report
    t = {"request_id": "r", "run_id": RUN, "source": "events", "metrics": {},
         "preemptions": [{}], "gaps_above_p99": 0, "run_p99_itl_ms": None,
         "phases": [{"kind": k, "start_ms": 0.0, "duration_ms": 1.0}
                    for k in ("queued", "prefill", "preempted", "decode", "unsplit")]}
    text = report._md_timeline(t)
    assert [r.split("|")[1].strip() for r in text.splitlines() if r.startswith("| ")][1:] == [
        "排队", "prefill", "被抢占", "decode", "未拆分"]
    st = {"by": "engine_version", "strata": [{"stratum": "0.6.1", "n_bad": 3, "n_control": 4}],
          "rows": [{"metric": m, "stratum": "0.6.1", "n_bad": 3, "n_control": 4,
                    "bad_mean": 1.0, "control_mean": 0.5} for m in ("ttft_ms", "preempted")],
          "tests": [{"metric": "ttft_ms", "p_value": 0.01,
                     "test": "stratified permutation (labels permuted within strata)"},
                    {"metric": "preempted", "p_value": 0.02, "test": "cochran-mantel-haenszel"}],
          "warnings": []}
    text = report._md_strata(st)
    assert "分层置换检验" in text and "Cochran-Mantel-Haenszel 检验" in text
    assert not english_phrases(text), english_phrases(text)


def test_report_timeline_phases_and_tests_in_english():
    from explorer.core import report
    t = {"request_id": "r", "run_id": RUN, "source": "events", "metrics": {},
         "preemptions": [], "gaps_above_p99": 0, "run_p99_itl_ms": None,
         "phases": [{"kind": "queued", "start_ms": 0.0, "duration_ms": 1.0}]}
    assert "| queued | 0 | 1 |" in report._md_timeline(t)


def _load(path: Path):
    st = Store()
    try:
        return st.load_file(path)
    finally:
        st.close()


# column-mapping notes and skip reasons of real published files, as `inspect` shows them
REAL_FILES = {
    "azure_llm_2023/AzureLLMInferenceTrace_code.csv": "(row number)",
    "mooncake/synthetic_trace.jsonl": "(line number)",
    "aiperf_example/profile_export.jsonl": "ttft_ms (by unit)",
    "llmperf_leaderboard/individual/groq_70b.json": "(list position)",
    "aibrix/client_output.jsonl": "arrival_s (client clock)",
    "aibrix/autoscaling_apa_20250209/vllm_pod_rxgzd.log.txt": "ts_s (seconds since the first stat line)",
    "published/korean-doc-vllm-0.6-llama31-metrics.prom.txt": "(sample timestamp ms)",
    "published/lambdalabs-a100-llama31-8b-fp8-tp1-len2048.json": "(array position)",
}


@pytest.mark.parametrize("rel", sorted(REAL_FILES))
def test_column_mapping_notes(rel):
    path = REAL / rel
    if not path.exists():
        pytest.skip(f"{path} not present")
    en = _load(path).columns
    assert REAL_FILES[rel] in set(en) | set(en.values())
    i18n.set_language("zh_CN")
    try:
        zh = _load(path).columns
    finally:
        i18n.set_language("en")
    assert len(zh) == len(en) and list(zh.values())[0] and REAL_FILES[rel] not in set(zh) | set(zh.values())
    left = [f"{k} -> {v}" for k, v in zh.items() if english_phrases(f"{k} -> {v}")]
    assert not left, left
    assert any(ZH.search(f"{k}{v}") for k, v in zh.items())


def test_helm_skip_reason_and_errors_in_chinese(tmp_path, zh):
    import json
    src = REAL / "every_eval_ever/helm_mmlu_philosophy_gpt2"
    if not src.exists():
        pytest.skip(f"{src} not present")
    d = tmp_path / "helm_run"
    d.mkdir()
    for f in src.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    inst = json.loads((d / "per_instance_stats.json").read_text())
    inst[0]["stats"] = []  # no correctness stat: skipped with its reason
    (d / "per_instance_stats.json").write_text(json.dumps(inst))
    r = _load(d)
    assert r.rows_skipped == 1 and r.skipped_reasons
    assert "没有正确性统计" in r.skipped_reasons[0], r.skipped_reasons
    assert not english_phrases(r.skipped_reasons[0])
    (tmp_path / "x.bin").write_bytes(b"\x00\x01\x02" * 50)
    bad = _load(tmp_path / "x.bin")
    assert bad.error and "无法识别的文件" in bad.error


def test_counted_messages_use_real_plurals():
    from explorer.core.errors import ReportIncomplete
    one = ReportIncomplete("out", [("tree", "boom")], [], "log")
    two = ReportIncomplete("out", [("tree", "boom"), ("heatmap", "boom")], [], "log")
    assert "1 picture of the report could not be drawn and is missing" in str(one)
    assert "2 pictures of the report could not be drawn and are missing" in str(two)
    assert "(s)" not in str(one) + str(two)


def test_version_source_in_both_languages():
    """Where a run's engine version came from (inspect, the Runs panel, the report): the path
    rule and the user's override, English as before and Chinese in zh_CN."""
    from explorer.core import runs as runs_mod
    path = REAL / "published/vllm-19954-before-0.8.5.txt"
    if not path.exists():
        pytest.skip(f"{path} not present")

    def sources():
        st = Store()
        try:
            r = st.load_file(path)
            before = runs_mod.overview(st)[0]["version_source"]
            problems = runs_mod.apply_version_overrides(st, [(str(path), "0.8.6"),
                                                             ("/nonexistent", "1")])
            return before, runs_mod.overview(st)[0]["version_source"], problems, r
        finally:
            st.close()
    en = sources()
    assert en[:3] == ("path: file 'vllm-19954-before-0.8.5' (a version of three numbers)",
                      f"user: --engine-version {path}=0.8.6",
                      ["--engine-version /nonexistent=1: no loaded run comes from /nonexistent"])
    i18n.set_language("zh_CN")
    try:
        zh = sources()
    finally:
        i18n.set_language("en")
    assert zh[:3] == ("路径：文件 'vllm-19954-before-0.8.5'（三段数字的版本号）",
                      f"用户：--engine-version {path}=0.8.6",
                      ["--engine-version /nonexistent=1: 没有已加载的 run 来自 /nonexistent"])


def test_report_of_real_files_in_both_languages(tmp_path):
    """A report over a real HELM run, a vLLM engine log and a Prometheus scrape: the sections
    with no data say why, and the engine's clock, in Chinese in zh_CN (no English phrase left);
    the English as written."""
    import json
    from explorer.__main__ import main
    from tests.test_i18n_report import _data
    files = [REAL / "every_eval_ever/helm_mmlu_philosophy_gpt2",
             REAL / "published/vllm-43295-v1-engine-log.txt",
             REAL / "published/korean-doc-vllm-0.6-llama31-metrics.prom.txt"]
    if not all(f.exists() for f in files):
        pytest.skip("real files not present")
    out = {}
    for lang in ("en", "zh_CN"):
        try:
            assert main(["report", *map(str, files), "--lang", lang, "--format", "md,json",
                         "--out", str(tmp_path / lang)]) == 0
        finally:
            i18n.set_language("en")
        out[lang] = ((tmp_path / lang / "report.md").read_text(encoding="utf-8"),
                     json.loads((tmp_path / lang / "report.json").read_text(encoding="utf-8")))
    en = out["en"][0]
    for said in ("no request can be judged against the SLA: the traces do not record ttft_ms, "
                 "tpot_ms", "the cohort's cases ran on one engine version of one eval",
                 "time: seconds since the first stat line (0 s = 05-19 10:13:11)",
                 "time: none (samples carry no timestamp)",
                 "the traces do not record tpot_ms or batch_size, so no time window has tpot_ms "
                 "and batch_size_entropy"):
        assert said in en, said
    zh, doc = out["zh_CN"]
    assert "没有可按 SLA 评判的请求：trace 未记录 ttft_ms, tpot_ms" in zh
    assert "时间：距第一条统计行的秒数" in zh
    left = english_phrases(zh, _data(doc))
    assert not left, left
