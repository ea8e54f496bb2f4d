"""The session's embedded DuckDB store: schema, file loading with provenance, save / reopen.

One Store per session: in memory by default, a .duckdb file when the user saves the session.
A DuckDB connection must not be shared between threads: workers call `Store.cursor()` to get
their own connection to the same database.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from glob import escape as glob_escape
from typing import Any, Iterable, Sequence

import cachetools
import duckdb
import numpy as np
import pandas as pd

from . import errlog, schema
from .errors import Cancelled, InputError, SessionError
from .i18n import _, ngettext
from .sqlutil import load_query, quote_ident


# A load cancelled while a file was read (errors.Cancelled): that file is rolled back and its
# report's error ends with this text.
LOAD_CANCELLED = "loading cancelled while this file was read: nothing of it was kept"


def special_file(p: Path) -> str | None:
    """What `p` is when it is neither a regular file nor a folder ("a FIFO", "a socket",
    "a device"), else None. Uses stat, never open (opening a FIFO blocks)."""
    try:
        mode = p.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def walk_inputs(paths: Iterable[str | Path]) -> list[tuple[Path, bool, tuple[str, str] | None]]:
    """What load_paths loads, in order: (path, named explicitly or a claimed folder, note).
    note is None for a file to load, else ("ignored" | "error", why) for an entry listed
    without loading it.

    Folders are walked (sorted; hidden files and LICENSE* passed over) without leaving them:
    a symbolic link is followed only when its target lies inside the folder dropped, and each
    real path is visited once, so links to the folder itself or to each other cannot loop;
    FIFOs, sockets and devices are listed as ignored and never opened; a sub-folder that
    cannot be listed is an error of its own."""
    from .formats import claims_folder

    todo: list[tuple[Path, bool, tuple[str, str] | None]] = []
    seen: set[str] = set()

    def walk(d: Path, root: str) -> None:
        try:
            entries = sorted(d.iterdir())
        except OSError as e:
            todo.append((d, False, ("error", f"cannot be read ({e.strerror or e})")))
            return
        for f in entries:
            if f.name.startswith(".") or f.name.upper().startswith("LICENSE"):
                continue
            real = os.path.realpath(f)
            if f.is_symlink():
                if not os.path.exists(real):
                    todo.append((f, False, ("ignored", "a broken symbolic link")))
                    continue
                if os.path.commonpath([real, root]) != root:
                    todo.append((f, False, ("ignored", f"a symbolic link to {real}, outside the "
                                                       f"folder dropped: not followed")))
                    continue
            if real in seen:
                continue  # the same file or folder reached again (a link): once is enough
            seen.add(real)
            why = special_file(f)
            if why:
                todo.append((f, False, ("ignored", f"{why}, not a file: not opened")))
            elif f.is_dir():
                if claims_folder(f):  # e.g. a HELM run inside the folder: one input
                    todo.append((f, True, None))
                else:
                    walk(f, root)
            else:
                todo.append((f, False, None))

    for raw in paths:
        p = Path(raw)
        real = os.path.realpath(p)
        try:
            is_folder = p.is_dir() and not claims_folder(p)
        except OSError as e:  # a folder a detector could not read: fails alone
            todo.append((p, True, ("error", f"cannot be read ({e.strerror or e})")))
            continue
        if is_folder:
            if real not in seen:
                seen.add(real)
                walk(p, real)
        else:
            seen.add(real)
            todo.append((p, True, None))
    return todo


@dataclass
class LoadReport:
    """What loading one input file (or folder) did.

    rows_loaded / rows_skipped count records of the source (requests, cases, stat lines);
    skipped_reasons holds the first reasons ("line 12: field 'ttft': not a number");
    columns maps source field -> canonical column (with any unit conversion, e.g.
    "ttft_s -> ttft_ms (x1000)"); error is set when the whole file failed (nothing loaded).
    skipped_file is set (with format None, error None) for a file found inside a folder that was
    passed over on purpose: not a trace or eval (binary, empty, an aggregate summary such as
    AIPerf's profile_export_aiperf.json / .csv, a CSV with no request column such as aibrix's
    pod_count.csv), or any input (file or folder) whose sha256 equals that of an input already
    loaded into the store ("same content as <path> (sha256 <12 hex>…), already loaded: not
    loaded again"; sha256 is then set); the text says why. Such a file is not a failure.
    """
    path: str
    format: str | None = None
    kind: str | None = None  # "trace" | "eval" | "stats"
    sha256: str | None = None
    run_ids: list[str] = field(default_factory=list)
    eval_ids: list[str] = field(default_factory=list)
    rows_loaded: int = 0
    rows_skipped: int = 0
    skipped_reasons: list[str] = field(default_factory=list)
    columns: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    skipped_file: str | None = None

    MAX_REASONS = 20

    def skip(self, reason: str, line: int | None = None, field_name: str | None = None) -> None:
        """Count one skipped record and keep its reason (the first MAX_REASONS only)."""
        self.rows_skipped += 1
        if len(self.skipped_reasons) < self.MAX_REASONS:
            from .i18n import field_text, line_text
            if line is not None:  # a normalised copy's line: the original file's number
                line += getattr(self, "_line_offset", 0)
            where = line_text(line) if line is not None else ""
            what = field_text(field_name) if field_name else ""
            self.skipped_reasons.append(f"{where}{what}{reason}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sha256_of(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes; of a folder, of its files' relative paths and hashes."""
    p = Path(path)
    h = hashlib.sha256()
    if p.is_dir():
        for f in sorted(x for x in p.rglob("*") if x.is_file()):
            h.update(str(f.relative_to(p)).encode() + b"\0" + sha256_of(f).encode())
        return h.hexdigest()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


_AGGREGATE_WORDS = {"avg", "average", "mean", "median", "min", "max", "std", "stddev", "p1",
                    "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "stderr", "results"}


def _looks_aggregate(words: Iterable[str]) -> bool:
    """True when names such as avg / p50 / p99 / std (three or more distinct) appear: the
    layout of a summary of many requests (AIPerf profile_export_aiperf.json / .csv, lm-eval
    results_*.json, aibrix performance_stats.txt), not of per-request records."""
    found = set()
    for w in words:
        for part in re.split(r"[\s_,]+", str(w).lower()):
            if part in _AGGREGATE_WORDS:
                found.add(part)
    return len(found) >= 3


class _Hasher:
    """sha256_of(path) computed in a background thread when the input is big (over
    THREAD_BYTES: hashlib releases the GIL, so the format loads meanwhile), inline otherwise
    (a thread costs more than hashing a small file). early() is the digest when it is already
    known (small inputs), else None; result() waits for it."""
    THREAD_BYTES = 4 << 20

    def __init__(self, path: Path):
        self._digest: str | None = None
        self._error: BaseException | None = None
        self._thread = None
        if path.is_file() and path.stat().st_size > self.THREAD_BYTES:
            self._thread = threading.Thread(target=self._run, args=(path,), daemon=True,
                                            name="sha256")
            self._thread.start()
        else:
            self._digest = sha256_of(path)

    def _run(self, path: Path) -> None:
        try:
            self._digest = sha256_of(path)
        except BaseException as e:  # re-raised in result() on the loading thread
            self._error = e

    def early(self) -> str | None:
        return self._digest

    def result(self) -> str | None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            if self._error is not None:
                err, self._error = self._error, None
                raise err
        return self._digest


class Store:
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

    # -- loading ----------------------------------------------------------------------------
    def load_file(self, path: str | Path, format: str | None = None) -> LoadReport:
        """load_one for a file or folder; a .gz / .zst file is decoded first and a .zip
        loads its members (explorer.core.archive: read in place, named as the archive)."""
        from . import archive
        if not archive.kind(Path(path)):
            return self.load_one(path, format)
        reports = self._load_archive(Path(path), format)
        return reports[0] if len(reports) == 1 else self._archive_summary(Path(path), reports)

    def _load_archive(self, path: Path, format: str | None = None) -> list[LoadReport]:
        """The reports of an archive's content (archive.unpacked), its temporary paths shown
        as the archive's; a broken archive gives one failed report."""
        from . import archive
        try:
            with archive.unpacked(path) as (inner, shown, note):
                for tmp, orig in shown.items():
                    self._copy_of[tmp] = (orig, note)
                try:
                    if archive.kind(path) == "stream":
                        reports = [self.load_one(inner, format)]
                    else:
                        reports = self.load_paths([inner])
                finally:
                    for tmp in shown:
                        self._copy_of.pop(tmp, None)
        except InputError as e:
            report = LoadReport(path=str(path), error=str(e))
            self._record_input(report)
            return [report]
        for r in reports:
            for tmp, orig in sorted(shown.items(), key=lambda kv: -len(kv[0])):
                r.path = r.path.replace(tmp, orig)
                r.error = r.error and r.error.replace(tmp, orig)
                r.skipped_file = r.skipped_file and r.skipped_file.replace(tmp, orig)
            if not r.skipped_file:
                r.columns[_("(archive)")] = note
        return reports

    def _archive_summary(self, path: Path, reports: list[LoadReport]) -> LoadReport:
        """One report standing for a .zip's members (load_paths gives each its own)."""
        ok = [r for r in reports if not r.skipped_file and not r.error]
        out = LoadReport(path=str(path), format=", ".join(sorted({r.format for r in ok})) or None,
                         kind=ok[0].kind if ok else None,
                         run_ids=[x for r in ok for x in r.run_ids],
                         eval_ids=[x for r in ok for x in r.eval_ids],
                         rows_loaded=sum(r.rows_loaded for r in ok),
                         rows_skipped=sum(r.rows_skipped for r in ok),
                         skipped_reasons=[f"{r.path}: {x}" for r in ok for x in r.skipped_reasons][:20],
                         columns={r.path: r.format for r in ok})
        if not ok:
            out.error = f"{path}: " + _("no trace or eval file found in this archive")
        return out

    def load_one(self, path: str | Path, format: str | None = None) -> LoadReport:
        """Detect the format of one file or folder by content and load it in one transaction.

        Never raises for a bad file: the returned LoadReport carries `error` (naming the file,
        line and field where known) and nothing of that file stays in the store. The input file
        is only read. The report is also recorded in the `inputs` table.

        Content, not path, decides what is new: an input whose sha256 equals that of an input
        already loaded successfully into this store (the same file again, a copy under another
        name, a folder with the same digest) is not loaded; its report has skipped_file =
        "same content as <earlier path> (sha256 <12 hex>…), already loaded: not loaded again"
        (format, kind and error None, no rows) and the earlier data stays. A small input is
        hashed before anything is inserted; a big one (over _Hasher.THREAD_BYTES) is hashed
        in a thread while it loads and, when a duplicate, rolled back before COMMIT. An input
        that failed (error) may be loaded again.
        """
        from .formats import detect_format, get_format

        report = LoadReport(path=str(self.source_of(path)))
        recorded = False
        with self._lock:
            try:
                p = Path(path)
                if not p.exists():
                    raise InputError(p, _("no such file or folder"))
                why = special_file(p)
                if why:  # a FIFO would block the read forever: never opened
                    raise InputError(p, _("{why}: not opened").format(why=why))
                if p.is_file() and p.stat().st_size == 0:
                    raise InputError(p, _("the file is empty"))
                fmt = get_format(format) if format else detect_format(p)
                report.format, report.kind = fmt.NAME, fmt.KIND
                # what the format reads (a HELM file: its run folder), in a thread for big
                # inputs (hashlib releases the GIL)
                hasher = _Hasher(Path(getattr(fmt, "input_root", lambda q: q)(p)))
                report.sha256 = hasher.early()
                earlier = self._loaded_as(report.sha256)  # known before any insert
                if earlier is None:
                    with self._utf8(p, report) as readable:
                        earlier = self._load_in_transaction(fmt, readable, report, hasher)
                    recorded = earlier is None
                if earlier is not None:
                    self._mark_duplicate(report, earlier)
            except Cancelled:
                report.error = f"{path}: {LOAD_CANCELLED}"
            except duckdb.InterruptException:  # Ctrl-C / SIGTERM inside a query: the whole
                raise KeyboardInterrupt from None  # load stops ("interrupted"), rolled back
            except InputError as e:
                report.error = str(e)
            except (UnicodeDecodeError, ValueError, KeyError, TypeError, duckdb.Error) as e:
                report.error = f"{path}: cannot be read as {report.format or 'a known format'}: {e}"
            except OSError as e:
                report.error = f"{path}: cannot be read ({e.strerror or errlog.describe(e)})"
            except Exception as e:  # noqa: BLE001 - any other fault (OverflowError,
                # RecursionError, MemoryError, a loader's bug) fails this file alone
                report.error = (f"{path}: cannot be read as {report.format or 'a known format'}: "
                                f"{errlog.describe(e)} ({errlog.record(e, f'loading {path}')})")
            if report.error:
                report.run_ids, report.eval_ids, report.rows_loaded = [], [], 0
                report.error = report.error.replace(str(path), report.path)
            if not recorded:
                self._record_input(report)
        return report

    @contextlib.contextmanager
    def _utf8(self, p: Path, report: LoadReport):
        """Yield the path to read: `p`, or a UTF-8 copy of it in a temporary folder when it is
        UTF-16 or single-byte text (formats._encoding); the copy stands for `p` (source_of,
        and in error messages) while it loads and is deleted after; the report's columns say
        which encoding. Files a format reads beside its input are not in that folder."""
        from .formats._encoding import NAMES, head_encoding, utf8_copy
        from .formats._preamble import TABLE_SUFFIXES, normalised_copy, preamble_of
        enc = head_encoding(p)
        pre = (self._preamble(p, enc, preamble_of) if p.suffix.lower() in TABLE_SUFFIXES
               else preamble_of("", ""))
        if enc is None and not pre.needed:
            yield p
            return
        with tempfile.TemporaryDirectory(prefix="trace-explorer-utf8-") as tmp:
            if pre.needed:  # sep= line, # comments, mixed line ends: a normalised copy
                copy = normalised_copy(p, enc, pre, Path(tmp))
                report._line_offset = pre.lines
                what = _preamble_text(pre)
                if enc:
                    what = _("{encoding}, read as UTF-8").format(encoding=NAMES[enc]) + "; " + what
            else:
                copy = utf8_copy(p, enc, Path(tmp))
                what = _("{encoding}, read as UTF-8").format(encoding=NAMES[enc])
            self._copy_of[str(copy)] = (str(p), what)
            try:
                yield copy
            except InputError as e:
                line = e.line + pre.lines if e.line is not None else None
                raise InputError(p, e.message.replace(str(copy), str(p)), line,
                                 e.field) from None
            except duckdb.Error as e:
                raise InputError(p, _("cannot be read as {format}: {error}").format(
                    format=report.format, error=str(e).replace(str(copy), str(p)))) from None
            finally:
                self._copy_of.pop(str(copy), None)

    @staticmethod
    def _preamble(p: Path, enc: str | None, preamble_of):
        """The preamble (formats._preamble) of a table file's head, decoded in `enc`."""
        if p.is_dir():
            return preamble_of("", "")
        with open(p, "rb") as fh:
            head = fh.read(64 * 1024)
        return preamble_of(head.decode(enc or "utf-8-sig", errors="replace"), p.suffix)

    def _from_copy(self, p: Path, report: LoadReport) -> None:
        """After a UTF-8 copy loaded: its reasons name the original, its columns the encoding."""
        found = self._copy_of.get(str(p))
        if found:
            report.skipped_reasons = [r.replace(str(p), found[0]) for r in report.skipped_reasons]
            report.columns[_("(file encoding)")] = found[1]

    def _load_in_transaction(self, fmt, p: Path, report: LoadReport,
                             hasher: "_Hasher") -> str | None:
        """fmt.load(p) and the `inputs` row in one transaction, committed; or, when the hash
        (computed meanwhile in a thread for a big input) turns out to be that of an input
        already loaded, rolled back, returning that input's path (None when committed).
        Exceptions roll back and propagate."""
        from .formats.base import cancel_check
        self.con.execute("BEGIN TRANSACTION")
        done = False
        self._report = report
        token = cancel_check.set(self.check_cancelled)  # long reads stop on Cancel too
        try:
            fmt.load(p, self, report)
            self._from_copy(p, report)
            earlier = None
            if report.sha256 is None:
                report.sha256 = hasher.result()
                earlier = self._loaded_as(report.sha256)
                if earlier is None:
                    self._set_source_sha256(report)
            if earlier is not None:
                done = True
                self.con.execute("ROLLBACK")  # a duplicate: nothing of it stays
                return earlier
            self.check_cancelled()  # the last moment a Cancel can still undo this file
            self._record_input(report)  # same transaction: one commit per file
            self.con.execute("COMMIT")
            done = True
            return None
        except BaseException:
            if not done:
                self.con.execute("ROLLBACK")
            raise
        finally:
            cancel_check.reset(token)
            self._report = None
            hasher.result()

    def _loaded_as(self, sha256: str | None) -> str | None:
        """Path of the first input with this sha256 that loaded successfully into this store
        (not failed, not ignored); None when there is none."""
        if sha256 is None:
            return None
        rows = self.con.execute(
            "SELECT path FROM inputs WHERE sha256 = ? AND error IS NULL AND kind IS DISTINCT"
            " FROM 'ignored' ORDER BY input_id LIMIT 1", [sha256]).fetchall()
        return rows[0][0] if rows else None

    @staticmethod
    def _mark_duplicate(report: LoadReport, earlier: str) -> None:
        """Turn `report` into that of an ignored input (nothing loaded) whose content equals
        the input loaded earlier from `earlier`; the sha256 stays."""
        report.format = report.kind = report.error = None
        report.run_ids, report.eval_ids, report.columns = [], [], {}
        report.rows_loaded = report.rows_skipped = 0
        report.skipped_reasons = []
        report.skipped_file = _("same content as {earlier} (sha256 {sha}…), already loaded: not "
                                "loaded again").format(earlier=earlier, sha=report.sha256[:12])

    def load_paths(self, paths: Iterable[str | Path], progress=None,
                   cancelled=lambda: False) -> list[LoadReport]:
        """Load files and folders; one LoadReport per file, in order. Never raises for a bad
        input: each fails alone (its report has `error`) and the others load.

        A folder that a format claims as a whole (a HELM run) loads as one input; any other
        folder loads every file in it that some format recognises (walk_inputs: symbolic links
        are followed only inside the folder, each real path once; FIFOs, sockets and devices
        are listed and never opened; an unreadable sub-folder fails alone). A file found in a
        folder that is not a trace or eval (unrecognised, binary, empty, or a table only the
        generic fallback claims and in which no column maps to a request metric) is not
        loaded: its report has skipped_file = the reason (format and error None) and it is
        recorded in the `inputs` table with kind 'ignored'. A file named explicitly is always
        loaded (and fails with a clear error when unusable), unless its content was already
        loaded (load_file: then ignored as a duplicate). progress(i, n, path) is called before
        each file; cancelled() is checked between files and while a file loads (Store.append):
        the file being read is then rolled back, its report says so, and loading stops.

        Many small tables are read in batches (_batches), loaded when the batch's first file
        is reached; each file's `inputs` row still has the input_id of its place in the walk
        (reserved here), so the recorded order is that of loading each file on its own."""
        todo = walk_inputs(paths)
        with self._lock:
            first_id = max(self.scalar("SELECT coalesce(max(input_id), 0) FROM inputs"),
                           self._input_ids_to) + 1
            self._input_ids_to = first_id + len(todo) - 1
        self._cancelled = cancelled
        thread = threading.get_ident()
        unpacked = 0  # rows loaded since compact() was last asked
        try:
            found = self._classify(todo, cancelled)
            batch_of = self._batches(todo, found)
            out: dict[int, LoadReport] = {}
            for i, (p, explicit, note) in enumerate(todo):
                if i in out:
                    continue  # loaded with its batch
                if cancelled():
                    break
                if progress:
                    progress(i, len(todo), str(p))
                group = batch_of.get(i)
                got = self._load_batch([todo[j][0] for j in group],
                                       [first_id + j for j in group]) if group else None
                if got is not None:
                    out.update(zip(group, got))
                else:
                    self._input_id_of[thread] = first_id + i
                    out[i] = self._load_one(p, explicit, note, found.get(i))
                last = out[group[-1] if got is not None else i]  # a cancelled batch: all say so
                if last.error and last.error.endswith(LOAD_CANCELLED):
                    break
                unpacked += sum(out[j].rows_loaded for j in (group if got is not None else [i]))
                if unpacked >= self.COMPACT_CHECK_ROWS:  # a check costs a query (1.5 ms)
                    unpacked = 0
                    self.compact()  # a big file compressed before the next one adds to it
        finally:
            self._cancelled = lambda: False
            self._input_id_of.pop(thread, None)
        return [out[i] for i in sorted(out)]

    # Many small files of one format and header (a folder of 5,000 request tables) are read
    # together: batches of BATCH_MIN_FILES to BATCH_MAX_FILES files of at most BATCH_MAX_BYTES.
    BATCH_MIN_FILES = 2
    BATCH_MAX_FILES = 500
    BATCH_MAX_BYTES = 1 << 20

    def _classify(self, todo, cancelled) -> dict[int, tuple]:
        """For each file of todo found in a folder: _why_ignored's (why, format) or, when
        detection itself failed, the failed report; a generic table's gets a third item None
        and a fourth, its _batch_key. Stops early when cancelled."""
        found: dict[int, tuple] = {}
        for i, (p, explicit, note) in enumerate(todo):
            if cancelled():
                break
            if note is None and not explicit:
                sniffed: list = []
                try:
                    found[i] = self._why_ignored(p, sniffed)
                    if found[i] == (None, "generic_table") and sniffed:
                        # only the key is kept: a sniff (head, parsed lines) per file would
                        # stay in memory for the whole load
                        found[i] += (None, self._batch_key(p, sniffed[0]))
                except Exception as e:  # noqa: BLE001 - detection must not stop the others
                    found[i] = (None, None, LoadReport(path=str(p), error=(
                        f"{p}: cannot be read: {errlog.describe(e)} "
                        f"({errlog.record(e, f'detecting the format of {p}')})")))
        return found

    def _batch_key(self, p: Path, sniff) -> tuple | None:
        """generic_table.batch_key of a file the generic table format reads, or None when it
        is read on its own: over BATCH_MAX_BYTES, not UTF-8, or unreadable."""
        from .formats import generic_table
        from .formats._encoding import encoding_of, mixed_line
        from .formats._preamble import TABLE_SUFFIXES, preamble_of
        try:
            if p.stat().st_size > self.BATCH_MAX_BYTES:
                return None
            with open(p, "rb") as fh:
                raw = fh.read(64 * 1024)
        except OSError:
            return None
        if encoding_of(raw) is not None or mixed_line(raw):
            return None  # read alone, from a UTF-8 copy (or refused naming the line)
        if p.suffix.lower() in TABLE_SUFFIXES and preamble_of(
                raw.decode("utf-8-sig", errors="replace"), p.suffix).needed:
            return None  # sep= line, # comments, mixed line ends: from a normalised copy
        return generic_table.batch_key(sniff)

    def _batches(self, todo, found: dict[int, tuple]) -> dict[int, list[int]]:
        """first index of a batch -> the indices of its files: files found in folders that
        share a _batch_key (_classify). A batch registers its runs when its first file is
        reached, so a file whose run base (generic_table.run_base) another table of the walk
        outside its batch shares is read alone: the run ids (base, base#2, ...) then follow
        the walk, as without batches."""
        from .formats import generic_table
        groups: dict[tuple, list[int]] = {}
        for i, got in found.items():
            if len(got) == 4 and got[3] is not None:  # a generic table that may be batched
                groups.setdefault(got[3], []).append(i)
        chunks = [members[k:k + self.BATCH_MAX_FILES] for members in groups.values()
                  for k in range(0, len(members), self.BATCH_MAX_FILES)]
        owner = {i: n for n, chunk in enumerate(chunks) for i in chunk}
        owners: dict[str, set] = {}  # run base -> the batches (or ("alone", i)) its files are in
        for i, (p, explicit, note) in enumerate(todo):
            if note is None and (explicit or len(found.get(i, ())) == 4):  # may be a table
                owners.setdefault(generic_table.run_base(p), set()).add(
                    owner.get(i, ("alone", i)))
        out: dict[int, list[int]] = {}
        for chunk in chunks:
            chunk = [i for i in chunk if len(owners[generic_table.run_base(todo[i][0])]) == 1]
            if len(chunk) >= self.BATCH_MIN_FILES:
                out[chunk[0]] = chunk
        return out

    def _load_batch(self, paths: list[Path], input_ids: list[int]) -> list[LoadReport] | None:
        """Load a batch of small generic tables (generic_table.load_batch) and their `inputs`
        rows (with input_ids) in one transaction; a file whose content was loaded before (or earlier in the
        batch) is a duplicate, as in load_file. Returns the reports, in order; None, with
        nothing kept, when the files cannot be read as one (then each is loaded on its own,
        failing alone). A Cancel rolls the batch back: each of its files says so."""
        from .formats import generic_table
        with self._lock:
            try:
                reports = [LoadReport(path=str(p), format=generic_table.NAME,
                                      kind=generic_table.KIND, sha256=sha256_of(p)) for p in paths]
            except OSError:
                return None
            earlier = dict(self.con.execute(
                "SELECT sha256, arg_min(path, input_id) FROM inputs WHERE list_contains(?, sha256)"
                " AND error IS NULL AND kind IS DISTINCT FROM 'ignored' GROUP BY sha256",
                [[r.sha256 for r in reports]]).fetchall())
            new = []
            for r in reports:
                if r.sha256 in earlier:
                    self._mark_duplicate(r, earlier[r.sha256])
                else:
                    earlier[r.sha256] = r.path
                    new.append(r)
            from .formats.base import cancel_check
            self.con.execute("BEGIN TRANSACTION")
            token = cancel_check.set(self.check_cancelled)
            try:
                if new and not generic_table.load_batch([Path(r.path) for r in new], self, new):
                    self.con.execute("ROLLBACK")
                    return None
                self.check_cancelled()
                self._record_inputs(reports, input_ids)
                self.con.execute("COMMIT")
                return reports
            except Cancelled:
                self.con.execute("ROLLBACK")
                reports = [LoadReport(path=str(p), error=f"{p}: {LOAD_CANCELLED}")
                           for p in paths]
                self._record_inputs(reports, input_ids)
                return reports
            except Exception:  # noqa: BLE001 - each file on its own says what went wrong
                self.con.execute("ROLLBACK")
                return None
            finally:
                cancel_check.reset(token)

    def _load_one(self, p: Path, explicit: bool, note: tuple[str, str] | None,
                  found: tuple | None = None) -> LoadReport:
        """One entry of walk_inputs: a failed / ignored report for a note, else load_file.
        found: _classify's result for a file in a folder ((why, format), or a failed report)."""
        if note is not None:
            kind, why = note
            report = LoadReport(path=str(self.source_of(p)), **({"error": f"{p}: {why}"} if kind == "error"
                                                 else {"skipped_file": why}))
        elif found is not None and len(found) == 3:
            report = found[2]  # detection itself failed
        else:
            why, fmt = (None, None) if explicit else found[:2]
            if not why:
                return self.load_file(p, fmt)  # detected once
            report = LoadReport(path=str(self.source_of(p)), skipped_file=why)
        with self._lock:
            self._record_input(report)
        return report

    def check_cancelled(self) -> None:
        """Raise errors.Cancelled when the load in progress was cancelled (load_paths'
        cancelled()); loaders reach it through append, load_file before COMMIT."""
        if self._cancelled():
            raise Cancelled(LOAD_CANCELLED)

    @staticmethod
    def _why_ignored(p: Path, sniffed: list | None = None) -> tuple[str | None, str | None]:
        """(why a file found in a folder is passed over, None) or (None, the detected format).
        sniffed: a list that receives the Sniff the detection read (for _batch_key)."""
        from .formats import MIN_CONFIDENCE, rank_formats
        from .formats._sweep import pass_over
        from .formats.base import Sniff
        from .formats.published import pass_over as published_pass_over
        from .formats._aiperf_side import pass_over as aiperf_pass_over
        try:
            if p.stat().st_size == 0:
                return _("empty file"), None
            from . import archive
            if archive.kind(p):
                return None, None  # load_file decodes it, then detects what is inside
            sweep = pass_over(p) or published_pass_over(p) or aiperf_pass_over(p)  # loaded anyway
            if sweep:
                return sweep, None
            sniff = Sniff.of(p)
            if sniffed is not None:
                sniffed.append(sniff)
            ranked = rank_formats(p, sniff)
        except OSError:
            return None, None  # load_file fails it with the reason (an error, not ignored)
        if not ranked or ranked[0][0] < MIN_CONFIDENCE:
            if sniff.is_binary:
                from .formats._encoding import compressed_kind
                return compressed_kind(p) or _("binary content"), None
            head = sniff.head.strip()
            if head in ("[]", "{}", ""):
                return _("no records (the file holds only {what})").format(
                    what=head or _("blank lines")), None
            if p.suffix.lower() in (".md", ".markdown", ".rst", ".html", ".htm", ".pdf"):
                return _("a document, not a trace or eval file"), None
            if _looks_aggregate(re.findall(r"[A-Za-z_][\w ]*", head[:8192])):
                return _("an aggregate summary (statistics such as avg / p50 / p99 or "
                         "benchmark scores), not per-request records"), None
            return _("not a trace or eval file (no known format matches its content)"), None
        if ranked[0][1] == "generic_table" and ranked[0][0] < 0.4:  # the fallback only
            from .formats import generic_table
            cols = generic_table._header(sniff, generic_table._kind(sniff) or "csv")
            shown = ", ".join(cols[:8]) + (", ..." if len(cols) > 8 else "")
            if _looks_aggregate(cols):
                return _("an aggregate summary table (columns {shown}), not per-request "
                         "records").format(shown=shown), None
            return _("not a request table: no column maps to a request metric "
                     "(columns {shown})").format(shown=shown), None
        return None, ranked[0][1]

    def _set_source_sha256(self, r: LoadReport) -> None:
        """Fill runs / evals.source_sha256 of a file's rows once its hash is known (the
        format registered them while the hash was still being computed)."""
        for table, key, ids in (("runs", "run_id", r.run_ids), ("evals", "eval_id", r.eval_ids)):
            if ids:
                self.con.execute(f"UPDATE {table} SET source_sha256 = ? WHERE source_sha256 IS "
                                 f"NULL AND list_contains(?, {key})", [r.sha256, list(ids)])

    def _record_input(self, r: LoadReport) -> None:
        """One `inputs` row per report; an ignored file has kind 'ignored' and its reason as
        the only skipped reason (input_reports() turns it back into skipped_file). Its
        input_id: the one load_paths reserved for the file, else the next free one."""
        row = _input_row(r)
        self.con.execute(
            f"INSERT INTO inputs (input_id, {', '.join(map(quote_ident, row))}, loaded_at) "
            f"SELECT coalesce(?, greatest(coalesce(max(input_id), 0), ?) + 1), "
            f"{', '.join('?' * len(row))}, now() FROM inputs",
            [self._input_id_of.get(threading.get_ident()), self._input_ids_to,
             *row.values()])

    def _record_inputs(self, reports: list[LoadReport], input_ids: list[int]) -> None:
        """_record_input for many reports with the input_ids load_paths reserved, one INSERT."""
        frame = pd.DataFrame([_input_row(r) for r in reports], dtype=object)
        frame.insert(0, "input_id", input_ids)
        types = schema.column_types("inputs")  # a column of only None has no type of its own
        name = f"_inputs_{threading.get_ident()}"
        self.con.register(name, frame)
        try:
            self.con.execute(
                f"INSERT INTO inputs ({', '.join(map(quote_ident, frame.columns))}, loaded_at) "
                "SELECT " + ", ".join(f"CAST({quote_ident(c)} AS {types[c]})"
                                      for c in frame.columns) + f", now() FROM {quote_ident(name)}")
        finally:
            self.con.unregister(name)

    def input_reports(self) -> list[LoadReport]:
        """Every LoadReport recorded in this store, in load order."""
        rows = self.con.execute("SELECT path, format, kind, sha256, run_ids, eval_ids, rows_loaded,"
                                " rows_skipped, skipped_reasons, columns, error FROM inputs"
                                " ORDER BY input_id").fetchall()
        out = []
        for r in rows:
            reasons = json.loads(r[8] or "[]")
            if r[2] == "ignored":
                out.append(LoadReport(path=r[0], sha256=r[3],
                                      skipped_file=reasons[0] if reasons else "ignored"))
                continue
            out.append(LoadReport(path=r[0], format=r[1], kind=r[2], sha256=r[3],
                                  run_ids=json.loads(r[4] or "[]"),
                                  eval_ids=json.loads(r[5] or "[]"),
                                  rows_loaded=r[6] or 0, rows_skipped=r[7] or 0,
                                  skipped_reasons=reasons, columns=json.loads(r[9] or "{}"),
                                  error=r[10]))
        return out

    # -- sessions ---------------------------------------------------------------------------
    def save_as(self, path: str | Path) -> None:
        """Write the whole database to `path`, atomically: into a temporary file in the same
        folder (named for this process, so a later save can sweep it if the process dies),
        flushed and fsynced, then renamed over the target; a symbolic link's target is the
        file written (the link stays). Raises SessionError naming `path` (never the temporary
        file) when it is a folder, a read-only or special file, in a folder that is missing
        or not writable, or when writing fails (disk full...): the temporary file and its
        .wal are removed and the previous file is intact."""
        user = str(path)
        target = Path(os.path.realpath(path))
        _refuse_target(user, target)
        _sweep_temps(target)
        with self._lock:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp",
                                       dir=target.parent)
            os.close(fd)
            os.unlink(tmp)  # DuckDB creates the file itself
            attached = False
            try:
                self.con.execute(f"ATTACH {_sql_str(tmp)} AS _save")
                attached = True
                self.con.execute("COPY FROM DATABASE memory TO _save" if self.path is None else
                                 f"COPY FROM DATABASE {quote_ident(self._dbname())} TO _save")
                self.con.execute("DETACH _save")
                attached = False
                with open(tmp, "rb+") as fh:
                    os.fsync(fh.fileno())
                os.replace(tmp, target)
                _fsync_dir(target.parent)
            except (duckdb.Error, OSError) as e:
                msg = (e.strerror if isinstance(e, OSError) and e.strerror else str(e))
                raise SessionError(user, "cannot be saved: " + msg.replace(tmp, user)) from None
            finally:
                if attached:
                    try:
                        self.con.execute("DETACH _save")
                    except duckdb.Error:
                        pass
                for leftover in (tmp, tmp + ".wal"):
                    try:
                        os.unlink(leftover)
                    except FileNotFoundError:
                        pass

    def _dbname(self) -> str:
        return self.scalar("SELECT current_database()")

    @classmethod
    def open(cls, path: str | Path) -> "Store":
        """Reopen a saved session (read into memory so the file is never changed by accident;
        not compacted: see docs/architecture.md, The store).
        Raises SessionError naming `path` when it is not a Trace Explorer session: not a
        DuckDB file, no requests / cases table, a canonical table of another shape (a foreign
        database), or a malformed setting (validate_settings). Nothing of the caller's current
        store is touched: the caller swaps stores only when this returns."""
        p = Path(path)
        if not p.is_file():
            raise SessionError(path, "no such session file" if not p.exists() else
                               "is not a session file (a folder or a special file)")
        try:
            with open(p, "rb") as fh:  # DuckDB's file header carries "DUCK" at byte 8
                head = fh.read(12)
        except OSError as e:
            raise SessionError(path, f"cannot be read ({e.strerror or e})") from None
        if head[8:12] != b"DUCK":
            raise SessionError(path, "not a DuckDB session file (save one with File > Save Session)")
        _sweep_temps(Path(os.path.realpath(p)))
        store = cls()
        try:
            store._copy_session(path)
        except BaseException:
            store.close()
            raise
        return store

    def _copy_session(self, path: str | Path) -> None:
        """Store.open's body: attach `path` read-only and copy the canonical tables."""
        try:
            self.con.execute(f"ATTACH {_sql_str(str(path))} AS _src (READ_ONLY)")
        except duckdb.Error as e:
            raise SessionError(path, f"not a readable DuckDB session file ({e})") from None
        try:
            have = {r[0] for r in self.con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = '_src'"
            ).fetchall()}
            if "requests" not in have or "cases" not in have:
                raise SessionError(path, "not a Trace Explorer session (no requests / cases "
                                         "table): a DuckDB database of another program?")
            foreign = _foreign_shape(self.con, have)
            if foreign:  # tables that merely share a name with ours: another program's file
                raise SessionError(path, "not a Trace Explorer session: " + foreign + "; a "
                                   "DuckDB database of another program? (nothing was replaced)")
            for t in schema.TABLES:
                if t not in have:
                    continue
                src_cols = {r[0] for r in self.con.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_catalog = '_src' AND table_name = ?", [t]).fetchall()}
                cols = [c for c in schema.columns(t) if c in src_cols]
                if not cols:
                    raise SessionError(path, f"not a Trace Explorer session: its table {t!r} "
                                             f"has none of the expected columns")
                sel = ", ".join(quote_ident(c) for c in cols)
                try:
                    self.con.execute(f"INSERT INTO {quote_ident(t)} ({sel}) "
                                     f"SELECT {sel} FROM _src.{quote_ident(t)}")
                except duckdb.Error as e:
                    raise SessionError(path, f"not a Trace Explorer session: its table {t!r} "
                                             f"does not fit ({str(e).splitlines()[0]})") from None
            bad = validate_settings(self)
            if bad:
                raise SessionError(path, f"malformed session setting {bad[0]!r}: {bad[1]}")
        finally:
            self.con.execute("DETACH _src")

    def close(self) -> None:
        self.con.close()


# what every session file written by Store.save has: these tables, each with its key columns
_SESSION_TABLES = ("runs", "requests", "evals", "cases", "inputs")
_KEY_COLUMNS = {"runs": ("run_id",), "requests": ("run_id", "request_id"),
                "evals": ("eval_id",), "cases": ("case_id", "eval_id"),
                "inputs": ("path", "sha256")}


def _foreign_shape(con, have: set[str]) -> str | None:
    """Why the attached _src is not one of our sessions (a missing table, or a table without
    its key columns), or None."""
    missing = [t for t in _SESSION_TABLES if t not in have]
    if missing:
        return f"no {', '.join(missing)} table"
    for t, keys in _KEY_COLUMNS.items():
        cols = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_catalog = '_src' AND table_name = ?", [t]).fetchall()}
        lack = [k for k in keys if k not in cols]
        if lack:
            return f"its table {t!r} has no {', '.join(lack)} column"
    return None


def _preamble_text(pre) -> str:
    """What the normalised copy of a table changed, for the load report's columns."""
    parts = []
    if pre.sep:
        parts.append(_("Excel's sep={sep} line: {sep} as the delimiter").format(sep=pre.sep))
    comments = pre.lines - (1 if pre.sep else 0)
    if comments:
        parts.append(ngettext("{n} leading comment line skipped",
                              "{n} leading comment lines skipped", comments).format(n=comments))
    if pre.mixed_endings:
        parts.append(_("mixed line endings read as one"))
    return ", ".join(parts)


def _input_row(r: LoadReport) -> dict:
    """The `inputs` row of a report, by column (input_id and loaded_at apart): an ignored
    file has kind 'ignored' and its reason as the only skipped reason."""
    ignored = r.skipped_file is not None
    return {"path": r.path, "sha256": r.sha256, "format": r.format,
            "kind": "ignored" if ignored else r.kind, "rows_loaded": r.rows_loaded,
            "rows_skipped": r.rows_skipped,
            "skipped_reasons": json.dumps([r.skipped_file] if ignored else r.skipped_reasons),
            "columns": json.dumps(r.columns), "run_ids": json.dumps(r.run_ids),
            "eval_ids": json.dumps(r.eval_ids), "error": r.error}


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


MAX_TOLERANCE = 1e9  # a binding tolerance beyond this overflows the binding SQL's times


def validate_settings(store: "Store") -> tuple[str, str] | None:
    """(key, why) of the first setting a saved session cannot use, else None: every value
    must be JSON; the keys the app reads must have their shape (tolerances a mapping that
    association.Tolerances accepts, the ambiguous list a list, the causal graph and the
    chosen cluster text or null)."""
    rows = store.con.execute("SELECT key, value FROM settings ORDER BY key").fetchall()
    for key, raw in rows:
        try:
            value = json.loads(raw) if raw is not None else None
        except (TypeError, ValueError) as e:
            return key, f"not JSON ({e})"
        if key == "association.tolerances" and value is not None:
            from .association import Tolerances
            if not isinstance(value, dict):
                return key, "not a mapping"
            for k, v in value.items():
                if k in ("level3_hash", "level3_time") and not isinstance(v, bool):
                    return key, f"{k} is not true / false: {v!r}"
                if k in ("prompt_tokens", "window_s", "time_base_margin_s") and not (
                        isinstance(v, (int, float)) and not isinstance(v, bool)
                        and 0 <= v <= MAX_TOLERANCE):
                    return key, f"{k} is not a number in [0, {MAX_TOLERANCE:.0e}]: {v!r}"
            try:
                Tolerances.from_dict(value)
            except Exception as e:  # noqa: BLE001 - any refusal of from_dict
                return key, errlog.describe(e)
        elif key in ("association.ambiguous", "association.ambiguous_detail") and \
                not isinstance(value, (list, type(None))):
            return key, "not a list"
        elif key in ("causal_graph", "chosen_cluster") and not isinstance(value, (str, type(None))):
            return key, "not text"
    return None


def _refuse_target(user: str, target: Path) -> None:
    """Raise SessionError when a session must not be written at `target` (the real path of
    what the user chose, `user`)."""
    if target.is_dir():
        raise SessionError(user, "is a folder: choose a file name for the session")
    if target.exists():
        st = target.stat()
        if not stat.S_ISREG(st.st_mode):
            raise SessionError(user, "is not a regular file: not overwritten")
        if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
            raise SessionError(user, "is read-only: not overwritten")
    folder = target.parent
    if not folder.is_dir():
        raise SessionError(user, f"cannot be saved: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SessionError(user, f"cannot be saved: the folder {folder} is not writable")


def _sweep_temps(target: Path) -> None:
    """Remove the temporary files (and .wal) that saves to `target` left behind when their
    process was killed: named .<name>.<pid>.<random>.tmp, removed when that pid is gone."""
    for f in target.parent.glob(f".{glob_escape(target.name)}.*.tmp*"):
        parts = f.name[len(target.name) + 2:].split(".")
        try:
            pid = int(parts[0])
        except (ValueError, IndexError):
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
            continue  # still running: perhaps saving right now
        except ProcessLookupError:
            pass
        except OSError:
            continue
        try:
            f.unlink()
        except OSError:
            pass


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sql_str(s: str) -> str:
    """A single-quoted SQL string literal (for ATTACH, which takes no parameters)."""
    return "'" + s.replace("'", "''") + "'"
