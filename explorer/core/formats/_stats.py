"""Shared by the engine-statistics loaders (vLLM and SGLang logs, Prometheus scrapes): the log
clock and the insertion of engine_stats rows.

A log line's time says what it knows: a full date ("2025-09-03 05:49:04") puts ts_s on the unix
clock (the log's local time read as UTC: servers usually log in UTC and the log names no zone);
vLLM's "MM-DD HH:MM:SS" has no year and SGLang's "[04:40:55 TP0]" no date, so ts_s then counts
seconds from the first stat line (a stamp that goes back by over half a year / half a day starts
the next year / day) and runs.config keeps that first stamp, which the per-request engine
context (queries/engine_request_context.sql) places on a trace's clock.
"""
from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from ..i18n import N_
from ._common import no_rows

STAT_COLUMNS = ("ts_s", "engine", "running", "waiting", "swapped", "kv_usage_gpu",
                "kv_usage_cpu", "prompt_tps", "gen_tps", "prefix_cache_hit_rate",
                "num_preemptions")
_EPOCH = datetime(1970, 1, 1)


def clock(stamps: list[datetime], precision: str) -> tuple[list[float], dict]:
    """ts_s for each stamp and the runs.config entries describing the clock.

    precision: "date" (year known: unix seconds), "month-day" (no year) or "time" (no date);
    the placeholder year / day of the last two is ignored: ts_s is relative to stamps[0]."""
    if precision == "date":
        ts = [(s - _EPOCH).total_seconds() for s in stamps]
        return ts, {"clock": N_("unix (log time read as UTC)")}  # shown through _()
    step = timedelta(days=1) if precision == "time" else None
    out, shift, prev = [], timedelta(0), None
    for s in stamps:
        if prev is not None and s + shift < prev - (timedelta(hours=12) if step else timedelta(days=182)):
            shift += step or (datetime(s.year + 1, 1, 1) - datetime(s.year, 1, 1))
        prev = s + shift
        out.append((prev - (stamps[0])).total_seconds())
    fmt = "%H:%M:%S" if precision == "time" else "%m-%d %H:%M:%S"
    return out, {"clock": N_("seconds since the first stat line"),
                 "first_stat_line_time": stamps[0].strftime(fmt)}


def insert_stats(store, report, path, run_id: str, rows: list[dict], what: str) -> int:
    """Append engine_stats rows (dicts with a subset of STAT_COLUMNS) for `run_id`; counts them
    in report.rows_loaded. Raises InputError (no_rows) when there is none."""
    if not rows:
        raise no_rows(path, report, what)
    df = pd.DataFrame(rows, columns=list(STAT_COLUMNS))
    for c in STAT_COLUMNS:
        if c != "engine":
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    df["engine"] = df["engine"].astype(object).where(df["engine"].notna(), None)
    df.insert(0, "run_id", run_id)
    n = store.append("engine_stats", df)
    report.rows_loaded += n
    return n
