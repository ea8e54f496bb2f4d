"""Distributions: one metric, badcases vs control overlaid (histogram or ECDF), means and the
Mann-Whitney U p in the legend, the selected cases drawn as a rug. Double-clicking the plot
opens, in the Timeline panel, the request of the case whose value is nearest the point (a
selected case when there is a selection, else a badcase)."""
from __future__ import annotations

import pandas as pd
import pyqtgraph as pg
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QComboBox, QHBoxLayout, QLabel, QRadioButton,
                               QVBoxLayout)

from explorer.core import bus
from explorer.core.names import plural
from explorer.widgets.base import Panel
from explorer.widgets import palette
from explorer.widgets.painters.common import label, num
from explorer.widgets.painters.distributions import paint_distribution
from explorer.core.i18n import _

# Metrics offered, in order; only those with at least one value in the cohort are listed.
METRICS = ("tpot_ms", "ttft_ms", "queue_ms", "e2e_ms", "kv_cache_hit_rate", "num_preemptions",
           "batch_size", "prefill_ms", "decode_ms", "prompt_tokens", "completion_tokens",
           "cached_prompt_tokens", "prompt_chars", "prediction_chars")


class DistributionsPanel(Panel):
    topic = bus.FRAME
    chart = True

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.comparison: list = []
        self.metric_box = QComboBox()
        self.metric_box.currentIndexChanged.connect(self._redraw)
        self.hist, self.ecdf = QRadioButton(_("Histogram")), QRadioButton(_("ECDF"))
        self.hist.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.hist)
        group.addButton(self.ecdf)
        self.hist.toggled.connect(self._redraw)
        top = QHBoxLayout()
        top.addWidget(QLabel(_("Metric:")))
        top.addWidget(self.metric_box, 1)
        top.addWidget(self.hist)
        top.addWidget(self.ecdf)
        self.brush = QCheckBox(_("Brush a range"))
        self.brush.setToolTip(_("Drag the shaded band: the cases whose value lies in it become "
                                "the selection in every view"))
        self.brush.toggled.connect(self._brush_toggled)
        top.addWidget(self.brush)
        self.region: pg.LinearRegionItem | None = None
        self.metric_box.currentIndexChanged.connect(lambda _i: self.brush.setChecked(False))
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        self.plot.addLegend(offset=(-10, 10), labelTextSize="9pt")
        self.plot_widget.scene().sigMouseClicked.connect(self._double_click)
        self.plot_widget.setToolTip(_("Double-click near a value to open the nearest "
                                      "badcase's request in the Timeline"))
        self.note = QLabel()
        self.note.setObjectName("muted")
        self.note.hide()
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.plot_widget, 1)
        lay.addWidget(self.note)
        session.selectedCasesChanged.connect(self._redraw)
        session.metricChanged.connect(self._focus)

    def on_results(self, update: bus.Update) -> None:
        if (comparison := bus.SECTION["comparison"]) in update:
            c = update.view(comparison)
            self.comparison = c if isinstance(c, list) else []
            if bus.FRAME not in update and isinstance(self.value, pd.DataFrame):
                self._redraw()
        super().on_results(update)

    def paint(self, frame) -> str | None:
        if not isinstance(frame, pd.DataFrame) or frame.empty:
            return _("The cohort has no case: choose a cluster with badcases.")
        have = [m for m in METRICS if m in frame.columns
                and pd.to_numeric(frame[m], errors="coerce").notna().any()]
        if not have:
            return _("No metric has a value in this cohort: the cases are not bound to "
                     "trace requests and the eval records no token counts.")
        current = self.metric_box.currentData() or self.session.metric
        self.metric_box.blockSignals(True)
        self.metric_box.clear()
        for m in have:
            self.metric_box.addItem(label(m), m)
        if current in have:
            self.metric_box.setCurrentIndex(have.index(current))
        else:
            ranked = [r.get("metric") for r in sorted(
                self.comparison, key=lambda r: (r.get("p_adjusted") is None, r.get("p_adjusted") or 1))]
            best = next((m for m in ranked if m in have), have[0])
            self.metric_box.setCurrentIndex(have.index(best))
        self.metric_box.blockSignals(False)
        return self._draw(frame)

    def _brush_toggled(self, on: bool) -> None:
        if not on:
            if self.region is not None:
                self.plot.removeItem(self.region)
                self.region = None
            if (self.session.selection_source or ("",))[0] == "range":
                self.session.clear_selection()
            return
        lo, hi = self.plot.getViewBox().viewRange()[0]
        self.set_brush(lo + 0.6 * (hi - lo), lo + 0.9 * (hi - lo))

    def set_brush(self, lo: float, hi: float) -> None:
        """Put the brushed band on [lo, hi) and select the cases whose value lies in it."""
        if self.region is None:
            self.region = pg.LinearRegionItem(values=(lo, hi), brush=pg.mkBrush(palette.SELECTED + "40"))
            self.region.setZValue(30)
            self.region.sigRegionChangeFinished.connect(self._brushed)
            self.plot.addItem(self.region, ignoreBounds=True)
        self.region.setRegion((lo, hi))
        self._brushed()

    def _brushed(self, *_) -> None:
        m = self.metric_box.currentData()
        if self.region is None or not m:
            return
        lo, hi = (float(v) for v in self.region.getRegion())
        self.session.select_range(m, lo, hi, f"{label(m, False)} {num(lo, m)} to {num(hi, m)}")

    def copy_text(self) -> str:
        """The values drawn, as TSV: case, group, selected, the metric (raw, in its unit)."""
        frame, m = self.value, self.metric_box.currentData()
        if not isinstance(frame, pd.DataFrame) or frame.empty or m not in frame:
            return super().copy_text()
        vals = pd.to_numeric(frame[m], errors="coerce")
        sel = self.session.selected_cases or frozenset()
        from explorer.core.escape import tsv  # formula prefixes, tabs, line breaks neutralised
        rows = [("case_id", "group", "selected", m)]
        for cid, grp, v in zip(frame["case_id"], frame["grp"], vals):
            if pd.notna(v):
                rows.append((cid, "badcase" if grp == "bad" else "control",
                             "yes" if cid in sel else "no", f"{v:g}"))
        return tsv(rows)

    def nearest_case(self, x: float):
        """(run_id, request_id) of the bound case whose current-metric value is nearest x:
        among the selected cases when there is a selection, else among the badcases (then
        every case); None when no bound case has a value."""
        frame, m = self.value, self.metric_box.currentData()
        if not isinstance(frame, pd.DataFrame) or frame.empty or m not in frame:
            return None
        vals = pd.to_numeric(frame[m], errors="coerce")
        ok = vals.notna() & frame["request_id"].notna() & frame["run_id"].notna()
        sel = self.session.selected_cases
        for mask in ((frame["case_id"].isin(sel),) if sel else ()) + (frame["grp"] == "bad", ok):
            pool = ok & mask
            if pool.any():
                i = (vals[pool] - x).abs().idxmin()
                return frame.at[i, "run_id"], frame.at[i, "request_id"]
        return None

    def _double_click(self, ev) -> None:
        if not ev.double() or not self.plot.sceneBoundingRect().contains(ev.scenePos()):
            return
        x = self.plot.getViewBox().mapSceneToView(ev.scenePos()).x()
        hit = self.nearest_case(x)
        if hit is not None:
            self.session.open_request(*hit)

    def _focus(self, metric: str) -> None:
        i = self.metric_box.findData(metric)
        if i >= 0:
            self.metric_box.setCurrentIndex(i)

    def _redraw(self, *_):
        if isinstance(self.value, pd.DataFrame) and not self.value.empty and self.metric_box.count():
            msg = self._draw(self.value)
            if msg:
                self.show_message(msg)
            else:
                self._stack.setCurrentIndex(1)

    def _draw(self, frame: pd.DataFrame) -> str | None:
        m = self.metric_box.currentData()
        vals = pd.to_numeric(frame[m], errors="coerce")
        bad, ctl = vals[frame["grp"] == "bad"], vals[frame["grp"] == "control"]
        sel = self.session.selected_cases
        hi = vals[frame["case_id"].isin(sel)] if sel else None
        stats = next((r for r in self.comparison if r.get("metric") == m), None)
        self.note.setVisible(bool(sel))
        if sel:
            self.note.setText(_("▲ selected, with a value: {cases}, in the selection colour").format(
                    cases=plural(int(hi.notna().sum()), "case")))
        msg = paint_distribution(self.plot, bad, ctl, m, "ecdf" if self.ecdf.isChecked() else "hist",
                                 stats, hi)
        if self.region is not None:  # the plot was cleared: the band goes back on top
            self.plot.addItem(self.region, ignoreBounds=True)
        return msg
