"""Markdown tables of the report: cells escaped (escape.md) unless already Markdown (_Raw).
Below report.py and report_runs.py, which both write tables with it."""
from __future__ import annotations

from typing import Any, Sequence

from .escape import md


class _Raw(str):
    """Markdown already escaped (code spans of md_code) for a table cell."""


def _cell(x: Any) -> str:
    """A Markdown table cell: input text escaped (escape.md); a _Raw cell is kept as it is
    but for its pipes (GFM splits cells at a pipe even inside a code span)."""
    return x.replace("|", "\\|") if isinstance(x, _Raw) else md(x)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |",
             "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
