"""The section registry (explorer/core/sections.py SECTIONS) is the one list of the report's
sections (issue 32, Deliver 1); every front end iterates the registry or one of the orders
declared beside it (DOCUMENT: the reading order of report.md, HTML and PDF; WINDOW: the window's
panels) and looks its own renderer up by key. So a section added in one place only fails here:

- the report contract's top-level `required` is the registry's keys in its order, then meta (but
  sla_diagnosis, which analysis/sla_report.lift_into_sla moves into `sla` when both were
  computed: DESIGN's `sla.windows` / `sla.diagnosis`), and every report.json the tests write is
  checked against it (tests/conftest.py);
- DOCUMENT holds every section and titled view once; report.md has a writer for each but those
  it says it leaves out (report_md.NOT_WRITTEN), the HTML a spec for each but those it shows
  elsewhere (html.ELSEWHERE);
- WINDOW's panels are the registry's panel names (every section with a panel is shown by one)
  and widgets/panels.py has a class for each; the report's panel pictures (bundle.PANEL_SIZES)
  are window panels, and every picture the HTML prints is one of them."""
import json

import pytest
from tests.report_schema import SCHEMA

from explorer.core import report_md, sections


def test_schema_requires_every_section_of_the_registry_in_its_order():
    required = json.loads(SCHEMA.read_text(encoding="utf-8"))["required"]
    lifted = {"sla_diagnosis"}  # lift_into_sla: top-level only when sla itself is missing
    assert required == [*(k for k in sections.keys() if k not in lifted), "meta"]
    assert len(required) == len(sections.SECTIONS) >= 18


def test_sla_diagnosis_is_the_one_key_lifted_out_of_the_top_level():
    from explorer.core.analysis.sla_report import lift_into_sla
    doc = {k: {"status": "no_data", "reason": "x"} for k in sections.keys()}
    doc["sla"] = {"thresholds": {}, "attainment": 1.0, "by": {}}
    doc["sla_diagnosis"] = {"windows": [], "diagnosis": {}}
    lift_into_sla(doc)
    assert "sla_diagnosis" not in doc and "windows" in doc["sla"]


def _titled_views() -> set[str]:
    return {k for k, (title, _panel) in sections.VIEWS.items() if title}


def test_the_document_order_holds_every_section_and_titled_view_once():
    doc = sections.DOCUMENT
    assert len(doc) == len(set(doc))
    assert set(doc) == set(sections.keys()) | _titled_views()
    assert set(sections.TITLES) == set(doc)  # each has its heading


def test_markdown_writes_every_section_of_the_document_but_those_it_says_it_leaves_out():
    assert set(report_md.WRITERS).isdisjoint(report_md.NOT_WRITTEN)
    assert set(report_md.WRITERS) | set(report_md.NOT_WRITTEN) == set(sections.DOCUMENT)
    assert [k for k, _fn in report_md.SECTIONS_MD] == [
        k for k in sections.DOCUMENT if k in report_md.WRITERS]


def test_markdown_headings_follow_the_document_order():
    """render_markdown over a document of "no data" sections: one heading per written
    section, in DOCUMENT's order, each the registry's title."""
    doc = {k: {"status": "no_data", "reason": "x"} for k in sections.keys()} | {"meta": {}}
    md = report_md.render_markdown(doc)
    heads = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    assert heads == [sections.TITLES[k] for k in sections.DOCUMENT if k in report_md.WRITERS]


def test_html_shows_every_section_of_the_document_or_says_where_it_is():
    pytest.importorskip("PySide6")
    from explorer.reporting import html
    assert set(html.SHOWN).isdisjoint(html.ELSEWHERE)
    assert set(html.SHOWN) | set(html.ELSEWHERE) == set(sections.DOCUMENT)
    assert [k for k, *_ in html.SECTIONS] == [k for k in sections.DOCUMENT if k in html.SHOWN]


def test_the_window_shows_every_section_that_names_a_panel_and_has_a_class_for_each():
    names = [n for n, _area in sections.WINDOW]
    assert len(names) == len(set(names))
    assert {area for _n, area in sections.WINDOW} <= {"top", "left", "centre", "right", "bottom"}
    shown = {sections.SHOWS.get(n, n) for n in names}
    assert shown <= set(sections.BY_KEY) | set(sections.VIEWS)
    # every panel title a section or view names is a window panel's
    titles = {s.panel for s in sections.SECTIONS if s.panel} | {
        p for _t, p in sections.VIEWS.values()}
    assert {sections.panel_title(k) for k in shown} == titles
    pytest.importorskip("PySide6")
    from explorer.widgets import panels
    assert set(panels.CLASSES) == set(names)
    assert [n for n, _cls, _area in panels.PANELS] == names


def test_the_reports_pictures_are_window_panels():
    pytest.importorskip("PySide6")
    from explorer.reporting import bundle, html
    names = {n for n, _area in sections.WINDOW}
    assert set(bundle.PANEL_SIZES) <= names
    assert {img for img, _table in html.SHOWN.values() if img} <= set(bundle.PANEL_SIZES)
    assert set(bundle.DRAWN_APART) <= set(bundle.PANEL_SIZES)
    assert set(bundle.SECTION_KEYS) <= set(sections.BY_KEY)
