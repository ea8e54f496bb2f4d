"""GuideLLM run for real against the local endpoint; its benchmarks.json read back.

`guidellm run` (openai_http backend, chat completions streamed, concurrent profile with 4
streams, 20 requests, synthetic text of 32 prompt / 12 output tokens, the word-level tokenizer
built here) writes benchmarks.json: per benchmark its `metrics` (distribution summaries) and its
`requests.successful` records (per request: time_to_first_token_ms, request_latency in s,
inter_token_latency_ms, output_tokens, ...).

Checked: the product's run_metrics (read through the vocabulary's [tool.guidellm] entry) equal
GuideLLM's aggregates recomputed from its own per-request records with its definitions
(guidellm/schemas/base/statistics.py: DistributionSummary over equally weighted values, mean,
std_dev = population std, percentiles by `Percentiles.from_pdf`: the first sorted value whose
cumulative weight reaches q, np.searchsorted side="left"); GuideLLM's inter_token_latency_ms
((last token - first token) / (output tokens - 1)) is the product's tpot_ms. The endpoint's truth: every
request it served is one of GuideLLM's successful records, each with the token count it sent.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core.store import Store
from tests.openai_endpoint import Endpoint
from tests.real_tools import build_tokenizer, run_tool, tool_bin

pytestmark = pytest.mark.xdist_group("real_tools_guidellm")
N, STREAMS, ISL, OSL = 20, 4, 32, 12


@pytest.fixture(scope="module")
def guidellm_run(tmp_path_factory):
    exe = tool_bin("guidellm")
    d = tmp_path_factory.mktemp("guidellm")
    tok = build_tokenizer("guidellm", d / "tokenizer")
    out = d / "out" / "benchmarks.json"
    with Endpoint() as ep:
        p = run_tool([exe, "run", "--backend", f"kind=openai_http,target={ep.url},model=tiny-model",
                      "--profile", f"kind=concurrent,streams={STREAMS}",
                      "--constraint", f"kind=max_requests,count={N}",
                      "--data", f"kind=synthetic_text,prompt_tokens={ISL},output_tokens={OSL}",
                      "--tokenizer", f"kind=hf_auto,model={tok}", "--output", f"kind=json,path={out}",
                      "--disable-console-interactive"], cwd=d, timeout=400)
        log = list(ep.log)
    (d / "console.txt").write_text(p.stdout)  # its console tables, as printed
    return out, log


def _guidellm_summary(values) -> dict:
    v = np.sort(np.asarray(values, dtype=float))
    cdf = np.cumsum(np.full(len(v), 1.0 / len(v)))
    pct = {f"p{q:g}": float(v[min(np.searchsorted(cdf, q / 100, side="left"), len(v) - 1)])
           for q in (1, 5, 10, 25, 50, 75, 90, 95, 99)}
    return {"mean": float(v.mean()), "std": float(v.std()), "min": float(v[0]),
            "max": float(v[-1]), "median": pct["p50"], **pct}


def test_aggregates_reproduced_from_its_per_request_records(guidellm_run):
    out, _ = guidellm_run
    (bench,) = json.loads(out.read_text())["benchmarks"]
    ok = bench["requests"]["successful"]
    assert len(ok) == N and not bench["requests"]["errored"]
    st = Store()
    (rep,) = st.load_paths([out])
    assert rep.error is None and rep.format == "published"
    got = {(m, s): v for m, s, v in st.con.execute(
        "SELECT metric, stat, value FROM run_metrics").fetchall()}
    per_request = {"ttft_ms": [r["time_to_first_token_ms"] for r in ok],
                   "e2e_ms": [r["request_latency"] * 1000 for r in ok],
                   "tpot_ms": [r["inter_token_latency_ms"] for r in ok]}
    for metric, values in per_request.items():
        for stat, value in _guidellm_summary(values).items():
            assert got[(metric, stat)] == pytest.approx(value, rel=1e-9), (metric, stat)
    # GuideLLM's per-request ITL: (last token iteration - first token iteration) / (output
    # tokens - 1), its request timings (schemas/base/request_stats.py inter_token_latency_ms)
    for r in ok:
        t = r["info"]["timings"]
        assert r["inter_token_latency_ms"] == pytest.approx(
            (t["last_token_iteration"] - t["first_token_iteration"]) * 1000 / (r["output_tokens"] - 1),
            rel=1e-6)

def test_per_request_truth_of_the_endpoint(guidellm_run):
    out, log = guidellm_run
    (bench,) = json.loads(out.read_text())["benchmarks"]
    ok = bench["requests"]["successful"]
    assert len(log) == len(ok) == N  # no warm-up requests, none lost
    assert sorted(r["output_tokens"] for r in ok) == sorted(s.completion_tokens for s in log) == [OSL] * N
    # the prompt tokens GuideLLM counts are those the endpoint counted (the server's usage)
    assert sorted(r["prompt_tokens"] for r in ok) == sorted(s.prompt_tokens for s in log)
    # each client TTFT holds the server's first-token time (its stamps: see openai_endpoint)
    server_ttft = sorted((s.first_token_ns - s.arrival_ns) / 1e6 for s in log)
    client_ttft = sorted(r["time_to_first_token_ms"] for r in ok)
    assert all(c >= s - 1.0 for c, s in zip(client_ttft, server_ttft))


def test_its_console_tables_read_by_a_vocabulary_entry(guidellm_run):
    """GuideLLM's printed report (its stdout) read by the [tool.guidellm_console] entry alone:
    one run per benchmark row, every number equal to the one its benchmarks.json publishes for
    the same metric and statistic, to the printed precision (1 decimal; request latency in s)."""
    out, _ = guidellm_run
    console = out.parent.parent / "console.txt"
    st, ref = Store(), Store()
    r = st.load_file(console)
    assert r.error is None and r.format == "published" and len(r.run_ids) == 1
    ref.load_file(out)
    want = {(m, s): v for m, s, v in ref.con.execute(
        "SELECT metric, stat, value FROM run_metrics").fetchall()}
    got = {(m, s): v for m, s, v in st.con.execute(
        "SELECT metric, stat, value FROM run_metrics").fetchall()}
    assert {("ttft_ms", "p95"), ("tpot_ms", "median"), ("e2e_ms", "mean"),
            ("request_throughput", "mean"), ("output_throughput", "mean")} <= set(got)
    for key, v in got.items():
        half = 50.0 if key[0] == "e2e_ms" else 0.05  # half the last printed digit
        assert abs(v - want[key]) <= half + 1e-9, (key, v, want[key])
    label = st.con.execute("SELECT label FROM runs").fetchone()[0]
    assert label.endswith(f"concurrent@{STREAMS}")
