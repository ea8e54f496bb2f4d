"""The result dict that vLLM `bench serve --save-result` and SGLang `bench_serving` write.

Source: vllm/benchmarks/serve.py (also the older benchmarks/benchmark_serving.py) and
sglang/bench_serving.py. Aggregates (`mean_ttft_ms`, `request_throughput`, ...) are always
there and become `run_metrics` rows (_results: the vocabulary, and the zeros of a run with no
successful request dropped); with `--save-detailed` (vLLM) or `--output-details` (SGLang) the
per-request arrays `input_lens`, `output_lens`, `ttfts` (s), `itls` (list of lists, s),
`errors` (text, "" when fine), `generated_texts` and, in recent vLLM, `latencies` (s) and
`start_times` (s, perf_counter) are added.

One request row per array position, with the benchmarks' own definitions (calculate_metrics in
both files):
- a request failed when its `errors` entry is not empty; it keeps its error and no metric
  (vLLM writes output_len 0 and ttft 0 for it);
- ttft_ms = ttfts x 1000; a successful request that streamed no chunk has ttft 0.0 in the
  file (the initial value, not a measurement): stored NULL (vLLM counts it as 0 in its mean,
  see explorer.core.runs.recompute);
- e2e_ms = latencies x 1000 where the file has them, else (ttft + sum(itls)) x 1000 (the
  time of the last streamed chunk; the benchmark's latency can end a little later, at the
  stream's end, so TPOT recomputed from it agrees with the published one to about 1 %);
  NULL when the request streamed nothing;
- tpot_ms = (e2e - ttft) / (output_len - 1) for output_len > 1, else NULL. NOT the mean of
  the request's `itls`: those hold one gap per streamed CHUNK (12 gaps for 120 tokens in a
  real vLLM 0.6 result), so their mean is the time per chunk;
- token_latencies = the `itls` gaps in ms, token_index = the chunk's position (1 = the gap
  after the first chunk): the benchmarks' ITL is exactly these gaps, pooled;
- arrival_s = start_times - min(start_times) where present.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..i18n import _
from .base import split_lines
from ._common import (RowError, check_itls, check_ranges, insert_requests,
                      insert_token_latencies, integer, num, register_run, text)
from ._results import insert_run_metrics, published_rows
from ._vocab import VOCAB

ARRAYS = ("ttfts", "itls", "input_lens", "output_lens", "errors", "latencies", "start_times")
AGG_KEYS = ("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "request_throughput",
            "output_throughput", "completed", "duration")
CONFIG_KEYS = tuple(VOCAB["result_config"]["keys"])  # resources/metrics.toml



def mapping() -> dict[str, str]:
    """The per-request arrays and the columns they fill (LoadReport.columns), in the current
    language."""
    return {"ttfts": "ttft_ms (x1000)",
            "itls": _("token_latencies.itl_ms (x1000, one gap per streamed chunk)"),
            "(e2e - ttft) / (output_lens - 1)": "tpot_ms (output_lens > 1)",
            "input_lens": "prompt_tokens",
            "output_lens": "completion_tokens",
            "errors": "error",
            _("(array position)"): "request_id"}


def flavour(sniff) -> str | None:
    """'sglang' (JSONL, one result a line, SGLang's own keys such as mean_e2e_latency_ms or a
    backend named sglang*), 'vllm' (one JSON object) or None when the head is no serving result."""
    head = sniff.head.lstrip()
    if head.startswith("[") and head[1:].lstrip().startswith("{"):
        return "vllm" if _agg_hits(sniff.head) >= 3 else None  # vllm bench sweep summary.json
    if not head.startswith("{"):
        return None
    hits = _agg_hits(sniff.head)
    if hits < 3 and not ('"ttfts"' in sniff.head and '"input_lens"' in sniff.head):
        return None
    lines = [ln for ln in split_lines(sniff.head) if ln.strip()]
    jsonl = len(lines) > 1 and lines[0].strip().startswith("{") and lines[0].strip().endswith("}")
    sglang_keys = any(f'"{k}"' in sniff.head for k in ("mean_e2e_latency_ms", "sharegpt_output_len",
                                                       "random_range_ratio"))
    if jsonl or sglang_keys or re.search(r'"backend"\s*:\s*"sglang', sniff.head):
        return "sglang"
    return "vllm"


def _agg_hits(head: str) -> int:
    return sum(f'"{k}"' in head for k in AGG_KEYS)


def sweep_label(obj: dict, path: Path) -> str | None:
    """'<folder> run=N' for a run of `vllm bench sweep` (it adds run_number and the swept
    parameters to each result; the folder is named after the serve / bench parameters)."""
    if "run_number" not in obj:
        return None
    p = Path(path)
    where = p.parent.name if p.name == "summary.json" or p.stem.startswith("run=") else p.stem
    return f"{where} run={obj['run_number']}"


def is_result(obj) -> bool:
    """True when `obj` looks like a serving benchmark result (aggregates or arrays)."""
    return isinstance(obj, dict) and (
        sum(k in obj for k in AGG_KEYS) >= 3 or ("ttfts" in obj and "input_lens" in obj))


def load_result(obj: dict, path: Path, store, report, fmt: str, engine: str, base: str,
                line: int | None = None, label: str | None = None) -> str:
    """Register one run for a result dict and insert its per-request rows (if any).
    Returns the run_id. Bad array entries (wrong type, or out of range: _common.RANGES, or a
    negative ITL) are skipped with their index as the field ("field 'ttfts[3]': negative
    value: -0.2")."""
    ttfts = obj.get("ttfts")
    n = len(ttfts) if isinstance(ttfts, list) else 0
    for k in ARRAYS:
        v = obj.get(k)
        if v is not None and (not isinstance(v, list) or len(v) != n):
            raise RowError(k, _("expected a list of {n} entries like 'ttfts'").format(n=n))
    starts = obj.get("start_times")
    t0 = min((x for x in starts if isinstance(x, (int, float))), default=None) if starts else None
    rows, itls = [], {}
    for i in range(n):
        try:
            rows_i, gaps_ms = _request(obj, i, ttfts, t0)
        except RowError as e:
            report.skip(e.reason, line=line, field_name=e.field)
            continue
        rows.append(rows_i)
        if gaps_ms:
            itls[rows_i["request_id"]] = gaps_ms
    cfg = {k: obj[k] for k in CONFIG_KEYS if k in obj}
    version = text(obj.get("engine_version") or obj.get("vllm_version") or obj.get("version"))
    model = text(obj.get("model_id") or obj.get("model") or obj.get("tokenizer_id"))
    run_id = register_run(store, report, path, fmt, base, engine=engine,
                          engine_version=version, model=model,
                          label=text(obj.get("label")) or label,
                          benchmark=text(obj.get("dataset_name")) or "serving", config=cfg)
    insert_requests(store, report, run_id, rows)
    insert_token_latencies(store, run_id, itls)
    insert_run_metrics(store, run_id, published_rows(obj))
    if n:
        report.columns.update(mapping())
        report.columns["latencies" if obj.get("latencies") else "ttfts + sum(itls)"] = \
            "e2e_ms (x1000)"
        if obj.get("start_times"):
            report.columns["start_times"] = _("arrival_s (from the first start)")
    return run_id


def _request(obj: dict, i: int, ttfts: list, t0: float | None) -> tuple[dict, list[float]]:
    """One request row (see the module doc) and its chunk gaps in ms. Raises RowError."""
    err = text(obj["errors"][i]) if obj.get("errors") else None
    row = {"request_id": str(i), "error": err,
           "prompt_tokens": integer(obj["input_lens"][i], f"input_lens[{i}]")
           if obj.get("input_lens") else None}
    if obj.get("start_times") and t0 is not None:
        start = num(obj["start_times"][i], f"start_times[{i}]")
        row["arrival_s"] = None if start is None else start - t0
    if err:  # vLLM writes ttft 0 / output_len 0 for a failed request: no measurement
        return row, []
    ttft = num(ttfts[i], f"ttfts[{i}]", 1000.0)
    gaps = obj["itls"][i] if obj.get("itls") else None
    if gaps is not None and not isinstance(gaps, list):
        raise RowError(f"itls[{i}]", "expected a list")
    gaps_ms = [g for g in (num(g, f"itls[{i}]", 1000.0) for g in (gaps or [])) if g is not None]
    out = integer(obj["output_lens"][i], f"output_lens[{i}]") if obj.get("output_lens") else None
    if ttft == 0 and not gaps_ms:
        ttft = None  # no chunk arrived: 0.0 is the benchmark's initial value
    lat = num(obj["latencies"][i], f"latencies[{i}]", 1000.0) if obj.get("latencies") else None
    e2e = lat if lat is not None else (ttft + sum(gaps_ms) if ttft is not None else None)
    row.update({"ttft_ms": ttft, "e2e_ms": e2e, "completion_tokens": out,
                "tpot_ms": (e2e - ttft) / (out - 1)
                if e2e is not None and ttft is not None and out is not None and out > 1 else None})
    check_ranges(row, {"ttft_ms": (f"ttfts[{i}]", 1000.0),
                       "tpot_ms": (f"(e2e - ttft) / (output_lens[{i}] - 1)", 1000.0),
                       "e2e_ms": (f"latencies[{i}]" if lat is not None
                                  else f"ttfts[{i}] + sum(itls[{i}])", 1000.0),
                       "prompt_tokens": f"input_lens[{i}]",
                       "completion_tokens": f"output_lens[{i}]"})
    check_itls(gaps_ms, f"itls[{i}]", 1000.0)
    return row, gaps_ms
