"""Helpers shared by the trace format modules: typed field reading with skip reasons, run
registration and request insertion.

A record-level problem (a field of the wrong type, or a value out of range: see RANGES and
check_ranges) raises RowError inside a loader's loop; the loader turns it into
report.skip(reason, line, field) and goes on, so one bad row never sinks the file. A file that
yields no usable row at all raises InputError naming the first reason.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from ..errors import InputError
from ..i18n import N_, _, field_text, ngettext
from ._aliases import TIME_MS

REQUEST_COLUMNS = (
    "request_id", "arrival_s", "prompt_tokens", "completion_tokens", "cached_prompt_tokens",
    "kv_cache_hit_rate", "ttft_ms", "tpot_ms", "e2e_ms", "queue_ms", "prefill_ms", "decode_ms",
    "num_preemptions", "batch_size", "finish_reason", "error", "prompt_hash", "extra", "tenant",
)
INT_COLUMNS = ("prompt_tokens", "completion_tokens", "cached_prompt_tokens", "num_preemptions")
TIME_COLUMNS = TIME_MS  # the duration columns, in ms (one list, the alias table's)
INT_MAX = 2**31 - 1  # the store's INTEGER columns (token counts, preemptions)
# The time range the analyses can use: unix seconds up to 1e11 (the year 5138) and durations up
# to 1e11 ms (3 years). Beyond it, times in microseconds no longer fit INT64 in the binding and
# timeline SQL: one arrival of 1e300 s made every later load of the session fail.
MAX_TIME_S = 1e11
MAX_DURATION_MS = 1e11

# Value ranges of the canonical request columns, one row per rule: (columns, low, high, why);
# None = unbounded. A value outside makes its whole row unusable: the row is skipped with
# "field 'F': <why>: <value>" (never clipped, never stored as NULL). The same rules as
# generic_table's SQL checks: durations, token counts, preemptions and batch sizes are not
# negative, token counts / preemptions / batch sizes fit INTEGER, kv_cache_hit_rate lies in
# [0, 1], durations and arrival times lie in the time range (MAX_DURATION_MS, MAX_TIME_S).
RANGES: tuple[tuple[tuple[str, ...], float | None, float | None, str], ...] = (
    (INT_COLUMNS, 0, None, N_("negative value")),
    (INT_COLUMNS + ("batch_size",), None, INT_MAX, N_("out of range (above {int_max})")),
    (TIME_COLUMNS + ("batch_size",), 0, None, N_("negative value")),
    (TIME_COLUMNS, None, MAX_DURATION_MS, N_("beyond the time range (above {max_ms} ms)")),
    (("arrival_s",), -MAX_TIME_S, MAX_TIME_S, N_("beyond the time range (|t| above {max_s} s)")),
    (("kv_cache_hit_rate",), 0, 1, N_("hit rate outside [0, 1]")),
)  # the reasons as templates (N_): reason_text() translates and fills them
_RULES: dict[str, list[tuple[float | None, float | None, str]]] = {}
for _cols, _low, _high, _why in RANGES:
    for _c in _cols:
        _RULES.setdefault(_c, []).append((_low, _high, _why))


class RowError(ValueError):
    """One record cannot be used: `field` holds a value of the wrong type (or is missing)."""

    def __init__(self, field: str | None, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(field_text(field) + reason if field else reason)


def num(value: Any, field: str, scale: float = 1.0, required: bool = False) -> float | None:
    """`value` as a float times `scale`; None for missing / null / empty / NaN.

    Raises RowError when the value is a bool, a list, a dict or text that is not a number, or
    when `required` and the value is missing."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise RowError(field, _("missing"))
        return None
    if isinstance(value, bool) or isinstance(value, (list, dict)):
        raise RowError(field, _("not a number: {value}").format(value=json.dumps(value)[:40]))
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise RowError(field, _("not a number: {value}").format(value=repr(str(value)[:40]))) from None
    if math.isnan(x):
        if required:
            raise RowError(field, _("missing"))
        return None
    if math.isinf(x):
        raise RowError(field, _("infinite value"))
    return x * scale


def integer(value: Any, field: str) -> int | None:
    """`value` as an int (a float must be whole); None when missing. Raises RowError."""
    x = num(value, field)
    if x is None:
        return None
    if x != int(x):
        raise RowError(field, _("not a whole number: {value}").format(value=repr(value)))
    return int(x)


def reason_text(why: str) -> str:
    """A RANGES reason in the current language, its limits filled in."""
    return _(why).format(int_max=f"{INT_MAX:,}", max_ms=f"{MAX_DURATION_MS:.0e}",
                         max_s=f"{MAX_TIME_S:.0e}")


def range_rules(column: str) -> list[tuple[float | None, float | None, str]]:
    """The RANGES rules of one canonical column as (low, high, why), why in words
    (reason_text); [] when it has none. generic_table builds its SQL checks from these, the
    other loaders use check_ranges."""
    return [(lo, hi, reason_text(why)) for lo, hi, why in _RULES.get(column, ())]


def _shown(x: float) -> str:
    """A value as a reason shows it: whole numbers without '.0', others to 10 digits."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if abs(x) < 1e16 and (isinstance(x, int) or float(x).is_integer()):
        return str(int(x))
    return f"{x:.10g}"


def range_problems(row: Mapping[str, Any],
                   fields: Mapping[str, str | tuple[str, float]] | None = None
                   ) -> list[tuple[str, str]]:
    """(source field, "<why>: <value>") for each value of `row` (canonical request columns,
    canonical units) outside RANGES, in REQUEST_COLUMNS order; [] when all are in range.

    `fields` maps a canonical column to the source field it came from, optionally with the
    scale the loader applied (("ttft_s", 1000.0)): the reason then names that field and shows
    the value in the source's unit (-1.5 for a ttft_s of -1.5 stored as -1500 ms). Columns not
    in `fields` are named by their canonical name. Missing values (None, NaN) pass. Identical
    (field, reason) pairs (one source field feeding two columns) are reported once."""
    out: list[tuple[str, str]] = []
    for col in REQUEST_COLUMNS:
        rules = _RULES.get(col)
        v = row.get(col) if rules else None
        if v is None or pd.isna(v):
            continue
        for low, high, why in rules:
            if (low is not None and v < low) or (high is not None and v > high):
                src = (fields or {}).get(col, col)
                name, scale = (src, 1.0) if isinstance(src, str) else src
                p = (name, f"{reason_text(why)}: {_shown(v / scale if scale != 1.0 else v)}")
                if p not in out:
                    out.append(p)
    return out


def check_ranges(row: dict, fields: Mapping[str, str | tuple[str, float]] | None = None) -> dict:
    """Return `row` (a canonical request row) when every value lies in RANGES; else raise
    RowError(first bad field, reason) whose text, as report.skip prints it with the line,
    names every bad field in column order: "line 3: field 'input_len': negative value: -2;
    field 'ttft_s': negative value: -1.5". See range_problems for `fields`. Call it inside the
    loader's per-record try block (before the row's events / token latencies are kept), so
    the row is skipped and counted once."""
    why = range_reason(row, fields)
    if why:
        raise RowError(*why)
    return row


def range_reason(row: Mapping[str, Any],
                 fields: Mapping[str, str | tuple[str, float]] | None = None) -> tuple[str, str] | None:
    """(first bad field, reason) for a row outside RANGES, the reason naming every bad field
    after the first as check_ranges words it ("negative value: -2; field 'ttft_s': negative
    value: -1.5"); None when every value is in range. For loaders that skip rows themselves
    (vectorised CSV loaders, after range_mask)."""
    bad = range_problems(row, fields)
    if not bad:
        return None
    return bad[0][0], "; ".join([bad[0][1]] + [field_text(n) + w for n, w in bad[1:]])


def read_text_csv(path: Path, required: Iterable[str]) -> pd.DataFrame:
    """A CSV with every cell as text ('' for empty), for loaders that check values themselves.
    Raises InputError when it cannot be parsed or lacks a `required` column."""
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as e:
        raise InputError(path, _("not a readable CSV ({error})").format(error=e)) from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(path, ngettext("missing column {columns}", "missing columns {columns}",
                                        len(missing)).format(columns=", ".join(missing)))
    return df


def check_itls(values_ms: list, field: str, scale: float = 1.0) -> list:
    """Return `values_ms` (one request's inter-token latencies, ms; None = missing) when none
    is negative; else raise RowError(field, _("negative value: <first negative, in the source's
    unit (value / scale)>")), so the request is skipped like a negative duration in RANGES."""
    for v in values_ms:
        if v is not None and v < 0:
            raise RowError(field, f"{_('negative value')}: {_shown(v / scale if scale != 1.0 else v)}")
    return values_ms


def range_mask(frame: pd.DataFrame) -> pd.Series:
    """Vectorised RANGES test for a frame of canonical request columns (canonical units):
    a boolean Series, True for the rows with a value out of range (NaN / NA pass). Give the
    flagged rows' reasons with range_problems (row by row: they are few)."""
    bad = pd.Series(False, index=frame.index)
    for col, rules in _RULES.items():
        if col not in frame:
            continue
        v = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        for low, high, _why in rules:
            if low is not None:
                bad |= (v < low).fillna(False)
            if high is not None:
                bad |= (v > high).fillna(False)
    return bad


def text(value: Any) -> str | None:
    """`value` as a non-empty string, or None."""
    if value is None:
        return None
    s = str(value).strip()
    return s or None


def register_run(store, report, path: Path, fmt: str, base: str, *, engine: str | None = None,
                 engine_version: str | None = None, model: str | None = None,
                 label: str | None = None, benchmark: str | None = None, started_at=None,
                 config: dict | None = None, version_source: str | None = None) -> str:
    """Insert one `runs` row for a file and return its unique run_id (base, base#2, ...).
    The engine version is the one the loader read from the file's content (version_source
    "file content" unless the loader says otherwise), else the one the path names
    (version_rule; the source says which part and rule); the user may override it later
    (explorer.core.runs.set_version)."""
    engine_version, version_source = _version(store, path, engine_version, version_source)
    run_id = store.new_id("runs", "run_id", base)
    store.add_run(run_id, source_path=str(path), source_sha256=report.sha256, format=fmt,
                  engine=engine, engine_version=engine_version, version_source=version_source,
                  model=model,
                  label=label or Path(path).stem, benchmark=benchmark, started_at=started_at,
                  config=config)
    report.run_ids.append(run_id)
    return run_id


def _version(store, path: Path, engine_version: str | None,
             version_source: str | None) -> tuple[str | None, str | None]:
    """(engine version, where it came from) of a run: the loader's (from the file's content),
    else the path's (version_rule)."""
    if engine_version:
        return engine_version, version_source or _("file content")
    found = version_rule(getattr(store, "source_of", Path)(path))
    return found if found else (None, None)


def register_runs(store, items: list[tuple]) -> list[str]:
    """register_run for many files at once (Store.new_ids, Store.add_runs: one query for the
    ids taken, one INSERT): items are (report, path, fmt, base, fields) with fields as
    register_run's keywords (engine, model, benchmark, engine_version, ...). Returns the
    run_ids, in order; each report's run_ids gets its own."""
    ids = store.new_ids("runs", "run_id", [base for _, _, _, base, _ in items])
    rows = []
    for run_id, (report, path, fmt, base, fields) in zip(ids, items):
        fields = dict(fields)
        fields["engine_version"], fields["version_source"] = _version(
            store, path, fields.get("engine_version"), fields.get("version_source"))
        report.run_ids.append(run_id)
        rows.append({"run_id": run_id, "source_path": str(path), "source_sha256": report.sha256,
                     "format": fmt, "label": fields.pop("label", None) or Path(path).stem,
                     **fields})
    store.add_runs(rows)
    return ids


def requests_frame(rows: list[dict], run_id: str) -> pd.DataFrame:
    """DataFrame of canonical request rows (dicts with a subset of REQUEST_COLUMNS) with typed
    columns; `extra` dicts become JSON text. Integer columns use the nullable Int64 dtype."""
    df = pd.DataFrame(rows)
    df.insert(0, "run_id", run_id)
    if "extra" in df:
        df["extra"] = [None if x is None else json.dumps(x, default=str) for x in df["extra"]]
    for c in INT_COLUMNS:
        if c in df:
            df[c] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v))
                              else int(v) for v in df[c]], dtype="Int64")
    for c in ("arrival_s", "kv_cache_hit_rate", "ttft_ms", "tpot_ms", "e2e_ms", "queue_ms",
              "prefill_ms", "decode_ms", "batch_size"):
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    for c in ("request_id", "finish_reason", "error", "prompt_hash", "tenant"):
        if c in df:
            df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


def insert_requests(store, report, run_id: str, rows: list[dict]) -> int:
    """Append request rows for `run_id`; counts them in report.rows_loaded. Returns the count."""
    if not rows:
        return 0
    n = store.append("requests", requests_frame(rows, run_id))
    report.rows_loaded += n
    return n


def insert_token_latencies(store, run_id: str, itls: dict[str, Iterable[float]]) -> int:
    """Append token_latencies rows: itls maps request_id -> ITL values in ms (token_index
    starts at 1: the gap between output token 0 and 1 is index 1)."""
    rid, idx, val = [], [], []
    for r, values in itls.items():
        for i, v in enumerate(values, 1):
            rid.append(r)
            idx.append(i)
            val.append(v)
    if not rid:
        return 0
    return store.append("token_latencies", pd.DataFrame(
        {"run_id": run_id, "request_id": rid, "token_index": pd.array(idx, dtype="Int32"),
         "itl_ms": pd.array(val, dtype="float64")}))


def insert_events(store, run_id: str, events: list[tuple[str, float, str, str | None]]) -> int:
    """Append request_events rows from (request_id, ts_s, kind, detail) tuples."""
    if not events:
        return 0
    df = pd.DataFrame(events, columns=["request_id", "ts_s", "kind", "detail"])
    df.insert(0, "run_id", run_id)
    df["ts_s"] = df["ts_s"].astype("float64")
    return store.append("request_events", df)


def first_problem(report) -> str:
    """"; first problem: <the first skip reason>" for an error message; "" when none."""
    return (_("; first problem: {reason}").format(reason=report.skipped_reasons[0])
            if report.skipped_reasons else "")


def no_rows(path: Path, report, what: str = N_("request")) -> InputError:
    """The InputError for a file that yielded no usable record (names the first skip reason)."""
    return InputError(path, _("no usable {what} rows").format(what=_(what)) + first_problem(report))


def mean(values: list[float]) -> float | None:
    """Arithmetic mean, or None for an empty list."""
    return sum(values) / len(values) if values else None


_ENGINES = r"(vllm|sglang|lmdeploy|tensorrt[-_]?llm|trtllm|tgi|aibrix|llumnix)"
_VER = r"(\d+\.\d+(?:\.\d+){0,2}(?:[.\-]?(?:post|rc|dev|a|b)\d*)?)"
# (name shown in inspect, pattern over one path part: a folder name or the file's stem);
# tried on the file name first, then on each folder from the nearest up
VERSION_RULES: tuple[tuple[str, re.Pattern], ...] = (
    (N_("engine name and version"), re.compile(rf"(?:^|[_\-. ]){_ENGINES}(?:[-_ ]|==?)?v?{_VER}(?=$|[_\-. ])", re.I)),
    (N_("v + version"), re.compile(rf"(?:^|[_\-. ])v{_VER}(?=$|[_\-. ])")),
    (N_("a version of three numbers"), re.compile(r"(?:^|[_\- ])(\d+\.\d+\.\d+(?:[.\-]?(?:post|rc|dev)\d*)?)(?=$|[_\- ])")),
)


def version_rule(path: Path) -> tuple[str, str] | None:
    """(engine version, the rule that found it) from a file's name or its folders: a part
    such as 'vllm-0.6.1', 'sglang_0.4.3.post2' or 'vllm==0.9.2' (engine name and version),
    'v0.9.2' / 'ps_experiment_v0.3.0_20250519' (v + version), or 'before-0.8.5' (a version of
    three numbers; two numbers alone, like the rate in 'output_0.5', are not a version).
    The rule text names the part: "path: folder 'vllm-0.6.1' (engine name and version)"."""
    p = Path(path)
    parts = [(N_("file"), p.stem)] + [(N_("folder"), x) for x in reversed(p.resolve().parts[:-1])]
    for where, part in parts:
        for name, rx in VERSION_RULES:
            m = rx.search(part)
            if m:
                return m.group(m.lastindex), _("path: {where} '{part}' ({rule})").format(
                    where=_(where), part=part, rule=_(name))
    return None


def prompt_hash(prompt: Any) -> str | None:
    """The store's prompt hash (explorer.core.association.prompt_hash: SHA-256 of the
    normalised text; chat message lists hashed as their joined contents), so requests and
    eval cases hash the same prompt alike."""
    from ..association import prompt_hash as _hash
    return _hash(prompt)
