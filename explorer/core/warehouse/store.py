"""WarehouseStore: the analysis store when the requests live in a warehouse.

The eval cases are loaded locally (a Store, as always); the requests stay in the engine. The
analysis functions receive a WarehouseStore in place of a Store: its `con` routes each query by
what it reads. A query that reads `requests` (or the binding's staged _assoc_ tables) runs in
the engine, translated from queries/*.sql by SQLGlot (portable.py), with the client's cases,
evals, runs and case_links there as small temporary views; every other query (cases, clusters,
runs, settings: client-side tables) runs in the local DuckDB. Binding runs the same
assoc_*.sql stages in the engine; only the links (one per bound case) come back.
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache

import numpy as np
import pandas as pd
import sqlglot
from sqlglot import exp

from ..sqlutil import load_query
from .spark import SparkSource

_REMOTE_TABLES = {"requests", "token_latencies", "request_events"}


@lru_cache(maxsize=1024)
def reads_remote(sql: str) -> bool:
    """True when the query reads the requests (or the binding's staged _assoc_ tables)."""
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except sqlglot.errors.ParseError:
        return False
    for tree in trees:
        ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
        for t in tree.find_all(exp.Table):
            if t.name not in ctes and (t.name in _REMOTE_TABLES or t.name.startswith("_assoc_")):
                return True
    return False


class Result:
    """What DuckDB's execute() returns, for a fetched pandas frame."""

    def __init__(self, df: pd.DataFrame):
        self._df = df

    def df(self) -> pd.DataFrame:
        return self._df

    fetchdf = df

    def fetchall(self) -> list[tuple]:
        obj = self._df.astype(object).where(self._df.notna(), None)
        return [tuple(v.item() if isinstance(v, np.generic) else v for v in row)
                for row in obj.itertuples(index=False, name=None)]

    def fetchone(self):
        rows = self.fetchall()
        return rows[0] if rows else None

    def fetchnumpy(self) -> dict:
        return {c: self._df[c].to_numpy() for c in self._df.columns}

    @property
    def columns(self) -> list[str]:
        return list(self._df.columns)


class Router:
    """A DuckDB-connection look-alike: execute / sql send a query to the engine or run it in
    the local DuckDB (see the module doc)."""

    def __init__(self, store: "WarehouseStore"):
        self.store = store
        self._lock = threading.RLock()
        self._cur = None  # one local cursor, so BEGIN ... COMMIT spans several calls

    def execute(self, sql: str, params=None):
        if reads_remote(sql):
            return Result(self.store.source.fetch(sql, params))
        with self._lock:
            if self._cur is None:
                self._cur = self.store.local.con.cursor()
            return Result(self._cur.execute(sql, params or []).df())

    def sql(self, sql: str, params=None):
        return self.execute(sql, params)

    def cursor(self) -> "Router":
        return self

    def close(self) -> None:
        pass  # shared by every caller of store.cursor(); closed with the store


class WarehouseStore:
    """A Store look-alike over a local Store (cases, evals, runs, case_links, settings) and a
    SparkSource (the requests). remote = True tells the analysis to fetch the cohort's rows
    with SQL instead of caching every case."""

    remote = True

    def __init__(self, local, source: SparkSource):
        self.local, self.source = local, source
        self.con = Router(self)
        self.binding = None
        self._caches: dict = {}

    def cache(self, name: str, maxsize: int):
        """This store's own bounded cache `name` (see Store.cache): not the local store's,
        whose content differs."""
        import cachetools
        c = self._caches.get(name)
        if c is None:
            c = self._caches[name] = cachetools.LRUCache(maxsize=maxsize)
        return c

    def __getattr__(self, name):  # everything else (settings, inputs, ...) is the local store's
        return getattr(self.local, name)

    def cursor(self) -> Router:
        return self.con

    def execute(self, sql: str, params=None):
        return self.con.execute(sql, params)

    def df(self, sql: str, params=None) -> pd.DataFrame:
        return self.con.execute(sql, params).df()

    def query(self, name: str, params: dict | None = None, con=None) -> pd.DataFrame:
        return self.con.execute(load_query(name), params or {}).df()

    def scalar(self, sql: str, params=None):
        rows = self.con.execute(sql, params).fetchall()
        return rows[0][0] if rows else None

    def count(self, table: str) -> int:
        from ..sqlutil import quote_ident
        return self.scalar(f"SELECT count(*) FROM {quote_ident(table)}")

    def engine_meta(self) -> dict:
        return self.source.meta()

    def close(self) -> None:
        self.source.close()

    def save_as(self, path, with_data: bool = False) -> None:
        """The local store's session file (cases, links, clusters, settings: the requests stay
        in the engine), which keeps the warehouse it was connected to: its URL without
        credentials, the table and the column mapping. Reopening it reconnects
        (Session.open_session); with_data has no request rows to copy here."""
        from ..redact import redact_url
        from ..store_file import WAREHOUSE_SETTING
        self.local.set_setting(WAREHOUSE_SETTING, {
            "url": redact_url(self.source.url), "table": self.source.table,
            "columns": dict(self.source.columns)})
        self.local.save_as(path, with_data=with_data)

    # -- preparing the session ----------------------------------------------------------------
    def prepare(self, tol=None):
        """Default clusters (locally), the runs of the table (fetched: one row per run), the
        cases sent to the engine, binding there; returns the AssociationResult."""
        from ..clusters import assign_default_clusters
        assign_default_clusters(self.local)
        self.source.table_rows = self._sync_runs()  # the runs' row counts: no count(*) pass
        for t in ("cases", "evals"):
            self.source.upload(t, self.local.con.execute(f"SELECT * FROM {t}").df())
        from .binding import bind_in_engine
        self.binding = bind_in_engine(self, tol)
        return self.binding

    def _sync_runs(self) -> int:
        """The table's runs into the local runs (and the engine's te_runs); returns the
        table's row count (te_runs_src counts each run's rows in the same pass)."""
        runs = self.source.fetch_frame(self.source.session.table("te_runs_src"))
        total = int(runs.pop("n_rows").sum()) if len(runs) else 0
        self.source.cache_built(total)
        con = self.local.con
        con.execute("DELETE FROM runs")
        if len(runs):
            runs = runs.assign(source_path=self.source.table, format="warehouse")
            con.register("_te_runs", runs)
            try:
                con.execute("INSERT INTO runs BY NAME SELECT * FROM _te_runs")
            finally:
                con.unregister("_te_runs")
        self.source.upload("runs", con.execute("SELECT * FROM runs").df())
        return total


def open_warehouse(local, url: str, table: str, columns: dict | None = None,
                   cancelled=None, progress=None) -> WarehouseStore:
    """Connect to the warehouse, define the requests view, bind the local store's cases there.
    cancelled() -> True stops the remote query in flight (raises Cancelled); progress(step) is
    told each step: "connect", then "bind". Raises WarehouseUnavailable / WarehouseError / Cancelled
    (explorer.core.warehouse)."""
    say = progress or (lambda text: None)
    say("connect")
    src = SparkSource(url, table, columns).open(cancelled=cancelled)
    ws = WarehouseStore(local, src)
    try:
        say("bind")
        if cancelled is not None:
            with src.watch(cancelled):
                ws.prepare()
        else:
            ws.prepare()
    except BaseException:
        src.close()
        raise
    return ws


def parse_columns(text: str | None) -> dict:
    """--requests-columns "ttft_ms=ttft,run_id=replica" -> {canonical: source}. Raises
    ValueError naming an entry that is not canonical=source or a canonical name that is not a
    request column."""
    from .spark import table_columns
    if not text:
        return {}
    known = {c for c, _ in table_columns("requests")}
    out = {}
    for part in filter(None, (p.strip() for p in re.split(r"[,;]", text))):
        k, sep, v = part.partition("=")
        if not sep or not k.strip() or not v.strip():
            raise ValueError(f"--requests-columns: {part!r} is not canonical=source")
        if k.strip() not in known:
            raise ValueError(f"--requests-columns: {k.strip()!r} is not a request column "
                             f"(known: {', '.join(sorted(known))})")
        out[k.strip()] = v.strip()
    return out
