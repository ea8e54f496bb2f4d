"""Escaping helpers (explorer.core.escape): hostile text from input files shows as its own
characters in every output format. Markdown is checked by rendering it with a CommonMark + GFM
table renderer (markdown-it-py), not by looking for backslashes."""
from __future__ import annotations

import html

import pytest
from markdown_it import MarkdownIt

from explorer.core.escape import html_text, md, md_code, plain, qt_plain_tip, qt_rich
from explorer.core.report import render_markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "ok\n## injected heading",
    "ok\r\n\r\n# another",
    "[click](javascript:alert(1))",
    "![img](http://x/y.png)",
    "<javascript:alert(1)>",
    "NUL\x00byte and ESC\x1b[31m red",
    "*bold* _em_ `code` ~~strike~~",
    "a | b | c",
    "- list item",
    "1. ordered",
    "> quote",
    "# heading",
    "=====",
    "back\\slash\\",
    "line\u2028separator",
    "&amp; &lt;b&gt;",
]
RENDER = MarkdownIt("commonmark").enable("table")


def _visible(rendered_html: str) -> str:
    """The text a reader sees in rendered HTML (tags dropped, entities decoded)."""
    import re
    return html.unescape(re.sub(r"<[^>]+>", "", rendered_html))


def _expected(s: str) -> str:
    """What md(s) must show: the characters of s, control characters gone, line breaks as
    spaces (runs of whitespace around a break fold into one space)."""
    import re
    return re.sub(r"\s*[\r\n\u2028\u2029]+\s*", " ", s).translate(
        {c: None for c in list(range(0, 9)) + [11, 12] + list(range(14, 32)) + [127]})


@pytest.mark.parametrize("s", HOSTILE)
def test_md_renders_as_the_same_characters_and_no_markup(s):
    out = RENDER.render(md(s))
    assert out.startswith("<p>") and out.count("<p>") == 1, out  # one paragraph: no block
    inner = out[3:-5]
    assert "<" not in inner.replace("<br", ""), out  # no element at all (no a, em, code, h2)
    assert _visible(out).strip() == _expected(s).strip()


@pytest.mark.parametrize("s", HOSTILE)
def test_md_in_a_table_cell_stays_in_its_cell(s):
    doc = f"| a | b |\n|---|---|\n| {md(s)} | end |\n"
    out = RENDER.render(doc)
    assert out.count("<td>") == 2 and "<td>end</td>" in out, out
    assert "<script" not in out and "href" not in out and "<h" not in out.replace("<thead", "")


@pytest.mark.parametrize("s", HOSTILE + ["a`b", "``", "`lead", "trail`"])
def test_md_code_holds_the_text_literally(s):
    out = RENDER.render(md_code(s))
    assert out.count("<code>") == 1
    code = out[out.index("<code>") + 6:out.index("</code>")]
    assert html.unescape(code).strip() == _expected(s).strip()


@pytest.mark.parametrize("s", HOSTILE)
def test_html_and_qt_helpers_leave_no_tag(s):
    assert "<" not in html_text(s) and html.unescape(html_text(s)) == plain(s)
    lines = plain(s).replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n")
    for out in (qt_rich(s), qt_plain_tip(s)[4:-5]):
        assert "<" not in out.replace("<br>", "")
        assert html.unescape(out.replace("<br>", "\n")) == lines
    assert qt_rich("a\nb") == "a<br>b"
    assert html_text('"\'') == "&quot;&#x27;"


def test_plain_text_helpers():
    assert plain("a\x00b\x07c\td\ne") == "abc\td\ne"
    assert qt_plain_tip(None) is None and qt_plain_tip("") is None
    assert md("kv_cache_hit_rate") == "kv_cache_hit_rate"  # readable names stay readable
    assert md("-56.9%") == "-56.9%"


def test_report_md_is_safe_against_hostile_names_and_reasons():
    """A cluster name and a skip reason from an input file cannot add a heading, a link, a
    script or a table column to report.md."""
    name = "<script>x</script>\n## Fake [x](javascript:alert(1))\x00"
    doc = {"meta": {"generated_at": "now", "app_version": "1"},
           "cohort": {"cluster": name, "badcases": 3, "note": "see\n# here"},
           "clusters": [{"cluster": name, "badcases": 3, "share": 1.0, "bound": 1,
                         "binding_rate": 0.3, "categories": ["a|b"]}],
           "comparison": {"status": "error", "reason": "bad [y](javascript:z)\n## h"},
           "inputs": [{"path": "/x/<img src=x onerror=alert(1)>.csv", "format": "csv",
                       "rows_loaded": 1, "rows_skipped": 0, "sha256": "ab",
                       "error": "line 1:\n## boom"},
                      {"path": "/x/y", "ignored": "[z](javascript:q)"}]}
    text = render_markdown(doc)
    assert "\x00" not in text
    out = RENDER.render(text)
    assert "<script" not in out and "<img" not in out and "<a " not in out
    assert "href" not in out
    heads = [line for line in out.splitlines() if line.startswith("<h")]
    assert [h[:4] for h in heads] == ["<h1>"] + ["<h2>"] * (len(heads) - 1)
    assert len(heads) == 1 + 4  # the title and the four sections of `doc`, nothing injected
    assert "javascript:alert(1)" in _visible(out)  # the text is shown as it is
    assert "Fake" in heads[0] and "<script>" in _visible(heads[0])  # shown, not run
