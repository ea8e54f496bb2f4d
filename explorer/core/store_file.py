"""Store's session files (the SessionFile mixin of explorer.core.store.Store): save a session
atomically, reopen one into memory, and check that a file is a Trace Explorer session (its
tables' shape and its settings, validate_settings)."""
from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from glob import escape as glob_escape
from typing import Any, Self

import duckdb

from . import errlog, schema
from .errors import SessionError
from .sqlutil import quote_ident

# settings key: the warehouse a session was connected to, {url (no credentials), table,
# columns {canonical: source}}; reopening the session reconnects (Session.open_session)
WAREHOUSE_SETTING = "warehouse"


class SessionFile:
    """Saving and reopening for Store."""

    # -- sessions ---------------------------------------------------------------------------
    def save_as(self, path: str | Path, with_data: bool = False) -> None:
        """Write the whole database to `path`, atomically: into a temporary file in the same
        folder (named for this process, so a later save can sweep it if the process dies),
        flushed and fsynced, then renamed over the target; a symbolic link's target is the
        file written (the link stays). Raises SessionError naming `path` (never the temporary
        file) when it is a folder, a read-only or special file, in a folder that is missing
        or not writable, or when writing fails (disk full...): the temporary file and its
        .wal are removed and the previous file is intact. with_data: the rows of the files read
        in place are copied into the session file too (inplace_session.embed), which then opens
        on any machine without them ("Save with data")."""
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
                if with_data:
                    from .inplace_session import embed
                    embed(self.con, "_save")
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
    def open(cls, path: str | Path) -> Self:
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
                # with files in place (inplace), the copied requests are requests_local
                st = "requests_local" if t == "requests" and "requests_local" in have else t
                src_cols = {r[0] for r in self.con.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_catalog = '_src' AND table_name = ?", [st]).fetchall()}
                cols = [c for c in schema.columns(t) if c in src_cols]
                if not cols:
                    raise SessionError(path, f"not a Trace Explorer session: its table {t!r} "
                                             f"has none of the expected columns")
                sel = ", ".join(quote_ident(c) for c in cols)
                try:
                    self.con.execute(f"INSERT INTO {quote_ident(t)} ({sel}) "
                                     f"SELECT {sel} FROM _src.{quote_ident(st)}")
                except duckdb.Error as e:
                    raise SessionError(path, f"not a Trace Explorer session: its table {t!r} "
                                             f"does not fit ({str(e).splitlines()[0]})") from None
            bad = validate_settings(self)
            if bad:
                raise SessionError(path, f"malformed session setting {bad[0]!r}: {bad[1]}")
            from .inplace_session import reattach
            self.detached = reattach(self)  # files read in place: found again, or said why not
        finally:
            self.con.execute("DETACH _src")


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


MAX_TOLERANCE = 1e9  # a binding tolerance beyond this overflows the binding SQL's times


def validate_settings(store: Any) -> tuple[str, str] | None:
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
        elif key == WAREHOUSE_SETTING and value is not None and not _warehouse_shape(value):
            return key, "not {url, table, columns} text"
    return None


def _warehouse_shape(value: Any) -> bool:
    cols = value.get("columns") if isinstance(value, dict) else None
    return (isinstance(value, dict) and all(isinstance(value.get(k), str) and value[k]
                                            for k in ("url", "table"))
            and isinstance(cols, (dict, type(None)))
            and all(isinstance(k, str) and isinstance(v, str) for k, v in (cols or {}).items()))


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
