"""Header strip: the cohort's figures in boxes (cluster badcases + share, binding rate, control,
strongest link level, current selection, SIMULATED for demo data)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout

from explorer.core import bus
from explorer.core.escape import qt_plain_tip
from explorer.widgets.base import Panel
from explorer.widgets.elide import ElidedLabel
from explorer.widgets.painters.header import header_items, summary_line
from explorer.core.i18n import _


class HeaderPanel(Panel):
    topic = bus.SECTION["cohort"]

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.meta: dict = {}
        self._row = QHBoxLayout(self.body)
        self._row.setContentsMargins(6, 4, 6, 4)
        self._row.setSpacing(8)
        self.items: list[tuple[str, str, str]] = []
        self.setFixedHeight(64)
        self.show_message(_("No data loaded. Drop eval results and inference traces "
                            "(files or folders) anywhere on this window."))
        session.selectionChanged.connect(self._repaint)
        session.selectedCasesChanged.connect(self._repaint)

    def on_results(self, update: bus.Update) -> None:
        if bus.META in update:
            self.meta = update[bus.META] or {}
            if isinstance(self.value, dict):
                self._repaint()
        super().on_results(update)

    def _repaint(self, *_):
        if isinstance(self.value, dict):
            self.show_result(self.value)

    def paint(self, cohort: dict) -> str | None:
        s = self.session
        sel = None
        if s.selection is not None:
            sel = (s.selection_label, None if s.selected_cases is None else len(s.selected_cases),
                   s.selected_requests)
        self.items = header_items(cohort, self.meta, sel)
        while self._row.count():
            w = self._row.takeAt(0).widget()
            if w is not None:
                w.hide()          # gone at once, not when the event loop deletes it
                w.deleteLater()
        for title, value, tip in self.items:
            box = QFrame()
            box.setObjectName("headerBox")
            box.setProperty("kind", {"Data": "simulated", "Selected": "selected"}.get(title, ""))
            box.setToolTip(qt_plain_tip(tip))
            v = QVBoxLayout(box)
            v.setContentsMargins(8, 2, 8, 2)
            v.setSpacing(0)
            t = QLabel(title)  # the painter's title, already in the current language
            t.setObjectName("headerTitle")
            # cluster names come from input files, a selection names its condition: elided to
            # the window's width, whole on hover (never wider than the screen)
            val = ElidedLabel(value, least=160, tip=tip,
                              mode=Qt.TextElideMode.ElideMiddle if title == self.items[0][0]
                              else Qt.TextElideMode.ElideRight)
            val.setObjectName("headerValue")
            v.addWidget(t)
            v.addWidget(val)
            self._row.addWidget(box)
        self._row.addStretch(1)
        return None

    def copy_text(self) -> str:
        return summary_line(self.items) if self.items else super().copy_text()
