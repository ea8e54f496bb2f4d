"""The generic eval table (CSV / TSV / Parquet) loaded in DuckDB, with no per-row Python.

One SELECT reads the file as text into a temporary table (line = rowid + the header), one
SELECT parses every row whose values are plain (correctness in the true / false vocabulary or
a number in [0, 1], numeric timestamps and token counts) and marks the others. Only marked
rows -- missing or odd values, ISO timestamps -- go through generic_eval's per-value parsers,
which also word the skip reasons, so the two paths cannot disagree. Repeated case ids (first
wins), the prompt hash (per distinct prompt) and the insert are set-based.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd

from ..association import prompt_hash
from ..i18n import _
from ..errors import InputError
from ..sqlutil import quote_ident
from ._common import MAX_TIME_S

# whitespace as Python's str.strip / str.isspace knows it (DuckDB's trim knows only ' ')
_WS = r"[\s\x{0b}\x{1c}-\x{1f}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}" \
      r"\x{205f}\x{3000}]"
_NUM = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"  # float() and DuckDB agree
_TEXT_FIELDS = ("local_id", "cluster", "category", "request_id", "prompt", "prediction",
                "reference", "model")
_SIMPLE = ("VARCHAR", "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT",
           "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE")


_WS_FIRST = ", ".join(str(i) for i in (*range(9, 14), *range(28, 33), 133, 160, 5760,
                                        *range(8192, 8203), 8232, 8233, 8239, 8287, 12288))


def _text(c: str) -> str:
    """generic_eval._text of a text value: NULL when blank, else unchanged (the regex runs
    only on values that start with a space-like character)."""
    return (f"CASE WHEN {c} = '' OR (unicode({c}) IN ({_WS_FIRST}) AND "
            f"regexp_full_match({c}, '{_WS}*')) THEN NULL ELSE {c} END")


def _blank(c: str) -> str:
    """NULL when a value of any type is blank text (other types: NULL stays NULL)."""
    return f"CASE WHEN {_text(f'CAST({c} AS VARCHAR)')} IS NULL THEN NULL ELSE 1 END"


def _num(c: str) -> str:
    """The value as DOUBLE when it is a plain decimal number (no surrounding space), else
    NULL: such values, which float() reads too, go to Python."""
    return f"CASE WHEN regexp_full_match({c}, '{_NUM}') THEN CAST({c} AS DOUBLE) END"


def _as_text(name: str, dtype: str) -> str:
    """A Parquet column as the text Python's str() gives its value (NaN: NULL)."""
    q = quote_ident(name)
    if dtype == "BOOLEAN":
        return f"CASE WHEN {q} THEN 'True' WHEN NOT {q} THEN 'False' END"
    if dtype in ("FLOAT", "DOUBLE"):
        return f"CASE WHEN NOT isnan({q}) THEN CAST({q} AS VARCHAR) END"
    return f"CAST({q} AS VARCHAR)"


def read_source(con, path: Path, delim: str, name: str, mapped) -> list[str] | None:
    """Read the file as `name` plus `_line` (a temporary table for Parquet, a registered
    Arrow table for CSV / TSV); its column names. The
    columns mapped(names) returns are text (Parquet: the others keep their type, for the
    extra JSON). None when DuckDB cannot read it exactly as pandas would (caller falls back)."""
    if path.suffix.lower() == ".parquet":
        try:
            schema = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
        except Exception as e:  # not a readable Parquet file
            raise InputError(path, _("not a readable Parquet file ({error})").format(error=e)) from None
        if any(t not in _SIMPLE for _, t, *_ in schema):
            return None  # nested or temporal values: Python's str() is the reference
        cols = [c for c, *_ in schema]
        used = mapped(cols)
        sel = ", ".join((_as_text(c, t) if c in used else f"CASE WHEN NOT isnan({quote_ident(c)}) "
                         f"THEN {quote_ident(c)} END" if t in ("FLOAT", "DOUBLE") else
                         quote_ident(c)) + f" AS {quote_ident(c)}" for c, t, *_ in schema)
        con.execute(f"CREATE TEMP TABLE {name} AS SELECT {sel}, "
                    "file_row_number + 1 AS _line FROM read_parquet(?, file_row_number = true)",
                    [str(path)])
        return cols
    import csv
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        header = next(csv.reader([fh.readline().rstrip("\r\n")], delimiter=delim), [])
    if len(set(header)) != len(header) or not all(header):
        return None  # pandas renames duplicate / empty names its own way
    try:  # on a cursor of its own: a failed read must not abort the load's transaction
        tbl = con.cursor().sql(
            "SELECT * FROM read_csv(?, all_varchar = true, header = true, delim = ?, "
            "quote = '\"', escape = '\"', auto_detect = false, columns = ?)",
            params=[str(path), delim, {c: "VARCHAR" for c in header}]).to_arrow_table()
    except Exception:  # ragged rows, bad UTF-8, ...: pandas reads or words the error
        return None
    import numpy as np
    import pyarrow as pa
    tbl = tbl.append_column("_line", pa.array(np.arange(2, tbl.num_rows + 2)))
    con.register(name, tbl)  # scanned in place; the caller unregisters it
    return header


def _parse_sql(src: str, m: dict, truthy, falsy, extra_cols: list[str]) -> tuple[str, dict]:
    """SELECT parsing every row of `src`; `ok` false where Python must decide."""
    def col(k):
        return quote_ident(m[k]) if m.get(k) else "NULL::VARCHAR"

    c = col("correct")
    low = f"lower({c})"
    inner = {
        "correct": f"CASE WHEN list_contains($t, {low}) THEN true "
                   f"WHEN list_contains($f, {low}) THEN false "
                   f"WHEN regexp_full_match({c}, '{_NUM}') AND CAST({c} AS DOUBLE) BETWEEN 0 AND 1 "
                   f"THEN CAST({c} AS DOUBLE) >= 0.5 END"}
    for k in ("timestamp_s", "prompt_tokens", "completion_tokens"):
        inner["_n_" + k] = _num(col(k))
        inner["_t_" + k] = _text(col(k))
    for k in _TEXT_FIELDS:
        inner[k] = _text(col(k))
    if extra_cols:  # the other non-blank values, as the JSON object json.dumps writes
        parts = ", ".join(f"CASE WHEN {_blank(quote_ident(e))} IS NOT NULL THEN "
                          f"{_sql_str(json.dumps(e, ensure_ascii=False) + ': ')} || "
                          f"CAST(to_json({quote_ident(e)}) AS VARCHAR) END" for e in extra_cols)
        inner["_extra"] = f"list_filter([{parts}], lambda x: x IS NOT NULL)"
        extra = "CASE WHEN len(_extra) > 0 THEN '{' || array_to_string(_extra, ', ') || '}' END"
    else:
        extra = "NULL::VARCHAR"
    ts = "_n_timestamp_s"
    # beyond the time range even as nanoseconds: Python's parse_timestamp words the skip
    oks = ["correct IS NOT NULL", f"(_t_timestamp_s IS NULL OR ({ts} IS NOT NULL AND "
           f"isfinite({ts}) AND abs({ts}) <= {MAX_TIME_S * 1e9:.0f}))"]
    ints = []
    for k in ("prompt_tokens", "completion_tokens"):
        x = "_n_" + k
        whole = f"{x} = trunc({x}) AND abs({x}) < 2147483648"
        oks.append(f"(_t_{k} IS NULL OR ({whole}))")
        ints.append(f"CASE WHEN {whole} THEN CAST({x} AS BIGINT) END AS {k}")
    sql = (f"SELECT _line, {' AND '.join(oks)} AS ok, correct, "
           f"CASE WHEN abs({ts}) > 1e17 THEN {ts} / 1e9 WHEN abs({ts}) > 1e14 THEN {ts} / 1e6 "
           f"WHEN abs({ts}) > 1e11 THEN {ts} / 1e3 ELSE {ts} END AS timestamp_s, "
           f"{', '.join(ints)}, coalesce(local_id, CAST(_line AS VARCHAR)) AS local_id, "
           f"{', '.join(_TEXT_FIELDS[1:])}, {extra} AS extra FROM (SELECT _line, "
           + ", ".join(f"{v} AS {k}" for k, v in inner.items()) + f" FROM {src})")
    return sql, {"t": sorted(truthy), "f": sorted(falsy)}


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


_PARSED = ("_line", "correct", "timestamp_s", "prompt_tokens", "completion_tokens") \
    + _TEXT_FIELDS + ("extra",)


def load_table(con, src: str, cols: list[str], m: dict, report, parse_row, truthy, falsy):
    """Parse temporary table `src` into `<src>_p` (one row per usable case, in line order);
    rows SQL leaves undecided go through parse_row(raw: dict, line) -> dict | None, which
    skips with the reason itself. Returns the parsed table's name and whether any row went
    through Python."""
    used = {v for v in m.values() if v is not None}
    extra_cols = [c for c in cols if c not in used]
    sql, params = _parse_sql(src, m, truthy, falsy, extra_cols)
    out = src + "_p"
    con.execute(f"CREATE TEMP TABLE {out} AS {sql}", params)
    odd = con.execute(f"SELECT * FROM {src} WHERE _line IN (SELECT _line FROM {out} WHERE NOT ok) "
                      "ORDER BY _line").df()
    if len(odd):
        con.execute(f"DELETE FROM {out} WHERE NOT ok")
    if len(odd):
        fixed = []
        for rec in odd.to_dict("records"):
            line = rec.pop("_line")
            row = parse_row({k: v for k, v in rec.items() if v is not None}, line)
            if row is not None:
                fixed.append(row)
        if fixed:
            view = f"_fixed_{threading.get_ident()}"
            df = pd.DataFrame(fixed, columns=list(_PARSED))
            df["correct"] = df["correct"].astype("boolean")
            for k in ("prompt_tokens", "completion_tokens"):
                df[k] = pd.array(df[k].tolist(), dtype="Int64")
            df["timestamp_s"] = pd.to_numeric(df["timestamp_s"]).astype("float64")
            con.register(view, df)
            try:
                con.execute(f"INSERT INTO {out} BY NAME SELECT * FROM {view}")
            finally:
                con.unregister(view)
    return out, bool(len(odd))


def insert_parsed(con, store, out: str, eval_id: str, report, sort: bool) -> int:
    """Insert the parsed cases of `out` into `cases`: case_id = eval_id:local_id (default
    the line), a repeated local id skipped (the first wins), prompt_hash from the prompt;
    in line order (sort: rows parsed in Python were appended last)."""
    n, distinct = con.execute(f"SELECT count(*), count(DISTINCT local_id) FROM {out}").fetchall()[0]
    k = "1"
    if distinct < n:  # repeated ids: the first line wins, the others are skipped
        k = "row_number() OVER (PARTITION BY local_id ORDER BY _line)"
        for line, lid in con.execute(
                f"SELECT _line, local_id FROM (SELECT _line, local_id, row_number() OVER "
                f"(PARTITION BY local_id ORDER BY _line) AS k FROM {out}) WHERE k > 1 "
                f"ORDER BY _line").fetchall():
            report.skip(_("repeated case id {id}").format(id=repr(lid)), line=line)
    hashes = f"{out}_h"
    prompts = con.execute(f"SELECT DISTINCT prompt FROM {out} WHERE prompt IS NOT NULL").fetchall()
    con.register(hashes, pd.DataFrame({"prompt": [p for p, in prompts],
                                       "prompt_hash": [prompt_hash(p) for p, in prompts]},
                                      dtype=object))
    try:
        n = con.execute(
            f"INSERT INTO cases BY NAME SELECT $e || ':' || p.local_id AS case_id, $e AS eval_id, "
            f"p.model, p.category, p.prompt, h.prompt_hash, p.reference, p.prediction, p.correct, "
            f"p.cluster, p.request_id, p.timestamp_s, p.prompt_tokens, p.completion_tokens, "
            f"p.extra FROM (SELECT *, {k} "
            f"AS k FROM {out}) p LEFT JOIN {hashes} h ON h.prompt = p.prompt "
            f"WHERE p.k = 1 {'ORDER BY p._line' if sort else ''}", {"e": eval_id}).fetchall()[0][0]
    finally:
        con.unregister(hashes)
    report.rows_loaded += n
    return n
