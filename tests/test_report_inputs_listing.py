"""report.md and the HTML / PDF provenance list the same input files the same way: grouped by
folder beyond MD_MAX_INPUTS loaded files, counting the files listed (failed ones on their own
rows, ignored ones noted apart)."""
from __future__ import annotations

import re

from explorer.core.report import MD_MAX_INPUTS, _md_inputs
from explorer.reporting.html import provenance_html


def _rows(n_loaded: int, n_failed: int, n_ignored: int) -> list[dict]:
    rows = [{"path": f"/data/run{i // 10}/f{i}.csv", "format": "generic_trace", "rows_loaded": 5,
             "rows_skipped": 0, "sha256": "ab" * 32} for i in range(n_loaded)]
    rows += [{"path": f"/data/bad{i}.csv", "format": None, "rows_loaded": 0, "rows_skipped": 0,
              "error": "bad header"} for i in range(n_failed)]
    rows += [{"path": f"/data/notes{i}.txt", "ignored": "not a trace"} for i in range(n_ignored)]
    return rows


def _count(text: str) -> int:
    return int(re.search(r"([\d,]+) files, grouped by folder", text).group(1).replace(",", ""))


def test_markdown_and_html_count_and_group_the_same_files():
    rows = _rows(MD_MAX_INPUTS + 5, 3, 2)
    md = _md_inputs(rows)
    html = provenance_html({"inputs": rows, "meta": {}})
    assert _count(md) == _count(html) == MD_MAX_INPUTS + 5 + 3   # loaded and failed, listed
    for text in (md, html):
        assert all(f"bad{i}.csv" in text for i in range(3))   # failed files listed one by one


def test_few_loaded_files_beside_failed_ones_are_listed_one_by_one_in_both():
    rows = _rows(MD_MAX_INPUTS, 4, 0)   # more rows than the limit, but not more loaded files
    md = _md_inputs(rows)
    html = provenance_html({"inputs": rows, "meta": {}})
    assert "grouped by folder" not in md and "grouped by folder" not in html
    assert "f0.csv" in md and "f0.csv" in html
