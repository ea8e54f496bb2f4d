"""The input files before they are loaded: which files a folder holds (walk_inputs, the special
files refused), a file's load report (LoadReport: rows, skips and why), its sha256 (sha256_of,
and _Hasher: hashed on a thread while the file loads). explorer.core.store re-exports them."""
from __future__ import annotations

import hashlib
import os
import re
import stat
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable


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
