"""NVIDIA AIPerf run for real against the local endpoint; its artefact folder read back whole.

`aiperf profile` (chat, streaming, 20 requests at concurrency 4, 32 input / 12 output tokens,
a word-level tokenizer built here, GPU telemetry scraped from the endpoint's DCGM series, server
metrics from its /metrics, export level raw) writes profile_export.jsonl (per request),
profile_export_aiperf.json / .csv (its aggregates), server_metrics_export.json / .csv,
gpu_telemetry_export.jsonl, profile_export_raw.jsonl and inputs.json.

Checked:
* AIPerf's own aggregates reproduced from the product's requests (loaded from its per-request
  export) with AIPerf's definitions: avg = sum / n, std = population std (ddof 0), p1..p99 by
  linear interpolation (aiperf/metrics/metric_dicts.py `metric_result_from_array`), TTFT
  (metrics/types/ttft_metric.py), request_latency (request_latency_metric.py),
  inter_token_latency = (request_latency - ttft) / (osl - 1) (inter_token_latency_metric.py),
  request_throughput = count / the profiling window and output_token_throughput = total osl /
  that window (its start_time .. end_time; metric_dicts.py observation_duration), and
  benchmark_duration = max(request start + request_latency) - min(request start)
  (request_throughput_metric.py, output_token_throughput_metrics.py, benchmark_duration_metric.py).
* The endpoint's truth, request by request through the X-Request-ID header AIPerf sends: token
  counts exactly, and AIPerf's timestamps bracket the server's (both sides read the same wall
  clock, time.time_ns).
* The accuracy export: AIPerf cannot run its accuracy benchmarks here (they load their datasets
  from the Hugging Face hub), so the test writes accuracy_export.jsonl itself with AIPerf's own
  record model (aiperf.accuracy.models.AccuracyRecordsData, serialised as its JSONL writer does),
  one graded record per real request of this run, with known pass / unparsed values; loaded with
  the folder, every case binds exactly (level 1) to its request and the badcase cohort is built.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from explorer.core.store import Store
from tests.openai_endpoint import Endpoint, Timing
from tests.real_tools import build_tokenizer, run_tool, tool_bin, tool_python

# one tool run per module: its tests stay on one xdist worker (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("real_tools_aiperf")

N, CONC, ISL, OSL = 20, 4, 32, 12

_ACCURACY = r"""
import json, sys
from aiperf.accuracy.models import AccuracyRecordsData
from aiperf.common.enums import CreditPhase
art = sys.argv[1]
with open(f"{art}/profile_export.jsonl") as fh, open(f"{art}/accuracy_export.jsonl", "w") as out:
    for line in fh:
        md = json.loads(line)["metadata"]
        k = md["session_num"]
        passed, unparsed = k % 3 != 0, k % 5 == 0
        rec = AccuracyRecordsData(
            session_num=k, conversation_id=md["conversation_id"], x_request_id=md["x_request_id"],
            worker_id=md["worker_id"], benchmark_phase=CreditPhase.PROFILING,
            timestamp_ns=md["request_end_ns"], task="arith" if k % 2 else "logic",
            grader_name="exact_match", passed=passed, unparsed=unparsed, confidence=1.0,
            expected=str(k), actual=str(k if passed else k + 1),
            explanation="match" if passed else "mismatch", model_output=f"The answer is {k}")
        out.write(rec.model_dump_json(exclude={"record_type"}) + "\n")
"""


@pytest.fixture(scope="module")
def aiperf_run(tmp_path_factory):
    exe = tool_bin("aiperf")
    d = tmp_path_factory.mktemp("aiperf")
    tok = build_tokenizer("aiperf", d / "tokenizer")
    art = d / "artifacts"
    with Endpoint(timing=Timing(base_ms=20, per_prompt_token_ms=0.05, itl_ms=4)) as ep:
        run_tool([exe, "profile", "--model", "tiny-model", "--url", ep.url, "--endpoint-type",
                  "chat", "--streaming", "--tokenizer", tok, "--request-count", N,
                  "--concurrency", CONC, "--synthetic-input-tokens-mean", ISL,
                  "--synthetic-input-tokens-stddev", 0, "--output-tokens-mean", OSL,
                  "--output-tokens-stddev", 0, "--random-seed", 1, "--ui", "none",
                  "--artifact-dir", art, "--export-level", "raw",
                  "--gpu-telemetry", ep.url + "/dcgm/metrics",
                  "--server-metrics-formats", "json", "csv", "jsonl"],
                 cwd=d, timeout=400, offline=False,  # offline: aiperf takes a path for a hub id
                 env={"AIPERF_SERVER_METRICS_COLLECTION_INTERVAL": "0.05",
                      "AIPERF_GPU_COLLECTION_INTERVAL": "0.05"})  # offline mode makes aiperf treat a path as a hub id
        log = list(ep.log)
    import subprocess
    subprocess.run([str(tool_python("aiperf")), "-c", _ACCURACY, str(art)], check=True, timeout=120)
    return art, log


def _published(art) -> dict:
    return json.loads((art / "profile_export_aiperf.json").read_text())


def _stats(values) -> dict:
    a = np.sort(np.asarray(values, dtype=float))
    out = {"avg": a.sum() / len(a), "std": float(np.std(a, ddof=0)), "min": a[0], "max": a[-1]}
    out.update({f"p{q}": float(np.percentile(a, q)) for q in (1, 5, 10, 25, 50, 75, 90, 95, 99)})
    return out


def test_aggregates_reproduced_from_the_per_request_export(aiperf_run):
    art, _ = aiperf_run
    pub = _published(art)
    st = Store()
    st.load_paths([art / "profile_export.jsonl"])
    df = st.con.execute("SELECT request_id, ttft_ms, e2e_ms, tpot_ms, prompt_tokens, "
                        "completion_tokens FROM requests ORDER BY request_id").df()
    assert len(df) == N == pub["request_count"]["avg"]
    for col, metric in (("ttft_ms", "time_to_first_token"), ("e2e_ms", "request_latency"),
                        ("tpot_ms", "inter_token_latency")):
        assert pub[metric]["unit"] == "ms"
        mine = _stats(df[col])
        for stat, value in mine.items():
            assert value == pytest.approx(pub[metric][stat], rel=1e-9, abs=1e-9), (metric, stat)
    # inter_token_latency is AIPerf's (request_latency - ttft) / (osl - 1): the product's TPOT
    assert np.allclose(df.tpot_ms, (df.e2e_ms - df.ttft_ms) / (df.completion_tokens - 1))
    # throughputs over AIPerf's benchmark_duration (first request start -> last response end)
    recs = [json.loads(x) for x in (art / "profile_export.jsonl").read_text().splitlines()]
    starts = [r["metadata"]["request_start_ns"] for r in recs]
    ends = [r["metadata"]["request_start_ns"] + r["metrics"]["request_latency"]["value"] * 1e6
            for r in recs]  # max_response_metric.py: request timestamp + request latency
    dur_s = (max(ends) - min(starts)) / 1e9
    assert dur_s == pytest.approx(pub["benchmark_duration"]["avg"], abs=1e-6)  # ms floats -> ns
    # the throughputs divide by the profiling phase's window (metric_dicts.py
    # observation_duration: window_end_ns - window_start_ns, the phase's start and end), which
    # the JSON publishes as start_time / end_time (ISO, to the microsecond: rel 1e-5)
    from datetime import datetime
    win_s = (datetime.fromisoformat(pub["end_time"]) - datetime.fromisoformat(pub["start_time"])).total_seconds()
    assert win_s >= dur_s * 0.999
    assert N / win_s == pytest.approx(pub["request_throughput"]["avg"], rel=1e-5)
    assert df.completion_tokens.sum() / win_s == pytest.approx(pub["output_token_throughput"]["avg"], rel=1e-5)
    # the per-chunk gaps (token_latencies) pool to AIPerf's inter_chunk_latency statistics
    itl = st.con.execute("SELECT itl_ms FROM token_latencies").df().itl_ms
    assert len(itl) == pub["inter_chunk_latency"]["count"]
    assert itl.sum() / len(itl) == pytest.approx(pub["inter_chunk_latency"]["avg"], rel=1e-9)


def test_per_request_truth_of_the_endpoint(aiperf_run):
    art, log = aiperf_run
    recs = {json.loads(x)["metadata"]["x_request_id"]: json.loads(x)
            for x in (art / "profile_export.jsonl").read_text().splitlines()}
    served = {s.request_id: s for s in log if s.request_id}
    assert len(served) == len(log) and set(recs) <= set(served)  # warm-up: none by default
    st = Store()
    st.load_paths([art / "profile_export.jsonl"])
    rows = st.con.execute("SELECT request_id, arrival_s, ttft_ms, e2e_ms, prompt_tokens, "
                          "completion_tokens FROM requests").fetchall()
    slack_ms = 2.0  # one clock, two processes: rounding of the stamps only
    for rid, arrival_s, ttft, e2e, pt, ct in rows:
        s, md = served[rid], recs[rid]["metadata"]
        assert (pt, ct) == (s.prompt_tokens, s.completion_tokens) == (ISL, OSL)
        assert md["request_start_ns"] <= s.arrival_ns + slack_ms * 1e6
        assert md["request_end_ns"] >= s.end_ns - slack_ms * 1e6
        server_ttft = (s.first_token_ns - s.arrival_ns) / 1e6
        assert ttft >= server_ttft - slack_ms  # the client's TTFT holds the server's
        assert e2e >= (s.end_ns - s.arrival_ns) / 1e6 - slack_ms


def test_artefact_folder_read_whole_accuracy_bound_exactly(aiperf_run):
    from explorer.core.association import bind_cases
    art, _ = aiperf_run
    st = Store()
    reports = st.load_paths([art])
    by_file = {Path(r.path).name: r for r in reports}
    acc = [json.loads(x) for x in (art / "accuracy_export.jsonl").read_text().splitlines()]
    cases = st.con.execute("SELECT eval_id, request_id, correct, category, reference, extra "
                           "FROM cases ORDER BY request_id").fetchall()
    assert len(cases) == len(acc) == N
    assert {c[0] for c in cases} == {f"aiperf:accuracy:{art.name}"}
    truth = {a["x_request_id"]: a for a in acc}
    for _eval, rid, correct, category, reference, extra in cases:
        a = truth[rid]
        assert (correct, category, reference) == (a["passed"], a["task"], a["expected"])
        assert json.loads(extra)["unparsed"] == a["unparsed"]
    res = bind_cases(st)
    links = st.con.execute("SELECT level, count(*) FROM case_links GROUP BY level").fetchall()
    assert links == [(1, N)], (links, res)
    # each case's link names the request with its x_request_id
    assert st.con.execute("SELECT count(*) FROM case_links l JOIN cases c USING (case_id) "
                          "WHERE l.request_id = c.request_id").fetchone()[0] == N
    assert by_file["profile_export.jsonl"].format == "aiperf"
    assert by_file["accuracy_export.jsonl"].format == "aiperf_accuracy"


def test_dropped_folder_goes_to_the_badcase_analysis(aiperf_run, tmp_path):
    """`report` on the artefact folder as dropped: the cohort is the failed graded responses,
    every one bound to its request (binding rate 1, level 1 only)."""
    import subprocess
    import sys
    art, _ = aiperf_run
    acc = [json.loads(x) for x in (art / "accuracy_export.jsonl").read_text().splitlines()]
    p = subprocess.run([sys.executable, "-m", "explorer", "report", str(art), "--format", "json",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rep = json.loads((tmp_path / "report.json").read_text())
    c = rep["cohort"]
    failed = [a for a in acc if not a["passed"]]
    assert c["bound"] == c["badcases"] and c["binding_rate"] == 1.0
    assert c["badcases"] <= len(failed) and c["badcases"] > 0
    levels = {int(k) for k, v in c["link_levels"].items() if v}
    assert levels == {1}, c  # badcases and control alike: exact ids only
    assert {r["metric"] for r in rep["comparison"]} >= {"ttft_ms", "e2e_ms"}


def test_gpu_telemetry_summary_reproduced(aiperf_run):
    """gpu_* run_metrics (the product's summary of gpu_telemetry_export.jsonl) equal AIPerf's
    own telemetry_data summary in profile_export_aiperf.json; the endpoint's DCGM truth holds
    (utilisation = 10 % a request in flight, power 100 W)."""
    art, _ = aiperf_run
    gpu = _published(art)["telemetry_data"]["endpoints"]
    (host,) = gpu.values()
    pub = host["gpus"]["gpu_0"]["metrics"]
    st = Store()
    st.load_paths([art / "profile_export.jsonl"])
    got = {(m, s): v for m, s, v in st.con.execute(
        "SELECT metric, stat, value FROM run_metrics WHERE metric LIKE 'gpu_%'").fetchall()}
    for src, mine in (("nvidia_gpu_utilization", "gpu_utilization"),
                      ("nvidia_memory_used", "gpu_memory_used"),
                      ("nvidia_power_usage", "gpu_power_usage")):
        for stat, pstat in (("mean", "avg"), ("min", "min"), ("max", "max"), ("std", "std"),
                            ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("count", "count")):
            assert got[(mine, stat)] == pytest.approx(pub[src][pstat], rel=1e-9, abs=1e-12), (src, stat)
    assert got[("gpu_power_usage", "mean")] == 100.0
    assert 0 <= got[("gpu_utilization", "max")] <= 10 * CONC


def test_server_metrics_series_become_engine_stats(aiperf_run):
    """server_metrics_export.jsonl scrapes -> engine_stats of the same run: running never above
    the concurrency, and gen_tps integrated over the scrapes gives the generation-token
    counter's increase that the scrapes themselves show."""
    art, log = aiperf_run
    scr = [json.loads(x) for x in (art / "server_metrics_export.jsonl").read_text().splitlines()]
    st = Store()
    st.load_paths([art / "profile_export.jsonl"])
    es = st.con.execute("SELECT run_id, ts_s, running, gen_tps FROM engine_stats ORDER BY ts_s").df()
    run = st.con.execute("SELECT DISTINCT run_id FROM requests").fetchone()[0]
    assert set(es.run_id) == {run} and len(es) == len(scr)
    assert es.running.max() <= CONC and es.running.max() > 0
    gen = [s["metrics"]["vllm:generation_tokens"][0]["value"] for s in scr]
    ts = es.ts_s.to_numpy()
    integral = float(np.nansum(es.gen_tps.to_numpy()[1:] * np.diff(ts)))
    # the endpoint's counter only rises (it has no restart), and the lines come in completion
    # order, not time order (AIPerf's scrapes overlap): its increase is the largest less the least
    assert integral == pytest.approx(max(gen) - min(gen), rel=1e-5)
    assert max(gen) <= sum(s.completion_tokens for s in log)  # the endpoint's own count
