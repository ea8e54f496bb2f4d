"""A progress line on stderr for long loads, when stderr is a terminal (issue 37).

Store.load_paths tells progress(i, n, path) before each file; inside one file, the scan that
copies it (a large Parquet / CSV read by DuckDB) reports its share done through DuckDB's own
query progress (connection.query_progress(), polled here on a thread: DuckDB answers it while
the query runs on another thread; it starts counting after progress_bar_time, 2 s). The line is
rewritten in place ("\\r") and erased at the end, so the per-file "loaded ..." lines stay as
they were; nothing is written when stderr is not a terminal (a pipe, a log, the tests).
"""
from __future__ import annotations

import sys
import threading
import time

from explorer.core.escape import terminal
from explorer.core.i18n import _


class LoadProgress:
    """with LoadProgress(store) as p: store.load_paths(files, progress=p)"""

    def __init__(self, store, stream=None, period_s: float = 0.5):
        self.stream = stream or sys.stderr
        self.con = store.con
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.period_s = period_s
        self.file: tuple[int, int, str] | None = None
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._width = 0

    def __call__(self, i: int, n: int, path) -> None:
        self.file = (i, n, str(path))
        self._draw(None)

    def __enter__(self) -> "LoadProgress":
        if self.on:
            # the store keeps DuckDB's own bar off (it would print); its progress is still
            # counted with the bar on and printing off
            self.con.execute("SET enable_progress_bar_print = false")
            self.con.execute("SET enable_progress_bar = true")
            self._thread = threading.Thread(target=self._poll, daemon=True,
                                            name="te-load-progress")
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self.con.execute("SET enable_progress_bar = false")
        if self.on and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()

    def _poll(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                pct = self.con.query_progress()
            except Exception:  # noqa: BLE001 - no query running / a closed connection
                pct = -1.0
            self._draw(pct if pct is not None and pct >= 0 else None)

    def text(self, pct: float | None) -> str:
        if self.file is None:
            return ""
        i, n, path = self.file
        line = _("loading {i}/{n}: {path}").format(i=i + 1, n=n, path=terminal(path)[-60:])
        if pct is not None and pct > 0:
            line += _(" ({pct:.0f}% of this file's scan)").format(pct=pct)
        return line + _(", {s:.0f} s").format(s=time.monotonic() - self.t0)

    def _draw(self, pct: float | None) -> None:
        if not self.on:
            return
        line = self.text(pct)
        pad = max(0, self._width - len(line))
        self._width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()


class ReportProgress:
    """The report's progress line on stderr when it is a terminal: the section running
    ("report 12/18: Replay ...") and, inside a long one, its own progress (the replay's
    seconds used of its budget). section(done, total, key) is write_report's progress,
    detail(key, done, total, text) its detail; erased by close()."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.at: tuple[int, int, str] = (0, 0, "")
        self._width = 0
        self.t0 = time.monotonic()

    def section(self, done: int, total: int, key: str) -> None:
        self.at = (done, total, key)
        self._draw("")

    def detail(self, key: str, done: int, total: int, text: str) -> None:
        self._draw(text)

    def text(self, detail: str, width: int = 10_000) -> str:
        """The line, at most `width` characters: a long detail loses its head ("...") so
        that its numbers, at its end, stay."""
        from explorer.core.i18n import pgettext
        from explorer.core.sections import BY_KEY, TITLES
        done, total, key = self.at
        if key == "done" or not total:
            return ""
        sec = BY_KEY.get(key)
        name = pgettext("panel", sec.panel) if sec is not None and sec.panel else _(
            TITLES.get(key, key))
        head = _("report {i}/{n}: {name}").format(i=done + 1, n=total, name=name)
        tail = _(", {s:.0f} s").format(s=time.monotonic() - self.t0)
        if not detail:
            return (head + tail)[:width]
        detail = terminal(detail)
        room = width - len(head) - len(tail) - 2
        if len(detail) > room:
            detail = "…" + detail[len(detail) - max(0, room - 1):]
        return (head + ": " + detail + tail)[:width]

    def _draw(self, detail: str) -> None:
        if not self.on:
            return
        import shutil
        line = self.text(detail, max(20, shutil.get_terminal_size().columns - 1))  # one row
        pad = max(0, self._width - len(line))
        self._width = len(line)
        self.stream.write("\r" + line + " " * pad + ("" if line else "\r"))  # "": erased
        self.stream.flush()

    def close(self) -> None:
        if self.on and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
