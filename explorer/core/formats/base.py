"""Shared pieces for format modules: the content sniff and tolerant JSON / JSONL readers."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputError

HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Sniff:
    """What detectors look at: the path, whether it is a folder, and the first 64 KiB as text.

    head is decoded as UTF-8 with replacement; is_binary is True when the head holds NUL bytes
    or is mostly undecodable.
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
        text = raw.decode("utf-8", errors="replace")
        binary = b"\x00" in raw or text.count("\ufffd") > max(8, len(text) // 100)
        return cls(path, False, text, binary)

    @property
    def suffix(self) -> str:
        return self.path.suffix.lower()

    def first_lines(self, n: int = 5) -> list[str]:
        """The first n non-empty lines of the head (the last may be cut short)."""
        return [ln for ln in self.head.splitlines() if ln.strip()][:n]

    def first_json_line(self) -> dict | None:
        """The first line of the head that parses as a JSON object, or None."""
        for ln in self.head.splitlines():
            ln = ln.strip()
            if ln.startswith("{"):
                try:
                    obj = json.loads(ln)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    return obj
        return None


def read_json(path: Path) -> Any:
    """Parse a whole JSON file. Raises InputError with the line of a syntax error."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as e:
        raise InputError(path, f"invalid JSON ({e.msg}, column {e.colno})", line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise InputError(path, f"not UTF-8 text ({e.reason} at byte {e.start})") from None


def iter_jsonl(path: Path, report=None) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each JSON-object line. Blank lines are passed over;
    a line that is not a JSON object is counted as skipped in `report` (when given) with its
    reason, so mixed files (e.g. SGLang's bare 'torch:' lines) still load."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for no, line in enumerate(fh, 1):
            s = line.strip()
            if not s:
                continue
            try:
                obj = json.loads(s)
            except ValueError as e:
                if report is not None:
                    why = (f"{e.msg} at column {e.colno}" if isinstance(e, json.JSONDecodeError)
                           else str(e))
                    report.skip(f"not a JSON object ({why})", line=no)
                continue
            if isinstance(obj, dict):
                yield no, obj
            elif report is not None:
                report.skip("not a JSON object", line=no)
