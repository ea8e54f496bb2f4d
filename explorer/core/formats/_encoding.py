"""Text that is not UTF-8: UTF-16 with a byte-order mark (what Windows PowerShell's `>` and
`Out-File` write, so a redirected benchmark printout or log arrives like this) and
single-byte text (a CSV saved by Excel or an older tool in Windows-1252 / Latin-1).

Detection decodes the head in the file's encoding (base.Sniff); the store loads such a file
from a UTF-8 copy in a temporary folder (utf8_copy), so every reader (DuckDB's CSV reader,
pandas, the JSON readers) sees UTF-8, and records the encoding in the load report. The
decision is taken on the first 64 KiB: a file that turns non-UTF-8 only further on is read as
UTF-8 (undecodable bytes replaced) or fails with its reader's message.
"""
from __future__ import annotations

import codecs
from pathlib import Path

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
NAMES = {"utf-16": "UTF-16 (byte-order mark)", "utf-16-le": "UTF-16 LE (no byte-order mark)",
         "utf-16-be": "UTF-16 BE (no byte-order mark)", "cp1252": "Windows-1252",
         "latin-1": "Latin-1"}


def encoding_of(raw: bytes) -> str | None:
    """None for UTF-8 (with or without a byte-order mark, or plain ASCII) and for binary
    content; else the codec that reads `raw` (the head of a file): 'utf-16' when it starts
    with a UTF-16 byte-order mark, 'utf-16-le' / '-be' without one when every other byte is
    NUL (Latin-script text), 'cp1252' (else 'latin-1') for NUL-free text that is not UTF-8
    before its last 3 bytes (a character cut by the head's end is not evidence)."""
    if raw.startswith(_UTF16_BOMS):
        return "utf-16"
    if b"\x00" in raw:
        return _utf16_without_bom(raw)
    try:
        raw.decode("utf-8")
        return None
    except UnicodeDecodeError as e:
        if e.start >= len(raw) - 3 and e.reason in ("unexpected end of data",):
            return None
    try:
        raw.decode("cp1252")
        return "cp1252"
    except UnicodeDecodeError:
        return "latin-1"


def _utf16_without_bom(raw: bytes) -> str | None:
    """'utf-16-le' / 'utf-16-be' when nearly all odd / even bytes are NUL and the others not."""
    even, odd = raw[0::2], raw[1::2]
    if len(odd) < 8:
        return None
    nul = lambda b: b.count(0) / len(b)  # noqa: E731
    if nul(odd) > 0.9 and nul(even) < 0.05:
        return "utf-16-le"
    if nul(even) > 0.9 and nul(odd) < 0.05:
        return "utf-16-be"
    return None


def head_encoding(path: Path, n: int = 64 * 1024) -> str | None:
    """encoding_of the first n bytes of a file (None for a folder)."""
    if path.is_dir():
        return None
    with open(path, "rb") as fh:
        return encoding_of(fh.read(n))


def utf8_copy(path: Path, encoding: str, folder: Path) -> Path:
    """Write `path` decoded from `encoding` as UTF-8 to folder / path.name (same name, so
    name-based rules still apply) in 1 MiB pieces; undecodable bytes become U+FFFD."""
    out = Path(folder) / path.name
    with open(path, encoding=encoding, errors="replace", newline="") as src, \
            open(out, "w", encoding="utf-8", newline="") as dst:
        for chunk in iter(lambda: src.read(1 << 20), ""):
            dst.write(chunk)
    return out
