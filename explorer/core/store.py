"""The session's embedded DuckDB store: schema, file loading with provenance, save / reopen.

One Store per session: in memory by default, a .duckdb file when the user saves the session.
A DuckDB connection must not be shared between threads: workers call `Store.cursor()` to get
their own connection to the same database.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Sequence

import cachetools
import duckdb
import numpy as np
import pandas as pd

from . import errlog, schema
from .i18n import _
from .sqlutil import load_query, quote_ident
from .inputfiles import (  # noqa: F401 - importable from the store as before
    LOAD_CANCELLED, LoadReport, _Hasher, _looks_aggregate, sha256_of, special_file, walk_inputs)
from .store_file import MAX_TOLERANCE, SessionFile, validate_settings  # noqa: F401
from .store_load import Loading


class Store(Loading, SessionFile):
    """DuckDB database holding the canonical tables (see explorer.core.schema).

    Store() is in memory; Store(path) opens or creates a .duckdb file. Raises
    duckdb.Error when the file is not a DuckDB database.
    """

    def __init__(self, path: str | Path | None = None):
        self.path = str(path) if path else None
        self.con = duckdb.connect(self.path or ":memory:")
        self.con.execute("SET enable_progress_bar = false")  # no terminal bars from long inserts
        # memory DuckDB frees (the uncompressed row groups a compact() replaced, a query's hash
        # tables) goes back to the system within a second: without these threads jemalloc kept
        # it until a later big allocation (10M requests: 2.0 GB resident after the checkpoint,
        # 0.6 GB with them). A process-wide DuckDB setting.
        self.con.execute("SET allocator_background_threads = true")
        from .memory import configure
        configure(self.con)  # memory_limit (a share of the RAM) and a spill directory
        self._compacted_bytes = 0  # the in-memory tables' size after the last compact()
        self._lock = threading.RLock()
        self._cancelled = lambda: False  # the cancelled() of the load_paths in progress
        self._report: LoadReport | None = None  # the report of the file loading (append)
        # UTF-8 copy being loaded -> (the file it copies, its encoding's note): see _utf8
        self._copy_of: dict[str, tuple[str, str]] = {}
        # input_ids load_paths reserved (inputs rows in walk order, batches or not): the
        # highest, and the id of the file each loading thread is at
        self._input_ids_to = 0
        self._input_id_of: dict[int, int] = {}
        self._caches: dict[str, cachetools.LRUCache] = {}
        self.detached: list[str] = []  # in-place files a reopened session could not find (inplace)
        self.create_schema()

    def cache(self, name: str, maxsize: int) -> cachetools.LRUCache:
        """The bounded cache `name` that this store owns (made on first use, least recently
        used entries dropped beyond maxsize, gone with the store): results that depend on the
        store's content, such as the case view and the timeline's run statistics."""
        with self._lock:
            c = self._caches.get(name)
            if c is None:
                c = self._caches[name] = cachetools.LRUCache(maxsize=maxsize)
            return c

    # -- schema and plain access ------------------------------------------------------------
    def create_schema(self) -> None:
        """Create every canonical table that does not exist yet and the views (idempotent)."""
        for name, ddl in schema.TABLES.items():
            self.con.execute(f"CREATE TABLE IF NOT EXISTS {quote_ident(name)} ({ddl}\n)")
        for name in schema.VIEWS:
            self.con.execute(f"CREATE OR REPLACE VIEW {quote_ident(name)} AS {load_query(name)}")

    # compact() compresses when the in-memory tables grew by this much (about 3M requests);
    # load_paths asks it after every COMPACT_CHECK_ROWS rows loaded
    COMPACT_BYTES = 512 << 20
    COMPACT_CHECK_ROWS = 500_000

    def compact(self, force: bool = False) -> bool:
        """Compress an in-memory store's tables (DuckDB CHECKPOINT) when they grew by more than
        COMPACT_BYTES since the last compaction, or when force. DuckDB keeps the rows written
        to an in-memory database uncompressed until a checkpoint: 10M requests of the bench
        file take 1.8 GB so, 0.5 GB compressed (the checkpoint costs about 0.55 s of CPU per
        million such requests, on one thread). Returns whether it ran. A file store is left to
        DuckDB's own checkpoints. Call it outside a transaction (after a load's COMMIT). A
        checkpoint that fails (e.g. out of memory while it rewrites) is logged and the rows stay
        as they were: it only saves memory, so the load or binding that asked goes on."""
        if self.path is not None:
            return False
        with self._lock:
            size = self._table_bytes()
            if not force and size - self._compacted_bytes < self.COMPACT_BYTES:
                return False
            try:
                self.con.execute("CHECKPOINT")
            except duckdb.Error as e:
                errlog.record(e, "compressing the in-memory store (CHECKPOINT); nothing lost")
                return False
            self._compacted_bytes = self._table_bytes()
            return True

    def _table_bytes(self) -> int:
        """Bytes DuckDB holds for the tables of the in-memory database."""
        return self.scalar("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() "
                           "WHERE tag = 'IN_MEMORY_TABLE'")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new connection to the same database, for use in one worker thread."""
        return self.con.cursor()

    def execute(self, sql: str, params: Sequence | dict | None = None):
        """Run one statement with parameters on the main connection; returns the relation."""
        return self.con.execute(sql, params or [])

    def df(self, sql: str, params: Sequence | dict | None = None) -> pd.DataFrame:
        """Run a query with parameters and return a pandas DataFrame."""
        return self.con.execute(sql, params or []).df()

    def query(self, name: str, params: dict | None = None, con=None) -> pd.DataFrame:
        """Run queries/<name>.sql with named parameters ($name) and return a DataFrame."""
        return (con or self.con).execute(load_query(name), params or {}).df()

    def scalar(self, sql: str, params: Sequence | dict | None = None) -> Any:
        """The first column of the first row (None when there is no row). Reads the whole
        result: with DuckDB 2 a half-read result (fetchone) keeps the connection busy and a
        later register / append raises ResourceInUseException."""
        rows = self.con.execute(sql, params or []).fetchall()
        return rows[0][0] if rows else None

    def count(self, table: str) -> int:
        return self.scalar(f"SELECT count(*) FROM {quote_ident(table)}")

    def append(self, table: str, data: pd.DataFrame | Any, con=None) -> int:
        """Insert the rows of a DataFrame (or Arrow table) into a canonical table by column
        name; columns the table lacks raise duckdb.BinderException, missing ones become NULL.
        Returns the number of rows inserted. While a file loads (load_file), a cancelled load
        raises errors.Cancelled, and DataFrame rows holding a value no analysis can use (infinite,
        beyond the time range: value_limits) are left out and counted as skipped in the
        file's report, whatever loader sent them (the loaders' own checks name the line)."""
        con = con or self.con
        self.check_cancelled()
        if self._report is not None and isinstance(data, pd.DataFrame):
            data = _drop_unusable(data, table, self._report)
        n = len(data)
        if n == 0:
            return 0
        if table == "requests":  # requests_local once a file is read in place (inplace.union)
            from .inplace import requests_table
            table = requests_table(con)
        name = f"_append_{threading.get_ident()}"
        con.register(name, data)
        try:
            con.execute(f"INSERT INTO {quote_ident(table)} BY NAME SELECT * FROM {quote_ident(name)}")
        finally:
            con.unregister(name)
        return n

    def new_id(self, table: str, column: str, base: str) -> str:
        """A value of `column` not yet used in `table`: base, else base#2, base#3, ...
        (one query; starts_with, not LIKE, so '%' or '_' in base are plain characters)."""
        return self.new_ids(table, column, [base])[0]

    def new_ids(self, table: str, column: str, bases: Sequence[str]) -> list[str]:
        """new_id for each base, in order, with one query: each value is new in `table` and
        differs from the ones before it (two equal bases give base and base#2)."""
        if not bases:
            return []
        col = quote_ident(column)
        if len(bases) == 1:  # the same rule, ~3x faster for the one base of each file loaded
            where, param = f"starts_with({col}, ?)", bases[0]
        else:
            where, param = (f"EXISTS (SELECT 1 FROM unnest(CAST(? AS VARCHAR[])) AS b(base) "
                            f"WHERE starts_with({col}, b.base))"), list(bases)
        taken = {r[0] for r in self.con.execute(
            f"SELECT {col} FROM {quote_ident(table)} WHERE {where}", [param]).fetchall()}
        out = []
        for base in bases:
            got, i = base, 2
            while got in taken:
                got, i = f"{base}#{i}", i + 1
            taken.add(got)
            out.append(got)
        return out

    def source_of(self, path: str | Path) -> Path:
        """The input file a loader's path stands for: the original of a UTF-8 copy (a file in
        UTF-16 or a single-byte encoding is loaded from one, see load_file), else `path`."""
        found = self._copy_of.get(str(path))
        return Path(found[0]) if found else Path(path)

    def add_run(self, run_id: str, **fields: Any) -> None:
        """Insert one row into runs; `config` may be a dict (stored as JSON). A field the
        table lacks raises duckdb.BinderException."""
        self._insert_row("runs", self._run_row({"run_id": run_id, **fields}))

    def add_runs(self, rows: Sequence[dict[str, Any]]) -> None:
        """add_run for many rows (each a dict with run_id and add_run's fields) with one
        INSERT; a value is cast to its column's type by DuckDB."""
        if not rows:
            return
        frame = pd.DataFrame([self._run_row(r) for r in rows]).astype(object)
        frame = frame.where(frame.notna(), None)
        cols = ", ".join(f"CAST({quote_ident(c)} AS VARCHAR) AS {quote_ident(c)}"
                         for c in frame.columns)  # a column of only None has no type
        name = f"_runs_{threading.get_ident()}"
        self.con.register(name, frame)
        try:
            self.con.execute(f"INSERT INTO runs BY NAME SELECT {cols} FROM {quote_ident(name)}")
        finally:
            self.con.unregister(name)

    def _run_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """A runs row as stored: source_path the input a UTF-8 copy stands for (source_of),
        config as JSON text."""
        row = dict(row)
        if row.get("source_path") is not None:
            row["source_path"] = str(self.source_of(row["source_path"]))
        if isinstance(row.get("config"), (dict, list)):
            row["config"] = json.dumps(row["config"])
        return row

    def add_eval(self, eval_id: str, **fields: Any) -> None:
        """Insert one row into evals (a field the table lacks raises duckdb.BinderException)."""
        if fields.get("source_path") is not None:
            fields["source_path"] = str(self.source_of(fields["source_path"]))
        self._insert_row("evals", {"eval_id": eval_id, **fields})

    def _insert_row(self, table: str, row: dict[str, Any]) -> None:
        """One parameterised INSERT (no DataFrame registration: ~4x cheaper for one row).
        pd.Timestamp -> datetime, NumPy scalars -> Python values, NaN / NaT -> NULL (as the
        DataFrame insert did)."""
        row = {k: (None if v is pd.NaT or (isinstance(v, float) and v != v)
                   else v.to_pydatetime() if isinstance(v, pd.Timestamp)
                   else v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
        cols = ", ".join(quote_ident(c) for c in row)
        self.con.execute(f"INSERT INTO {quote_ident(table)} ({cols}) VALUES "
                         f"({', '.join('?' * len(row))})", list(row.values()))

    def get_setting(self, key: str, default: Any = None, con=None) -> Any:
        """The value kept under `key`, else default. con: a cursor (Store.cursor) when called
        from a thread other than the store's."""
        rows = (con or self.con).execute("SELECT value FROM settings WHERE key = ?", [key]).fetchall()
        return default if not rows else json.loads(rows[0][0])

    def set_setting(self, key: str, value: Any) -> None:
        """Keep `value` (JSON-able) under `key` with the session. Waits for a load in progress
        (the store's lock): written inside a file's transaction, it would go if that rolled back."""
        with self._lock:
            self.con.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)",
                             [key, json.dumps(value)])

    def close(self) -> None:
        self.con.close()



def value_limits(column: str) -> tuple[float, float] | None:
    """(low, high) a numeric column of any canonical table must lie in for the store's SQL
    (times in microseconds fit INT64) and the analyses: unix times within +-MAX_TIME_S,
    durations (*_ms) within +-MAX_DURATION_MS, anything else finite. None: not checked here."""
    from .formats._common import MAX_DURATION_MS, MAX_TIME_S
    if column in ("arrival_s", "ts_s", "timestamp_s"):
        return -MAX_TIME_S, MAX_TIME_S
    if column.endswith("_ms"):
        return -MAX_DURATION_MS, MAX_DURATION_MS
    return -np.inf, np.inf


def _drop_unusable(frame: pd.DataFrame, table: str, report: LoadReport) -> pd.DataFrame:
    """`frame` without the rows whose float columns hold an infinite value or one beyond
    value_limits (vectorised; NaN is a missing value and passes); each dropped row is
    counted in report.skip with its field, value and position in the inserted batch."""
    bad = None
    why: dict[str, np.ndarray] = {}
    for col in frame.columns:
        if frame[col].dtype.kind != "f":
            continue
        v = frame[col].to_numpy()
        low, high = value_limits(col)
        m = np.isinf(v) | (v < low) | (v > high)  # NaN compares False: passes
        if m.any():
            why[col] = m
            bad = m if bad is None else (bad | m)
    if bad is None:
        return frame
    for i in np.flatnonzero(bad)[:LoadReport.MAX_REASONS]:
        col = next(c for c, m in why.items() if m[i])
        report.skip(_("value beyond what the store can use: {value} (record {i} of the {table} "
                      "rows)").format(value=repr(frame[col].iloc[i]), i=i + 1, table=table), field_name=col)
    report.rows_skipped += max(0, int(bad.sum()) - LoadReport.MAX_REASONS)
    return frame.loc[~bad]
