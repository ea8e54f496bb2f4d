"""Files written whole or not at all.

write_atomically / write_text / write_bytes: into a temporary file beside the target, flushed
to the disk, then renamed over it. A failure half-way (a full disk, a painter raising) leaves
no truncated file and the previous one intact.

Bundle: a set of files (a report: report.json, .md, .html, .pdf, pictures) written into a
staging folder inside the output folder and moved into place only once every one of them is
whole, with SIGINT / SIGTERM held back while they move: an interrupted or failed report leaves
the previous report as it was, never a folder mixing new and old files. The bundle's manifest
(MANIFEST) lists the files the product wrote; only those are ever replaced or removed (a
previous report's file the new one does not have), nothing else in the folder is touched.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
from pathlib import Path
from typing import Callable, Iterable

from .i18n import _

MANIFEST = ".trace-explorer-report.json"
_STAGE_PREFIX = ".trace-explorer-partial-"
_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def disk_full(e: BaseException) -> bool:
    """True for the OSError of a full disk (or a quota / file-size limit reached)."""
    return isinstance(e, OSError) and e.errno in _FULL


def describe_os_error(e: OSError, path: str | Path | None = None) -> str:
    """One line for the user: the file and what went wrong, "the disk is full" said as such."""
    where = str(path or e.filename or "")
    if disk_full(e):
        what = _("the disk is full (no space left on the device); nothing was left half-written")
    elif isinstance(e, OSError) and e.errno == errno.EFBIG:
        what = _("{x} (a file-size limit was reached); nothing was left half-written").format(
            x=e.strerror or "File too large")
    else:
        what = e.strerror or str(e)
    return f"{where}: {what}" if where else what


def _fsync(path: Path) -> None:
    """Flush `path` to the disk, so a full disk shows as an error now, not after the rename."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call write(tmp) on a temporary file beside `path` (it returns False when it could not
    write), then rename it over `path`. Raises OSError when writing failed (naming `path`,
    never the temporary file, and keeping the errno: ENOSPC for a full disk); the temporary
    file is removed whatever happens."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        try:
            ok = write(tmp)
            if ok is not False and tmp.exists():
                _fsync(tmp)
        except OSError as e:
            raise OSError(e.errno, e.strerror or str(e), str(path)) from None
        if ok is False or not tmp.exists():
            raise OSError(f"cannot write {path}")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_text(path: str | Path, text: str) -> Path:
    """`text` as UTF-8 into `path`, atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | Path, data: bytes) -> Path:
    """`data` into `path`, atomically (a full disk raises OSError ENOSPC naming `path`)."""
    return write_atomically(path, lambda tmp: tmp.write_bytes(data))


class _SignalsHeld:
    """SIGINT and SIGTERM held back (delivered on exit) in the main thread; elsewhere a no-op."""

    SIGNALS = {signal.SIGINT, signal.SIGTERM}

    def __enter__(self):
        self.old = None
        if hasattr(signal, "pthread_sigmask"):
            import threading
            if threading.current_thread() is threading.main_thread():
                self.old = signal.pthread_sigmask(signal.SIG_BLOCK, self.SIGNALS)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.old)
        return False


class Bundle:
    """Files written together into `out_dir` (created), whole or not at all.

        with Bundle(out) as b:
            write_text(b.stage / "report.json", ...)   # every file into b.stage
            ...
        # on a clean exit every file of b.stage replaces its namesake in out (and a file the
        # previous bundle had and this one has not is removed); on an exception nothing in
        # out changes and the stage is removed

    b.final(p) maps a staged path to its place in out. commit() may be called inside the
    block (e.g. to keep what was written before a picture failed); a later exit does nothing."""

    def __init__(self, out_dir: str | Path):
        self.out = Path(out_dir)
        self.stage: Path | None = None
        self.committed = False

    def __enter__(self) -> "Bundle":
        self.out.mkdir(parents=True, exist_ok=True)
        self.stage = self.out / f"{_STAGE_PREFIX}{os.getpid()}"
        if self.stage.exists():  # left by an earlier process of the same pid, killed
            shutil.rmtree(self.stage, ignore_errors=True)
        self.stage.mkdir()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None and not self.committed:
                self.commit()
        finally:
            if self.stage is not None:
                shutil.rmtree(self.stage, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename and str(exc.filename).startswith(
                str(self.stage)):  # the user reads the file's own name, not the stage's
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.final(exc.filename))) \
                from None
        return False

    def unstaged(self, text: str) -> str:
        """text with the stage's paths shown as their places in the output folder."""
        return text.replace(str(self.stage), str(self.out)) if self.stage else text

    def final(self, p: str | Path) -> Path:
        p = Path(p)
        try:
            return self.out / p.relative_to(self.stage)
        except ValueError:
            return p

    def staged(self) -> list[Path]:
        return sorted(p for p in self.stage.iterdir() if p.is_file() and
                      not p.name.startswith("."))

    def commit(self) -> list[Path]:
        """Move every staged file into out (signals held back meanwhile); remove the previous
        bundle's files that this one does not have; write the manifest. Returns the paths."""
        from .interrupt import check
        check()  # interrupted while it was written: a part may have failed on the interrupt
        names = [p.name for p in self.staged()]
        old = set(previous_bundle(self.out))
        with _SignalsHeld():
            check()
            for n in names:
                os.replace(self.stage / n, self.out / n)
            for n in sorted(old - set(names)):
                (self.out / n).unlink(missing_ok=True)
            write_text(self.out / MANIFEST, json.dumps({"files": names}, indent=1))
        self.committed = True
        return [self.out / n for n in names]


def previous_bundle(out_dir: str | Path) -> Iterable[str]:
    """The names of the files the last bundle wrote into out_dir (its manifest; none without
    one: then no file there is taken for the product's)."""
    try:
        names = json.loads((Path(out_dir) / MANIFEST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    # names only: a manifest edited to point elsewhere ("../x", "/etc/x") is not followed
    return [n for n in names if isinstance(n, str) and n and "/" not in n and "\\" not in n
            and n not in (".", "..") and not n.startswith(".")]
