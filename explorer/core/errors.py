"""Errors the core raises; each names the file and, where known, the line and field."""
from __future__ import annotations

from pathlib import Path

from .i18n import ngettext


class TraceExplorerError(Exception):
    """Base class of every error the core raises on purpose."""


class InputError(TraceExplorerError):
    """An input file cannot be read (or one of its records cannot be used).

    Attributes: path (str), line (1-based line number or None), field (str or None).
    str(err) reads "FILE:LINE: field 'F': message" with the parts that are known.
    """

    def __init__(self, path: str | Path, message: str, line: int | None = None,
                 field: str | None = None):
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        from .i18n import field_text
        where = self.path + (f":{line}" if line is not None else "")
        what = field_text(field) if field else ""
        super().__init__(f"{where}: {what}{message}")


class SessionError(InputError):
    """A session file cannot be saved to, or opened from, the path the user chose (the
    message names that path, never a temporary file)."""


class UnknownFormat(InputError):
    """No registered format recognised the file's content."""


class Cancelled(TraceExplorerError):
    """The work was cancelled: the caller's cancelled() returned True (the user pressed Cancel,
    or a newer job made this one stale). The one cancellation type of the project: loads
    (Store.load_paths), the analysis pipeline, the what-if, the replay, warehouse queries, the
    window's jobs (explorer.workers) and the report export all raise this class."""


class NoData(TraceExplorerError):
    """An analysis has nothing to work on (e.g. a cohort without bound requests).

    The message says why, in words fit for the user.
    """


class ReportIncomplete(TraceExplorerError):
    """Some parts of a report could not be drawn (a plotting library failing inside a panel):
    the other files were written. Attributes: out_dir, failed ([(part, one-line reason)]),
    written (the files that were), log (where the details went: "details in <path>")."""

    def __init__(self, out_dir, failed: list[tuple[str, str]], written: list, log: str):
        self.out_dir, self.failed, self.written, self.log = str(out_dir), failed, written, log
        parts = "; ".join(f"{name} ({why})" for name, why in failed)
        super().__init__(f"{out_dir}: " + ngettext(
            "{n} picture of the report could not be drawn and is missing: {parts}; the other "
            "files were written ({log})",
            "{n} pictures of the report could not be drawn and are missing: {parts}; the other "
            "files were written ({log})", len(failed)).format(n=len(failed), parts=parts, log=log))
