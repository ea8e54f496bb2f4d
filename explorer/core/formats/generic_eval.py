"""Generic eval results: a CSV / TSV / JSONL / JSON-list / Parquet file with one case a row
and a correctness column.

Recognised columns (first match wins, names compared case-insensitively; the lists are
resources/metrics.toml [eval_columns.case]):
correctness (required: _aliases.CORRECTNESS, e.g. `correct`, `is_correct`, `acc`,
`exact_match`, `reward`, `passed`, `resolved`; or a `score` whose values are all 0 / 1), and
optionally case id, cluster, category, request_id (also `x_request_id`,
`x-request-id`, `gen_ai.request.id`), timestamp, prompt, prediction, reference, model,
prompt_tokens, completion_tokens. Other columns are kept in cases.extra.

Correctness values: true/false, yes/no, correct/wrong/incorrect, pass/fail, 1/0, and numbers
in [0, 1] (a per-sample score: correct when >= 0.5). Timestamps: unix seconds, or ms / us / ns
recognised by magnitude (> 1e11 ms, > 1e14 us, > 1e17 ns), or ISO-8601 text (UTC unless it
says otherwise); stored as unix seconds. prompt_hash = association.prompt_hash(prompt).

The module also holds the helpers every eval format uses (register_eval, insert_cases,
parse_correct). The generic *trace* format gives way when a correctness column exists (it
then answers with a low confidence; this one answers 0.7).
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from ..association import prompt_hash
from ..errors import InputError
from ._common import MAX_TIME_S, no_rows
from .base import Sniff, iter_jsonl, read_json, split_lines
from . import _aliases
from ..i18n import N_, _

NAME = "generic_eval"
KIND = "eval"

# the names the generic *trace* table gives way to: one list, in the alias table
CORRECTNESS_COLUMNS = _aliases.CORRECTNESS
# case field -> the column names that fill it (resources/metrics.toml [eval_columns.case])
CASE_COLUMNS = {k: tuple(v) for k, v in _aliases.VOCAB["eval_columns"]["case"].items()}

_TRUE = {"true", "t", "yes", "y", "correct", "right", "pass", "passed", "ok", "1", "1.0"}
_FALSE = {"false", "f", "no", "n", "wrong", "incorrect", "fail", "failed", "0", "0.0"}


# -- helpers shared by the eval formats ---------------------------------------------------------
def parse_correct(value: Any) -> bool | None:
    """A correctness value as a bool; None when missing. Raises ValueError when unreadable.

    bools as such; numbers in [0, 1] are scores (correct when >= 0.5); text true/false,
    yes/no, correct/wrong, pass/fail, 1/0."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return None
        if 0 <= value <= 1:
            return value >= 0.5
        raise ValueError(f"score {value!r} outside [0, 1]")
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return parse_correct(value[0])
    s = str(value).strip().lower()
    if not s or s in ("nan", "none", "null"):
        return None
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    try:
        return parse_correct(float(s))
    except ValueError:
        raise ValueError(f"not a correctness value: {str(value)[:40]!r}") from None


def parse_timestamp(value: Any) -> float | None:
    """Unix seconds from a number (s, or ms / us / ns by magnitude) or ISO-8601 text.
    None when missing (NaN included). Raises ValueError when unreadable, infinite or beyond
    the time range (_common.MAX_TIME_S)."""
    if value is None:
        return None
    if isinstance(value, str):
        s = value.strip()
        if not s:
            return None
        try:
            value = float(s)
        except ValueError:
            try:
                dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(f"not a timestamp: {s[:40]!r}") from None
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=timezone.utc)
            return dt.timestamp()
    x = float(value)
    if math.isnan(x):
        return None
    if math.isinf(x):
        raise ValueError(f"not a finite number: {value!r}")
    a = abs(x)
    t = x / 1e9 if a > 1e17 else x / 1e6 if a > 1e14 else x / 1e3 if a > 1e11 else x
    if abs(t) > MAX_TIME_S:  # even as nanoseconds: beyond what the binding SQL can hold
        raise ValueError(f"beyond the time range (|t| above {MAX_TIME_S:.0e} s): {value!r}")
    return t


def register_eval(store, report, path: Path, fmt: str, base: str, *, model: str | None = None,
                  benchmark: str | None = None, simulated: bool = False) -> str:
    """Insert one `evals` row and return its unique eval_id (base, base#2, ...)."""
    eval_id = store.new_id("evals", "eval_id", base)
    store.add_eval(eval_id, source_path=str(path), source_sha256=report.sha256, format=fmt,
                   model=model, benchmark=benchmark, simulated=simulated)
    report.eval_ids.append(eval_id)
    return eval_id


_CASE_TEXT = ("model", "benchmark", "category", "prompt", "prompt_hash", "reference",
              "prediction", "cluster", "request_id")


def insert_cases(store, report, eval_id: str, rows: list[dict]) -> int:
    """Append cases for `eval_id` from dicts with a `local_id` and any canonical case column.

    case_id = "<eval_id>:<local_id>" (a repeated local id is skipped with a reason);
    prompt_hash is computed from `prompt` when not given; `extra` dicts become JSON.
    Counts the rows in report.rows_loaded. Returns the number inserted."""
    seen, out = set(), []
    for r in rows:
        lid = str(r.pop("local_id"))
        if lid in seen:
            report.skip(_("repeated case id {id}").format(id=repr(lid)), line=r.pop("_line", None))
            continue
        seen.add(lid)
        r.pop("_line", None)
        r["case_id"] = f"{eval_id}:{lid}"
        r["eval_id"] = eval_id
        if r.get("prompt_hash") is None and r.get("prompt") is not None:
            r["prompt_hash"] = prompt_hash(r["prompt"])
        if isinstance(r.get("extra"), (dict, list)):
            r["extra"] = json.dumps(r["extra"], default=str, ensure_ascii=False)
        out.append(r)
    if not out:
        return 0
    df = pd.DataFrame(out)
    df["correct"] = pd.array([None if v is None else bool(v) for v in df["correct"]],
                             dtype="boolean")
    for c in ("prompt_tokens", "completion_tokens"):
        if c in df:
            df[c] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v))
                              else int(v) for v in df[c]], dtype="Int64")
    if "timestamp_s" in df:
        df["timestamp_s"] = pd.to_numeric(df["timestamp_s"], errors="coerce").astype("float64")
    for c in _CASE_TEXT + ("extra",):
        if c in df:
            df[c] = [None if v is None or (isinstance(v, float) and math.isnan(v)) else
                     (v if c == "extra" else str(v)) for v in df[c]]
    n = store.append("cases", df)
    report.rows_loaded += n
    return n


def pick(columns, names) -> str | None:
    """The first of `names` found among `columns` (case-insensitive); the actual column name."""
    low = {str(c).strip().lower(): c for c in columns}
    for n in names:
        if n in low:
            return low[n]
    return None


# -- the generic format ------------------------------------------------------------------------
def _header(sniff: Sniff) -> list[str] | None:
    """Column names from the head: a Parquet schema, the first JSON line's keys, the first
    object of a JSON list, or the CSV / TSV header."""
    if sniff.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
            return list(pq.read_schema(sniff.path).names)
        except Exception:  # not a readable Parquet file: not ours
            return None
    if sniff.is_binary:
        return None
    obj = sniff.first_json_line()
    if obj is not None:
        return list(obj.keys())
    head = sniff.head.lstrip("\ufeff \t\r\n")
    if head.startswith("["):
        try:
            obj, _ = json.JSONDecoder().raw_decode(head[1:].lstrip())
        except ValueError:
            return None
        return list(obj.keys()) if isinstance(obj, dict) else None
    lines = sniff.first_lines(2)
    if not lines or lines[0].lstrip().startswith(("{", "[")):
        return None
    first = lines[0].lstrip("\ufeff")
    delim = "\t" if first.count("\t") > first.count(",") else ","
    try:
        row = next(csv.reader(io.StringIO(first), delimiter=delim))
    except (csv.Error, StopIteration):
        return None
    return row if len(row) >= 2 else None


def detect(sniff: Sniff) -> float:
    """0.7 for a CSV / TSV / JSONL / JSON-list / Parquet file with a correctness column
    (CORRECTNESS_COLUMNS); 0 otherwise."""
    if sniff.is_dir:
        return 0.0
    cols = _header(sniff)
    if not cols or _aliases.correctness_column(cols, sniff.records()) is None:
        return 0.0
    return 0.7


def _read(path: Path, report) -> list[tuple[int, dict]]:
    """(line, record) pairs from a JSONL, JSON-list, Parquet or CSV / TSV file (for a JSON
    list and Parquet the "line" is the 1-based record number)."""
    if path.suffix.lower() == ".parquet":
        try:
            df = pd.read_parquet(path)
        except Exception as e:  # pyarrow raises several types for a broken file
            raise InputError(path, _("not a readable Parquet file ({error})").format(error=e)) from None
        return [(i + 1, rec) for i, rec in enumerate(df.to_dict("records"))]
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        head = fh.read(4096)
    if head.lstrip().startswith("["):
        data = read_json(path)
        if not isinstance(data, list):
            raise InputError(path, _("expected a JSON list of case objects"))
        return [(i + 1, r) for i, r in enumerate(data) if isinstance(r, dict)]
    if head.lstrip().startswith("{"):
        return list(iter_jsonl(path, report))
    first = split_lines(head)[0] if head else ""
    delim = "\t" if first.count("\t") > first.count(",") else ","
    try:
        df = pd.read_csv(path, sep=delim, dtype=str, keep_default_na=False,
                         encoding="utf-8-sig")
    except (pd.errors.ParserError, UnicodeDecodeError) as e:
        raise InputError(path, _("not a readable CSV ({error})").format(error=str(e).splitlines()[0][:120])) from None
    return [(i + 2, rec) for i, rec in enumerate(df.to_dict("records"))]


def _text(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT:
        return None
    if hasattr(v, "tolist") and not isinstance(v, str):  # numpy scalars / arrays (Parquet)
        v = v.tolist()
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    s = str(v)
    return s if s.strip() else None


def _int(v: Any, name: str) -> int | None:
    s = _text(v)
    if s is None:
        return None
    x = float(s)
    if x != int(x):
        raise ValueError(f"not a whole number: {s[:20]!r}")
    return int(x)


def _mapping(cols, records=()) -> dict:
    """Canonical case field -> the file's column (or None), from the alias tuples above;
    `records` (a sample of dicts) decides a score column that is only 0 / 1."""
    m = {k: pick(cols, names) for k, names in CASE_COLUMNS.items()}
    m["correct"] = _aliases.correctness_column(cols, records)
    return m


def _parse_record(rec: dict, line: int, m: dict, used: set, report) -> dict | None:
    """One record as an insert_cases row; None (skipped with line, field and reason) when
    its correctness is missing or a value is unreadable."""
    field = m["correct"]
    try:
        correct = parse_correct(rec.get(field))
        if correct is None:
            raise ValueError("missing")
        field = m["timestamp_s"]
        ts = parse_timestamp(_text(rec.get(field))) if field else None
        field = m["prompt_tokens"]
        pt = _int(rec.get(field), field) if field else None
        field = m["completion_tokens"]
        ct = _int(rec.get(field), field) if field else None
    except (ValueError, TypeError, OverflowError) as e:
        report.skip(str(e), line=line, field_name=field)
        return None
    get = {k: (_text(rec.get(c)) if c else None) for k, c in m.items()}
    extra = {k: v for k, v in rec.items() if k not in used and _text(v) is not None}
    return {"local_id": get["local_id"] if get["local_id"] is not None else line,
            "_line": line, "correct": correct, "cluster": get["cluster"],
            "category": get["category"], "request_id": get["request_id"],
            "timestamp_s": ts, "prompt": get["prompt"],
            "prediction": get["prediction"], "reference": get["reference"],
            "model": get["model"], "prompt_tokens": pt, "completion_tokens": ct,
            "extra": extra or None}


def _base(path: Path) -> str:
    return re.sub(r"\s+", "_", path.stem)


def _load_sql(path: Path, store, report) -> bool:
    """CSV / TSV / Parquet through DuckDB (_eval_sql); False when the file needs pandas."""
    from . import _eval_sql as S
    con, name = store.con, f"_eval_{threading.get_ident()}"
    delim = ","
    if path.suffix.lower() != ".parquet":
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            first = fh.readline()
        delim = "\t" if first.count("\t") > first.count(",") else ","
    maps: dict = {}

    def mapped(cols):
        maps.update(_mapping(cols))
        return {v for v in maps.values() if v is not None}

    cols = S.read_source(con, path, delim, name, mapped)
    if cols is None:
        return False
    try:
        if not maps:
            mapped(cols)
        if maps["correct"] is None:
            return False  # a 0 / 1 score column is decided from its values: the pandas path
        if con.execute(f"SELECT count(*) FROM {name}").fetchall()[0][0] == 0:
            raise InputError(path, _("no rows"))
        m = _check_mapping(path, maps, report)
        used = {v for v in m.values() if v is not None}

        def parse_row(rec, line):
            row = _parse_record(rec, line, m, used, report)
            if row is not None:
                row["local_id"] = str(row["local_id"])
                if row["extra"]:
                    row["extra"] = json.dumps(row["extra"], default=str, ensure_ascii=False)
            return row

        out, odd = S.load_table(con, name, cols, m, report, parse_row, _TRUE, _FALSE)
        models = [r[0] for r in con.execute(
            f"SELECT DISTINCT model FROM {out} WHERE model IS NOT NULL LIMIT 2").fetchall()]
        if con.execute(f"SELECT count(*) FROM {out}").fetchall()[0][0] == 0:
            raise no_rows(path, report, N_("case"))
        eval_id = register_eval(store, report, path, NAME, _base(path),
                                model=models[0] if len(models) == 1 else None)
        S.insert_parsed(con, store, out, eval_id, report, sort=odd)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {name}_p")
        if path.suffix.lower() == ".parquet":
            con.execute(f"DROP TABLE IF EXISTS {name}")
        else:
            con.unregister(name)
    return True


def _check_mapping(path: Path, m: dict, report) -> dict:
    if m["correct"] is None:
        raise InputError(path, _("no correctness column (one of: {columns}; or a score of only "
                                 "0 / 1)").format(columns=", ".join(CORRECTNESS_COLUMNS)))
    report.columns = {src: ("case_id" if dst == "local_id" else dst)
                      for dst, src in m.items() if src is not None}
    return m


def load(path: Path, store, report) -> None:
    """Load the file as one eval (eval_id = the file's stem); one case a row. Rows whose
    correctness is missing or unreadable are skipped with their line and field.
    CSV / TSV / Parquet load in DuckDB (_eval_sql); JSON and files DuckDB cannot read as
    pandas would go record by record."""
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        head = fh.read(4096).lstrip()
    if not head.startswith(("[", "{")) and _load_sql(path, store, report):
        return
    records = _read(path, report)
    if not records:
        raise InputError(path, _("no rows"))
    cols = list(dict.fromkeys(k for _, r in records[:50] for k in r))
    m = _check_mapping(path, _mapping(cols, [r for _, r in records[:200]]), report)
    used = {v for v in m.values() if v is not None}
    rows = [r for r in (_parse_record(rec, line, m, used, report) for line, rec in records)
            if r is not None]
    if not rows:
        raise no_rows(path, report, N_("case"))
    models = {r["model"] for r in rows if r["model"]}
    eval_id = register_eval(store, report, path, NAME, _base(path),
                            model=models.pop() if len(models) == 1 else None)
    insert_cases(store, report, eval_id, rows)
