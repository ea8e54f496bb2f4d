"""SGLang server log: the scheduler's batch lines (into engine_stats).

Source: python/sglang/srt/managers/scheduler.py (log_prefill_stats / log_decode_stats; the
wording has been stable since 2024, fields were added over time):
  "[2025-09-03 05:49:04] Prefill batch. #new-seq: 1, #new-token: 115, #cached-token: 351,
   token usage: 0.02, #running-req: 0, #queue-req: 0,"
  "[04:40:55 TP0] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00,
   gen throughput (token/s): 447.31, #queue-req: 0" (sglang#1270: time only)
Older releases print "cache hit rate: 45.26%" in the prefill line; newer ones add "cuda graph:",
"#retracted-req", "input throughput (token/s)", ... (passed over unless mapped below).
Mapping: running = #running-req; waiting = #queue-req; kv_usage_gpu = token usage (the share of
the KV pool's tokens in use, already 0..1); gen_tps = gen throughput (token/s); prompt_tps =
input throughput (token/s) where printed; prefix_cache_hit_rate (prefill lines) = #cached-token
/ (#cached-token + #new-token), the share of this batch's prompt tokens served by the radix
cache (the logged "cache hit rate" where there is no #cached-token). engine = the rank tag
after the time ("TP0", "DP1 TP0"), NULL when there is none. ts_s: see _stats.clock (a line
without a time is skipped with its number).
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from ..i18n import N_, _
from .base import Sniff
from ._common import register_run
from ._stats import clock, insert_stats

NAME = "sglang_log"
KIND = "stats"

_BATCH = re.compile(r"(?P<kind>Prefill|Decode) batch[.,]")
_TS = re.compile(r"\[(?:(\d{4})-(\d\d)-(\d\d) )?(\d\d):(\d\d):(\d\d)(?:[.,]\d+)?\s*(?P<tag>[^\]]*)\]")
_INT = {"running": r"#running-req(?:s)?:\s*(\d+)", "waiting": r"#queue-req:\s*(\d+)",
        "new": r"#new-token:\s*(\d+)", "cached": r"#cached-token:\s*(\d+)"}
_FLOAT = {"kv_usage_gpu": r"token usage:\s*([\d.]+)",
          "gen_tps": r"gen throughput \(token/s\):\s*([\d.]+)",
          "prompt_tps": r"input throughput \(token/s\):\s*([\d.]+)",
          "logged_hit_pct": r"cache hit rate:\s*([\d.]+)%"}
_RX = {k: re.compile(p) for k, p in {**_INT, **_FLOAT}.items()}


def detect(sniff: Sniff) -> float:
    """High when the head holds SGLang's "Decode batch. #running-req: ..." or "Prefill batch.
    #new-seq: ..." scheduler lines."""
    if sniff.is_binary:
        return 0.0
    h = sniff.head
    if ("Decode batch" in h or "Prefill batch" in h) and ("#running-req" in h or "#new-seq" in h):
        return 0.9
    return 0.0


def _row(raw: str, kind: str) -> dict:
    v = {k: rx.search(raw) for k, rx in _RX.items()}
    g = {k: float(m.group(1)) if m else None for k, m in v.items()}
    row = {k: g[k] for k in ("running", "waiting", "kv_usage_gpu", "gen_tps", "prompt_tps")}
    if kind == "Prefill":
        new, cached = g["new"], g["cached"]
        if new is not None and cached is not None:
            row["prefix_cache_hit_rate"] = cached / (new + cached) if new + cached > 0 else None
        elif g["logged_hit_pct"] is not None:
            row["prefix_cache_hit_rate"] = g["logged_hit_pct"] / 100
    return row


_MODEL = re.compile(r"ServerArgs\(model_path=['\"]([^'\"]+)['\"]")


def load(path: Path, store, report) -> None:
    """Load the Prefill / Decode batch lines of one SGLang log as one run's engine_stats."""
    recs, stamps, dated = [], [], []
    model = None  # the server_args=ServerArgs(model_path='…', …) line the server logs first
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for line, raw in enumerate(fh, 1):
            b = _BATCH.search(raw)
            if not b:
                if model is None and "model_path=" in raw:
                    m = _MODEL.search(raw)
                    model = m.group(1) if m else None
                continue
            t = _TS.search(raw[:b.start()])
            if not t:
                report.skip(_("batch line without a '[HH:MM:SS]' time"), line=line)
                continue
            yr, mo, d, hh, mi, ss, tag = t.groups()
            try:
                when = datetime(int(yr or 2000), int(mo or 1), int(d or 1), int(hh), int(mi), int(ss))
            except ValueError as e:
                report.skip(_("bad time ({error})").format(error=e), line=line)
                continue
            row = _row(raw[b.start():], b.group("kind"))
            row["engine"] = tag.strip() or None
            recs.append(row)
            stamps.append(when)
            dated.append(yr is not None)
    precision = "date" if dated and all(dated) else "time"
    ts, cfg = clock(stamps, precision) if recs else ([], {})
    for r, x in zip(recs, ts):
        r["ts_s"] = x
    run_id = register_run(store, report, path, NAME, f"sglang_log:{path.stem}", engine="sglang",
                          config=cfg, model=model)
    insert_stats(store, report, path, run_id, recs, N_("scheduler batch"))
    report.columns.update({
        "[date time]": "ts_s (unix s)" if precision == "date" else _("ts_s (seconds since the first line)"),
        "#running-req": "running", "#queue-req": "waiting", "token usage": "kv_usage_gpu",
        "gen throughput (token/s)": "gen_tps",
        "#cached-token / (#cached-token + #new-token)": "prefix_cache_hit_rate",
        "[... TPn]": "engine"})
