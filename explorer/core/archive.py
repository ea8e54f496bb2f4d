"""Compressed inputs read in place: a `.gz` or `.zst` file is one input (its content decoded
into a temporary file with the inner name, `trace.jsonl.gz` -> `trace.jsonl`, so name-based
rules still apply), a `.zip` is a folder (an artefact folder zipped: every member extracted
into a temporary folder, which the store walks like a folder dropped). The input file is only
read; the store maps the temporary paths back to `archive` or `archive.zip/member` in reports,
runs.source_path and messages (Store.source_of), and deletes the copies after the load.

Guards: members with absolute paths or `..` are refused; the decoded size is capped
(MAX_BYTES) so a small archive that expands without end fails with a message instead of
filling the disk.
"""
from __future__ import annotations

import contextlib
import gzip
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from .errors import InputError
from .i18n import _

MAX_BYTES = 8 << 30  # decoded bytes of one archive
STREAMS = {".gz": "gzip", ".zst": "Zstandard"}


def kind(path: Path) -> str | None:
    """'stream' for a .gz / .zst file, 'zip' for a .zip file, None otherwise."""
    suf = Path(path).suffix.lower()
    if not Path(path).is_file():
        return None
    return "stream" if suf in STREAMS else "zip" if suf == ".zip" else None


def _copy(src, dst, path: Path) -> None:
    total = 0
    for chunk in iter(lambda: src.read(1 << 20), b""):
        total += len(chunk)
        if total > MAX_BYTES:
            raise InputError(path, _("decompresses to more than {n} GiB: not read").format(
                n=MAX_BYTES >> 30))
        dst.write(chunk)


def _open_stream(path: Path):
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rb")
    import zstandard  # only for .zst inputs
    return zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)


def _unpack(path: Path, tmp: str) -> tuple[Path, dict[str, str], str]:
    if kind(path) == "stream":
        out = Path(tmp) / (path.parent.name or "archive") / path.stem  # loaders name runs
        out.parent.mkdir()                                               # after the folder
        with _open_stream(path) as src, open(out, "wb") as dst:
            _copy(src, dst, path)
        return out, {str(out): str(path)}, _("{kind}-compressed, read in place").format(
            kind=STREAMS[path.suffix.lower()])
    root = Path(tmp) / path.stem
    shown = {str(root): str(path)}
    with zipfile.ZipFile(path) as zf:
        for m in zf.infolist():
            name = PurePosixPath(m.filename)
            if name.is_absolute() or ".." in name.parts:
                raise InputError(path, _("member {name!r} points outside the archive: not "
                                         "extracted").format(name=m.filename))
            if m.is_dir() or name.name.startswith(".") or "__MACOSX" in name.parts:
                continue
            target = root.joinpath(*name.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(m) as src, open(target, "wb") as dst:
                _copy(src, dst, path)
            shown[str(target)] = f"{path}/{m.filename}"
    return root, shown, _("a .zip archive, read in place")


@contextlib.contextmanager
def unpacked(path: Path):
    """Yield (decoded path, {temporary path: shown path}, note) for an archive; the temporary
    copies are deleted on exit. Raises InputError naming the archive when it cannot be read."""
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="trace-explorer-unpack-") as tmp:
        try:
            got = _unpack(path, tmp)
        except InputError:
            raise
        except Exception as e:  # noqa: BLE001 - gzip / zstd / zip errors: the archive fails
            raise InputError(path, _("cannot be decompressed ({error})").format(
                error=f"{type(e).__name__}: {e}")) from None
        yield got
