"""Tables that are valid but not plain CSV: Excel's `sep=;` first line (written by Excel and by
tools that want Excel to open the file with that delimiter), leading `#` comment lines (a
preamble of benchmark scripts), a `;` / `|` delimiter named by that line, and mixed line
endings (CRLF, LF and lone CR in one file, which DuckDB's sniffer refuses).

Sniff.of reads the head without the preamble (as comma-separated text when `sep=` names
another delimiter), so detectors see the table; the store loads such a file from a normalised
UTF-8 copy (normalised_copy): preamble dropped, delimiter made a comma (through the csv
module, so quoted fields stay whole), line endings LF. Row line numbers stay those of the
original file (the copy's offset is added back, LoadReport._line_offset).
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".tab")
_SEP = re.compile(r"^\ufeff?sep=(.)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Preamble:
    lines: int            # leading lines to drop (the sep= line, comment lines, blank ones)
    sep: str | None       # the delimiter named by `sep=` (None: none named)
    mixed_endings: bool   # CRLF / LF / CR mixed (or lone CR)

    @property
    def needed(self) -> bool:
        return bool(self.lines or (self.sep and self.sep != ",") or self.mixed_endings)


def preamble_of(head: str, suffix: str) -> Preamble:
    """What of `head` (a decoded file head) is not table: see the module doc. Only for the
    table suffixes; other files get Preamble(0, None, False)."""
    if suffix.lower() not in TABLE_SUFFIXES or not head:
        return Preamble(0, None, False)
    lines = re.split(r"\r\n|\r|\n", head)
    n, sep = 0, None
    m = _SEP.match(lines[0]) if lines else None
    if m:
        sep, n = m.group(1), 1
    while n < len(lines) - 1 and (lines[n].lstrip().startswith("#") or not lines[n].strip()):
        n += 1
    if n and not any(ln.strip() for ln in lines[n:]):  # nothing but comments: not a table
        n = 0
    crlf = head.count("\r\n")
    lone_cr = head.count("\r") - crlf
    lone_lf = head.count("\n") - crlf
    mixed = bool(lone_cr) or (crlf > 0 and lone_lf > 0)
    return Preamble(n, sep, mixed)


def table_text(head: str, pre: Preamble) -> str:
    """head without its preamble, as comma-separated text with LF line ends."""
    lines = re.split(r"\r\n|\r|\n", head)[pre.lines:]
    text = "\n".join(lines)
    if pre.sep and pre.sep != ",":
        return _recode(io.StringIO(text), pre.sep, limit=None)
    return text


def _recode(src, sep: str, limit: int | None, dst=None) -> str:
    out = dst or io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for i, row in enumerate(csv.reader(src, delimiter=sep)):
        w.writerow(row)
    return "" if dst else out.getvalue()


def normalised_copy(path: Path, encoding: str | None, pre: Preamble, folder: Path) -> Path:
    """path as a UTF-8, comma-separated, LF-ended copy in folder (same name), its preamble
    lines left out (the caller adds pre.lines back to line numbers)."""
    out = Path(folder) / path.name
    with open(path, encoding=encoding or "utf-8-sig", errors="replace", newline=None) as src, \
            open(out, "w", encoding="utf-8", newline="") as dst:
        for _ in range(pre.lines):
            src.readline()
        if pre.sep and pre.sep != ",":
            _recode(src, pre.sep, None, dst)
        else:
            for chunk in iter(lambda: src.read(1 << 20), ""):
                dst.write(chunk)
    return out
