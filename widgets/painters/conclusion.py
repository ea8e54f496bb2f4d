"""Written conclusion (report JSON `conclusion`: modules, narrative, suggestions [{priority,
text, flags}], evidence) as HTML for a QTextBrowser or a report."""
from __future__ import annotations

from explorer.core.escape import html_text
from explorer.widgets import palette
from explorer.core.analysis.conclusion import module_name
from explorer.core.i18n import _


def conclusion_html(conclusion: dict | None, tree_sentence: str | None = None) -> str:
    """The narrative, the modules the evidence points to, and the prioritised suggestions with
    the engine flags to try. All input text is escaped."""
    c = conclusion or {}
    esc = html_text
    parts = []
    mods = c.get("modules") or []
    if mods:
        chips = " ".join(f"<span style='background:{palette.BAD};color:white;padding:2px 6px'>"
                         f"&nbsp;{esc(module_name(str(m)))}&nbsp;</span>" for m in mods)
        points = _("Points to:")
        parts.append(f"<p><b>{esc(points)}</b> {chips}</p>")
    if c.get("narrative"):
        parts.append(f"<p>{esc(str(c['narrative']))}</p>")
    if tree_sentence:
        parts.append(f"<p style='color:{palette.MUTED}'>{esc(tree_sentence)}</p>")
    sugg = sorted(c.get("suggestions") or [], key=lambda s: s.get("priority") or 99)
    if sugg:
        items = []
        for s in sugg:
            flags = s.get("flags") or []
            fl = "".join(f"<br><code>{esc(str(f))}</code>" for f in flags)
            items.append(f"<li><b>P{esc(str(s.get('priority', '?')))}</b> {esc(str(s.get('text', '')))}{fl}</li>")
        heading = _("Suggestions")
        parts.append(f"<p><b>{esc(heading)}</b></p><ol style='margin-left:-20px'>" + "".join(items) + "</ol>")
    if not parts:
        parts.append(f"<p style='color:{palette.MUTED}'>" + esc(
            _("No conclusion: the evidence rules fired on nothing in this cohort.")) + "</p>")
    return "".join(parts)


def conclusion_text(conclusion: dict | None) -> str:
    """Plain text (clipboard)."""
    c = conclusion or {}
    lines = []
    if c.get("modules"):
        lines.append(_("Points to: ") + ", ".join(module_name(str(m)) for m in c["modules"]))
    if c.get("narrative"):
        lines.append(str(c["narrative"]))
    for s in sorted(c.get("suggestions") or [], key=lambda s: s.get("priority") or 99):
        lines.append(f"P{s.get('priority')}: {s.get('text')}"
                     + (f" [{' '.join(map(str, s.get('flags') or []))}]" if s.get("flags") else ""))
    return "\n".join(lines)
