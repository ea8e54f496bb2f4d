"""kubernetes-sigs/inference-perf run for real against the local endpoint; its reports read back.

`inference-perf --config_file` (constant load, 10 requests/s for 2 s, streamed completions, random
data of 32 prompt / 12 output tokens, the word-level tokenizer built here, lifecycle reports:
summary, per stage, per request) writes summary_lifecycle_metrics.json,
stage_0_lifecycle_metrics.json and per_request_lifecycle_metrics.json.

Checked: its summary reproduced from its per-request file with its definitions
(inference_perf/reportgen/base.py: `compute_request_latency_metrics` request_latency = end_time -
start_time, time_to_first_token = first output token time - start_time, time_per_output_token =
(last - first output token time) / (output tokens - 1), normalized_time_per_output_token =
request_latency / output tokens; `summarize`: np.mean / min / max, np.percentile (linear)); the
endpoint's token counts; and the product's run_metrics of the summary (the vocabulary's
[tool.inference_perf] entry) against the published numbers.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core.store import Store
from tests.openai_endpoint import Endpoint
from tests.real_tools import build_tokenizer, run_tool, tool_bin

pytestmark = pytest.mark.xdist_group("real_tools_inference_perf")
RATE, SECONDS, ISL, OSL = 10, 2, 32, 12
CONFIG = """load:
  type: constant
  stages:
  - rate: {rate}
    duration: {seconds}
api:
  type: completion
  streaming: true
server:
  type: vllm
  model_name: tiny-model
  base_url: {url}
  ignore_eos: true
tokenizer:
  pretrained_model_name_or_path: {tok}
data:
  type: random
  input_distribution: {{min: {isl}, max: {isl}, mean: {isl}, std_dev: 0, total_count: 100}}
  output_distribution: {{min: {osl}, max: {osl}, mean: {osl}, std_dev: 0, total_count: 100}}
report:
  request_lifecycle:
    summary: true
    per_stage: true
    per_request: true
storage:
  local_storage:
    path: {out}
"""


@pytest.fixture(scope="module")
def inference_perf_run(tmp_path_factory):
    exe = tool_bin("inference-perf")
    d = tmp_path_factory.mktemp("inference_perf")
    tok = build_tokenizer("inference-perf", d / "tokenizer")
    with Endpoint() as ep:
        (d / "config.yml").write_text(CONFIG.format(rate=RATE, seconds=SECONDS, url=ep.url, tok=tok,
                                                    isl=ISL, osl=OSL, out=d / "out"))
        run_tool([exe, "--config_file", d / "config.yml"], cwd=d, timeout=400)
        log = list(ep.log)
    return d / "out", log


def _summary(items) -> dict:
    a = np.asarray(items, dtype=float)
    out = {"mean": a.mean(), "min": a.min(), "max": a.max()}
    out.update({("median" if q == 50 else f"p{q:g}"): np.percentile(a, q)
                for q in (0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9)})
    return out


def test_summary_reproduced_from_its_per_request_file(inference_perf_run):
    out, log = inference_perf_run
    summ = json.loads((out / "summary_lifecycle_metrics.json").read_text())
    reqs = json.loads((out / "per_request_lifecycle_metrics.json").read_text())
    ok = [r for r in reqs if not r.get("error")]
    assert summ["successes"]["count"] == len(ok) == len(log) == RATE * SECONDS
    times = [r["info"]["response_metrics"]["output_token_times"] for r in ok]
    ntok = [r["info"]["response_metrics"]["output_tokens"] for r in ok]
    mine = {"request_latency": [r["end_time"] - r["start_time"] for r in ok],
            "time_to_first_token": [t[0] - r["start_time"] for t, r in zip(times, ok)],
            "time_per_output_token": [(t[-1] - t[0]) / (n - 1) for t, n in zip(times, ntok)],
            "normalized_time_per_output_token": [(r["end_time"] - r["start_time"]) / n
                                                 for r, n in zip(ok, ntok)]}
    lat = summ["successes"]["latency"]
    for metric, values in mine.items():
        for stat, value in _summary(values).items():
            assert lat[metric][stat] == pytest.approx(value, rel=1e-9), (metric, stat)
    # the endpoint's truth: the tokens it sent and counted
    assert sorted(ntok) == sorted(s.completion_tokens for s in log) == [OSL] * len(log)
    usage = sorted(r["info"]["response_metrics"]["server_usage"]["prompt_tokens"] for r in ok)
    assert usage == sorted(s.prompt_tokens for s in log)


def test_product_reads_the_published_summary(inference_perf_run):
    out, _ = inference_perf_run
    lat = json.loads((out / "summary_lifecycle_metrics.json").read_text())["successes"]["latency"]
    st = Store()
    st.load_paths([out / "summary_lifecycle_metrics.json"])
    got = {(m, s): v for m, s, v in st.con.execute(
        "SELECT metric, stat, value FROM run_metrics").fetchall()}
    for metric, src in (("e2e_ms", "request_latency"), ("ttft_ms", "time_to_first_token")):
        for stat in ("mean", "median", "p99"):
            assert got.get((metric, stat)) == pytest.approx(lat[src][stat] * 1000, rel=1e-9), (metric, stat)


def test_product_reads_its_per_request_file_and_recomputes_its_summary(inference_perf_run):
    """per_request_lifecycle_metrics.json read by the [records.inference_perf_requests]
    vocabulary entry alone (no module); the summary beside it becomes the run's published
    aggregates, and every one of them is recomputed from the rows the product read."""
    from explorer.core.runs import overview
    out, log = inference_perf_run
    st = Store()
    reps = {r.path.rsplit("/", 1)[-1]: r for r in st.load_paths([out])}
    r = reps["per_request_lifecycle_metrics.json"]
    assert r.format == "inference_perf_requests" and r.error is None
    assert r.rows_loaded == len(log) == RATE * SECONDS
    assert "per_request_lifecycle_metrics.json" in reps["summary_lifecycle_metrics.json"].skipped_file
    run = next(x for x in overview(st) if x["run_id"] == r.run_ids[0])
    pairs = {(x["metric"], x["stat"]): x for x in run["recomputed"]}
    assert {("ttft_ms", "p99"), ("tpot_ms", "mean"), ("e2e_ms", "median"),
            ("requests", "completed")} <= set(pairs)
    for key, x in pairs.items():
        assert x["recomputed"] == pytest.approx(x["published"], rel=1e-9, abs=1e-9), key
    tokens = st.con.execute("SELECT completion_tokens FROM requests WHERE run_id = ?",
                            [r.run_ids[0]]).fetchall()
    assert sorted(t for t, in tokens) == sorted(s.completion_tokens for s in log)
