"""One escaping helper per output format, for text that comes from the user's files (cluster
names, reasons, paths, prompts): whatever it holds, it shows as the same characters and never
as markup.

    md(s)          Markdown inline text (report.md): HTML tags, links, emphasis, headings,
                   table pipes and line breaks neutralised
    md_code(s)     a Markdown code span (`...`) holding s literally
    html_text(s)   HTML element or attribute text (report.html, the PDF's HTML)
    qt_rich(s)     Qt rich text (QLabel / QTextBrowser / tooltips that are meant as rich text):
                   as html_text, line breaks kept as <br>
    qt_plain_tip(s) a tooltip that shows s literally (Qt renders a tooltip as rich text when it
                   merely starts with a tag, and has no plain-text switch for tooltips)
    plain(s)       plain text (log lines, CLI output, plain-text Qt widgets): NUL and other
                   control characters removed (tab and line breaks kept)

Qt-free (the core renders Markdown; widgets import this module too).
"""
from __future__ import annotations

import html
import re
from typing import Any

# C0 controls except tab / LF / CR, DEL, C1 controls; line breaks include the Unicode line /
# paragraph separators (Qt breaks lines at them)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BREAKS = re.compile(r"\s*[\r\n\u2028\u2029]+\s*")
# Markdown punctuation that can start markup anywhere in a line ( ( ) and ! only act after an
# escaped [ ). "_" only where it could open
# or close emphasis (not between two letters or digits: kv_cache_hit_rate stays readable).
_MD_SPECIAL = re.compile(r"[\\`*\[\]|~<>&]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# what starts a block when it begins a line: heading, quote, list item, setext / rule
_MD_LINE_START = re.compile(r"^(#|=|[-+*](?=\s|$)|\d+(?=[.)](?:\s|$)))")


def _text(s: Any) -> str:
    return "" if s is None else str(s)


def plain(s: Any) -> str:
    """s as plain text without control characters (NUL, escape sequences, ...)."""
    return _CONTROL.sub("", _text(s))


def md(s: Any) -> str:
    """s as one line of Markdown that renders as exactly its characters: &, <, > and the
    Markdown punctuation backslash-escaped (no tag, no autolink, no entity, no link, no
    emphasis, no code span, no table cell break), line breaks as spaces (no new block can
    start), a leading #, -, +, =, "1." escaped (no heading or list where the text begins a
    line), control characters (NUL, ...) removed."""
    t = _BREAKS.sub(" ", plain(s))
    t = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), t)
    return _MD_LINE_START.sub(lambda m: (m.group(0) + "\\") if m.group(0)[0].isdigit()
                              else "\\" + m.group(0), t, count=1)


def md_code(s: Any) -> str:
    """s as a Markdown code span: fenced by more backticks than any run inside it, padded
    when it starts or ends with a backtick; line breaks as spaces, control characters
    removed. Inside a code span nothing is markup (HTML included)."""
    t = _BREAKS.sub(" ", plain(s))
    runs = [len(r) for r in re.findall(r"`+", t)]
    fence = "`" * (max(runs) + 1 if runs else 1)
    pad = " " if t.startswith("`") or t.endswith("`") or not t.strip() else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def html_text(s: Any) -> str:
    """s escaped for HTML text and attribute values (&, <, >, both quotes), control
    characters removed."""
    return html.escape(plain(s), quote=True)


def qt_rich(s: Any) -> str:
    """s as Qt rich text showing exactly its characters; line breaks become <br>."""
    return re.sub(r"\r\n|[\r\n\u2028\u2029]", "<br>", html_text(s))


def qt_plain_tip(s: Any) -> str | None:
    """A tooltip showing s literally (None for no tooltip): Qt guesses rich text for any
    tooltip that starts with a tag (Qt::mightBeRichText), so the text is escaped and marked
    as rich text explicitly."""
    if s is None or s == "":
        return None
    return f"<qt>{qt_rich(s)}</qt>"
