"""The escaping layers of round 2 (explorer/core/escape.py): terminal, TSV cell, XML bytes, bidi
isolation; and that the CLI's streams and the SVG writer apply them by construction."""
from __future__ import annotations

import io
import xml.dom.minidom

import pytest
from hypothesis import given, settings, strategies as st

from explorer.core import escape

pytestmark = pytest.mark.timeout(120)

ESC = "\x1b[2J\x1b]0;pwned\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\"


def test_terminal_shows_escape_sequences_never_acts_on_them():
    t = escape.terminal(f"name{ESC}\u009b31m")
    assert not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in t), repr(t)
    assert "\\x1b[2J" in t and "\\x9b" in t


def test_cli_streams_are_escaped(tmp_path, capsys):
    from explorer.__main__ import main
    f = tmp_path / f"t{ESC.replace('/', '')}.jsonl"
    f.write_text('{"request_id": "a", "ttft_ms": 1}\n')
    main(["inspect", str(f)])
    out = capsys.readouterr()
    for text in (out.out, out.err):
        assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]8;;http:evil" in out.out


def test_inspect_escapes_names_from_the_files(tmp_path, capsys):
    from explorer.__main__ import main
    f = tmp_path / "eval.csv"
    f.write_text(f"case_id,correct,category,cluster\nc1,0,a,evil{ESC}\nc2,1,a,ok\n",
                 encoding="utf-8")
    main(["inspect", str(f)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "evil\\x1b[2J" in out


@pytest.mark.parametrize("v,want", [("=1+1", "'=1+1"), ("+cmd|x", "'+cmd|x"), ("@SUM(A1)", "'@SUM(A1)"),
                                    ("-A1", "'-A1"), ("\t=x", "' =x"), ("-1.5", "-1.5"),
                                    ("1e3", "1e3"), ("a\tb\r\nc", "a b c"), ("plain", "plain")])
def test_cell(v, want):
    assert escape.cell(v) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.text(max_size=20), min_size=1, max_size=4), min_size=1, max_size=5))
def test_tsv_keeps_its_shape_and_runs_no_formula(rows):
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = escape.tsv(rows).split("\n")
    assert len(lines) == len(rows)
    for ln in lines:
        cells = ln.split("\t")
        assert len(cells) == width
        for c in cells:
            assert "\r" not in c
            if c.lstrip(" ").startswith(("=", "+", "@", "-")):
                float(c)  # only a number may start like a formula


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_bidi_isolated_closes_what_it_opens(s):
    t = escape.bidi_isolated(s)
    depth = []
    for ch in t:
        if ch in escape._BIDI_OPEN:
            depth.append(escape._BIDI_OPEN[ch])
        elif ch in ("\u202c", "\u2069"):
            assert depth and depth[-1] == ch, repr(t)
            depth.pop()
    assert not depth


def test_md_table_row_is_not_reversed_by_an_override():
    from explorer.core.mdtable import _cell
    c = _cell("cluster \u202eabc")
    assert c.endswith("\u202c")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_xml_bytes_makes_any_title_parseable(s):
    from xml.sax.saxutils import escape as xesc
    doc = f"<svg><title>{xesc(s)}</title></svg>".encode("utf-8", "surrogatepass")
    if any(0xd800 <= ord(c) <= 0xdfff for c in s) or any(c in s for c in "\ufffe\uffff"):
        return  # not encodable as XML text at all
    xml.dom.minidom.parseString(escape.xml_bytes(doc))


def test_svg_of_a_panel_with_control_characters_is_valid_xml(tmp_path, qapp):
    from PySide6.QtWidgets import QLabel
    from explorer.reporting.images import save_svg
    w = QLabel(f"cluster\x1b[31m\x00red{ESC}")
    w.resize(200, 40)
    p = save_svg(w, tmp_path / "x.svg", title=f"header\x1b\x00{ESC}")
    xml.dom.minidom.parse(str(p))


def test_terminal_stream_passes_lines_through():
    buf = io.StringIO()
    s = escape.TerminalStream(buf)
    s.write("a\tb\nc\x1bd\n")
    assert buf.getvalue() == "a\tb\nc\\x1bd\n"


def test_inspect_json_stays_valid_json_and_terminal_safe(tmp_path, capsys):
    import json
    from explorer.__main__ import main
    f = tmp_path / "eval.csv"
    name = "evil\x1b[2J\u009b31m\u202eabc\u2028x"
    f.write_text(f"case_id,correct,category,cluster\nc1,0,a,{name}\nc2,1,a,ok\n", encoding="utf-8")
    main(["inspect", "--json", str(f)])
    out = capsys.readouterr().out
    assert not any(ord(c) < 32 and c not in "\n" or 0x7f <= ord(c) <= 0x9f or c in "\u202e\u2028"
                   for c in out), repr(out)
    doc = json.loads(out)  # still JSON, the name exactly as in the file
    names = [c["name"] for f_ in doc["files"] for e in f_.get("evals", []) for c in e["clusters"]]
    assert name in names, names


def _balanced(t: str) -> bool:
    depth = []
    for ch in t:
        if ch in escape._BIDI_OPEN:
            depth.append(escape._BIDI_OPEN[ch])
        elif ch in ("\u202c", "\u2069"):
            if not depth or depth[-1] != ch:
                return False
            depth.pop()
    return not depth


RLO_NAME = "evil \u202eabc \u2067rli"  # an override and an isolate, neither closed


def test_bidi_controls_are_closed_in_every_output_kind(tmp_path, capsys):
    """One unterminated RIGHT-TO-LEFT OVERRIDE / RLI in a cluster name and an input path, in each
    output: report.md, report.html, the terminal (inspect), the TSV copy, a Qt tooltip. Each
    output's bidi controls are balanced (nothing the name opens leaks into what follows)."""
    from explorer.__main__ import main
    from explorer.core.report_md import render_markdown
    from explorer.reporting.html import build_html
    from tests.report_fixture import sample_doc
    doc = sample_doc()
    doc["cohort"]["cluster"] = RLO_NAME
    doc["inputs"][0]["path"] = f"/data/{RLO_NAME}.json"
    outputs = {"md": render_markdown(doc), "html": build_html(doc, {}),
               "tsv": escape.tsv([["cluster", "n"], [RLO_NAME, "3"]]),
               "tooltip": escape.qt_plain_tip(RLO_NAME)}
    f = tmp_path / "eval.csv"
    f.write_text(f"case_id,correct,category,cluster\nc1,0,a,{RLO_NAME}\nc2,1,a,ok\n",
                 encoding="utf-8")
    main(["inspect", str(f)])
    outputs["terminal"] = capsys.readouterr().out
    for kind, text in outputs.items():
        assert "\u202e" in text, kind  # the name is there ...
        assert _balanced(text), (kind, [ln for ln in text.splitlines() if "\u202e" in ln])
    for kind in ("md", "terminal", "tsv"):  # ... and closed on its own line
        for ln in outputs[kind].splitlines():
            assert _balanced(ln), (kind, ln)
