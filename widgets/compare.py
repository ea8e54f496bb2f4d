"""Compare: runs A/B like with like (the report's `compare` section, analysis.runcompare). By
default the pairs the analysis chooses (the configurations of one workload that differ in one
thing); pick A and B, or A against every other run, to compare those. Tables from the
painter (painters/compare.compare_html), the sweeps drawn below as curves and a Pareto view."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
)

from explorer.core import bus
from explorer.core.escape import qt_plain_tip
from explorer.widgets.base import Panel
from explorer.widgets.painters.compare import compare_html, sweep_layout
from explorer.core.i18n import _

EVERY = "\0every"
PICKER_MAX = 300  # px: a long run name elides in its picker (the window stays within the screen)  # B: every other run (A is the baseline)


class ComparePanel(Panel):
    topic = bus.SECTION["compare"]
    chart = False  # Ctrl+C copies the tables as text; "Copy as image" copies the picture

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.a, self.b = QComboBox(), QComboBox()
        for box in (self.a, self.b):  # a run's name whole (runs are added after the first show,
            # which the default policy sized for), up to a cap; the whole id on hover
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            box.setMaximumWidth(PICKER_MAX)
        self.go = QPushButton(_("Compare"))
        self.go.clicked.connect(self.compare)
        self.flipped = QPushButton(_("Select flipped items"))
        self.flipped.setToolTip(_("Select, in the Cases table and every view, the items "
                                  "one side answered right and the other wrong (each "
                                  "on the side that lost it), of the first pair that "
                                  "answered the same items"))
        self.flipped.clicked.connect(self.select_flipped)
        for w in (QLabel(_("A")), self.a, QLabel(_("B")), self.b, self.go,
                  self.flipped):
            self.top.addWidget(w)
        self.top.addStretch(1)
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.text)
        self.curves = None
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.split, 1)

    def paint(self, doc) -> str | None:
        if not isinstance(doc, dict) or not doc.get("pairs"):
            return _("Nothing to compare: load two runs of one workload, or two evals "
                     "that answered the same items.")
        self._choices(doc.get("runs") or [])
        self.flipped.setEnabled(bool(self.flipped_cases(doc)))
        self.text.setHtml(compare_html(doc))
        if self.curves is not None:
            self.curves.setParent(None)
            self.curves.deleteLater()
            self.curves = None
        if doc.get("sweeps"):
            self.curves = sweep_layout(doc["sweeps"])
            self.split.addWidget(self.curves)
        return None

    def _choices(self, runs: list[dict]) -> None:
        keep = (self.a.currentData(), self.b.currentData())
        self.a.blockSignals(True)
        self.b.blockSignals(True)
        self.a.clear()
        self.b.clear()
        self.b.addItem(_("every other run"), EVERY)
        for r in runs:
            name = r.get("label") or r["run_id"]
            if r.get("engine_version") and str(r["engine_version"]) not in name:
                name += f" ({r['engine_version']})"
            for box in (self.a, self.b):
                box.addItem(name, r["run_id"])
                box.setItemData(box.count() - 1, qt_plain_tip(r["run_id"]),  # a name, never markup
                                Qt.ItemDataRole.ToolTipRole)
        for box, data in zip((self.a, self.b), keep):
            i = box.findData(data)
            if i >= 0:
                box.setCurrentIndex(i)
            box.setToolTip(box.currentText())
        self.a.blockSignals(False)
        self.b.blockSignals(False)

    @staticmethod
    def flipped_cases(doc) -> list[str]:
        """The flipped items' case ids of the first pair with items."""
        for p in (doc or {}).get("pairs") or []:
            if p.get("items") and p["items"].get("flipped_cases"):
                return list(p["items"]["flipped_cases"])
        return []

    def select_flipped(self) -> None:
        ids = self.flipped_cases(self.value if isinstance(self.value, dict) else None)
        if ids:
            self.session.select_cases(ids, view=_("Compare"))

    def copy_text(self) -> str:
        """Edit > Copy: the comparison's text (its tables as the view shows them)."""
        return self.message() or self.text.toPlainText()

    def params(self) -> dict:
        """The comparison the pickers ask for: A against B, or A as the baseline of all."""
        a, b = self.a.currentData(), self.b.currentData()
        return {"baseline": a} if b == EVERY or b is None or b == a else {"runs": [a, b]}

    def compare(self) -> None:
        """Compare what the pickers say, on the session's worker; paints when done."""
        from explorer.core.viewstate.store_jobs import CompareQuery
        query = CompareQuery(self.params())
        self.go.setEnabled(False)

        def done(doc):
            self.go.setEnabled(True)
            self.show_result(doc)

        def failed(err):
            self.go.setEnabled(True)
            self.show_message(str(err) or type(err).__name__, error=True)
        self.session.store_job("compare", query, done, failed, label=_("Comparing runs"))
