"""The result dict that vLLM `bench serve --save-result` and SGLang `bench_serving` write.

Source: vllm/benchmarks/serve.py and sglang/bench_serving.py. Aggregates (`mean_ttft_ms`,
`request_throughput`, ...) are always there; with `--save-detailed` (vLLM) or
`--output-details` (SGLang) the per-request arrays `input_lens`, `output_lens`, `ttfts` (s),
`itls` (list of lists, s), `errors` (text, "" when fine) and `generated_texts` are added.
One request row per array position: ttft s -> ms, itls s -> ms (token_latencies) and
tpot_ms = mean of the request's ITLs (what the benchmark itself averages per request is
(e2e - ttft) / (output - 1), which equals that mean when the ITLs cover every token).
"""
from __future__ import annotations

import re
from pathlib import Path

from ._common import (RowError, check_itls, check_ranges, insert_requests,
                      insert_token_latencies, integer, mean, num, register_run, text)

ARRAYS = ("ttfts", "itls", "input_lens", "output_lens", "errors")
AGG_KEYS = ("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "request_throughput",
            "output_throughput", "completed", "duration")
CONFIG_KEYS = ("backend", "endpoint_type", "label", "model_id", "tokenizer_id", "num_prompts",
               "request_rate", "burstiness", "max_concurrency", "dataset_name", "duration",
               "completed", "failed", "total_input_tokens", "total_output_tokens",
               "request_throughput", "request_goodput", "output_throughput",
               "total_token_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms",
               "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms",
               "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms",
               "random_input_len", "random_output_len", "sharegpt_output_len", "date")

MAPPING = {
    "ttfts": "ttft_ms (x1000)",
    "itls": "token_latencies.itl_ms (x1000); tpot_ms = mean(itls) (x1000)",
    "input_lens": "prompt_tokens",
    "output_lens": "completion_tokens",
    "errors": "error",
    "(array position)": "request_id",
}


def flavour(sniff) -> str | None:
    """'sglang' (JSONL, one result a line, SGLang's own keys such as mean_e2e_latency_ms or a
    backend named sglang*), 'vllm' (one JSON object) or None when the head is no serving result."""
    head = sniff.head.lstrip()
    if not head.startswith("{"):
        return None
    hits = sum(f'"{k}"' in sniff.head for k in AGG_KEYS)
    if hits < 3 and not ('"ttfts"' in sniff.head and '"input_lens"' in sniff.head):
        return None
    lines = [ln for ln in sniff.head.splitlines() if ln.strip()]
    jsonl = len(lines) > 1 and lines[0].strip().startswith("{") and lines[0].strip().endswith("}")
    sglang_keys = any(f'"{k}"' in sniff.head for k in ("mean_e2e_latency_ms", "sharegpt_output_len",
                                                       "random_range_ratio"))
    if jsonl or sglang_keys or re.search(r'"backend"\s*:\s*"sglang', sniff.head):
        return "sglang"
    return "vllm"


def is_result(obj) -> bool:
    """True when `obj` looks like a serving benchmark result (aggregates or arrays)."""
    return isinstance(obj, dict) and (
        sum(k in obj for k in AGG_KEYS) >= 3 or ("ttfts" in obj and "input_lens" in obj))


def load_result(obj: dict, path: Path, store, report, fmt: str, engine: str, base: str,
                line: int | None = None) -> str:
    """Register one run for a result dict and insert its per-request rows (if any).
    Returns the run_id. Bad array entries (wrong type, or out of range: _common.RANGES, or a
    negative ITL) are skipped with their index as the field ("field 'ttfts[3]': negative
    value: -0.2")."""
    ttfts = obj.get("ttfts")
    n = len(ttfts) if isinstance(ttfts, list) else 0
    for k in ARRAYS:
        v = obj.get(k)
        if v is not None and (not isinstance(v, list) or len(v) != n):
            raise RowError(k, f"expected a list of {n} entries like 'ttfts'")
    rows, itls = [], {}
    for i in range(n):
        try:
            rid = str(i)
            err = text(obj["errors"][i]) if obj.get("errors") else None
            ttft = num(ttfts[i], f"ttfts[{i}]", 1000.0)
            gaps = obj["itls"][i] if obj.get("itls") else None
            if gaps is not None and not isinstance(gaps, list):
                raise RowError(f"itls[{i}]", "expected a list")
            gaps_ms = [num(g, f"itls[{i}]", 1000.0) for g in (gaps or [])]
            gaps_ms = [g for g in gaps_ms if g is not None]
            row = {"request_id": rid,
                   "ttft_ms": None if (err and not ttft) else ttft,
                   "tpot_ms": mean(gaps_ms),
                   "prompt_tokens": integer(obj["input_lens"][i], f"input_lens[{i}]")
                   if obj.get("input_lens") else None,
                   "completion_tokens": integer(obj["output_lens"][i], f"output_lens[{i}]")
                   if obj.get("output_lens") else None,
                   "error": err}
            if row["ttft_ms"] is not None and gaps_ms:
                row["e2e_ms"] = row["ttft_ms"] + sum(gaps_ms)
            check_ranges(row, {"ttft_ms": (f"ttfts[{i}]", 1000.0),
                               "tpot_ms": (f"mean(itls[{i}])", 1000.0),
                               "e2e_ms": (f"ttfts[{i}] + sum(itls[{i}])", 1000.0),
                               "prompt_tokens": f"input_lens[{i}]",
                               "completion_tokens": f"output_lens[{i}]"})
            check_itls(gaps_ms, f"itls[{i}]", 1000.0)
            if gaps_ms:
                itls[rid] = gaps_ms
        except RowError as e:
            report.skip(e.reason, line=line, field_name=e.field)
            continue
        rows.append(row)
    cfg = {k: obj[k] for k in CONFIG_KEYS if k in obj}
    version = text(obj.get("engine_version") or obj.get("vllm_version") or obj.get("version"))
    model = text(obj.get("model_id") or obj.get("model") or obj.get("tokenizer_id"))
    run_id = register_run(store, report, path, fmt, base, engine=engine,
                          engine_version=version, model=model,
                          label=text(obj.get("label")),
                          benchmark=text(obj.get("dataset_name")) or "serving", config=cfg)
    insert_requests(store, report, run_id, rows)
    insert_token_latencies(store, run_id, itls)
    if n:
        report.columns.update(MAPPING)
        if any("e2e_ms" in r for r in rows):
            report.columns["ttfts + sum(itls)"] = "e2e_ms (x1000)"
    return run_id
