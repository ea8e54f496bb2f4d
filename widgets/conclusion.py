"""Conclusion: which engine module the evidence points to, the narrative citing the numbers,
and prioritised suggestions with the engine flags to try."""
from __future__ import annotations

from PySide6.QtWidgets import QTextBrowser, QVBoxLayout

from widgets.base import Panel
from widgets.painters.conclusion import conclusion_html, conclusion_text


class ConclusionPanel(Panel):
    key = "conclusion"
    title = "Conclusion"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        self.tree_sentence = None
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.text)

    def on_results(self, update: dict) -> None:
        if "tree" in update:
            t = update["tree"]
            self.tree_sentence = t.get("sentence") if isinstance(t, dict) else None
        super().on_results(update)

    def paint(self, conclusion) -> str | None:
        self.text.setHtml(conclusion_html(conclusion, self.tree_sentence))
        return None

    def copy_text(self) -> str:
        return conclusion_text(self.value) if isinstance(self.value, dict) else super().copy_text()
