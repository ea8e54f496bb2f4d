"""The alias table of the generic CSV / Parquet / JSONL trace format (its lists are data:
resources/metrics.toml [columns], [columns_full], [run_fields], [eval_columns]).

A source column is matched after normalisation (lower case; spaces, '-', '.', '/' -> '_'):
first against FULL_NAMES (names that carry their own unit), else split into base + unit
suffix and the base looked up in ALIASES. Unit suffixes (UNIT_SUFFIXES) give the scale to the
canonical unit: times -> ms (`_s`, `_sec`, `_seconds` x1000; `_ms` x1; `_us` /1000; `_ns` /1e6),
arrival -> s, rates `_pct` / `_percent` /100. A time column without a unit suffix has its unit
guessed from the data and the guess is written into the load report (see BARE_TIME_SECONDS_BELOW).

| canonical            | aliases (base names)                                                  |
|----------------------|-----------------------------------------------------------------------|
"""
from __future__ import annotations

from functools import lru_cache

from ._vocab import VOCAB, normalise  # normalise: imported from here too

# canonical column -> base names (without unit suffix); the lists live in resources/metrics.toml
ALIASES: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in VOCAB["columns"].items()}
# full normalised names that carry an unusual unit: name -> (canonical, scale)
FULL_NAMES: dict[str, tuple[str, float]] = {k: (v[0], float(v[1]))
                                            for k, v in VOCAB["columns_full"].items()}
# run-level columns: a single distinct value becomes runs.<field>
RUN_FIELDS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in VOCAB["run_fields"].items()}
# A request's own outcome (not an answer's correctness): a failure value ("false", "error",
# "timeout", an HTTP status >= 400, ...) gives the row an error when no error column says more.
OUTCOME = tuple(VOCAB["eval_columns"]["outcome"])
OUTCOME_FAILURES = tuple(VOCAB["eval_columns"]["outcome_failures"])
# Correctness columns make a table an EVAL file, not a trace (`reward`: RL / verifier pipelines,
# `resolved`: SWE-bench style harnesses); BINARY_CORRECTNESS names are correctness only when
# every value seen is 0 / 1 (or true / false): a `score` column elsewhere holds a grade.
CORRECTNESS = tuple(VOCAB["eval_columns"]["correctness"])
BINARY_CORRECTNESS = tuple(VOCAB["eval_columns"]["binary_correctness"])

TIME_MS = ("ttft_ms", "tpot_ms", "e2e_ms", "queue_ms", "prefill_ms", "decode_ms")
UNIT_SUFFIXES: dict[str, float] = {  # scale to ms
    "ms": 1.0, "msec": 1.0, "millis": 1.0, "milliseconds": 1.0,
    "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0,
    "us": 1e-3, "usec": 1e-3, "micros": 1e-3, "ns": 1e-6, "nsec": 1e-6, "nanos": 1e-6,
}
PERCENT_SUFFIXES = ("pct", "percent", "perc")
# a time column without a unit suffix is taken as seconds when its median lies below this
# (ms otherwise): a median TTFT / E2E under 20 ms or a TPOT under 1 ms is implausible in ms.
BARE_TIME_SECONDS_BELOW = {"tpot_ms": 1.0, "default": 20.0}

_INDEX = {base: canon for canon, bases in ALIASES.items() for base in bases}


@lru_cache(maxsize=8192)
def match(name: str) -> tuple[str, float | None, str] | None:
    """(canonical column, scale or None when the unit must be guessed, unit text) for a source
    column name, or None when it maps to nothing. Arrival scales convert to seconds."""
    n = normalise(name)
    if n in FULL_NAMES:
        canon, scale = FULL_NAMES[n]
        return canon, scale, "ms"
    if n in _INDEX and _INDEX[n] not in TIME_MS and _INDEX[n] != "arrival_s":
        return _INDEX[n], 1.0, ""
    base, _, unit = n.rpartition("_")
    if base and base in _INDEX:
        canon = _INDEX[base]
        if canon in TIME_MS and unit in UNIT_SUFFIXES:
            return canon, UNIT_SUFFIXES[unit], unit
        if canon == "arrival_s" and unit in UNIT_SUFFIXES:
            return canon, UNIT_SUFFIXES[unit] / 1000.0, unit
        if canon == "kv_cache_hit_rate" and unit in PERCENT_SUFFIXES:
            return canon, 0.01, "%"
    if n in _INDEX:
        return _INDEX[n], None, ""  # time without a unit suffix: guess from the data
    return None


def run_field(name: str) -> str | None:
    """The runs column a source column names (model, engine, ...), or None."""
    n = normalise(name)
    for f, names in RUN_FIELDS.items():
        if n in names:
            return f
    return None


def is_correctness(name: str) -> bool:
    """True for a correctness column (an eval file's label) by its name alone."""
    return normalise(name) in CORRECTNESS


def _binary(v) -> bool:
    if isinstance(v, bool):
        return True
    s = str(v).strip().lower()
    return s in ("0", "1", "0.0", "1.0", "true", "false")


def correctness_column(columns, records=()) -> str | None:
    """The correctness column among `columns` (the actual name): the first CORRECTNESS name
    present, else a BINARY_CORRECTNESS column whose values in `records` (dicts; None / '' pass
    over) are all 0 / 1 / true / false, with at least one value; None when there is none."""
    by_norm = {}
    for c in columns:
        by_norm.setdefault(normalise(c), c)
    for n in CORRECTNESS:
        if n in by_norm:
            return by_norm[n]
    for n in BINARY_CORRECTNESS:
        c = by_norm.get(n)
        if c is None:
            continue
        vals = [r.get(c) for r in records if r.get(c) is not None and str(r.get(c)).strip() != ""]
        if vals and all(_binary(v) for v in vals):
            return c
    return None


def _table() -> str:
    return "\n".join(f"| {c:<20} | {', '.join(b):<69} |" for c, b in ALIASES.items())


__doc__ += _table() + "\n"
