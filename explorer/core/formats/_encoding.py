"""Text that is not UTF-8: UTF-16 with a byte-order mark (what Windows PowerShell's `>` and
`Out-File` write, so a redirected benchmark printout or log arrives like this), the legacy
code pages Excel saves a CSV in (Windows-1252 in the West; GBK / GB18030 on Chinese, Shift-JIS
on Japanese, Big5 and EUC-KR on Traditional Chinese and Korean Windows), told apart by
charset-normalizer among those candidates only; Windows-1252 / Latin-1 when it cannot decide.
A head that is UTF-8 text but for some lines (a UTF-8 file with a few GBK lines appended) is
refused, naming its first such line (mixed_line): decoding it either way garbles part of it.

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
         "latin-1": "Latin-1", "gb18030": "GB18030 / GBK (Simplified Chinese)",
         "shift_jis": "Shift-JIS (Japanese)", "big5": "Big5 (Traditional Chinese)",
         "euc_kr": "EUC-KR (Korean)"}
# the legacy encodings told apart (charset-normalizer's names; cp932 is Windows' Shift-JIS)
_CANDIDATES = ["gb18030", "shift_jis", "cp932", "big5", "euc_kr", "cp1252"]
_ALIAS = {"cp932": "shift_jis", "gbk": "gb18030", "gb2312": "gb18030"}


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
    guess = _legacy(raw)
    if guess:
        return guess
    try:
        raw.decode("cp1252")
        return "cp1252"
    except UnicodeDecodeError:
        return "latin-1"


def _legacy(raw: bytes) -> str | None:
    """The legacy code page charset-normalizer finds for `raw` among _CANDIDATES (None when
    it is not installed or finds none). A character cut by the head's end is dropped first."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        return None
    cut = raw.rfind(b"\n")
    body = raw[:cut + 1] if cut > 0 and len(raw) >= 4096 else raw
    best = from_bytes(body, cp_isolation=_CANDIDATES).best()
    if best is None:
        return None
    enc = _ALIAS.get(best.encoding, best.encoding)
    return enc if enc in NAMES else None


def mixed_line(raw: bytes) -> tuple[int, int] | None:
    """(first line that is not UTF-8, an earlier line that is UTF-8 with non-ASCII text) when
    the head mixes the two (both 1-based), else None. The head's last line may be cut and is
    not looked at."""
    lines = raw.split(b"\n")[:-1] if len(raw) >= 4096 else raw.split(b"\n")
    utf8_seen = None
    for no, ln in enumerate(lines, 1):
        if ln.isascii():
            continue
        try:
            ln.decode("utf-8")
        except UnicodeDecodeError:
            return (no, utf8_seen) if utf8_seen else None
        utf8_seen = utf8_seen or no
    return None


# magic numbers of compressed and archive files (their first bytes): such an input is named
# as what it is, with how to read it, never as mere "binary content"
_COMPRESSED = ((b"\x1f\x8b", "gzip", "gunzip"), (b"\x28\xb5\x2f\xfd", "Zstandard", "unzstd"),
               (b"PK\x03\x04", "ZIP", "unzip"), (b"BZh", "bzip2", "bunzip2"),
               (b"\xfd7zXZ\x00", "xz", "unxz"), (b"\x04\x22\x4d\x18", "LZ4", "unlz4"),
               (b"7z\xbc\xaf\x27\x1c", "7-Zip", "7z x"))


def compressed_kind(path: Path) -> str | None:
    """A sentence naming the compression of `path` and how to decompress it, or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return None
    for magic, name, tool in _COMPRESSED:
        if head.startswith(magic):
            from ..i18n import _
            return _("{name}-compressed: decompress it first ({tool} {file}), then load the "
                     "file inside").format(name=name, tool=tool, file=path.name)
    return None


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
    """encoding_of the first n bytes of a file (None for a folder). Raises InputError naming
    the line when the head mixes UTF-8 lines with lines in another encoding."""
    if path.is_dir():
        return None
    with open(path, "rb") as fh:
        raw = fh.read(n)
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[3:]
    mixed = mixed_line(raw) if b"\x00" not in raw else None
    if mixed:
        from ..errors import InputError
        from ..i18n import _
        raise InputError(path, _("this line is not UTF-8 while line {utf8} before it is UTF-8 "
                                 "text: the file mixes encodings (e.g. GBK lines appended to a "
                                 "UTF-8 file); decoded either way part of it would be garbled. "
                                 "Save it again in one encoding").format(utf8=mixed[1]),
                         line=mixed[0])
    return encoding_of(raw)


def utf8_copy(path: Path, encoding: str, folder: Path) -> Path:
    """Write `path` decoded from `encoding` as UTF-8 to folder / path.name (same name, so
    name-based rules still apply) in 1 MiB pieces; undecodable bytes become U+FFFD."""
    out = Path(folder) / path.name
    with open(path, encoding=encoding, errors="replace", newline="") as src, \
            open(out, "w", encoding="utf-8", newline="") as dst:
        for chunk in iter(lambda: src.read(1 << 20), ""):
            dst.write(chunk)
    return out
