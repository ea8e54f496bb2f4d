"""A Spark Connect session that answers the store's queries for a warehouse requests table.

SparkSource owns the session (and, for `spark:local`, the server it started), the temporary
views of one analysis (te_requests over the user's table, te_cases / te_evals / te_runs /
te_case_links from the client, empty views of the other canonical tables), runs translated
queries (portable.translate) and counts what they cost: rows fetched by the client, rows the
engine scanned, seconds.

The requests table is read from its storage once: te_requests is the projection of the
canonical columns (plus the run fields) persisted in the engine (MEMORY_AND_DISK, Spark's
DataFrame.persist), built by the first query (the runs' row counts) and read from memory by
every later one (binding stages, cohort, aggregates, SLA windows); unpersisted at close, since
a Spark Connect server's cache is shared by its sessions. rows_scanned counts the storage
reads (the cache build counts the table's rows once: Spark's metrics do not show it),
rows_cache_read the in-memory reads (InMemoryTableScan's numOutputRows).
"""
from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
from decimal import Decimal

import numpy as np
import pandas as pd


from ..errors import Cancelled, TraceExplorerError
from ..redact import redact_url
from .local import LocalSpark, WarehouseUnavailable
from .portable import TABLES, table_columns, translate

log = logging.getLogger(__name__)

RUN_FIELDS = ("engine", "engine_version", "model", "benchmark")


class WarehouseError(TraceExplorerError):
    """The warehouse answered with an error (missing table or columns, a failed query)."""


def _quiet_client_logs() -> None:
    """pyspark logs each failed query as JSON on stderr; the error reaches the user as ours."""
    for name in ("pyspark", "SQLQueryContextLogger", "DataFrameQueryContextLogger",
                 "py4j", "grpc"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _check_reachable(url: str, timeout_s: float = 5.0) -> None:
    m = re.match(r"sc://([^:/;]+)(?::(\d+))?", url)
    if not m:
        raise WarehouseUnavailable(f"not a warehouse URL: {url!r} (use sc://host:port for a Spark "
                                   "Connect server, or spark:local)")
    host, port = m.group(1), int(m.group(2) or 15002)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as e:
        raise WarehouseUnavailable(f"cannot reach the Spark Connect server at {host}:{port} "
                                   f"({e.strerror or e}); is it running?") from None


def _spark_message(e: Exception) -> str:
    """The first line of a Spark error, without the JVM stack trace."""
    text = str(getattr(e, "getMessage", lambda: None)() or e)
    return text.split("\n\nJVM stacktrace")[0].strip().splitlines()[0][:500]


def _bound(checkpoint, session):
    """A checkpoint's DataFrame bound to the session that made it. pyspark 4.0 binds it to
    SparkSession.active() instead (pyspark/sql/connect/conversion.py,
    proto_to_remote_cached_dataframe): with a second session in the process (a window's second
    connection, a report beside it) the temp view was then asked of the other session, which
    refused it ("CONNECT_INVALID_PLAN.DATAFRAME_NOT_FOUND ... in the session ..."). The stray
    handle is disarmed so that its garbage collection releases nothing in the wrong session."""
    rel = checkpoint._plan
    if getattr(rel, "_spark_session", session) is session:
        return checkpoint
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.plan import CachedRemoteRelation
    own = DataFrame(CachedRemoteRelation(rel._relation_id, session), session)
    rel._relation_id = None  # CachedRemoteRelation.__del__ releases only a set id
    return own


class SparkSource:
    """The engine half of a warehouse analysis. url: sc://host:port or spark:local; table: a
    table / view name or parquet:PATH; columns: {canonical: source column} overriding the alias
    table of the generic loaders. Call open() before use and close() after."""

    kind = "spark"

    def __init__(self, url: str, table: str, columns: dict | None = None):
        self.url, self.table, self.columns = url, table, dict(columns or {})
        self.session = None
        self.server: LocalSpark | None = None
        self.mapping: dict[str, str] = {}  # canonical -> source column used
        self.missing: list[str] = []  # canonical request columns the table lacks (NULL)
        self.rows_fetched = 0
        self.rows_scanned = 0
        self.rows_cache_read = 0
        # persist the projected requests (module doc); TE_WAREHOUSE_CACHE=0: read the table
        # from storage in every query (faster on spark:local at 1M, see docs/files-in-place.md)
        self.cache: bool = os.environ.get("TE_WAREHOUSE_CACHE", "1") != "0"
        self._base = None  # the persisted projection, until close()
        self._cache_built = False
        self.queries = 0
        self.seconds = 0.0
        self.table_rows: int | None = None
        self.staged: set[str] = set()  # temporary views materialize() made
        self._cancel = threading.Event()
        self._lock = threading.RLock()

    # -- session ------------------------------------------------------------------------------
    def watch(self, cancelled, period_s: float = 0.25):
        """Context manager: while it is open, cancelled() is polled on a helper thread and a
        True stops the remote query in flight (cancel()). For callers whose cancel is a flag
        (a worker's JobContext.cancelled)."""
        import contextlib

        @contextlib.contextmanager
        def cm():
            stop = threading.Event()

            def poll():
                while not stop.wait(period_s):
                    if cancelled():
                        self.cancel()
                        return
            t = threading.Thread(target=poll, daemon=True, name="te-warehouse-cancel")
            t.start()
            try:
                yield self
            finally:
                stop.set()
        return cm()

    def open(self, cancelled=None) -> "SparkSource":
        """Connect (starting a local server for spark:local), then define te_requests. Raises
        WarehouseUnavailable, WarehouseError (missing table / columns)."""
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise WarehouseUnavailable("the Spark client is not installed: pip install "
                                       "'trace-explorer[spark]'") from None
        _quiet_client_logs()
        url = self.url
        if url == "spark:local":
            self.server = LocalSpark().start(cancelled=cancelled)
            url = self.server.url
        _check_reachable(url)
        t0 = time.perf_counter()
        try:
            self.session = SparkSession.builder.remote(url).create()
            self.session.conf.set("spark.sql.session.timeZone", "UTC")
        except Exception as e:  # noqa: BLE001 - gRPC / Spark errors of every kind
            self.close()
            raise WarehouseUnavailable(f"Spark Connect at {redact_url(url)} refused the session: "
                                       f"{_spark_message(e)}") from None
        self.seconds += time.perf_counter() - t0
        self._define_requests()
        return self

    def close(self) -> None:
        base, self._base = self._base, None
        if base is not None and self.session is not None:
            try:
                base.unpersist()
            except Exception:  # noqa: BLE001 - a dead session's cache is gone with it
                pass
        s, self.session = self.session, None
        if s is not None:
            try:
                s.stop()
            except Exception:  # noqa: BLE001 - closing a dead session
                pass
        if self.server is not None:
            self.server.stop()
            self.server = None

    def cancel(self) -> None:
        """Stop the running remote queries (from any thread); the waiting call raises
        Cancelled."""
        self._cancel.set()
        if self.session is not None:
            try:
                self.session.interruptAll()
            except Exception:  # noqa: BLE001
                pass

    # -- the requests view --------------------------------------------------------------------
    def _source_frame(self):
        from pyspark.errors import AnalysisException
        t = self.table
        try:
            if t.startswith("parquet:"):
                df = self.session.read.parquet(t[len("parquet:"):])
            else:
                df = self.session.table(t)
            df.schema  # resolves the table now (the error names it)
            return df
        except AnalysisException as e:
            msg = _spark_message(e)
            if "PATH_NOT_FOUND" in msg or "TABLE_OR_VIEW_NOT_FOUND" in msg or "not found" in msg.lower():
                raise WarehouseError(f"requests table {t!r} not found in the warehouse at "
                                     f"{redact_url(self.url)}: {msg}") from None
            raise WarehouseError(f"requests table {t!r}: {msg}") from None
        except Exception as e:  # noqa: BLE001
            raise WarehouseError(f"requests table {t!r}: {_spark_message(e)}") from None

    def run_name(self) -> str:
        """The run a table without a run column is (the local loader's name for a file:
        generic_table.run_base): table:<file stem> for parquet:PATH, table:<name> for a table."""
        from pathlib import PurePosixPath
        t = self.table
        if t.startswith("parquet:"):
            p = PurePosixPath(t[len("parquet:"):].rstrip("/"))
            return f"table:{p.stem if p.suffix else p.name}"
        return f"table:{t.rsplit('.', 1)[-1].strip('`')}"

    def _define_requests(self) -> None:
        """te_requests: the canonical request columns from the source table, mapped as the local
        loader maps a file (formats.generic_table: the vocabulary's request-table aliases, unit
        suffixes, a bare time column's unit guessed from its median, error values normalised, no
        request id -> the row number, no run column -> one run named after the table; an explicit
        --requests-columns mapping first); te_runs_src: one row per run with the run fields that
        hold one value in it, and its row count. The unit guesses are one query."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        from ..formats.generic_table import _map_columns, _scale_for
        src = self._source_frame()
        cols = list(src.schema.names)  # one schema round trip (df.columns would ask again)
        wrong = [c for c in self.columns.values() if c not in cols]
        if wrong:
            raise WarehouseError(f"requests table {self.table!r} has no column "
                                 f"{', '.join(map(repr, wrong))} (columns: {', '.join(cols[:30])})")
        mapping, run_cols = _map_columns({c: "" for c in cols if c not in self.columns.values()})
        picked: dict[str, tuple[str, float | None]] = {k: (v, 1.0) for k, v in self.columns.items()}
        for canon, (c, scale, _unit) in mapping.items():
            picked.setdefault(canon, (c, scale))
        if "run_id" not in picked and "run_id" in cols:
            picked["run_id"] = ("run_id", 1.0)
        metrics = set(picked) - {"run_id", "request_id", "tenant", "error", "finish_reason",
                                 "prompt_hash"}
        if not metrics:
            raise WarehouseError(f"requests table {self.table!r}: no column maps to a request "
                                 f"metric (columns: {', '.join(cols[:30])}; expected names such "
                                 "as ttft_ms, ttft_s, e2e_latency, input_tokens, or map them with "
                                 "--requests-columns canonical=source)")
        guess = [k for k, (_c, sc) in picked.items() if sc is None]
        if guess:  # one query for every bare time column's median (the local loader's rule)
            row = self.fetch_frame(src.agg(*[F.median(F.col(picked[k][0]).cast("double"))
                                             .alias(k) for k in guess]))
            for k in guess:
                med = row[k].iloc[0]
                picked[k] = (picked[k][0], _scale_for(k, None if pd.isna(med) else float(med))[0])
        if "request_id" not in picked:  # the row number, 1-based, in the table's order
            src = src.withColumn("__te_row", F.row_number().over(
                Window.orderBy(F.monotonically_increasing_id())))
            picked["request_id"] = ("__te_row", 1.0)
        exprs = []
        self.missing = []
        for name, typ in table_columns("requests"):
            if name == "run_id" and name not in picked:
                exprs.append(F.lit(self.run_name()).alias(name))
            elif name in picked:
                c, scale = picked[name]
                e = F.col(c) * F.lit(scale) if scale != 1.0 else F.col(c)
                if name == "error":  # 0 / empty / none / ok / false: no error (generic_table)
                    v = F.col(c).cast("string")
                    e = F.when(F.lower(F.trim(v)).isin("", "0", "0.0", "none", "null", "nan",
                                                       "false", "ok"), None).otherwise(v)
                exprs.append(e.cast(typ).alias(name))
            else:
                self.missing.append(name)
                exprs.append(F.lit(None).cast(typ).alias(name))
        self.mapping = {k: v[0] for k, v in picked.items() if not v[0].startswith("__te_")}
        if "run_id" not in picked:
            self.mapping["run_id"] = f"({self.run_name()})"
        if "request_id" not in self.mapping:
            self.mapping["request_id"] = "(row number)"
        runs = {f: c for f, c in run_cols.items() if f in RUN_FIELDS}
        base = src.select(*exprs, *[F.col(c).cast("string").alias(f"__te_run_{f}")
                                    for f, c in runs.items()])
        if self.cache:
            from pyspark.storagelevel import StorageLevel
            base = base.persist(StorageLevel.MEMORY_AND_DISK)
            self._base = base
        base.select(*[n for n, _t in table_columns("requests")]) \
            .createOrReplaceTempView(TABLES["requests"])
        aggs = [F.when(F.countDistinct(f"__te_run_{f}") == 1, F.max(f"__te_run_{f}"))
                .alias(f) if f in runs else F.lit(None).cast("string").alias(f)
                for f in RUN_FIELDS]
        base.groupBy("run_id").agg(*aggs, F.count(F.lit(1)).alias("n_rows")) \
            .createOrReplaceTempView("te_runs_src")

    def cache_built(self, rows: int) -> None:
        """The first query over te_requests (the runs' row counts) read the table's `rows`
        from storage into the cache: counted once (its metrics show the in-memory read only)."""
        if self._base is not None and not self._cache_built:
            self._cache_built = True
            self.rows_scanned += int(rows)

    # -- tables from the client ---------------------------------------------------------------
    def upload(self, table: str, frame: pd.DataFrame | None) -> None:
        """A canonical table's rows (None: none) as the temporary view te_<table>, typed by the
        store schema."""
        cols = table_columns(table)
        ddl = _struct(cols)
        if frame is None or len(frame) == 0:
            df = self.session.createDataFrame([], ddl)
        else:
            f = frame[[c for c, _ in cols]].astype(object).where(frame[[c for c, _ in cols]].notna(), None)
            df = self.session.createDataFrame(f, ddl)
        df.createOrReplaceTempView(TABLES.get(table, f"te_{table}"))

    # -- queries ------------------------------------------------------------------------------
    def _check_cancel(self):
        if self._cancel.is_set():
            self._cancel.clear()  # one cancel stops the query in flight (or the next one)
            raise Cancelled("remote query cancelled")

    def fetch(self, sql: str, params=None) -> pd.DataFrame:
        """Run one (DuckDB-dialect) query in the engine and fetch its result."""
        text, args = translate(sql, params)
        return self._collect(lambda: self.session.sql(text, args=args or None), text)

    def fetch_frame(self, df) -> pd.DataFrame:
        """Fetch a Spark DataFrame built by the caller (counted like fetch)."""
        return self._collect(lambda: df, "<dataframe>")

    def materialize(self, name: str, sql: str, params=None) -> None:
        """CREATE TEMP TABLE name AS <sql>: computed once in the engine (local checkpoint, so a
        row_number() OVER () key does not change between reads) and kept as a view."""
        text, args = translate(sql, params)
        with self._lock:
            self._check_cancel()
            t0 = time.perf_counter()
            try:
                df = _bound(self.session.sql(text, args=args or None).localCheckpoint(eager=True),
                            self.session)
                df.createOrReplaceTempView(name)
                self.staged.add(name)
                if TABLES["requests"] in text and self.table_rows:
                    # a checkpoint returns no metrics; a stage reading the requests view
                    # reads all of it (assoc_request_keys, assoc_requests, assoc_pairs):
                    # from the cache, or from storage without one
                    if self._base is not None:
                        self.rows_cache_read += self.table_rows
                    else:
                        self.rows_scanned += self.table_rows
            except Exception as e:  # noqa: BLE001
                self._raise(e, text)
            finally:
                self.seconds += time.perf_counter() - t0
                self.queries += 1

    def _collect(self, make, text: str) -> pd.DataFrame:
        with self._lock:
            self._check_cancel()
            t0 = time.perf_counter()
            try:
                df = make()
                out = df.toPandas()
                self._count_scanned(df)
            except Exception as e:  # noqa: BLE001
                self._raise(e, text)
            finally:
                self.seconds += time.perf_counter() - t0
                self.queries += 1
        self.rows_fetched += len(out)
        return _plain(out)

    def _count_scanned(self, df) -> None:
        """Rows the engine read from files (the requests table's Parquet, a table's storage):
        numOutputRows of the query's file-scan nodes, from the execution metrics Spark Connect
        returns with the result (materialize adds the table's rows for a staged binding table
        that reads the requests)."""
        try:
            info = df.executionInfo
            graph = info.metrics.extract_graph()[1] if info and info.metrics else {}
        except Exception:  # noqa: BLE001 - metrics are best effort (older servers)
            return
        for node in graph.values():
            cached = node.name.startswith("InMemoryTableScan")
            if cached or node.name.startswith(("Scan ", "FileScan", "BatchScan")) and \
                    not node.name.startswith(("Scan ExistingRDD", "Scan OneRowRelation")):
                for m in node.metrics:
                    if m.name == "numOutputRows":
                        if cached:
                            self.rows_cache_read += int(m.value)
                        else:
                            self.rows_scanned += int(m.value)

    def _raise(self, e: Exception, text: str):
        if self._cancel.is_set() or "OPERATION_CANCELED" in str(e) or "interrupted" in str(e).lower():
            self._cancel.clear()
            raise Cancelled("remote query cancelled") from None
        msg = _spark_message(e)
        log.debug("Spark query failed: %s\n%s", msg, text)
        if "UNRESOLVED_COLUMN" in msg or "TABLE_OR_VIEW_NOT_FOUND" in msg:
            raise WarehouseError(f"the warehouse could not run a query: {msg}") from None
        if "UNAVAILABLE" in str(e) or "Connection refused" in str(e):
            raise WarehouseUnavailable(f"lost the Spark Connect server at {redact_url(self.url)}: {msg}") from None
        raise WarehouseError(f"the warehouse query failed: {msg}") from None

    def meta(self) -> dict:
        """report.json meta.engine."""
        return {"kind": self.kind, "url": redact_url(self.url), "table": self.table,
                "rows_scanned": int(self.rows_scanned), "rows_fetched": int(self.rows_fetched),
                "rows_cache_read": int(self.rows_cache_read), "cached": self._base is not None,
                "seconds": round(self.seconds, 3), "queries": self.queries,
                "table_rows": self.table_rows, "columns": dict(self.mapping),
                "columns_missing": list(self.missing),
                "dialect": "spark (SQLGlot from queries/*.sql)"}


def _struct(cols: list[tuple[str, str]]):
    """The StructType of [(column, Spark type)], built here: a DDL string would be parsed by
    the server, one more round trip (~277 ms each over Spark Connect, SPARK-55163)."""
    from pyspark.sql import types as T
    simple = {"string": T.StringType(), "double": T.DoubleType(), "int": T.IntegerType(),
              "bigint": T.LongType(), "boolean": T.BooleanType(), "timestamp": T.TimestampType()}
    return T.StructType([T.StructField(c, simple[t], True) for c, t in cols])


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Spark's pandas frame in the types DuckDB's df() gives: Decimal (Spark's 1.0 literals are
    DECIMAL) to float64."""
    for c in df.columns:
        if df[c].dtype == object:
            first = df[c].dropna()
            if len(first) and isinstance(first.iloc[0], Decimal):
                df[c] = df[c].astype(float)
            elif len(first) and isinstance(first.iloc[0], np.ndarray):
                df[c] = df[c].map(lambda a: None if a is None else list(a))
    return df
