"""Generic request tables: CSV / TSV, Parquet or JSONL whose columns map onto the canonical
`requests` columns through the alias table in _aliases (ttft, ttft_s, time_to_first_token,
latency_ms, input_tokens, ...; units by suffix).

CSV and Parquet load straight through DuckDB (read_csv / read_parquet + one SELECT that renames
and scales into `INSERT INTO requests BY NAME`), so a 10M-row file never passes through Python.
JSONL is read record by record (bad lines are skipped with their line number) and then goes
through the same SELECT. A value of the wrong type (text in a numeric column) skips its row with
"line N: field 'F': not a number: 'x'"; so does a value out of range (decision: skip the row,
never clip it or silently store NULL): a negative duration, token count, preemption count or
batch size, a token count above the store's INTEGER (2,147,483,647) and a kv_cache_hit_rate
outside [0, 1]. A row is counted once however many fields are bad; its reason names each
("line 3: field 'ttft_ms': not a number: 'fast'; field 'e2e_ms': ..."), reasons in line order.
A hit rate derived from cached / prompt tokens is NULL when cached exceeds prompt. Columns that map to nothing are kept in `extra` (JSON).
A single distinct value of a model / engine / engine_version / benchmark column fills the run.
A table with a correctness column (_aliases.CORRECTNESS: correct, is_correct, acc, exact_match,
reward, passed, ...; a `score` of only 0 / 1) is an eval file and is left to the eval formats
(detect returns 0.1).
"""
from __future__ import annotations

import itertools
import json
import re
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import duckdb
import pandas as pd
import pyarrow.parquet as pq  # imported with the module: detection of a Parquet file reads its footer

from .. import inplace
from ..errors import InputError
from ..i18n import _, field_text, line_text
from ..sqlutil import quote_ident
from .base import Sniff, iter_jsonl
from . import _aliases
from ._common import INT_COLUMNS, INT_MAX, no_rows, range_rules, register_run, register_runs

NAME = "generic_table"
KIND = "trace"

_INT = INT_COLUMNS  # stored as INTEGER: rounded, -1 beyond INTEGER until the range check
_TEXT = ("request_id", "finish_reason", "error", "prompt_hash", "tenant")
_COUNTER = itertools.count()
_CSV_SAMPLE = 2048  # rows DuckDB's CSV sniffer reads for the dialect and the column names
# integer source types stored in an INTEGER column as they are / through a range test
_FITS_INTEGER = ("TINYINT", "SMALLINT", "INTEGER", "UTINYINT", "USMALLINT")
_WIDE_INTEGER = ("BIGINT", "HUGEINT", "UINTEGER", "UBIGINT")
_NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                  "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")


def _kind(sniff: Sniff) -> str | None:
    if sniff.head.startswith("PAR1") or sniff.suffix == ".parquet":
        return "parquet"
    if sniff.is_binary:
        return None
    if sniff.first_json_line() is not None:
        return "jsonl"
    lines = sniff.first_lines(2)
    if lines and not lines[0].lstrip().startswith(("{", "[", "<", "#")) and \
            any(d in lines[0] for d in (",", "\t", ";", "|")):
        return "csv"
    return None


def _header(sniff: Sniff, kind: str) -> list[str]:
    if kind == "jsonl":
        return list(sniff.first_json_line() or {})
    if kind == "csv":
        line = sniff.first_lines(1)[0]
        delim = max((",", "\t", ";", "|"), key=line.count)
        return [c.strip().strip('"') for c in line.split(delim)]
    try:  # the footer only
        return list(pq.read_schema(sniff.path).names)
    except Exception:  # not a readable Parquet file: no header to judge
        return []


def detect(sniff: Sniff) -> float:
    """0.6 for a table with two or more columns the alias table maps to request metrics, 0.4
    with one; 0.1 when a correctness column makes it an eval file; 0.3 (just enough to be
    picked when nothing else matches, so the user reads "no usable column" rather than
    "unrecognised file") for any other .csv / .tsv / .parquet / .jsonl table with a header
    row; 0 for non-tables."""
    kind = _kind(sniff)
    if not kind:
        return 0.0
    cols = _header(sniff, kind)
    if _aliases.correctness_column(cols, sniff.records() if kind != "parquet" else ()):
        return 0.1
    mapped = {m[0] for c in cols if (m := _aliases.match(c))}
    metrics = mapped - {"request_id", "tenant", "error", "finish_reason", "prompt_hash"}
    if len(metrics) >= 2:
        return 0.6
    if metrics:
        return 0.4
    named_table = sniff.suffix in (".csv", ".tsv", ".parquet", ".jsonl", ".ndjson")
    return 0.3 if named_table and len(cols) >= 2 else 0.0


class _Skips:
    """Collects (line, reason) of skipped JSONL lines (iter_jsonl's report) so they can be
    merged in line order with the rows the value checks skip."""
    KEEP = 100  # reasons kept (the report shows the first LoadReport.MAX_REASONS in line order)

    def __init__(self):
        self.found: list[tuple[int, str]] = []
        self.count = 0

    def skip(self, reason: str, line: int | None = None, field_name: str | None = None) -> None:
        self.count += 1
        if len(self.found) < self.KEEP:
            what = f"field '{field_name}': " if field_name else ""
            self.found.append((line or 0, what + reason))


def _source(path: Path, kind: str, con, skips: _Skips) -> tuple[str, dict, object, list[int]]:
    """SQL table expression for the file, its parameters, the name of a registered DataFrame
    (JSONL) and, for JSONL, the source line number of each row."""
    if kind == "parquet":
        return "read_parquet($path)", {"path": str(path)}, None, []
    if kind == "csv":
        return (f"read_csv($path, header = true, sample_size = {_CSV_SAMPLE})",
                {"path": str(path)}, None, [])
    df, lines = _jsonl_frame(path, skips)
    name = f"_generic_{id(df)}"
    con.register(name, df)
    return quote_ident(name), {}, name, lines


def _jsonl_frame(path: Path, skips: _Skips) -> tuple[pd.DataFrame, list[int]]:
    """The JSON-object lines of a JSONL file as a DataFrame (nested values as JSON text; a
    column holding anything but numbers as text) and the source line of each row. Raises
    InputError when no line is a JSON object."""
    recs, lines = _jsonl_records(path, skips)
    return _frame(recs), lines


def _jsonl_records(path: Path, skips: _Skips) -> tuple[list[dict], list[int]]:
    """The JSON-object lines of a JSONL file (nested values as JSON text) and their line
    numbers. A line whose metric field holds a NaN literal is skipped here, with its line and
    field (pandas would hand the NaN to DuckDB as NULL, a missing value; Infinity reaches the
    SQL checks). Raises InputError when no line is a JSON object."""
    recs, lines = [], []
    for no, rec in iter_jsonl(path, skips):
        nan = next((k for k, v in rec.items() if isinstance(v, float) and v != v
                    and (m := _aliases.match(k)) and m[0] not in _TEXT), None)
        if nan is not None:
            skips.skip(_("not a finite number: {value}").format(value="NaN"), line=no,
                       field_name=nan)
            continue
        lines.append(no)
        recs.append({k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in rec.items()})
    if not recs:
        raise InputError(path, _("no JSON object lines") + (_("; first problem: {reason}").format(
            reason=f"{line_text(skips.found[0][0])}{skips.found[0][1]}") if skips.found else ""))
    return recs, lines


def _frame(recs: list[dict]) -> pd.DataFrame:
    """JSONL records as a DataFrame: a column holding anything but numbers becomes text."""
    df = pd.DataFrame(recs)
    for c in df.columns:
        if df[c].dtype == object:
            vals = df[c].dropna()
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                df[c] = df[c].map(lambda v: None if v is None or (isinstance(v, float) and pd.isna(v))
                                  else str(v)).astype(object)
    return df


def load(path: Path, store, report) -> None:
    """Load one generic request table as one run. Raises InputError when no column maps to a
    request metric (the message lists what the columns were and the alias names expected)."""
    sniff = Sniff.of(path)
    kind = _kind(sniff)
    if kind is None:
        raise InputError(path, _("not a CSV, Parquet or JSONL table"))
    con = store.con
    skips = _Skips()
    src, params, registered, lines = _source(path, kind, con, skips)
    try:
        _load_table(path, store, report, con, src, params, kind, skips, lines)
    except duckdb.Error as e:
        msg = str(e).split("\n")[0]
        raise InputError(path, _("cannot read as {kind}: {error}").format(kind=kind, error=msg)) from None
    finally:
        if registered:
            con.unregister(registered)


def _load_table(path, store, report, con, src, params, kind, skips: _Skips,
                lines: list[int]) -> None:
    """Map, check and insert one table; `skips` holds the lines already skipped (JSONL lines
    that are not JSON objects), `lines` the source line of each JSONL row (empty for CSV /
    Parquet)."""
    found = list(skips.found)  # (line, reason) of the first skipped rows, merged in line order
    described = con.execute(f"DESCRIBE SELECT * FROM {src}", params).fetchall()
    types = {r[0]: r[1].upper() for r in described}
    mapping, run_cols = _usable_columns(path, types)

    rejects = None
    pre = src  # the source of the preparatory passes (unit guesses, run fields)
    if kind == "csv":
        src, pre, types, rejects = _typed_csv(con, params, types, mapping)
    exprs, bad = _expressions(path, types, mapping, run_cols, report,
                              lambda canon, val: _guess_scale(con, pre, params, canon, val))

    # rows with a value of the wrong type or out of range: skipped once each, reasons in line
    # order (CSV cast failures found by DuckDB's reader are merged in by line). Range checks
    # alone run on the inserted rows (a DELETE on the columnar table, no extra pass over the
    # file); the source is read again for the reasons only when some row failed. A type check
    # (text in a numeric JSONL / Parquet column) needs the source: those rows are filtered out
    # before the insert.
    where = ""
    first_line = 2 if kind == "csv" else 1
    n_bad = skips.count
    src0 = src
    after = bool(bad) and all(c is not None for _, _, c in bad)
    any_bad = " OR ".join(p for p, _, _ in bad)
    if bad and not after:
        n_bad += con.execute(f"SELECT count(*) FROM {src} WHERE {any_bad}", params).fetchall()[0][0]
        if n_bad > skips.count:
            found += _bad_sample(con, src, params, bad, rejects, lines, first_line, report)
            where = f" WHERE NOT ({any_bad})"
    # files in place (explorer/core/inplace.py): the view reads the file as the INSERT would;
    # a CSV needs its own request ids (a row number over a re-read text is not kept), a
    # Parquet file's row number is read_parquet's file_row_number
    in_place = (inplace.wanted(store, path, kind) and "file_row_number" not in types
                and (kind == "parquet" or "request_id" in exprs))
    view_src = inplace.inline(pre if kind == "csv" else src, params) if in_place else None
    if "request_id" not in exprs:  # the source row number (1-based), counted before skipping
        exprs["request_id"] = "CAST(__row AS VARCHAR)"
        src = f"(SELECT *, row_number() OVER () AS __row FROM {src})"
        view_src = (f"(SELECT *, file_row_number + 1 AS __row FROM read_parquet("
                    f"{inplace.PATH}, file_row_number = true))") if in_place else None
        report.columns[_("(row number)")] = "request_id"

    fields = {}
    if run_cols:
        sel = ", ".join(f"min(CAST({quote_ident(c)} AS VARCHAR)), count(DISTINCT {quote_ident(c)})"
                        for c in run_cols.values())
        got = con.execute(f"SELECT {sel} FROM {pre}", params).fetchall()[0]
        for i, f in enumerate(run_cols):
            if got[2 * i + 1] == 1:
                fields[f] = got[2 * i]
                report.columns[run_cols[f]] = f"runs.{f}"
    run_id = register_run(store, report, path, NAME, run_base(path), **fields)
    select = ", ".join(f"{e} AS {quote_ident(c)}" for c, e in exprs.items())
    canon_bad = " OR ".join(f"coalesce({c}, false)" for _, _, c in bad) if after else None
    if in_place:  # one counting pass (it fills a CSV's reject table as the INSERT would)
        n, gone = con.execute(f"SELECT count(*), count(*) FILTER (WHERE {canon_bad or 'false'}) "
                              f"FROM ({inplace.typed_sql('$run_id', exprs, src, where)})",
                              {**params, "run_id": run_id}).fetchall()[0]
        inplace.attach(store, run_id, path, inplace.view_sql(
            run_id, exprs, view_src, where, canon_bad), n - gone)
        report.columns[_("(read in place)")] = _("a view over the file, not copied")
    else:
        n = con.execute(f"INSERT INTO {inplace.requests_table(con)} BY NAME SELECT $run_id AS "
                        f"run_id, {select} FROM {src}{where}",
                        {**params, "run_id": run_id}).fetchall()[0][0]
    if after:
        if not in_place:
            gone = con.execute(f"DELETE FROM {inplace.requests_table(con)} WHERE run_id = ? AND "
                               f"({canon_bad})", [run_id]).fetchall()[0][0]
        if gone:
            n -= gone
            n_bad += gone
            found += _bad_sample(con, src0, params, bad, rejects, lines, first_line, report)
    if rejects:
        n_bad += _collect_rejects(con, rejects, report, found)
    found.sort(key=lambda x: x[0])
    for line, why in found[:report.MAX_REASONS]:
        report.skip(why, line=line)
    report.rows_skipped += n_bad - min(len(found), report.MAX_REASONS)
    if n == 0:
        raise no_rows(path, report)
    report.rows_loaded += n


def _usable_columns(path: Path, types: dict) -> tuple[dict, dict]:
    """_map_columns of a table's columns; raises InputError when it is an eval table (a
    correctness column) or no column maps to a request metric."""
    if any(_aliases.is_correctness(c) for c in types):
        raise InputError(path, _("this table has a correctness column: it is an eval file, "
                                 "not a trace (load it as an eval)"))
    mapping, run_cols = _map_columns(types)
    metrics = set(mapping) - {"request_id", "tenant", "error", "finish_reason", "prompt_hash"}
    if not metrics:
        raise InputError(path, _("no usable column: none of {columns} maps to a request metric "
                                 "(expected names such as ttft_ms, ttft_s, time_to_first_token, "
                                 "e2e_latency, input_tokens; see the alias table)").format(
                                     columns=", ".join(list(types)[:12])))
    return mapping, run_cols


def _expressions(path: Path, types: dict, mapping: dict, run_cols: dict, report,
                 guess) -> tuple[dict[str, str], list[tuple[str, str, str | None]]]:
    """(canonical column -> SQL over the source, checks) for a table whose columns have
    `types`. A check is (SQL predicate on the source true when the value is bad, SQL text of
    the reason, the same test on the canonical column or None): a row failing any check is
    skipped once, its reason naming every bad field. Fills report.columns. guess(canon,
    value_sql) -> (scale, note) decides the unit of a time column without a unit suffix."""
    exprs: dict[str, str] = {}
    bad: list[tuple[str, str, str | None]] = []
    guesses: dict[str, str] = {}
    for canon, (col, scale, unit) in mapping.items():
        q = quote_ident(col)
        t = types[col]
        numeric = t.startswith(_NUMERIC_TYPES)
        if canon == "error":  # 0 / empty / "none" / "ok" / false mean: no error
            exprs[canon] = (f"CASE WHEN lower(trim(CAST({q} AS VARCHAR))) IN "
                            f"('', '0', '0.0', 'none', 'null', 'nan', 'false', 'ok') THEN NULL "
                            f"ELSE CAST({q} AS VARCHAR) END")
            continue
        if canon in _TEXT:
            exprs[canon] = f"CAST({q} AS VARCHAR)"
            if canon == "request_id":  # a row without one (key absent, null, empty cell) is
                bad.append((f"({q} IS NULL)", _sql_lit(  # skipped with its line, not the file
                    field_text(col) + _("missing (null or absent): a request needs its id")), None))
            continue
        if t.startswith(("TIMESTAMP", "DATE")) and canon == "arrival_s":
            exprs[canon] = f"epoch({q})"
            report.columns[col] = _("arrival_s (timestamp -> unix s)")
            continue
        if t == "BOOLEAN":
            raise InputError(path, _("expected numbers, found true/false"), field=col)
        val = f"CAST({q} AS DOUBLE)" if numeric else f"TRY_CAST({q} AS DOUBLE)"
        if not numeric:
            bad.append((f"({q} IS NOT NULL AND trim(CAST({q} AS VARCHAR)) <> '' "
                        f"AND TRY_CAST({q} AS DOUBLE) IS NULL)",
                        _reason_sql(col, _("not a number: {value}").split("{value}")[0], q, quoted=True), None))
        if scale is None:
            scale, note = guess(canon, val)
            guesses[col] = note
        bad += _range_checks(canon, col, val if scale == 1.0 else f"({val} * {float(scale)!r})")
        if canon in _INT and scale == 1.0 and t in _FITS_INTEGER:
            exprs[canon] = q  # already whole numbers within INTEGER: stored as they are
        elif canon in _INT and scale == 1.0 and t in _WIDE_INTEGER:
            exprs[canon] = (f"CASE WHEN {q} BETWEEN -{INT_MAX} AND {INT_MAX} "
                            f"THEN CAST({q} AS INTEGER) ELSE -1 END")
        elif canon in _INT:  # beyond INTEGER: -1, so the range check after the insert sees it
            r = f"round({val})" if scale == 1.0 else f"round({val} * {float(scale)!r})"
            exprs[canon] = f"CASE WHEN abs({r}) > {INT_MAX} THEN -1 ELSE TRY_CAST({r} AS INTEGER) END"
        else:
            exprs[canon] = val if scale == 1.0 else f"{val} * {float(scale)!r}"
        conv = "" if scale == 1.0 else f" (x{scale:g})"
        report.columns[col] = f"{canon}{conv}" + (f" ({guesses[col]})" if col in guesses else "")
    if "kv_cache_hit_rate" not in exprs and {"cached_prompt_tokens", "prompt_tokens"} <= set(exprs):
        # NULL (not a rate above 1) when a row claims more cached than prompt tokens
        c, t = exprs["cached_prompt_tokens"], exprs["prompt_tokens"]
        exprs["kv_cache_hit_rate"] = (f"CASE WHEN {c} <= {t} THEN CAST({c} AS DOUBLE) / "
                                      f"nullif({t}, 0) END")
        report.columns["cached_prompt_tokens / prompt_tokens"] = "kv_cache_hit_rate"
    for canon, (col, _s, _t) in mapping.items():
        if canon in _TEXT:
            report.columns[col] = canon
    outcome = _outcome(types, mapping, exprs, report)

    used = {v[0] for v in mapping.values()} | set(run_cols.values()) | set(outcome)
    rest = [c for c in types if c not in used]
    if rest:
        exprs["extra"] = "to_json(struct_pack(" + ", ".join(
            f"{quote_ident(c)} := {quote_ident(c)}" for c in rest) + "))"
        report.columns[", ".join(rest[:6]) + (", ..." if len(rest) > 6 else "")] = "extra"
    return exprs, bad


def _map_columns(types: dict) -> tuple[dict, dict]:
    """(canonical -> (source column, scale, unit), run field -> source column). When two
    columns map to one canonical column, the one named like it wins (`tpot_ms` over
    `mean_tbt_ms`), else the first."""
    mapping: dict[str, tuple[str, float | None, str]] = {}
    run_cols: dict[str, str] = {}
    for c in types:
        m = _aliases.match(c)
        if m and (m[0] not in mapping or (_own_name(c, m[0])
                                          and not _own_name(mapping[m[0]][0], m[0]))):
            mapping[m[0]] = (c, m[1], m[2])
        elif not m and (f := _aliases.run_field(c)) and f not in run_cols:
            run_cols[f] = c
    return mapping, run_cols


def _own_name(col: str, canon: str) -> bool:
    """True when `col` is the canonical column's own name, with any unit (tpot_ms, tpot_s)."""
    n = _aliases.normalise(col)
    own = canon.rsplit("_", 1)[0] if canon.endswith(("_ms", "_s")) else canon
    return n == canon or n.rsplit("_", 1)[0] == own or n == own


def _outcome(types: dict, mapping: dict, exprs: dict, report) -> list[str]:
    """A request-outcome column (success, status, ...: _aliases.OUTCOME) whose failure value
    gives the row an error ("status = timeout") when no error column says more; then, in a
    failed row, a latency of exactly 0 is NULL (a failed request's 0 is no measurement, as
    vLLM and SGLang write it). Updates `exprs` in place; returns the outcome column used."""
    used = {v[0] for v in mapping.values()}
    cols = [c for c in types if c not in used and _aliases.normalise(c) in _aliases.OUTCOME]
    if cols:
        q = quote_ident(cols[0])
        fails = ", ".join(_sql_lit(v) for v in _aliases.OUTCOME_FAILURES)
        said = (f"CASE WHEN lower(trim(CAST({q} AS VARCHAR))) IN ({fails}) OR "
                f"coalesce(TRY_CAST({q} AS DOUBLE) >= 400, false) THEN "
                f"{_sql_lit(cols[0] + ' = ')} || CAST({q} AS VARCHAR) END")
        exprs["error"] = f"coalesce({exprs['error']}, {said})" if "error" in exprs else said
        report.columns[cols[0]] = _("error (when it says the request failed)")
    if "error" in exprs:
        for canon in _aliases.TIME_MS:
            if canon in exprs:
                exprs[canon] = (f"CASE WHEN ({exprs['error']}) IS NOT NULL AND ({exprs[canon]}) = 0"
                                f" THEN NULL ELSE {exprs[canon]} END")
    return cols[:1]


def _typed_csv(con, params, types, mapping):
    """(insert source, preparatory-pass source, types, reject tables): the CSV read with every
    column's type fixed (mapped numeric columns DOUBLE, timestamps as
    sniffed, all others VARCHAR) and rows that do not convert rejected into a temp table
    (DuckDB store_rejects) instead of failing the load: one pass, no second type sniff."""
    text_cols = {m[0] for canon, m in mapping.items() if canon in _TEXT}
    mapped = {m[0] for m in mapping.values()}
    forced = {}
    for c, t in types.items():
        if c in mapped and c not in text_cols:
            forced[c] = t if t.startswith(("TIMESTAMP", "DATE")) else "DOUBLE"
        else:
            forced[c] = "VARCHAR"
    tag = f"{threading.get_ident()}_{next(_COUNTER)}"
    rejects = (f"_rejects_{tag}", f"_rejects_scan_{tag}")
    base = f"read_csv($path, header = true, sample_size = {_CSV_SAMPLE}, types = $types"
    src = (f"{base}, store_rejects = true, rejects_table = {_sql_lit(rejects[0])}, "
           f"rejects_scan = {_sql_lit(rejects[1])})")
    params["types"] = forced
    return src, f"{base}, ignore_errors = true)", forced, rejects


def _bad_sample(con, src, params, bad, rejects, lines, first_line, report) -> list[tuple[int, str]]:
    """(line, reason) of the first rows of the source failing a check, in line order."""
    why = "concat_ws('; ', " + ", ".join(f"CASE WHEN {p} THEN {r} END" for p, r, _ in bad) + ")"
    sample = con.execute(
        f"SELECT n, w FROM (SELECT row_number() OVER () - 1 AS n, {why} AS w FROM {src}) "
        f"WHERE w <> '' ORDER BY n LIMIT {report.MAX_REASONS}", params).fetchall()
    rejected = _reject_lines(con, rejects) if rejects else []
    out = []
    for n, w in sample:
        line = lines[int(n)] if lines else int(n) + first_line
        for r in rejected:  # rows DuckDB's reader rejected are not in the scan
            if r <= line:
                line += 1
        out.append((line, w))
    return out


def _reject_lines(con, rejects) -> list[int]:
    """Sorted source lines of the rows DuckDB's CSV reader rejected (so far)."""
    return [int(r[0]) for r in con.execute(
        f"SELECT DISTINCT line FROM {quote_ident(rejects[0])} WHERE line IS NOT NULL "
        f"ORDER BY line").fetchall()]


def _collect_rejects(con, rejects, report, found: list) -> int:
    """Add DuckDB's CSV reject rows to `found` as (line, reason): one entry per rejected line,
    naming every field that failed on it; drop the reject tables. Returns the rejected rows."""
    table, scan = rejects
    try:
        per_line: dict[int | None, list[str]] = {}
        n = con.execute(f"SELECT count(DISTINCT coalesce(line, -1)) FROM "
                        f"{quote_ident(table)}").fetchall()[0][0]
        for line, col, etype, msg in con.execute(
                f"SELECT line, column_name, error_type, error_message FROM {quote_ident(table)} "
                f"ORDER BY line, column_idx LIMIT {4 * report.MAX_REASONS}").fetchall():
            m = re.search(r'string "(.*?)" to', msg or "")
            if etype == "CAST" and m:
                why = field_text(col) + _("not a number: {value}").format(value=repr(m.group(1)[:40]))
            else:
                why = str(etype).lower().replace("_", " ")
            key = int(line) if line is not None else None
            if why not in per_line.setdefault(key, []):
                per_line[key].append(why)
        for line, whys in per_line.items():
            found.append((line if line is not None else 0, "; ".join(whys)))
        return n
    finally:
        con.execute(f"DROP TABLE IF EXISTS {quote_ident(table)}")
        con.execute(f"DROP TABLE IF EXISTS {quote_ident(scan)}")


def _guess_scale(con, src, params, canon, val) -> tuple[float, str]:
    """Scale for a time column without a unit suffix, guessed from its median (documented in
    _aliases.BARE_TIME_SECONDS_BELOW; arrival: by magnitude, ns / us / ms / s since epoch)."""
    med = con.execute(f"SELECT median({val}) FROM {src}", params).fetchall()[0][0]
    return _scale_for(canon, med)


def _scale_for(canon: str, med: float | None) -> tuple[float, str]:
    """_guess_scale's decision from the column's median."""
    if med is None:
        return 1.0, _("no values; unit taken as ms")
    if canon == "arrival_s":
        for lim, scale, unit in ((1e17, 1e-9, "ns"), (1e14, 1e-6, "us"), (1e11, 1e-3, "ms")):
            if abs(med) > lim:
                return scale, _("no unit suffix; {unit} guessed from magnitude").format(unit=unit)
        return 1.0, _("no unit suffix; s assumed")
    lim = _aliases.BARE_TIME_SECONDS_BELOW.get(canon, _aliases.BARE_TIME_SECONDS_BELOW["default"])
    if med < lim:
        return 1000.0, _("no unit suffix; seconds guessed from median {med:.4g}").format(med=med)
    return 1.0, _("no unit suffix; ms guessed from median {med:.4g}").format(med=med)


def _reason_sql(col: str, what: str, value_sql: str, quoted: bool = False) -> str:
    """SQL text of a skip reason: "field '<col>': <what><value>" (value cut at 40 chars)."""
    v = f"left(CAST({value_sql} AS VARCHAR), 40)"
    if quoted:
        v = "chr(39) || " + v + " || chr(39)"
    return f"{_sql_lit(field_text(col) + what)} || {v}"


def _range_checks(canon: str, col: str, conv: str) -> list[tuple[str, str, str]]:
    """(source predicate, reason, canonical predicate) triples for the value range of a
    canonical column; `conv` is the SQL of the value in canonical units (token counts are
    rounded, as stored; one beyond INTEGER is stored as -1 until the check deletes its row).
    The rules are _common.RANGES, shared with the dedicated trace loaders: durations, token
    counts, preemptions and batch sizes must not be negative; token counts / preemptions must
    fit the store's INTEGER; kv_cache_hit_rate lies in [0, 1]; times lie in the time range.
    Before them, a value of a DOUBLE column must be finite (NaN, Infinity are not numbers).
    A row failing a check is skipped (never clipped or silently nulled)."""
    q, c = quote_ident(col), quote_ident(canon)
    v = f"round({conv})" if canon in _INT else conv
    out = []
    if canon not in _INT:  # NaN / Infinity are not numbers (a NaN TTFT counted as an SLA miss)
        out.append((f"coalesce(NOT isfinite({v}), false)",
                    _reason_sql(col, _("not a finite number: {value}").split("{value}")[0], q), f"(NOT isfinite({c}))"))
        v = f"(CASE WHEN isfinite({v}) THEN {v} END)"  # the range reasons skip non-finite ones
    for low, high, why in range_rules(canon):
        bounds = [(op, b) for op, b in (("<", low), (">", high)) if b is not None]
        stored = " OR ".join(f"{c} {op} {b!r}" for op, b in bounds)
        if canon in _INT and high is not None:
            stored = f"{c} < 0"  # a count beyond INTEGER is stored as -1
        out.append((f"coalesce({' OR '.join(f'{v} {op} {b!r}' for op, b in bounds)}, false)",
                    _reason_sql(col, f"{why}: ", q), f"({stored})"))
    return out


def _sql_lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


# -- many small files read as one -------------------------------------------------------------
_FILE = "__te_file"  # the column naming each row's file in a batch
_RUN = "__te_run"


class _NotBatchable(Exception):
    """The files of a batch cannot be loaded as one: the store loads each on its own."""


def run_base(path: Path) -> str:
    """The run id a table's run is named after (Store.new_id: table:name, table:name#2...)."""
    return f"table:{path.stem}"


def batch_key(sniff: Sniff) -> tuple | None:
    """What the files of one batch (load_batch) share: CSV, the header line; JSONL, the first
    record's keys and the types of its values. None for a file read on its own (Parquet)."""
    kind = _kind(sniff)
    if kind == "csv":
        return "csv", sniff.first_lines(1)[0].rstrip("\r")
    if kind == "jsonl":
        rec = sniff.first_json_line() or {}
        return "jsonl", tuple((k, type(v).__name__) for k, v in rec.items())
    return None


def _shape(recs: list[dict]) -> tuple:
    """The keys of JSONL records in order of first appearance, each with the types of its
    values and whether some record lacks it or holds null: files of one shape make, together,
    the columns and types _frame makes of each alone."""
    keys: dict[str, set] = {}
    for r in recs:
        for k, v in r.items():
            keys.setdefault(k, set()).add(type(v))
    return tuple((k, frozenset(t), any(r.get(k) is None for r in recs)) for k, t in keys.items())


class _BatchSource(NamedTuple):
    """The files of a batch as one SQL table expression (each row naming its file in _FILE),
    its parameters, the types of its columns and their mapping (_usable_columns)."""
    src: str
    params: dict
    types: dict[str, str]
    mapping: dict
    run_cols: dict


def _csv_batch(con, paths: list[Path], files: list[str], temps: list[str]) -> _BatchSource:
    """DuckDB read_csv over the list of files, mapped columns read as numbers (or timestamps)
    and the others as text: a value that does not convert raises, per file. The files are
    read once, into a temporary table (its name appended to `temps`): the unit guesses, the
    per-file counts and the INSERT each read the whole batch again (5,000 one-row CSVs: 4
    s of the 10 s load were these re-reads)."""
    params: dict = {"files": files}
    base = (f"read_csv($files, header = true, sample_size = {_CSV_SAMPLE}, "
            f"filename = {_sql_lit(_FILE)}")
    described = con.execute(f"DESCRIBE SELECT * FROM {base})", params).fetchall()
    types = {r[0]: r[1].upper() for r in described if r[0] != _FILE}
    mapping, run_cols = _usable_columns(paths[0], types)
    text_cols = {m[0] for canon, m in mapping.items() if canon in _TEXT}
    params["types"] = {c: (t if t.startswith(("TIMESTAMP", "DATE")) else "DOUBLE")
                       if c in {m[0] for m in mapping.values()} and c not in text_cols
                       else "VARCHAR" for c, t in types.items()}
    name = f"_generic_csv_{next(_COUNTER)}"
    con.execute(f"CREATE TEMP TABLE {quote_ident(name)} AS SELECT * FROM {base}, "
                f"types = $types)", params)
    temps.append(name)
    return _BatchSource(quote_ident(name), {}, params["types"], mapping, run_cols)


def _jsonl_batch(con, paths: list[Path], files: list[str], registered: list[str]) -> _BatchSource:
    """The JSONL files parsed as load() parses each, concatenated into one registered frame
    (its name appended to `registered`). _NotBatchable when a file skips a line or its
    frame would have other columns or types than the first file's."""
    recs: list[dict] = []
    owner: list[str] = []
    shape = None
    for p, f in zip(paths, files):
        skips = _Skips()
        got, _lines = _jsonl_records(p, skips)
        this = _shape(got)
        shape = shape or this
        if skips.count or this != shape:
            raise _NotBatchable  # the file's frame would have other columns or types
        recs += got
        owner += [f] * len(got)
    whole = _frame(recs)
    if _FILE in whole.columns:
        raise _NotBatchable
    whole[_FILE] = owner
    name = f"_generic_batch_{next(_COUNTER)}"
    con.register(name, whole)
    registered.append(name)
    src = quote_ident(name)
    types = {r[0]: r[1].upper() for r in con.execute(f"DESCRIBE SELECT * FROM {src}")
             .fetchall() if r[0] != _FILE}
    mapping, run_cols = _usable_columns(paths[0], types)
    return _BatchSource(src, {}, types, mapping, run_cols)


def _batch_unit_guess(con, source: _BatchSource, notes: dict[str, dict[str, str]]):
    """guess(canon, value_sql) for _expressions over a batch: each file's unit is guessed from
    its own median and must be the same for all (else _NotBatchable); each file's note is kept
    in notes[source column][file]."""
    def guess(canon: str, val: str) -> tuple[float, str]:
        got = {f: _scale_for(canon, med) for f, med in con.execute(
            f"SELECT {quote_ident(_FILE)}, median({val}) FROM {source.src} GROUP BY 1",
            source.params).fetchall()}
        if len({scale for scale, _ in got.values()}) != 1:
            raise _NotBatchable  # the files' units differ
        notes[source.mapping[canon][0]] = {f: note for f, (_, note) in got.items()}
        return next(iter(got.values()))
    return guess


def _batch_counts(con, source: _BatchSource, bad: list) -> dict[str, tuple]:
    """file -> (file, its rows, its rows failing a check, then for each run column the least
    value as text and the number of distinct values)."""
    any_bad = " OR ".join(p for p, _, _ in bad) or "false"
    sel = "".join(f", min(CAST({quote_ident(c)} AS VARCHAR)), count(DISTINCT {quote_ident(c)})"
                  for c in source.run_cols.values())
    return {r[0]: r for r in con.execute(
        f"SELECT {quote_ident(_FILE)}, count(*), count(*) FILTER (WHERE {any_bad}){sel} "
        f"FROM {source.src} GROUP BY 1", source.params).fetchall()}


def _batch_runs(paths: list[Path], files: list[str], reports: list, columns: dict[str, str],
                notes: dict[str, dict[str, str]], per_file: dict[str, tuple],
                run_cols: dict) -> list[tuple]:
    """Fill each file's report.columns (the batch's `columns` with the file's own unit notes
    and its run columns) and return register_runs' items: one run per file, with the run
    fields whose column holds a single value in that file."""
    items = []
    for p, f, report in zip(paths, files, reports):
        report.columns = dict(columns)
        for col, by_file in notes.items():
            entry = report.columns[col]
            first = next(iter(by_file.values()))
            report.columns[col] = entry[:len(entry) - len(first) - 2] + f"({by_file[f]})"
        fields = {}
        got = per_file[f][3:]
        for i, field_name in enumerate(run_cols):
            if got[2 * i + 1] == 1:
                fields[field_name] = got[2 * i]
                report.columns[run_cols[field_name]] = f"runs.{field_name}"
        items.append((report, p, NAME, run_base(p), fields))
    return items


def _insert_batch(con, source: _BatchSource, exprs: dict[str, str], files: list[str],
                  run_ids: list[str], registered: list[str]) -> None:
    """One INSERT of every row of the batch, each with the run of its file."""
    runmap = pd.DataFrame({_FILE: files, _RUN: run_ids})
    name = f"_generic_runs_{next(_COUNTER)}"
    con.register(name, runmap)
    registered.append(name)
    select = ", ".join(f"{e} AS {quote_ident(c)}" for c, e in exprs.items())
    con.execute(f"INSERT INTO {inplace.requests_table(con)} BY NAME SELECT {quote_ident(_RUN)} AS run_id, {select} "
                f"FROM {source.src} JOIN {quote_ident(name)} USING ({quote_ident(_FILE)})",
                source.params)


def load_batch(paths: list[Path], store, reports: list) -> bool:
    """Load files sharing one batch_key in one read (DuckDB read_csv over the list of files
    with each row's file name; JSONL files parsed as load() does and concatenated), one run
    per file, one INSERT for all, each report filled as load() fills it (rows, columns,
    run_ids). Only a batch of clean files loads this way: False, with nothing to keep (the
    caller rolls back and loads each file with load()), when any file would skip a row, fail,
    guess another unit, has no rows or no request_id column, or reads otherwise than the
    first (its header, types or JSON keys differ)."""
    con = store.con
    files = [str(p) for p in paths]
    registered: list[str] = []
    temps: list[str] = []
    try:
        kind = _kind(Sniff.of(paths[0]))
        if kind == "csv":
            source = _csv_batch(con, paths, files, temps)
        elif kind == "jsonl":
            source = _jsonl_batch(con, paths, files, registered)
        else:
            return False
        if "request_id" not in source.mapping:  # the row number of each file: read on its own
            return False
        notes: dict[str, dict[str, str]] = {}  # column -> file -> how its unit was guessed
        template = SimpleNamespace(columns={})  # report.columns as _expressions fills it
        exprs, bad = _expressions(paths[0], source.types, source.mapping, source.run_cols,
                                  template, _batch_unit_guess(con, source, notes))
        per_file = _batch_counts(con, source, bad)
        if set(per_file) != set(files) or any(r[2] for r in per_file.values()):
            return False  # a file without rows, or a row to skip: each file on its own
        run_ids = register_runs(store, _batch_runs(paths, files, reports, template.columns,
                                                   notes, per_file, source.run_cols))
        _insert_batch(con, source, exprs, files, run_ids, registered)
        for f, report in zip(files, reports):
            report.rows_loaded += per_file[f][1]
        return True
    except (_NotBatchable, InputError, duckdb.Error):
        return False
    finally:
        for name in registered:
            con.unregister(name)
        for name in temps:
            try:
                con.execute(f"DROP TABLE IF EXISTS {quote_ident(name)}")
            except duckdb.Error:  # an aborted transaction: its ROLLBACK drops the table
                pass
