"""vLLM server log: the periodic engine-stat lines (into engine_stats).

Source: vllm/engine/metrics.py (V0, "metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg
generation throughput: 0.0 tokens/s, Running: 0 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV
cache usage: 0.0%, CPU KV cache usage: 0.0%.") and vllm/v1/metrics/loggers.py (V1, "Engine 000:
Avg prompt throughput: ..., Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix
cache hit rate: 0.0%"). Each line starts with "LEVEL MM-DD HH:MM:SS".
Mapping: prompt_tps / gen_tps (tokens/s), running, waiting (= Pending or Waiting), swapped,
kv_usage_gpu / kv_usage_cpu and prefix_cache_hit_rate as fractions in [0, 1] (the log prints
percent). The log has no year: ts_s counts seconds from the first stat line (runs.config keeps
its "MM-DD HH:MM:SS"). Other log lines are not records and are passed over.
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pandas as pd

from .base import Sniff
from ._common import no_rows, register_run

NAME = "vllm_log"
KIND = "stats"

_STAT = re.compile(r"Avg prompt throughput:\s*(?P<ptps>[-\d.eE+]+) tokens/s")
_TS = re.compile(r"\b(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d+))?\b")
_FIELDS = {
    "gen_tps": (r"Avg generation throughput:\s*([-\d.eE+]+)", 1.0),
    "running": (r"Running:\s*(\d+)", 1.0),
    "swapped": (r"Swapped:\s*(\d+)", 1.0),
    "waiting": (r"(?:Pending|Waiting):\s*(\d+)", 1.0),
    "kv_usage_gpu": (r"GPU KV cache usage:\s*([\d.]+)%", 0.01),
    "kv_usage_cpu": (r"CPU KV cache usage:\s*([\d.]+)%", 0.01),
    "prefix_cache_hit_rate": (r"(?:GPU )?[Pp]refix cache hit rate:\s*(?:GPU:\s*)?([\d.]+)%", 0.01),
}
_RX = {k: (re.compile(p), s) for k, (p, s) in _FIELDS.items()}


def detect(sniff: Sniff) -> float:
    """High when the head holds vLLM's "Avg prompt throughput: ... Running: ..." lines."""
    if sniff.is_binary:
        return 0.0
    if "Avg prompt throughput:" in sniff.head and "Running:" in sniff.head:
        return 0.9
    return 0.0


def load(path: Path, store, report) -> None:
    """Load the stat lines of one vLLM log as one run's engine_stats."""
    recs, first_stamp = [], None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line, raw in enumerate(fh, 1):
            m = _STAT.search(raw)
            if not m:
                continue
            t = _TS.search(raw[:m.start()])
            if not t:
                report.skip("stat line without a 'MM-DD HH:MM:SS' time", line=line)
                continue
            mo, d, hh, mi, ss, frac = t.groups()
            try:
                when = datetime(2000, int(mo), int(d), int(hh), int(mi), int(ss),
                                int((frac or "0")[:6].ljust(6, "0")))
            except ValueError as e:
                report.skip(f"bad time ({e})", line=line)
                continue
            row = {"when": when, "prompt_tps": float(m.group("ptps"))}
            for k, (rx, scale) in _RX.items():
                f = rx.search(raw)
                row[k] = float(f.group(1)) * scale if f else None
            recs.append(row)
            first_stamp = first_stamp or t.group(0)
    if not recs:
        raise no_rows(path, report, "engine-stat")
    df = pd.DataFrame(recs)
    t0 = df["when"].min()
    df["ts_s"] = (df["when"] - t0).dt.total_seconds()
    df = df.drop(columns="when")
    run_id = register_run(store, report, path, NAME, f"vllm_log:{path.stem}", engine="vllm",
                          benchmark=None, config={"first_stat_line_time": first_stamp})
    df.insert(0, "run_id", run_id)
    report.rows_loaded += store.append("engine_stats", df)
    names = {"prompt_tps": "Avg prompt throughput", "gen_tps": "Avg generation throughput",
             "running": "Running", "swapped": "Swapped", "waiting": "Pending / Waiting",
             "kv_usage_gpu": "GPU KV cache usage %", "kv_usage_cpu": "CPU KV cache usage %",
             "prefix_cache_hit_rate": "Prefix cache hit rate %"}
    report.columns["MM-DD HH:MM:SS"] = "ts_s (seconds since the first stat line)"
    for col, src in names.items():
        if df[col].notna().any():
            report.columns[src] = col + (" (/100)" if src.endswith("%") else "")
