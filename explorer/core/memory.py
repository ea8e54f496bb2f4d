"""Bounded memory for the embedded DuckDB (../shared/DESIGN.md "Files in place", issue 37).

Every store connection gets DuckDB's `memory_limit` (a share of the machine's RAM, DEFAULT_SHARE,
unless the user said otherwise: `--memory-limit` or TE_MEMORY_LIMIT, "8GB" or "40%") and a spill
`temp_directory` (TE_SPILL_DIR, else trace-explorer-spill-<pid> in the system temp folder), so
sorts, joins and aggregates larger than the limit spill to disk instead of growing the process.
What cannot spill (a list or string aggregate, an in-memory table past the limit) raises
duckdb.OutOfMemoryException; out_of_memory() turns it into a clear message, and the connection
stays usable (DuckDB rolls the statement back). See docs/files-in-place.md.
"""
from __future__ import annotations

import os
import re
import tempfile

from .errors import TraceExplorerError
from .i18n import _

DEFAULT_SHARE = 0.5  # DuckDB's own default is 80 %; the window, pandas and scipy need the rest
ENV_LIMIT = "TE_MEMORY_LIMIT"
ENV_SPILL = "TE_SPILL_DIR"
_override: str | None = None  # the --memory-limit of this process


class OutOfMemory(TraceExplorerError):
    """A query needed more memory than the limit and could not spill."""


def total_ram() -> int | None:
    """Bytes of physical memory (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def parse_limit(text: str) -> str:
    """A DuckDB memory_limit from "8GB", "512 MiB", "40%" (of the RAM). Raises ValueError."""
    t = str(text).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", t)
    if m:
        share = float(m.group(1)) / 100
        ram = total_ram()
        if not 0 < share <= 1 or ram is None:
            raise ValueError(_("memory limit {x}: a share must lie in (0, 100] %").format(x=t))
        return f"{int(ram * share) // 2**20}MiB"
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B)", t, re.I)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(_("memory limit {x}: expected a size such as 8GB or 512MiB, or a "
                           "share such as 40%").format(x=t))
    return f"{m.group(1)}{m.group(2)}"


def set_limit(text: str | None) -> None:
    """This process's memory limit for the stores opened from now on (--memory-limit)."""
    global _override
    _override = parse_limit(text) if text else None


def wanted_limit() -> str:
    """The memory_limit a new store gets: --memory-limit, else TE_MEMORY_LIMIT, else
    DEFAULT_SHARE of the RAM."""
    if _override:
        return _override
    env = os.environ.get(ENV_LIMIT)
    if env:
        return parse_limit(env)
    return parse_limit(f"{DEFAULT_SHARE * 100:g}%") if total_ram() else "4GB"


def spill_dir() -> str:
    return os.environ.get(ENV_SPILL) or os.path.join(tempfile.gettempdir(),
                                                     f"trace-explorer-spill-{os.getpid()}")


def configure(con, limit: str | None = None) -> None:
    """Set memory_limit and temp_directory on a new DuckDB connection (Store.__init__). A bad
    TE_MEMORY_LIMIT falls back to the default share (the error is for the option to say)."""
    try:
        lim = parse_limit(limit) if limit else wanted_limit()
    except ValueError:
        lim = parse_limit(f"{DEFAULT_SHARE * 100:g}%") if total_ram() else "4GB"
    con.execute(f"SET memory_limit = '{lim}'")
    con.execute("SET temp_directory = ?", [spill_dir()])


def settings(con) -> dict:
    """{memory_limit, spill_directory} as DuckDB reports them (report meta, inspect)."""
    lim, tmp = con.execute("SELECT current_setting('memory_limit'), "
                           "current_setting('temp_directory')").fetchall()[0]
    return {"memory_limit": lim, "spill_directory": tmp}


def out_of_memory(e: BaseException, con=None) -> OutOfMemory | None:
    """The clear error for a DuckDB out-of-memory exception (None for any other error)."""
    import duckdb
    if not isinstance(e, duckdb.OutOfMemoryException):
        return None
    lim = settings(con)["memory_limit"] if con is not None else wanted_limit()
    return OutOfMemory(_("out of memory: the query needed more than the memory limit ({limit}) "
                         "and could not spill to disk; raise the limit with --memory-limit or "
                         "{env} (e.g. 60%), or analyse fewer runs").format(limit=lim, env=ENV_LIMIT))
