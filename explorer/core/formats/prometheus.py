"""Prometheus text exposition of vLLM (and SGLang) server metrics (into engine_stats).

Source: the Prometheus text format 0.0.4 (`name{label="v",...} value [timestamp_ms]`, with
`# HELP` / `# TYPE` comments) as served by vLLM's /metrics (vllm/engine/metrics.py,
vllm/v1/metrics/loggers.py). A file may hold one scrape or several concatenated: a new scrape
starts when a series repeats, or samples are grouped by their timestamp when they carry one.
Mapping per scrape (label sets summed for counts, averaged for fractions):
  vllm:num_requests_running -> running; vllm:num_requests_waiting -> waiting;
  vllm:num_requests_swapped -> swapped; vllm:gpu_cache_usage_perc | vllm:kv_cache_usage_perc
  -> kv_usage_gpu (already 0..1); vllm:cpu_cache_usage_perc -> kv_usage_cpu;
  vllm:gpu_prefix_cache_hit_rate -> prefix_cache_hit_rate, else vllm:prefix_cache_hits_total /
  vllm:prefix_cache_queries_total (cumulative); vllm:num_preemptions_total -> num_preemptions
  (cumulative); vllm:avg_prompt_throughput_toks_per_s / avg_generation_... -> prompt_tps /
  gen_tps; SGLang: sglang:num_running_reqs, sglang:num_queue_reqs, sglang:token_usage,
  sglang:cache_hit_rate. ts_s = sample timestamp / 1000 (unix s), NULL when the scrape has
  none. Histogram means (<name>_sum / <name>_count of the last scrape, e.g. TTFT) go to
  runs.config.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from .base import Sniff
from ._common import no_rows, register_run, text

NAME = "prometheus"
KIND = "stats"

_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+"
                     r"(?P<value>[-+]?(?:[0-9.]+(?:[eE][-+]?\d+)?|NaN|[Ii]nf))"
                     r"(?:\s+(?P<ts>-?\d+))?\s*$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
SUMMED = {
    "vllm:num_requests_running": "running", "sglang:num_running_reqs": "running",
    "vllm:num_requests_waiting": "waiting", "sglang:num_queue_reqs": "waiting",
    "vllm:num_requests_swapped": "swapped",
    "vllm:num_preemptions_total": "num_preemptions", "vllm:num_preemptions": "num_preemptions",
    "vllm:avg_prompt_throughput_toks_per_s": "prompt_tps",
    "vllm:avg_generation_throughput_toks_per_s": "gen_tps",
    "sglang:gen_throughput": "gen_tps",
}
AVERAGED = {
    "vllm:gpu_cache_usage_perc": "kv_usage_gpu", "vllm:kv_cache_usage_perc": "kv_usage_gpu",
    "sglang:token_usage": "kv_usage_gpu",
    "vllm:cpu_cache_usage_perc": "kv_usage_cpu",
    "vllm:gpu_prefix_cache_hit_rate": "prefix_cache_hit_rate",
    "sglang:cache_hit_rate": "prefix_cache_hit_rate",
}


def detect(sniff: Sniff) -> float:
    """High when the head holds Prometheus samples of vllm:* (or sglang:*) metrics."""
    if sniff.is_binary:
        return 0.0
    lines = sniff.first_lines(200)
    samples = sum(bool(_SAMPLE.match(ln.strip())) for ln in lines if not ln.startswith("#"))
    engine = sum(ln.lstrip("# HELPTYPE").startswith(("vllm:", "sglang:")) or
                 ln.startswith(("vllm:", "sglang:")) for ln in lines)
    if samples and engine:
        return 0.9
    if samples and any(ln.startswith("# TYPE") for ln in lines):
        return 0.35
    return 0.0


def _parse(path: Path, report) -> list[list[tuple[str, dict, float, int | None]]]:
    scrapes: list[list] = [[]]
    seen: set = set()
    last_ts = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line, raw in enumerate(fh, 1):
            s = raw.strip()
            if not s or s.startswith("#"):
                continue
            m = _SAMPLE.match(s)
            if not m:
                report.skip(f"not a Prometheus sample: {s[:40]!r}", line=line)
                continue
            labels = dict(_LABEL.findall(m.group("labels") or ""))
            ts = int(m.group("ts")) if m.group("ts") else None
            key = (m.group("name"), tuple(sorted(labels.items())))
            new = (ts is not None and last_ts is not None and ts != last_ts) or \
                  (ts is None and key in seen)
            if new and scrapes[-1]:
                scrapes.append([])
                seen = set()
            seen.add(key)
            last_ts = ts
            scrapes[-1].append((m.group("name"), labels, float(m.group("value")), ts))
    return [s for s in scrapes if s]


def load(path: Path, store, report) -> None:
    """Load each scrape of a metrics dump as one engine_stats row of one run."""
    scrapes = _parse(path, report)
    rows, model = [], None
    for sc in scrapes:
        acc: dict[str, list[float]] = {}
        hits = queries = 0.0
        ts = None
        for name, labels, value, t in sc:
            model = model or text(labels.get("model_name"))
            ts = t if t is not None else ts
            col = SUMMED.get(name) or AVERAGED.get(name)
            if col:
                acc.setdefault(col, []).append(value)
            elif name in ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"):
                hits += value
            elif name in ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"):
                queries += value
        row = {c: (sum(v) if c in SUMMED.values() else sum(v) / len(v)) for c, v in acc.items()}
        if "prefix_cache_hit_rate" not in row and queries > 0:
            row["prefix_cache_hit_rate"] = hits / queries
        if row:
            row["ts_s"] = ts / 1000.0 if ts is not None else None
            rows.append(row)
    if not rows:
        raise no_rows(path, report, "engine metric (vllm:* / sglang:*)")
    hist = {}
    for name, labels, value, _ in scrapes[-1]:
        if name.endswith("_sum") and (name.startswith(("vllm:", "sglang:"))):
            hist.setdefault(name[:-4], [0.0, 0.0])[0] += value
        elif name.endswith("_count") and (name.startswith(("vllm:", "sglang:"))):
            hist.setdefault(name[:-6], [0.0, 0.0])[1] += value
    config = {f"{k}_mean": s / c for k, (s, c) in hist.items() if c > 0}
    config["scrapes"] = len(scrapes)
    engine = "sglang" if scrapes[0][0][0].startswith("sglang:") else "vllm"
    run_id = register_run(store, report, path, NAME, f"prometheus:{path.stem}", engine=engine,
                          model=model, config=config)
    df = pd.DataFrame(rows)
    df.insert(0, "run_id", run_id)
    report.rows_loaded += store.append("engine_stats", df)
    used = {n: c for n, c in {**SUMMED, **AVERAGED}.items() if any(n == x[0] for sc in scrapes for x in sc)}
    report.columns.update({n: f"{c}" + (" (summed over label sets)" if n in SUMMED else "")
                           for n, c in used.items()})
    if any(x[0].startswith(("vllm:prefix_cache_", "vllm:gpu_prefix_cache_hits")) for sc in scrapes for x in sc):
        report.columns["vllm:prefix_cache_hits_total / queries_total"] = "prefix_cache_hit_rate"
    report.columns["(sample timestamp ms)"] = "ts_s (/1000)"
