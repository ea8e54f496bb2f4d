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
    xml_bytes(b)   UTF-8 XML / SVG as written by a library: the control characters XML 1.0
                   forbids (even escaped) removed
    terminal(s)    a line for the terminal: control characters (ESC sequences: clear screen,
                   window title, OSC 8 links) shown as visible escapes, bidi controls isolated
    tsv(rows)      rows of cells joined as TSV (each through cell())
    cell(s)        a TSV / CSV cell for a spreadsheet: formula prefixes (= + - @ tab CR)
                   neutralised with a leading ' (OWASP "CSV injection"), tabs and line breaks
                   as spaces
    bidi_isolated(s) text whose bidi controls (RLO, LRE, RLI, ...) are closed at its end, so
                   an unterminated RIGHT-TO-LEFT OVERRIDE cannot reverse what follows
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


_XML_BAD = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# explicit bidi embeddings / overrides (closed by PDF U+202C) and isolates (closed by PDI U+2069)
_BIDI_OPEN = {"\u202a": "\u202c", "\u202b": "\u202c", "\u202d": "\u202c", "\u202e": "\u202c",
              "\u2066": "\u2069", "\u2067": "\u2069", "\u2068": "\u2069"}
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def xml_bytes(b: bytes) -> bytes:
    """UTF-8 XML with the C0 control characters XML 1.0 forbids removed (their bytes never
    occur inside a UTF-8 multi-byte character, so removing them bytewise is safe)."""
    return _XML_BAD.sub(b"", b)


def bidi_isolated(s: Any) -> str:
    """s with every bidi embedding, override or isolate it opens closed at its end (PDF /
    PDI in the right order; stray closers dropped), so its direction cannot leak into the
    text that follows (a table row, a terminal line)."""
    t = _text(s)
    if not _BIDI.search(t):
        return t
    out, stack = [], []
    for ch in t:
        if ch in _BIDI_OPEN:
            stack.append(_BIDI_OPEN[ch])
        elif ch in ("\u202c", "\u2069"):
            if ch not in stack:
                continue  # a closer with nothing open would close the caller's context
            while stack:
                c = stack.pop()
                if c == ch:
                    break
                out.append(c)
        out.append(ch)
    return "".join(out) + "".join(reversed(stack))


def terminal(s: Any) -> str:
    """s for a terminal line: every control character (ESC, CSI / OSC sequences, BEL, NUL,
    DEL, C1; tabs and line breaks too) shown as its visible \\xNN escape, never acted on; bidi
    controls isolated."""
    t = bidi_isolated(s)
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: "\\x%02x" % ord(m.group(0)), t)


def terminal_lines(s: Any) -> str:
    """Several lines for a terminal: as terminal() but line breaks and tabs kept (the text
    is ours; values in it were already passed through terminal() one by one)."""
    t = bidi_isolated(s)
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]",
                  lambda m: "\\x%02x" % ord(m.group(0)), t)


class TerminalStream:
    """A text stream (stdout / stderr) whose writes pass through terminal_lines: whatever a
    message interpolates, no escape sequence reaches the terminal (the command line's one
    escaping layer, installed by explorer.__main__)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, s: str) -> int:
        self._stream.write(terminal_lines(s))
        return len(s)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def cell(s: Any) -> str:
    """s as one spreadsheet cell of a TSV / CSV copy or export: tabs and line breaks as
    spaces (the row stays one row), control characters removed, and a value starting with
    = + - @ (or tab / CR) prefixed with ' so no spreadsheet runs it as a formula (OWASP, CSV
    injection). A number (-1.5) is a number, not a formula: it is kept as it is."""
    t = _BREAKS.sub(" ", _text(s).replace("\t", " "))
    t = bidi_isolated(plain(t))
    if t.lstrip(" ").startswith(_FORMULA_START) and not _is_number(t):
        return "'" + t
    return t


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_terminal(text: str) -> str:
    """JSON text (json.dumps, ensure_ascii=False) for a terminal: the characters a terminal
    acts on that JSON leaves raw (DEL, C1 controls such as CSI, bidi controls, line / paragraph
    separators) written as \\uXXXX escapes: the same JSON value, nothing acted on."""
    return _JSON_UNSAFE.sub(lambda m: "\\u%04x" % ord(m.group(0)), text)


def tsv(rows) -> str:
    """Rows (iterables of values) as TSV for the clipboard or a file, every value through
    cell(): one row per line whatever a name holds, no formula run on paste."""
    return "\n".join("\t".join(cell(v) for v in r) for r in rows)


def _is_number(t: str) -> bool:
    try:
        float(t)
    except ValueError:
        return False
    return t.strip().lower() not in ("-inf", "+inf", "-nan", "+nan", "-infinity", "+infinity")


def plain(s: Any) -> str:
    """s as plain text without control characters (NUL, escape sequences, ...)."""
    return _CONTROL.sub("", _text(s))


def md(s: Any) -> str:
    """s as one line of Markdown that renders as exactly its characters: &, <, > and the
    Markdown punctuation backslash-escaped (no tag, no autolink, no entity, no link, no
    emphasis, no code span, no table cell break), line breaks as spaces (no new block can
    start), a leading #, -, +, =, "1." escaped (no heading or list where the text begins a
    line), control characters (NUL, ...) removed."""
    t = _BREAKS.sub(" ", bidi_isolated(plain(s)))
    t = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), t)
    return _MD_LINE_START.sub(lambda m: (m.group(0) + "\\") if m.group(0)[0].isdigit()
                              else "\\" + m.group(0), t, count=1)


def md_code(s: Any) -> str:
    """s as a Markdown code span: fenced by more backticks than any run inside it, padded
    when it starts or ends with a backtick; line breaks as spaces, control characters
    removed. Inside a code span nothing is markup (HTML included)."""
    t = _BREAKS.sub(" ", bidi_isolated(plain(s)))
    runs = [len(r) for r in re.findall(r"`+", t)]
    fence = "`" * (max(runs) + 1 if runs else 1)
    pad = " " if t.startswith("`") or t.endswith("`") or not t.strip() else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def html_text(s: Any) -> str:
    """s escaped for HTML text and attribute values (&, <, >, both quotes), control
    characters removed."""
    return html.escape(bidi_isolated(plain(s)), quote=True)


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
