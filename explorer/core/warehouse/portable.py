"""The portable query layer: the queries/*.sql files, written once in DuckDB's dialect, are
transpiled by SQLGlot for the warehouse engine (Spark SQL), so DuckDB and Spark run the same
query text; no second copy per engine is kept.

What the translation does besides the dialect (SQLGlot): the store's table names (requests,
cases, runs, ...) become the session's temporary views (TABLES), so a user's own table called
`requests` is never shadowed or recursed into; DuckDB's $name parameters become Spark's :name
parameters, values travelling as sql(args=...); a NULL parameter used as an array (e.g.
`$runs IS NULL OR list_contains($runs, run_id)`) is written as a typed NULL, which Spark needs;
`row_number() OVER ()` (a row key) becomes monotonically_increasing_id(); isfinite(x) becomes
`NOT isnan(x) AND abs(x) <> CAST('Infinity' AS DOUBLE)`; a CTE's [NOT] MATERIALIZED (DuckDB's
planner hint) is dropped; a decimal literal
(1.0) is cast to DOUBLE (DuckDB's arithmetic on it; Spark would round to 6 digits); EMPTY_CTES
below.
"""
from __future__ import annotations

import re
from functools import lru_cache

import sqlglot
from sqlglot import exp

from .. import schema
from ..errors import TraceExplorerError

# canonical DuckDB type -> Spark type
_TYPES = {"VARCHAR": "string", "DOUBLE": "double", "INTEGER": "int", "BIGINT": "bigint",
          "BOOLEAN": "boolean", "JSON": "string", "TIMESTAMP": "timestamp"}

def table_columns(table: str) -> list[tuple[str, str]]:
    """[(column, Spark type)] of a canonical store table (explorer.core.schema)."""
    out = []
    for part in re.split(r",\s*(?![^()]*\))", re.sub(r"--[^\n]*", "", schema.TABLES[table])):
        words = part.split()
        if len(words) >= 2:
            out.append((words[0], _TYPES[words[1].upper()]))
    return out



# store table -> temporary view in the engine session
TABLES = {t: f"te_{t}" for t in ("requests", "cases", "evals", "runs", "case_links")}


# CTEs that read tables a warehouse source does not have, replaced by an empty relation of the
# same columns: `ectx` (queries/request_engine_context.sql, included by the case view) joins
# engine logs (engine_stats) to requests with DuckDB's ASOF JOIN, which Spark lacks; the
# warehouse carries no engine logs, so its engine context is empty (NULL) either way.
EMPTY_CTES = {
    "ectx": "SELECT CAST(NULL AS VARCHAR) AS run_id, CAST(NULL AS VARCHAR) AS request_id, "
            "CAST(NULL AS VARCHAR) AS stats_run_id, CAST(NULL AS DOUBLE) AS engine_running, "
            "CAST(NULL AS DOUBLE) AS engine_waiting, CAST(NULL AS DOUBLE) AS engine_kv_usage, "
            "CAST(NULL AS DOUBLE) AS engine_prefix_hit_rate, CAST(NULL AS BIGINT) AS engine_samples "
            "WHERE false",
}


# store tables a warehouse source never has (engine logs, token timings): read as an empty
# relation of their columns written into the query, not as temporary views made at connect
# (two Spark Connect round trips each, ~277 ms apiece: SPARK-55163)
EMPTY_TABLES = ("token_latencies", "request_events", "engine_stats", "run_metrics")


@lru_cache(maxsize=None)
def _empty_relation(table: str) -> exp.Expression:
    duck = {"string": "VARCHAR", "double": "DOUBLE", "int": "INTEGER", "bigint": "BIGINT",
            "boolean": "BOOLEAN", "timestamp": "TIMESTAMP"}
    assert table in schema.TABLES
    cols = ", ".join(f"CAST(NULL AS {duck[t]}) AS {c}" for c, t in table_columns(table))
    return sqlglot.parse_one(f"SELECT {cols} WHERE false", read="duckdb")


class NotPortable(TraceExplorerError):
    """A query uses a construct SQLGlot cannot write for the target engine."""


@lru_cache(maxsize=512)
def _parse(sql: str, dialect: str) -> exp.Expression:
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except sqlglot.errors.ParseError as e:
        raise NotPortable(f"SQLGlot cannot read this query: {e}") from None
    if len(trees) != 1:
        raise NotPortable(f"one statement expected, got {len(trees)}")
    tree = trees[0]
    for cte in list(tree.find_all(exp.CTE)):
        cte.set("materialized", None)  # [NOT] MATERIALIZED: a DuckDB planner hint Spark lacks
        if cte.alias_or_name in EMPTY_CTES:
            cte.set("this", sqlglot.parse_one(EMPTY_CTES[cte.alias_or_name], read="duckdb"))
    for win in list(tree.find_all(exp.Window)):
        # row_number() OVER (): a row key in DuckDB; Spark needs an ordered window, and
        # monotonically_increasing_id() is its unique row key (made stable by materialize)
        if isinstance(win.this, exp.RowNumber) and not win.args.get("order") \
                and not win.args.get("partition_by"):
            win.replace(exp.Anonymous(this="monotonically_increasing_id", expressions=[]))
    for pc in list(tree.find_all(exp.PercentileCont)):
        # DuckDB's quantile_cont(x, q): SQLGlot writes PERCENTILE_CONT(x, q), which Spark
        # refuses (its percentile_cont takes WITHIN GROUP); Spark's percentile(x, q) is the
        # same exact quantile with linear interpolation (numpy's default); the list form
        # quantile_cont(x, [q1, q2]) becomes percentile(x, array(q1, q2)), and SQLGlot writes
        # DuckDB's 1-based list[i] as Spark's 0-based x[i - 1]
        if pc.expression is not None and not isinstance(pc.parent, exp.WithinGroup):
            pc.replace(exp.Anonymous(this="percentile", expressions=[pc.this, pc.expression]))
    for fn in list(tree.find_all(exp.Anonymous)):
        # DuckDB's isfinite(x) (not NaN, not +-inf, NULL for NULL): Spark has no isfinite
        if fn.name.lower() == "isfinite" and len(fn.expressions) == 1:
            x = fn.expressions[0]
            fn.replace(exp.paren(sqlglot.parse_one(
                "NOT isnan(x) AND abs(x) <> CAST('Infinity' AS DOUBLE)", read="spark")
                .transform(lambda n: x.copy() if isinstance(n, exp.Column) and n.name == "x" else n)))
    for lit in list(tree.find_all(exp.Literal)):
        # 1.0 is DECIMAL in both engines, but DuckDB divides decimals in DOUBLE while Spark
        # keeps a DECIMAL of 6 digits (0.888889 for 8/9): written as DOUBLE for Spark
        if lit.is_number and any(ch in lit.this for ch in ".eE") \
                and not isinstance(lit.parent, exp.Cast):
            lit.replace(exp.cast(lit.copy(), exp.DataType.build("double")))
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    for t in list(tree.find_all(exp.Table)):
        if t.args.get("db") or t.name in ctes:
            continue
        if t.name in EMPTY_TABLES:
            t.replace(exp.Subquery(this=_empty_relation(t.name).copy(),
                                   alias=exp.TableAlias(this=exp.to_identifier(t.alias_or_name))))
        elif t.name in TABLES:
            t.set("this", exp.to_identifier(TABLES[t.name]))
    return tree


def translate(sql: str, params: dict | list | None = None, dialect: str = "spark"
              ) -> tuple[str, dict]:
    """(text in `dialect`, named args) for a DuckDB query with $name parameters. Positional
    ? parameters (a list) are named p1, p2, ... Raises NotPortable."""
    if isinstance(params, (list, tuple)):
        tree = _parse(sql, dialect).copy()
        i = 0
        for ph in list(tree.find_all(exp.Placeholder)):
            if not ph.this:
                i += 1
                ph.replace(exp.Placeholder(this=f"p{i}"))
        params = {f"p{k + 1}": v for k, v in enumerate(params)}
    else:
        tree = _parse(sql, dialect)
        params = dict(params or {})
    used = {ph.name for ph in tree.find_all(exp.Placeholder)}
    missing = used - set(params)
    if missing:
        raise ValueError(f"query parameters without a value: {', '.join(sorted(missing))}")
    typed_nulls = [ph for ph in tree.find_all(exp.Placeholder)
                   if params.get(ph.name) is None and isinstance(ph.parent, exp.ArrayContains)]
    if typed_nulls:
        tree = tree.copy()
        for ph in list(tree.find_all(exp.Placeholder)):
            if params.get(ph.name) is None and isinstance(ph.parent, exp.ArrayContains):
                ph.replace(exp.cast(exp.Null(), exp.DataType.build("array<string>", dialect=dialect)))
    try:
        text = tree.sql(dialect=dialect, comments=False, unsupported_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.UnsupportedError as e:
        raise NotPortable(f"not expressible in {dialect}: {e}") from None
    used = {ph.name for ph in tree.find_all(exp.Placeholder)}
    return text, {k: _arg(params[k]) for k in used}


def _arg(v):
    """A parameter value as Spark accepts it (numpy scalars to Python, tuples to lists)."""
    if hasattr(v, "item") and not isinstance(v, (list, tuple)):
        return v.item()
    if isinstance(v, tuple):
        return list(v)
    return v
