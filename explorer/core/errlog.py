"""The error log: full details of unexpected failures go to one file, the user reads one line.

Every front end (inspect, report, replay, the window, the Export child) shows a sentence that
names the file at fault and ends with "details in <log path>"; the traceback is appended to the
log file, never printed. The log lives in $TRACE_EXPLORER_LOG_FILE when set, else in
$XDG_STATE_HOME/trace-explorer/trace-explorer.log (~/.local/state/...), else in the temporary
folder when neither can be written.
"""
from __future__ import annotations

import os
import tempfile
import threading
import traceback
from datetime import datetime, timezone
from pathlib import Path

_lock = threading.Lock()
MAX_BYTES = 4 << 20  # the log is restarted (one .1 kept) when it grows beyond this


def log_path() -> Path:
    """Where the details go (the file may not exist yet)."""
    env = os.environ.get("TRACE_EXPLORER_LOG_FILE")
    if env:
        return Path(env)
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "trace-explorer" / "trace-explorer.log"


def _write(text: str) -> Path | None:
    """Append `text` to the log (the temporary folder's when the usual place is not writable);
    the path written, or None when no place could be written."""
    for p in (log_path(), Path(tempfile.gettempdir()) / "trace-explorer.log"):
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            with _lock:
                if p.exists() and p.stat().st_size > MAX_BYTES:
                    os.replace(p, p.with_name(p.name + ".1"))
                with open(p, "a", encoding="utf-8", errors="replace") as fh:
                    fh.write(text)
            return p
        except OSError:
            continue
    return None


def record(exc: BaseException, context: str) -> str:
    """Append `context` and the traceback of `exc` to the log; returns the phrase to end the
    user's message with: "details in <path>" (or "no log could be written")."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    where = _write(f"--- {stamp} pid {os.getpid()}: {context}\n{tb}\n")
    return f"details in {where}" if where else "no log could be written"


def describe(exc: BaseException) -> str:
    """One line saying what went wrong, without a traceback: the cause in words for the
    kinds a user meets (a full disk naming the file, out of memory, nesting too deep, a
    number out of range), else "TypeName: message" (the type, since messages such as "0" say
    nothing alone)."""
    from .atomic import describe_os_error, disk_full
    from .i18n import _
    if disk_full(exc):
        return _("cannot write {x}").format(x=describe_os_error(exc))
    if isinstance(exc, MemoryError):
        return _("out of memory (the work needs more memory than this machine has free)")
    from .memory import out_of_memory
    oom = out_of_memory(exc)
    if oom is not None:  # DuckDB's memory_limit (explorer.core.memory): said with the limit
        return str(oom)
    if isinstance(exc, RecursionError):
        return _("nested too deeply to be read (more levels of nesting than can be followed)")
    if isinstance(exc, OverflowError):
        return _("a number too large to be used ({x})").format(x=" ".join(str(exc).split())[:200])
    msg = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def configure_logging(level: str = "WARNING") -> Path | None:
    """Send the window's log records (worker failures with their tracebacks) to the error log
    instead of the terminal; the path, or None when no log file could be opened (records then
    go to stderr as before)."""
    import logging
    for p in (log_path(), Path(tempfile.gettempdir()) / "trace-explorer.log"):
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(p, encoding="utf-8", errors="replace")
        except OSError:
            continue
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.basicConfig(level=level, handlers=[handler])
        return p
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    return None
