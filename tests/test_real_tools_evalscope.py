"""modelscope/evalscope `evalscope perf` run for real against the local endpoint; its reports read back.

`evalscope perf` (10 streamed text completions, 2 in parallel, random prompts of 32 tokens from
the word-level tokenizer built here, 12 output tokens) writes benchmark_summary.json,
benchmark_percentile.json and its per-request SQLite benchmark_data.db (table `result`).

Checked: its published numbers reproduced from its own per-request rows with its definitions
(evalscope/perf/utils/db_util.py: `calculate_percentiles` nearest rank, the value at rank
ceil(n * p / 100), over the successful requests, rounded to 4 decimals; Latency = latency (s),
TTFT = first_chunk_latency x 1000, TPOT = time_per_output_token x 1000, ITL = every
inter_token_latencies entry x 1000, pooled); the endpoint's token counts; and that the product
reads both files as one run through the vocabulary's [tool.evalscope_perf] entry alone.
"""
from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest

from explorer.core.store import Store
from tests.openai_endpoint import Endpoint
from tests.real_tools import build_tokenizer, run_tool, tool_bin

pytestmark = pytest.mark.xdist_group("real_tools_evalscope")
N, PARALLEL, ISL, OSL = 10, 2, 32, 12
PCTS = {"min": 0, "p1": 1, "p5": 5, "p10": 10, "p25": 25, "p50": 50, "p75": 75, "p90": 90,
        "p95": 95, "p99": 99, "max": 100}


@pytest.fixture(scope="module")
def evalscope_run(tmp_path_factory):
    exe = tool_bin("evalscope")
    d = tmp_path_factory.mktemp("evalscope")
    tok = build_tokenizer("evalscope", d / "tokenizer")
    with Endpoint() as ep:
        run_tool([exe, "perf", "--url", ep.url + "/v1/completions", "--api", "openai",
                  "--model", "tiny-model", "--parallel", PARALLEL, "--number", N,
                  "--dataset", "random", "--tokenizer-path", tok, "--min-prompt-length", ISL,
                  "--max-prompt-length", ISL, "--prefix-length", 0, "--max-tokens", OSL,
                  "--min-tokens", OSL, "--stream", "--no-apply-chat-template",
                  "--outputs-dir", d / "out"], cwd=d, timeout=400)
        log = list(ep.log)
    (out,) = list((d / "out").glob("*/tiny-model/parallel_*_number_*"))
    return out, log


def _nearest_rank(values, p: int) -> float:
    v = sorted(values)
    return round(v[-1] if p >= 100 else v[max(0, math.ceil(len(v) * p / 100) - 1)], 4)


def _rows(out):
    con = sqlite3.connect(out / "benchmark_data.db")
    try:
        return con.execute("SELECT latency, first_chunk_latency, time_per_output_token, "
                           "inter_token_latencies, prompt_tokens, completion_tokens "
                           "FROM result WHERE success = 1").fetchall()
    finally:
        con.close()


def test_published_numbers_reproduced_from_its_per_request_rows(evalscope_run):
    out, log = evalscope_run
    rows = _rows(out)
    summ = json.loads((out / "benchmark_summary.json").read_text())
    pct = {r["Percentiles"]: r for r in json.loads((out / "benchmark_percentile.json").read_text())}
    assert summ["Success Requests"] == len(rows) == N and summ["Failed Requests"] == 0
    mine = {"Latency (s)": [r[0] for r in rows], "TTFT (ms)": [r[1] * 1000 for r in rows],
            "TPOT (ms)": [r[2] * 1000 for r in rows],
            "ITL (ms)": [x * 1000 for r in rows for x in json.loads(r[3])]}
    for col, values in mine.items():
        for label, p in zip(["min", "1%", "5%", "10%", "25%", "50%", "75%", "90%", "95%",
                             "99%", "max"], PCTS.values()):
            assert pct[label][col] == pytest.approx(_nearest_rank(values, p), abs=1e-9), (col, label)
    assert summ["Avg TTFT (ms)"] == pytest.approx(np.mean(mine["TTFT (ms)"]), abs=0.005)
    assert summ["Avg Latency (s)"] == pytest.approx(np.mean(mine["Latency (s)"]), abs=5e-5)
    # the endpoint's truth: every served completion had OSL tokens, every prompt ISL words
    assert sorted(r[5] for r in rows) == [OSL] * N
    served = [s for s in log if s.completion_tokens == OSL]
    assert len(served) >= N and {s.prompt_tokens for s in served[-N:]} == {ISL}


def test_product_reads_summary_and_percentiles_as_one_run(evalscope_run):
    out, _ = evalscope_run
    summ = json.loads((out / "benchmark_summary.json").read_text())
    pct = {r["Percentiles"]: r for r in json.loads((out / "benchmark_percentile.json").read_text())}
    st = Store()
    reps = {r.path.rsplit("/", 1)[-1]: r for r in st.load_paths([out])}
    r = reps["benchmark_summary.json"]
    assert r.error is None and r.format == "published" and len(r.run_ids) == 1
    assert "benchmark_summary.json" in reps["benchmark_percentile.json"].skipped_file
    got = {(m, s): v for m, s, v in st.con.execute(
        "SELECT metric, stat, value FROM run_metrics WHERE run_id = ?", [r.run_ids[0]]).fetchall()}
    assert got[("ttft_ms", "mean")] == pytest.approx(summ["Avg TTFT (ms)"])
    assert got[("e2e_ms", "mean")] == pytest.approx(summ["Avg Latency (s)"] * 1000)
    assert got[("request_throughput", "value")] == pytest.approx(summ["Req Throughput (req/s)"])
    assert got[("requests", "completed")] == summ["Success Requests"]
    for stat, label in (("p99", "99%"), ("p50", "50%"), ("min", "min"), ("max", "max")):
        assert got[("ttft_ms", stat)] == pytest.approx(pct[label]["TTFT (ms)"])
        assert got[("e2e_ms", stat)] == pytest.approx(pct[label]["Latency (s)"] * 1000)
        assert got[("tpot_ms", stat)] == pytest.approx(pct[label]["TPOT (ms)"])
        assert got[("itl_ms", stat)] == pytest.approx(pct[label]["ITL (ms)"])
    cfg = json.loads(st.con.execute("SELECT config FROM runs WHERE run_id = ?",
                                    [r.run_ids[0]]).fetchone()[0])
    assert cfg["concurrency"] == PARALLEL
