"""Conclusion: which engine module the evidence points to, the narrative citing the numbers,
and prioritised suggestions with the engine flags to try."""
from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout

from explorer.core import bus
from explorer.core.names import plural
from explorer.widgets.base import Panel
from explorer.widgets.painters.conclusion import conclusion_html, conclusion_text
from explorer.core.i18n import _


class ConclusionPanel(Panel):
    topic = bus.SECTION["conclusion"]

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        self.tree_sentence = None
        self.selection: dict | None = None
        self.meta: dict = {}
        self.versions: dict | None = None
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.text)

    def on_results(self, update: bus.Update) -> None:
        if bus.META in update:
            self.meta = update[bus.META] or {}
        if (versions := bus.SECTION["versions"]) in update:
            v = update.view(versions)
            self.versions = v if isinstance(v, dict) else None
        if (tree := bus.SECTION["tree"]) in update:
            t = update.view(tree)
            self.tree_sentence = t.get("sentence") if isinstance(t, dict) else None
        super().on_results(update)

    def show_selection(self, selection: dict | None) -> None:
        self.selection = selection
        if self.value is not None:
            self.show_result(self.value)

    def _selection_title(self) -> str:
        sel = self.selection or {}
        return _("For {selection} ({cases}, {badcases})").format(
                selection=self.selection_name(), cases=plural(sel.get('n', 0), "case"),
                badcases=plural(sel.get('n_bad', 0), "badcase"))

    def trace_only(self) -> bool:
        """A session of traces without eval cases: no badcase to explain."""
        return bool(self.meta) and not self.meta.get("cases") and bool(self.meta.get("runs"))

    def paint(self, conclusion) -> str | None:
        if self.trace_only():   # what the traces answer first, no sentence on absent badcases
            from explorer.core.analysis.found import trace_findings
            found = trace_findings(self.meta, self.versions)
            ev = [e.get("text") for e in (conclusion or {}).get("evidence") or []
                  if isinstance(conclusion, dict) and e.get("text")]
            body = "<p>" + " ".join(html.escape(t) for t in found) + "</p>"
            if ev:
                body += "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in ev) + "</ul>"
            self.text.setHtml(body)
            return None
        body = conclusion_html(conclusion, self.tree_sentence)
        sel = self.selection
        if sel is not None:  # the selection's own reading first, the cohort's below it
            own = conclusion_html(sel["conclusion"]) if sel.get("conclusion") else \
                "<p>" + html.escape(_("No conclusion for the selection: {reason}").format(
                        reason=str(sel.get("vs_control_reason") or ""))) + "</p>"
            whole = _("For the whole cohort")
            body = (f"<h3>{html.escape(self._selection_title())}</h3>{own}<hr>"
                    f"<h3>{html.escape(whole)}</h3>{body}")
        self.text.setHtml(body)
        return None

    def copy_text(self) -> str:
        if not isinstance(self.value, dict):
            return super().copy_text()
        text = conclusion_text(self.value)
        sel = self.selection
        if sel is not None and sel.get("conclusion"):
            whole = _("For the whole cohort")
            text = (f"{self._selection_title()}\n{conclusion_text(sel['conclusion'])}\n\n"
                    f"{whole}\n{text}")
        return text
