"""Shared pieces for format modules: the content sniff and tolerant JSON / JSONL readers."""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from contextvars import ContextVar
from typing import Any, Callable, Iterator

from ..errors import InputError
from ..i18n import _
from ._encoding import encoding_of

HEAD_BYTES = 64 * 1024
FIRST_RECORD_MAX = 16 << 20  # a first JSON line longer than the head is read on up to this
_BOM = b"\xef\xbb\xbf"
_NUL_LINES = re.compile(rb"(?m)^\x00+\r?$\n?")
_UNDECODED = re.compile("[\udc80-\udcff]")  # bytes not UTF-8, kept by surrogateescape

_LINE_END = re.compile(r"\r\n|\r|\n")


def _table_head(text: str, path: Path) -> str:
    """A table's head without Excel's sep= line or leading # comments, comma-separated
    (formats._preamble; the store loads the same normalised text)."""
    from ._preamble import preamble_of, table_text
    pre = preamble_of(text, path.suffix)
    return table_text(text, pre) if pre.needed else text


def split_lines(text: str) -> list[str]:
    """text's lines as files end them (LF, CRLF, CR, mixed), never at U+2028 / U+2029 /
    form feed / VT, which str.splitlines takes for line breaks but which JSON strings and CSV
    cells may hold as they are."""
    lines = _LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


@dataclass(frozen=True)
class Sniff:
    """What detectors look at: the path, whether it is a folder, and the first 64 KiB as text.

    head is decoded as UTF-8 with replacement, without a UTF-8 byte-order mark and without lines
    made only of NUL bytes (a stray one in a JSONL, which iter_jsonl skips with its number);
    when the file starts with a JSON line longer than 64 KiB (long-context lm-eval samples,
    AIPerf records with long chunk arrays) the head runs on to the end of that line (up to
    FIRST_RECORD_MAX), so detectors see one whole record. is_binary is True when the head holds
    other NUL bytes or is mostly undecodable. A head in UTF-16 (byte-order mark) or in a
    single-byte encoding (not UTF-8) is decoded in it (_encoding).
    """
    path: Path
    is_dir: bool
    head: str
    is_binary: bool

    @classmethod
    def of(cls, path: Path) -> "Sniff":
        if path.is_dir():
            return cls(path, True, "", False)
        with open(path, "rb") as fh:
            raw = fh.read(HEAD_BYTES)
            if raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            body = raw.lstrip(b" \t\r\n")
            if body[:1] == b"{" and b"\n" not in body and len(raw) >= HEAD_BYTES - len(_BOM):
                parts = [raw]
                size = len(raw)
                while size < FIRST_RECORD_MAX:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        break
                    cut = chunk.find(b"\n")
                    parts.append(chunk if cut < 0 else chunk[:cut + 1])
                    size += len(parts[-1])
                    if cut >= 0:
                        break
                raw = b"".join(parts)
        enc = encoding_of(raw)
        if enc:  # UTF-16 or single-byte text: the store loads a UTF-8 copy (_encoding)
            return cls(path, False, _table_head(raw.decode(enc, errors="replace")
                                                .lstrip("\ufeff"), path), False)
        raw = _NUL_LINES.sub(b"", raw)
        text = raw.decode("utf-8", errors="replace")
        binary = b"\x00" in raw or text.count("\ufffd") > max(8, len(text) // 100)
        return cls(path, False, text if binary else _table_head(text, path), binary)

    @property
    def suffix(self) -> str:
        return self.path.suffix.lower()

    def first_lines(self, n: int = 5) -> list[str]:
        """The first n non-empty lines of the head (the last may be cut short)."""
        return self._lines[:n]

    @cached_property
    def _lines(self) -> list[str]:
        """The non-empty lines of the head, split once: every detector reads them (a folder
        of small tables spent ~0.7 ms a file splitting the same head again per detector)."""
        return [ln for ln in split_lines(self.head) if ln.strip()]

    def first_json_line(self) -> dict | None:
        """The first line of the head that parses as a JSON object, or None."""
        return self._json_lines[0] if self._json_lines else None

    @cached_property
    def _json_lines(self) -> list[dict]:
        """The first 20 lines of the head that parse as JSON objects (parsed once)."""
        out = []
        for ln in split_lines(self.head):
            ln = ln.strip()
            if ln.startswith("{"):
                try:
                    obj = json.loads(ln)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    out.append(obj)
                    if len(out) >= 20:
                        break
        return out

    def records(self, n: int = 20) -> list[dict]:
        """Up to n records from the head: its JSON-object lines, else the rows of a CSV / TSV
        header and the complete lines after it (values as text). The first 20 are read once
        (the table detectors both ask for them)."""
        return self._records[:n] if n <= 20 else self._read_records(n)

    @cached_property
    def _records(self) -> list[dict]:
        return self._read_records(20)

    def _read_records(self, n: int) -> list[dict]:
        if self._json_lines:
            return self._json_lines[:n]
        lines = split_lines(self.head)
        if len(lines) < 2 or lines[0].lstrip().startswith(("{", "[")):
            return []
        if len(self.head.encode("utf-8", errors="replace")) >= HEAD_BYTES:
            lines = lines[:-1]  # the last line may be cut short
        delim = "\t" if lines[0].count("\t") > lines[0].count(",") else ","
        try:
            return list(csv.DictReader(io.StringIO("\n".join(lines[:n + 1])), delimiter=delim))
        except csv.Error:
            return []


# A format read as one document (a JSON file, a printout) larger than this is refused before
# it is read: parsed whole it would take several times its size in memory (a mistaken 20 GB
# file, or a device, must not exhaust the machine). Line-by-line formats have no such bound.
MAX_DOCUMENT_BYTES = 1 << 30


def check_document_size(path: Path, limit: int | None = None) -> None:
    """Raise InputError when `path` is larger than MAX_DOCUMENT_BYTES (or `limit`)."""
    limit = MAX_DOCUMENT_BYTES if limit is None else limit
    try:
        size = Path(path).stat().st_size
    except OSError:
        return  # the open that follows names the problem
    if size > limit:
        raise InputError(path, _("{size} MiB read as one document is more than the {limit} MiB "
                                 "this format is read whole up to: not read (split it, or save "
                                 "it as JSON lines)").format(size=size >> 20, limit=limit >> 20))


def read_json(path: Path) -> Any:
    """Parse a whole JSON file (at most MAX_DOCUMENT_BYTES). Raises InputError with the line of
    a syntax error."""
    check_document_size(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return json.load(fh)
    except json.JSONDecodeError as e:
        raise InputError(path, _("invalid JSON ({error}, column {column})").format(error=e.msg, column=e.colno), line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise InputError(path, _("not UTF-8 text ({reason} at byte {byte})").format(reason=e.reason, byte=e.start)) from None


def side_json(path: Path) -> dict | None:
    """The JSON object of an optional file beside the input (a sidecar); None when it is
    missing, unreadable, or not an object."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            got = json.load(fh)
    except (OSError, ValueError):
        return None
    return got if isinstance(got, dict) else None


# A JSONL record longer than this is skipped without being held in memory (long-context eval
# samples run to a few MiB; a file of one endless line must not exhaust the memory).
MAX_RECORD_CHARS = 256 << 20
CHECK_EVERY = 1024  # lines between two calls of the load's cancel check

# The load in progress's cancel check (Store.check_cancelled, raising errors.Cancelled), set
# by the store around a file's load: long reads call it between lines, so Cancel stops them.
cancel_check: ContextVar[Callable[[], None] | None] = ContextVar("cancel_check", default=None)


def _lines(fh, report) -> Iterator[tuple[int, str]]:
    """(line number, line) of a text file, each line at most MAX_RECORD_CHARS long: a longer
    one is read on in chunks and dropped (counted as skipped in `report` with its line), so
    memory stays bounded; the load's cancel check runs every CHECK_EVERY lines and between
    the chunks of a long line."""
    check = cancel_check.get() or (lambda: None)
    no = 0
    while True:
        line = fh.readline(MAX_RECORD_CHARS + 1)
        if not line:
            return
        no += 1
        if no % CHECK_EVERY == 0:
            check()
        if len(line) > MAX_RECORD_CHARS and not line.endswith("\n"):
            while True:
                check()
                rest = fh.readline(1 << 22)
                if not rest or rest.endswith("\n"):
                    break
            if report is not None:
                report.skip(_("a record longer than {size} MiB: not read").format(
                    size=MAX_RECORD_CHARS >> 20), line=no)
            continue
        yield no, line


def iter_jsonl(path: Path, report=None) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each JSON-object line. Blank lines are passed over;
    a line that is not a JSON object is counted as skipped in `report` (when given) with its
    reason, so mixed files (e.g. SGLang's bare 'torch:' lines) still load. A UTF-8 byte-order
    mark is ignored; a line of NUL bytes (left by a crash or a preallocated file) is skipped as
    such; a line longer than MAX_RECORD_CHARS is skipped unread (_lines: bounded memory, and
    Cancel stops the read)."""
    with open(path, encoding="utf-8-sig", errors="surrogateescape") as fh:
        for no, line in _lines(fh, report):
            s = line.strip()
            if not s:
                continue
            if _UNDECODED.search(s):  # a line in another encoding than the rest: skipped
                if report is not None:  # and named, never read garbled
                    report.skip(_("bytes that are not UTF-8 (the file mixes encodings)"), line=no)
                continue
            if not s.strip("\x00"):
                if report is not None:
                    report.skip(_("a line of NUL bytes, not a JSON object"), line=no)
                continue
            try:
                obj = json.loads(s)
            except ValueError as e:
                if report is not None:
                    why = (_("{error} at column {column}").format(error=e.msg, column=e.colno)
                           if isinstance(e, json.JSONDecodeError) else str(e))
                    report.skip(_("not a JSON object ({why})").format(why=why), line=no)
                continue
            if isinstance(obj, dict):
                yield no, obj
            elif report is not None:
                report.skip(_("not a JSON object"), line=no)


def value_at(rec, dotted: str):
    """rec's value at a dotted path whose parts may index a list ("times[-1]"), or None."""
    for part in re.findall(r"[^.\[\]]+|\[-?\d+\]", dotted):
        if part[0] == "[":
            i = int(part[1:-1])
            rec = rec[i] if isinstance(rec, list) and -len(rec) <= i < len(rec) else None
        else:
            rec = rec.get(part) if isinstance(rec, dict) else None
        if rec is None:
            return None
    return rec
