"""Run-level aggregates that benchmark results publish -> `run_metrics` rows.

One vocabulary for every result format (JSON or printed), so a number means one thing; the
names are data (resources/metrics.toml, read by _vocab), e.g. for vLLM / SGLang results:

| metric | stat | unit | source keys (vLLM / SGLang result JSON) |
|---|---|---|---|
| ttft_ms, tpot_ms, itl_ms, e2e_ms | mean, median, std, p90, p99, p99.9, ... | ms | `{stat}_{ttft,tpot,itl,e2el,e2e_latency,latency}_ms` |
| requests | completed, failed, total | requests | completed, failed, num_prompts |
| prompt_tokens, completion_tokens | total (completion_tokens also total_retokenized) | tokens | total_input_tokens, total_output_tokens[_retokenized] |
| request_throughput, request_goodput | value | req/s | same names |
| input_throughput, output_throughput, total_token_throughput | value (output_throughput also max) | tok/s | same names, max_output_tokens_per_s |
| concurrency | mean (SGLang's "Concurrency"), max (vLLM's peak) | requests | concurrency, max_concurrent_requests |
| duration_s | value | s | duration |

The engines' own definitions (vllm/benchmarks/serve.py calculate_metrics; sglang
bench_serving.py calculate_metrics): TTFT per successful request; TPOT per request with
output_len > 1 = (latency - ttft) / (output_len - 1); ITL = every gap between two streamed
chunks, pooled over the requests (one entry per chunk, not per token); E2E (vLLM "e2el",
SGLang "e2e_latency", older vLLM "latency") = request latency. Percentiles are numpy's linear
interpolation. When no request succeeded both benchmarks print 0 for every latency: those
zeros are not measurements, so `published_rows` drops the latency statistics of a run with
completed == 0 (the run is flagged instead; see explorer.core.runs).
"""
from __future__ import annotations

import math
from typing import Any, Iterable

import pandas as pd

from ._vocab import read_name

LATENCY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")
COLUMNS = ["metric", "stat", "value", "unit"]


def _value(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    x = float(v)
    return x if math.isfinite(x) else None


def published_rows(obj: dict, tool: str | None = None,
                   completed=None) -> list[tuple[str, str, float, str]]:
    """(metric, stat, value, unit) for every aggregate a result dict publishes, each key read
    by the vocabulary (resources/metrics.toml; `tool`: a [tool.*] entry's renames apply) and
    its value converted to the metric's canonical unit; values that are null, not numbers or
    not finite are left out, and so are the latency statistics of a run whose `completed` is 0
    (the engines print 0 there, not a measurement; `completed`: that count when the dict names
    it otherwise, e.g. a printed block's 'Successful requests')."""
    rows = []
    none_ok = _value(obj.get("completed") if completed is None else completed) == 0
    for k, v in obj.items():
        x = _value(v)
        nm = read_name(str(k), tool=tool) if x is not None else None
        if nm and not (none_ok and nm.metric in LATENCY_METRICS):
            rows.append((nm.metric, nm.stat, x * nm.scale, nm.unit))
    return rows


def insert_run_metrics(store, run_id: str, rows: Iterable[tuple[str, str, float, str]]) -> int:
    """Append run_metrics rows (metric, stat, value, unit) of one run; returns how many."""
    df = pd.DataFrame(list(rows), columns=COLUMNS)
    if df.empty:
        return 0
    df = df.drop_duplicates(["metric", "stat"], keep="first")
    df.insert(0, "run_id", run_id)
    df["value"] = df["value"].astype("float64")
    return store.append("run_metrics", df)
