"""Every benchmark RESULT file of ../shared/data/real/published loads, keeps the aggregates it
published as run_metrics, and reproduces the numbers of published/SOURCES.md; where the file
has per-request arrays, the product's own aggregates (explorer.core.runs.recompute, the
benchmarks' definitions) equal the published ones. Rounding: SOURCES.md prints 2 decimals, so
published values are compared at 0.005; recomputed values at 1e-9 relative, except TPOT
(within 1 %: the file saves no per-request latency, see explorer/core/formats/_serving.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core import runs as runs_mod
from explorer.core.store import Store

from pathlib import Path

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "real"  # conftest.REAL

PUB = REAL / "published"
pytestmark = pytest.mark.skipif(not PUB.is_dir(), reason=f"published artefacts missing: {PUB}")


def _load(name):
    s = Store()
    r = s.load_file(PUB / name)
    assert r.error is None, r.error
    return s, r


def _pub(store, run_id):
    df = store.df("SELECT metric, stat, value FROM run_metrics WHERE run_id = ?", [run_id])
    return {(m, st): v for m, st, v in df.itertuples(index=False)}


def _close(got, want, tol=0.005):
    assert got == pytest.approx(want, abs=tol)


@pytest.fixture(scope="module")
def lambdalabs():
    s, r = _load("lambdalabs-a100-llama31-8b-fp8-tp1-len2048.json")
    yield s, r.run_ids[0]
    s.close()


def test_lambdalabs_published_numbers_are_kept(lambdalabs):
    s, run = lambdalabs
    p = _pub(s, run)
    assert p[("requests", "completed")] == 10 and p[("completion_tokens", "total")] == 1249
    for stat, want in (("mean", 113.74), ("median", 162.05), ("p99", 163.51)):
        _close(p[("ttft_ms", stat)], want)
    for stat, want in (("mean", 8.80), ("median", 7.65), ("p99", 14.50)):
        _close(p[("tpot_ms", stat)], want)
    _close(p[("itl_ms", "mean")], 73.39)
    _close(p[("output_throughput", "value")], 216.95)
    unit = dict(s.df("SELECT metric || '/' || stat, unit FROM run_metrics").itertuples(index=False))
    assert unit["ttft_ms/mean"] == "ms" and unit["output_throughput/value"] == "tok/s"


def test_lambdalabs_tpot_is_per_token_not_per_chunk(lambdalabs):
    """vLLM: TPOT = (latency - ttft) / (output_len - 1); the itls hold one gap per chunk
    (12 gaps for 120 tokens here), so their mean is about 10x the time per token."""
    s, run = lambdalabs
    raw = json.loads((PUB / "lambdalabs-a100-llama31-8b-fp8-tp1-len2048.json").read_text())
    assert len(raw["itls"][0]) == 12 and raw["output_lens"][0] == 120
    want = {str(i): sum(g) * 1000 / (o - 1)
            for i, (g, o) in enumerate(zip(raw["itls"], raw["output_lens"])) if o > 1}
    got = dict(s.df("SELECT request_id, tpot_ms FROM requests WHERE run_id = ? AND tpot_ms IS"
                    " NOT NULL", [run]).itertuples(index=False))
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-9)
    chunk_mean = np.mean(raw["itls"][0]) * 1000
    assert got["0"] < chunk_mean / 5  # the old reading (mean of itls) was per chunk
    # output_len 0 / 1: no TPOT; a request that streamed nothing has no TTFT (not 0)
    q = s.df("SELECT request_id, ttft_ms, tpot_ms FROM requests WHERE run_id = ?"
             " ORDER BY CAST(request_id AS INT)", [run])
    assert q["tpot_ms"].isna().tolist() == [o <= 1 for o in raw["output_lens"]]
    assert q["ttft_ms"].isna().tolist() == [t == 0.0 for t in raw["ttfts"]]


def test_lambdalabs_product_aggregates_equal_published(lambdalabs):
    s, run = lambdalabs
    rec = {(r["metric"], r["stat"]): r for r in runs_mod.overview(s)[0]["recomputed"]}
    for key in [("ttft_ms", st) for st in ("mean", "median", "p99", "std")] + \
               [("itl_ms", st) for st in ("mean", "median", "p99", "std")] + \
               [("completion_tokens", "total"), ("prompt_tokens", "total"),
                ("output_throughput", "value"), ("request_throughput", "value"),
                ("requests", "completed")]:
        assert rec[key]["recomputed"] == pytest.approx(rec[key]["published"], rel=1e-9), key
    for st in ("mean", "median", "p99"):
        r = rec[("tpot_ms", st)]
        assert abs(r["diff_pct"]) < 1.0, r
    # E2E cannot be recomputed honestly: 3 requests' latency is not in the file
    assert rec[("e2e_ms", "mean")]["recomputed"] is None and "3 successful" in rec[("e2e_ms", "mean")]["note"]


def test_lambdalabs_sla_attainment_uses_per_token_tpot(lambdalabs):
    """TPOT <= 50 ms: every request meets it by vLLM's definition (max 14.5 ms); the per-chunk
    reading (~75 ms) failed almost all of them."""
    from explorer.core.analysis.sla import sla_attainment
    s, _ = lambdalabs
    res = sla_attainment(s, None, {"thresholds": {"tpot_ms": 50.0}}).to_dict()
    assert res["attainment"]["share"] == pytest.approx(1.0)


def test_all_failed_run_is_flagged_and_keeps_no_zero_latencies():
    s, r = _load("er0080-bench-serve-all-failed-v0.25.1.json")
    p = _pub(s, r.run_ids[0])
    assert p[("requests", "completed")] == 0 and p[("requests", "failed")] == 8
    assert not [k for k in p if k[0].endswith("_ms")]  # printed 0.0, not measured
    (o,) = runs_mod.overview(s)
    assert o["no_success"] and "no successful request" in o["flags"][0]


def test_sweep_summary_list_is_one_run_each():
    s, r = _load("er0080-sweep-max_num_seqs4-summary.json")
    raw = json.loads((PUB / "er0080-sweep-max_num_seqs4-summary.json").read_text())
    assert len(r.run_ids) == 2
    labels = s.df("SELECT label FROM runs ORDER BY run_id")["label"].tolist()
    assert [lb.endswith(f"run={i}") for i, lb in enumerate(labels)] == [True, True]
    for run, obj in zip(r.run_ids, raw):
        p = _pub(s, run)
        for k, v in obj.items():
            if k.endswith("_ms"):
                stat, metric = k.split("_", 1)
                key = ({"ttft_ms": "ttft_ms", "tpot_ms": "tpot_ms", "itl_ms": "itl_ms",
                        "e2el_ms": "e2e_ms"}[metric], stat)
                assert p[key] == pytest.approx(v), k
    _close(_pub(s, r.run_ids[0])[("ttft_ms", "mean")], 217.27)


def test_sglang_datacrunch_jsonl_lines_are_runs():
    s, r = _load("sglang-datacrunch-h200-llama70b-online.jsonl")
    assert len(r.run_ids) == 7
    first, rps16 = _pub(s, r.run_ids[0]), _pub(s, r.run_ids[4])
    assert first[("requests", "completed")] == 300 and rps16[("requests", "completed")] == 3200
    _close(first[("ttft_ms", "median")], 85.75)
    _close(first[("e2e_ms", "mean")], 7840.62)
    _close(first[("output_throughput", "value")], 537.41)
    _close(rps16[("ttft_ms", "median")], 614.25)
    _close(rps16[("e2e_ms", "mean")], 149037.25)
    _close(rps16[("output_throughput", "value")], 4288.05)
    assert ("ttft_ms", "mean") not in first  # the file has no mean TTFT: none invented
    eng = s.df("SELECT DISTINCT engine FROM runs")["engine"].tolist()
    assert eng == ["sglang"]
    assert "request_rate=16.0" in s.df("SELECT label FROM runs WHERE run_id = ?",
                                       [r.run_ids[4]])["label"][0]


KIND_FORMAT = {"VB-D": "vllm_bench", "VB-A": "vllm_bench", "SWEEP": "vllm_bench",
               "VB-T": "bench_stdout", "VB-T (SGLang)": "bench_stdout", "SG-J": "sglang",
               "VL0": "vllm_log", "VL1": "vllm_log", "SGL": "sglang_log", "PROM": "prometheus",
               "BG": "burstgpt"}


def _sources_rows() -> list[tuple[str, str]]:
    """(file, kind) of every row of published/SOURCES.md's table."""
    rows = []
    for line in (PUB / "SOURCES.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and cells[0] not in ("file", "---") and not set(cells[0]) <= {"-"}:
            rows.append((cells[0], cells[1]))
    return rows


def test_sources_md_lists_every_published_file():
    listed = {f for f, _ in _sources_rows()}
    present = {p.name for p in PUB.iterdir() if p.is_file() and p.name != "SOURCES.md"}
    assert listed == present and len(listed) >= 13


@pytest.mark.parametrize("name, kind", _sources_rows() if PUB.is_dir() else [])
def test_every_published_file_loads_as_its_kind(name, kind):
    """Each file of SOURCES.md loads, by content, as the format of its kind, with something in
    it: runs with published aggregates, request rows or engine statistics (each file's numbers
    are checked by its own test: here, test_results_printed, test_engine_stats_formats,
    test_formats_readers)."""
    s = Store()
    r = s.load_file(PUB / name)
    assert r.error is None and r.format == KIND_FORMAT[kind], (r.format, r.error)
    assert s.count("run_metrics") + s.count("requests") + s.count("engine_stats") > 0
    s.close()


def test_report_overview_puts_the_runs_side_by_side():
    """report.md / report.html: one row per run (the SGLang rate sweep reads down a column),
    units in the headers, a statistic the file did not publish is 'n/a', the all-failed run
    flagged; a run's own table only where there is more to say (a flag, a recomputation)."""
    from explorer.core.report_runs import md_runs
    from explorer.widgets.painters.runs import runs_html
    s = Store()
    for name in ("er0080-bench-serve-all-failed-v0.25.1.json",
                 "sglang-datacrunch-h200-llama70b-online.jsonl"):
        assert s.load_file(PUB / name).error is None
    runs = runs_mod.overview(s)
    md = md_runs(runs)
    table = [ln for ln in md.split("\n\n", 1)[0].splitlines() if ln.startswith("| ")]
    assert table[0].startswith("| Run | Engine | Completed | Failed | Median TTFT (ms) |")
    assert len(table) == 1 + 8  # header + 8 runs
    rps16 = next(ln for ln in table if "request_rate=16.0" in ln)
    assert "| 3,200 | n/a | 614.25 | 149,037.25 | 4,288.05 |" in rps16
    failed = next(ln for ln in table if ln.startswith("| er0080"))
    assert failed.endswith("| vllm 0.25.1 | 0 | 8 | n/a | n/a | 0.00 | no successful request |")
    assert md.count("| Published | Published value |") == 1  # only the flagged run's own table
    html = runs_html(runs)
    assert html.count("<tr") == 1 + 8 + 1 + 4  # the overview; the failed run: head + 4 numbers
    assert "color:" in html.split("er0080", 1)[0].rsplit("<tr", 1)[1]
    s.close()
