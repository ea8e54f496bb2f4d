"""Issue 33 (what the first round left): the report's PDF prints every figure whole. The replay's
table showed its last column cut and the sweep's y title was clipped; the versions table was
printed twice (the panel's picture held the table's first rows above the chart, and the HTML
table below it printed every row). Checked on the pictures as they are taken (the widget at the
moment the bundle photographs it) and on the PDF's text and the HTML's structure."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

SHOTS: dict[str, dict] = {}


def _record(widget) -> None:
    """What a picture shows, measured independently of the layout code."""
    import pyqtgraph as pg
    from PySide6.QtGui import QFontMetricsF
    from PySide6.QtWidgets import QTableView
    name = type(widget).__name__
    tables = []
    for t in widget.findChildren(QTableView):
        if t.isVisible() and t.model() is not None and t.model().columnCount():
            hh = t.horizontalHeader()
            cols = sum(hh.sectionSize(c) for c in range(hh.count()) if not hh.isSectionHidden(c))
            # every column whole: the sections fit the viewport, and each cell fits its section
            cut = [c for c in range(hh.count())
                   if hh.sectionSize(c) < t.sizeHintForColumn(c) - 1]
            tables.append({"cols": cols, "room": t.viewport().width(), "cut": cut})
    titles = []
    for view in widget.findChildren(pg.GraphicsView):
        if not view.isVisible():
            continue
        for item in view.scene().items():
            if isinstance(item, pg.AxisItem) and item.orientation in ("left", "right") \
                    and item.isVisible() and item.labelText:
                text = item.label.toPlainText()
                need = QFontMetricsF(item.label.font()).horizontalAdvance(text)
                titles.append({"text": text, "need": need, "room": item.size().height()})
    rows = []
    if name == "ComparisonPanel":   # the cells in the order the picture shows them
        m = widget.view.model()
        rows = [[m.index(r, c).data() for c in range(m.columnCount())] for r in range(m.rowCount())]
    SHOTS[name] = {"tables": tables, "titles": titles, "rows": rows}


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory, qapp):
    from explorer import __main__ as cli
    from explorer.reporting import bundle
    out = tmp_path_factory.mktemp("demo_report")
    real = bundle.to_image

    def spy(widget, *a, **k):
        _record(widget)
        return real(widget, *a, **k)

    from explorer import translators
    from explorer.core import i18n
    before = i18n.language()
    bundle.to_image = spy
    try:
        rc = cli.main(["report", "--demo", "--out", str(out), "--format", "json,html,pdf,png",
                       "--lang", "en", "--no-whatif"])  # its results are cached by value, in
        # the language of the first run (a zh_CN report after this one in the same process)
    finally:
        bundle.to_image = real
        i18n.set_language(before)   # the command set the process's language: as it was
        translators.sync(qapp)
    assert rc == 0
    return out


def test_the_replay_picture_shows_its_table_and_its_titles_whole(demo_report):
    shot = SHOTS["ReplayPanel"]
    assert shot["tables"] and shot["titles"]
    for t in shot["tables"]:
        assert t["cols"] <= t["room"] and not t["cut"], t
    for t in shot["titles"]:
        assert t["need"] <= t["room"], t           # "hit rate (first queries)" whole


def test_the_versions_table_is_printed_once(demo_report):
    shot = SHOTS["VersionsPanel"]
    assert shot["tables"] == []
    doc = json.loads((demo_report / "report.json").read_text())
    rows = doc["versions"]["changes"] if isinstance(doc["versions"], dict) else doc["versions"]
    html = (demo_report / "report.html").read_text()
    section = re.search(r"<h2>Engine versions</h2>(.*?)<h2>", html, re.S).group(1)
    assert section.count("<table") == 1 and section.count("<img") == 1
    text = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(demo_report / "report.pdf"),
                           "-"], capture_output=True, text=True, check=True).stdout
    part = text.split("Engine versions", 1)[1].split("Engine versions at run level", 1)[0]
    from explorer.widgets.painters.versions import versions_rows
    cells = [c for c, _reg in versions_rows(doc["versions"])]
    assert {r["benchmark"] for r in rows} == {"demo-maths"}  # one benchmark: said once, above
    assert part.count("Benchmark: demo-maths") == 1
    lines = [ln for ln in part.splitlines() if any(
        re.match(rf"\s*{re.escape(c[1])}\s+{re.escape(c[2])}\s+{re.escape(c[3])}\s", ln) for c in cells)]
    assert len(lines) == len(rows)                  # every row, once


def _number(cell: str) -> float | None:
    m = re.search(r"[-+]?[\d,]*\.?\d+(?:e[-+]?\d+)?", cell.replace("\u2212", "-"))
    return None if m is None or cell.strip() in ("–", "") else float(m.group(0).replace(",", ""))


def test_the_dashboard_comparison_shows_report_json_rows_in_numeric_order(demo_report):
    """dashboard.png is composed of the panels' pictures (dashboard.py); its comparison is the
    ComparisonPanel as photographed: its rows are report.json's comparison rows, sorted by the
    adjusted p as numbers (pandas, missing last), and each mean / diff / p equals the JSON's
    within the rounding shown."""
    import pandas as pd
    from explorer.core.names import label
    assert (demo_report / "dashboard.png").is_file()
    shown = SHOTS["ComparisonPanel"]["rows"]
    doc = json.loads((demo_report / "report.json").read_text())
    want = pd.DataFrame(doc["comparison"])
    want = want.assign(p=pd.to_numeric(want["p_adjusted"])).sort_values(
        "p", kind="stable", na_position="last")
    names = [c[0].lstrip("★ ").split(" (share)")[0] for c in shown]
    assert len(shown) == len(want)
    assert names == [label(m) for m in want["metric"]]
    ps = [r["p"] for _i, r in want.iterrows()]
    assert all(a <= b for a, b in zip([p for p in ps if p == p], [p for p in ps if p == p][1:]))
    for cells, (_i, r) in zip(shown, want.iterrows()):
        if r.get("kind") == "categorical":
            continue
        for col, key in ((1, "bad_mean"), (2, "control_mean"), (3, "diff_pct")):
            v, x = _number(cells[col]), r[key]
            if x is None or x != x:
                assert v is None, (cells, key)
                continue
            m = re.search(r"\.(\d+)", cells[col])
            half = 0.5 * 10 ** -(len(m.group(1)) if m else 0)   # half the last digit shown
            assert v is not None and abs(v - x) <= half + 1e-9, (cells[0], key, v, x)
        p = r["p_adjusted"]
        if p is not None and p == p:
            assert (cells[5].startswith("<") and p < 0.001) or abs(_number(cells[5]) - p) <= 0.0051, (cells, p)
