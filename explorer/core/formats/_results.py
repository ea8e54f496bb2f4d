"""Run-level aggregates that benchmark results publish -> `run_metrics` rows.

One vocabulary for every result format (JSON or printed), so a number means one thing:

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
import re
from typing import Any, Iterable

import pandas as pd

LATENCY_METRICS = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_ms",
                   "e2e_latency": "e2e_ms", "latency": "e2e_ms"}
STAT = r"(mean|median|std|min|max|p\d+(?:\.\d+)?)"
_LATENCY_KEY = re.compile(rf"^{STAT}_({'|'.join(sorted(LATENCY_METRICS, key=len, reverse=True))})_ms$")

# result key -> (metric, stat, unit)
SCALARS: dict[str, tuple[str, str, str]] = {
    "completed": ("requests", "completed", "requests"),
    "failed": ("requests", "failed", "requests"),
    "num_prompts": ("requests", "total", "requests"),
    "total_input_tokens": ("prompt_tokens", "total", "tokens"),
    "total_output_tokens": ("completion_tokens", "total", "tokens"),
    "total_output_tokens_retokenized": ("completion_tokens", "total_retokenized", "tokens"),
    "request_throughput": ("request_throughput", "value", "req/s"),
    "request_goodput": ("request_goodput", "value", "req/s"),
    "input_throughput": ("input_throughput", "value", "tok/s"),
    "output_throughput": ("output_throughput", "value", "tok/s"),
    "total_token_throughput": ("total_token_throughput", "value", "tok/s"),
    "max_output_tokens_per_s": ("output_throughput", "max", "tok/s"),
    "concurrency": ("concurrency", "mean", "requests"),
    "max_concurrent_requests": ("concurrency", "max", "requests"),
    "duration": ("duration_s", "value", "s"),
}

COLUMNS = ["metric", "stat", "value", "unit"]


def latency_key(key: str) -> tuple[str, str] | None:
    """(metric, stat) of a result key such as 'p99_tpot_ms' or 'mean_e2e_latency_ms'."""
    m = _LATENCY_KEY.match(key)
    return (LATENCY_METRICS[m.group(2)], m.group(1)) if m else None


def _value(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    x = float(v)
    return x if math.isfinite(x) else None


def published_rows(obj: dict) -> list[tuple[str, str, float, str]]:
    """(metric, stat, value, unit) for every aggregate a result dict publishes (see the module
    doc); values that are null, not numbers or not finite are left out, and so are the latency
    statistics of a run whose `completed` is 0 (the engines print 0 there, not a measurement)."""
    rows = []
    none_ok = _value(obj.get("completed")) == 0
    for k, v in obj.items():
        x = _value(v)
        if x is None:
            continue
        lat = latency_key(k)
        if lat:
            if not none_ok:
                rows.append((lat[0], lat[1], x, "ms"))
        elif k in SCALARS:
            rows.append((*SCALARS[k][:2], x, SCALARS[k][2]))
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
