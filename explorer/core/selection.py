"""Selection predicates: small frozen trees that every view evaluates the same way.

A predicate names columns of one of two row views and turns into a parameterised SQL fragment
(`to_sql() -> (fragment, params)`, values always as `?` parameters, identifiers through
quote_ident). glue's SubsetState is the model.

Row views (the columns a predicate may name):

- case view (`select_cases`, the cohort): one row per case, queries/analysis_case_view.sql:
  case_id, eval_id, model, benchmark, category, cluster, correct, badcase (0/1), run_id,
  request_id, level, score, engine_version, every request metric (arrival_s, kv_cache_hit_rate,
  num_preemptions, tpot_ms, batch_size, ttft_ms, queue_ms, e2e_ms, prefill_ms, decode_ms,
  cached_prompt_tokens, finish_reason, error, tenant; NULL when the case is not bound) and
  prompt_tokens / completion_tokens (the bound request's counts, else the case's own).
- request view (`select_requests`): one row per request, queries/analysis_request_view.sql:
  every `requests` column plus engine_version, benchmark and simulated of its run.

SQL semantics apply: a comparison with NULL is not true, so Not(Range(...)) does not select rows
whose column is NULL.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, Union

import pandas as pd

from .errors import TraceExplorerError
from .sqlutil import load_query, quote_ident


class SelectionError(TraceExplorerError):
    """A predicate names a column the row view does not have (message names it)."""


@dataclass(frozen=True)
class Range:
    """Rows whose `column` lies in [lo, hi); either bound may be None (open).

    closed_hi=True makes the upper bound inclusive (the last bin of a histogram)."""
    column: str
    lo: float | None = None
    hi: float | None = None
    closed_hi: bool = False

    def to_sql(self) -> tuple[str, list]:
        col = quote_ident(self.column)
        parts, params = [], []
        if self.lo is not None:
            parts.append(f"{col} >= ?")
            params.append(float(self.lo))
        if self.hi is not None:
            parts.append(f"{col} {'<=' if self.closed_hi else '<'} ?")
            params.append(float(self.hi))
        if not parts:
            return f"({col} IS NOT NULL)", []
        return "(" + " AND ".join(parts) + ")", params

    def to_dict(self) -> dict:
        return {"type": "Range", "column": self.column, "lo": self.lo, "hi": self.hi,
                "closed_hi": self.closed_hi}


@dataclass(frozen=True)
class InSet:
    """Rows whose `column` equals one of `values` (a tuple; an empty tuple selects nothing)."""
    column: str
    values: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(self.values))

    def to_sql(self) -> tuple[str, list]:
        if not self.values:
            return "(FALSE)", []
        marks = ", ".join("?" for _ in self.values)
        return f"({quote_ident(self.column)} IN ({marks}))", [_plain(v) for v in self.values]

    def to_dict(self) -> dict:
        return {"type": "InSet", "column": self.column, "values": [_plain(v) for v in self.values]}


@dataclass(frozen=True)
class And:
    """Rows every part selects (no parts: every row)."""
    parts: tuple = ()

    def __init__(self, *parts: "Predicate"):
        object.__setattr__(self, "parts", tuple(parts))

    def to_sql(self) -> tuple[str, list]:
        return _join(self.parts, "AND", "(TRUE)")

    def to_dict(self) -> dict:
        return {"type": "And", "parts": [p.to_dict() for p in self.parts]}


@dataclass(frozen=True)
class Or:
    """Rows any part selects (no parts: no row)."""
    parts: tuple = ()

    def __init__(self, *parts: "Predicate"):
        object.__setattr__(self, "parts", tuple(parts))

    def to_sql(self) -> tuple[str, list]:
        return _join(self.parts, "OR", "(FALSE)")

    def to_dict(self) -> dict:
        return {"type": "Or", "parts": [p.to_dict() for p in self.parts]}


@dataclass(frozen=True)
class Not:
    """Rows the part does not select (rows where it is NULL stay unselected)."""
    part: "Predicate"

    def to_sql(self) -> tuple[str, list]:
        sql, params = self.part.to_sql()
        return f"(NOT {sql})", params

    def to_dict(self) -> dict:
        return {"type": "Not", "part": self.part.to_dict()}


@dataclass(frozen=True)
class TreePath:
    """The rows reaching one decision-tree node: every step (feature, op, threshold) holds,
    op being "le" (feature <= threshold) or "gt" (feature > threshold), as scikit-learn splits.
    Rows with NULL in a feature on the path are not selected (the tree was fit without them).
    The root (no steps) selects every row."""
    steps: tuple = ()

    def __post_init__(self):
        steps = tuple((str(f), str(op), float(t)) for f, op, t in self.steps)
        for _, op, _ in steps:
            if op not in ("le", "gt"):
                raise ValueError(f"TreePath step op must be 'le' or 'gt', not {op!r}")
        object.__setattr__(self, "steps", steps)

    def to_sql(self) -> tuple[str, list]:
        if not self.steps:
            return "(TRUE)", []
        parts = [f"{quote_ident(f)} {'<=' if op == 'le' else '>'} ?" for f, op, _ in self.steps]
        return "(" + " AND ".join(parts) + ")", [t for _, _, t in self.steps]

    def to_dict(self) -> dict:
        return {"type": "TreePath", "steps": [list(s) for s in self.steps]}


Predicate = Union[Range, InSet, And, Or, Not, TreePath]


def from_dict(d: dict) -> Predicate:
    """Rebuild a predicate from its to_dict() form (sessions and reports store them).
    Raises ValueError for an unknown type."""
    t = d.get("type")
    if t == "Range":
        return Range(d["column"], d.get("lo"), d.get("hi"), bool(d.get("closed_hi", False)))
    if t == "InSet":
        return InSet(d["column"], tuple(d.get("values", ())))
    if t == "And":
        return And(*(from_dict(p) for p in d.get("parts", ())))
    if t == "Or":
        return Or(*(from_dict(p) for p in d.get("parts", ())))
    if t == "Not":
        return Not(from_dict(d["part"]))
    if t == "TreePath":
        return TreePath(tuple(tuple(s) for s in d.get("steps", ())))
    raise ValueError(f"unknown predicate type {t!r}")


def _plain(v: Any) -> Any:
    """numpy scalars -> Python scalars (DuckDB parameters and JSON want plain values)."""
    return v.item() if hasattr(v, "item") else v


def _join(parts: Sequence, op: str, empty: str) -> tuple[str, list]:
    if not parts:
        return empty, []
    sqls, params = [], []
    for p in parts:
        s, ps = p.to_sql()
        sqls.append(s)
        params += ps
    return "(" + f" {op} ".join(sqls) + ")", params


def named_params(fragment: str, params: Sequence, prefix: str = "sel") -> tuple[str, dict]:
    """Rewrite the `?` marks of a predicate fragment as $prefix0, $prefix1, ... so it can join a
    query that uses named parameters. `?` inside double-quoted identifiers is left alone.
    Returns (fragment, {name: value})."""
    out, named, i, in_quote = [], {}, 0, False
    for ch in fragment:
        if ch == '"':
            in_quote = not in_quote
            out.append(ch)
        elif ch == "?" and not in_quote:
            name = f"{prefix}{i}"
            out.append("$" + name)
            named[name] = params[i]
            i += 1
        else:
            out.append(ch)
    if i != len(params):
        raise ValueError(f"predicate has {i} parameter marks but {len(params)} values")
    return "".join(out), named


def columns_of(pred: Predicate | None) -> list[str]:
    """The columns a predicate names, in order of first mention."""
    if pred is None:
        return []
    if isinstance(pred, (Range, InSet)):
        return [pred.column]
    if isinstance(pred, TreePath):
        return list(dict.fromkeys(f for f, _op, _t in pred.steps))
    parts = (pred.part,) if isinstance(pred, Not) else pred.parts
    return list(dict.fromkeys(c for p in parts for c in columns_of(p)))


def view_columns(con, view: str) -> list[str]:
    """The columns of row view `view` (a query of queries/) as DuckDB binds it: the names a
    predicate may use (no hand-kept list to fall out of step with the SQL)."""
    return [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM (\n{load_query(view)}\n) AS v")
            .fetchall()]


def _run(store, view: str, columns: str, pred: Predicate | None, con=None) -> pd.DataFrame:
    """A selection's column names come from data (a saved session, a report, a click): each is
    checked against the view's columns before it is quoted into the SQL."""
    con = con or store.con
    have: list[str] = []
    if pred is not None:  # a view's columns follow its store's tables: kept per store
        known = store.cache("selection_view_columns", 4) if hasattr(store, "cache") else {}
        have = known.get(view) or known.setdefault(view, view_columns(con, view))
    unknown = [c for c in columns_of(pred) if c not in have]
    if unknown:
        raise SelectionError(f"the selection names a column the {view.split('_')[1]} view does "
                             f"not have: {', '.join(map(repr, unknown))} (it has "
                             f"{', '.join(have)})")
    where, params = pred.to_sql() if pred is not None else ("TRUE", [])
    sql = f"SELECT {columns} FROM (\n{load_query(view)}\n) AS v WHERE {where}"
    return con.execute(sql, params).df()


def select_cases(store, pred: Predicate | None, con=None) -> list[str]:
    """case_id of every case (in the case view, see the module doc) the predicate selects,
    sorted. Raises SelectionError for an unknown column."""
    df = _run(store, "analysis_case_view", "case_id", pred, con)
    return sorted(df["case_id"].tolist())


def select_requests(store, pred: Predicate | None, con=None) -> pd.DataFrame:
    """DataFrame(run_id, request_id) of every request (request view, see the module doc) the
    predicate selects, sorted. Raises SelectionError for an unknown column."""
    df = _run(store, "analysis_request_view", "run_id, request_id", pred, con)
    return df.sort_values(["run_id", "request_id"], kind="stable").reset_index(drop=True)
