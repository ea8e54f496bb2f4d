"""SLA attainment: the thresholds, the share of requests meeting them and goodput, and the
attainment per engine version / run / category / tenant."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QVBoxLayout

from explorer.core import bus
from explorer.core.analysis.sla import DEFAULT_THRESHOLDS
from explorer.core.names import plural
from explorer.widgets.base import Panel, SelectionLine
from explorer.widgets.painters.common import label, share, unit
from explorer.widgets.painters.sla import bars_that_fit, paint_sla, summary
from explorer.widgets.painters.sla_windows import paint_sla_windows
from explorer.core.i18n import _


class SlaPanel(SelectionLine, Panel):
    topic = bus.SECTION["sla"]
    chart = True

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.thresholds: dict[str, QDoubleSpinBox] = {}  # editable SLA bounds (Enter applies)
        for metric, hi in (("ttft_ms", 600000.0), ("tpot_ms", 60000.0)):
            box = QDoubleSpinBox()
            box.setRange(0.0, hi)
            box.setDecimals(1)
            box.setSuffix(" " + unit(metric))
            box.setKeyboardTracking(False)
            # the bounds in force before any result (a session whose requests cannot be judged
            # showed "TTFT <= 0.0 ms"): the session's own, else the analysis' defaults
            given = ((getattr(session, "params", None) or {}).get("sla") or {}).get("thresholds") or {}
            box.setValue(float(given.get(metric, DEFAULT_THRESHOLDS.get(metric, 0.0))))
            box.setToolTip(_("SLA bound on {metric}: a request meets the SLA when it did not error and "
                             "every bound holds").format(metric=label(metric, False)))
            box.valueChanged.connect(self._edited)
            self.top.addWidget(QLabel(label(metric, False) + " ≤"))
            self.top.addWidget(box)
            self.thresholds[metric] = box
        self.top.addStretch(1)
        self._selection_line()  # the selection's own attainment, beside the cohort's
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        # attainment over time (section sla_diagnosis); a shaded violation period is clickable
        self.time_widget = pg.PlotWidget(background="w")
        self.time_plot = self.time_widget.getPlotItem()
        self.time_plot.scene().sigMouseClicked.connect(self._clicked)
        self.diagnosis: dict | None = None
        self.regions: list = []
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.summary)
        lay.addWidget(self.sel_label)
        lay.addWidget(self.time_widget, 3)
        lay.addWidget(self.plot_widget, 2)
        self._bars = 0  # how many bars the last paint drew room for (bars_that_fit)
        self.plot_widget.installEventFilter(self)

    def _edited(self, _v=None) -> None:
        """New bounds from the boxes: the SLA (and the what-if's SLA met) is computed again."""
        want = {m: float(b.value()) for m, b in self.thresholds.items()}
        have = ((self.value or {}).get("thresholds") if isinstance(self.value, dict) else None) or {}
        extra = {m: v for m, v in have.items() if m not in want}  # bounds set elsewhere (--sla)
        if {m: float(v) for m, v in have.items() if m in want} != want:
            self.session.set_params("sla", thresholds={**extra, **want})

    def on_results(self, update: bus.Update) -> None:
        if (diagnosis := bus.SECTION["sla_diagnosis"]) in update:
            d = update.view(diagnosis)
            self.diagnosis = d if isinstance(d, dict) and "windows" in d else None
            self._paint_time()
        super().on_results(update)

    def _paint_time(self) -> None:
        msg, self.regions = paint_sla_windows(self.time_plot, self.diagnosis)
        self.time_widget.setVisible(msg is None)

    def _clicked(self, ev) -> None:
        """A click inside a shaded violation period selects its requests in every view."""
        pos = self.time_plot.vb.mapSceneToView(ev.scenePos())
        for region, period in self.regions:
            lo, hi = region.getRegion()
            if lo <= pos.x() <= hi:
                self.select_period(period)
                return

    def select_period(self, period: dict) -> None:
        """Select the requests of one violation period: its run, arrivals in [start, end)."""
        from explorer.core.selection import And, InSet, Range
        pred = And(InSet("run_id", (str(period["run_id"]),)),
                   Range("arrival_s", float(period["start_s"]), float(period["end_s"])))
        text = _("SLA: violation period of {run} ({windows} windows)").format(
                run=str(period["run_id"]), windows=str(period.get("windows")))
        self.session.set_selection(pred, text, requests=True,
                                   source=("sla_period", period["run_id"], period["start_s"],
                                           period["end_s"]))

    def paint(self, sla) -> str | None:
        for m, box in self.thresholds.items():  # the bounds the result was computed with
            v = (sla or {}).get("thresholds", {}).get(m)
            if v is not None:
                box.blockSignals(True)
                box.setValue(float(v))
                box.blockSignals(False)
        if isinstance(sla, dict) and "windows" in sla:  # a report's sla carries its windows
            self.diagnosis = sla
        self._paint_time()
        self._bars = bars_that_fit(self.plot_widget.height() if self.plot_widget.isVisible() else None)
        msg = paint_sla(self.plot, sla, self._bars)
        if msg:
            return msg  # the painter's message, already in the current language
        self.summary.setText(summary(sla))
        return None

    def eventFilter(self, obj, ev) -> bool:
        """More or fewer bars as the bar chart's height changes: tick labels never overlap."""
        if obj is self.plot_widget and ev.type() == QEvent.Type.Resize and isinstance(self.value, dict) \
                and bars_that_fit(self.plot_widget.height()) != self._bars:
            self._bars = bars_that_fit(self.plot_widget.height())
            paint_sla(self.plot, self.value, self._bars)
        return super().eventFilter(obj, ev)

    def selection_text(self) -> str:
        """'Decision tree: node 3: 41% of its 45 judged requests meet the SLA (cohort: 78%)'."""
        sla = (self.selection or {}).get("sla")
        if not sla:
            return ""
        if not sla.get("judged"):
            return _("{selection}: none of its cases' requests can be judged against the SLA").format(
                    selection=self.selection_name())
        return _("{selection}: {met} of {judged} judged meet the SLA (the whole cohort: {cohort})").format(
                selection=self.selection_name(), met=share(sla.get("attainment")),
                judged=plural(sla['judged'], "request"), cohort=share(sla.get("cohort_attainment")))

    def copy_text(self) -> str:
        if not isinstance(self.value, dict):
            return super().copy_text()
        return "\n".join(t for t in (summary(self.value), self.selection_text()) if t)
