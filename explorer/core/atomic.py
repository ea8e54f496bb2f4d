"""Files written whole or not at all: into a temporary file beside the target, then renamed
over it. A failure half-way (a full disk, a painter raising) leaves no truncated file and the
previous one intact. Used for every file a report writes."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call write(tmp) on a temporary file beside `path` (it returns False when it could not
    write), then rename it over `path`. Raises OSError when writing failed (naming `path`,
    never the temporary file); the temporary file is removed whatever happens."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        try:
            ok = write(tmp)
        except OSError as e:
            raise OSError(e.errno, e.strerror or str(e), str(path)) from None
        if ok is False:
            raise OSError(f"cannot write {path}")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def write_text(path: str | Path, text: str) -> Path:
    """`text` as UTF-8 into `path`, atomically."""
    return write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
