"""What-if panel: the causal graph (drawing + editable DOT text with validation, from
widgets/whatif_graph.py), treatment / outcome pickers, a slider for the scenario value, the
predicted outcome with its interval, the refutation table and the assumptions.

A view over explorer.core.viewstate.whatif.WhatIfState, which decides which treatments and
outcomes the frame and graph allow, the value's range and default, the cases the scenario
applies to and what a run or an exported report uses. The state's query (run_whatif) runs on the
session's runner of store-free jobs (Session.compute: it needs only the cohort frame, so it does
not queue behind store jobs), shown in the status bar as every job is and in the panel's own
progress bar; DoWhy is first imported there, never on the UI thread.

Inputs: the session's "frame" payload (analysis.cohort_frame) and, from a report, a ready
"whatif" dict (painted as is, nothing is rerun). The edited graph is kept with the session:
store setting "causal_graph" (written and read in the session's worker).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.i18n import _, pgettext
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDoubleSpinBox, QGraphicsScene,
                               QFrame, QHBoxLayout, QHeaderView, QLabel, QProgressBar,
                               QPushButton, QScrollArea, QSizePolicy, QSlider, QSpinBox, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from explorer.core.escape import qt_plain_tip
from explorer.core.analysis.causal_graph import default_graph_text
from explorer.core.viewstate.whatif import (NO_CASES, SCALE_METRICS, SCALE_PCT_RANGE,
                                            WhatIfState)

if TYPE_CHECKING:  # imported with DoWhy, in the worker
    from explorer.core.analysis.whatif.scale import ScaleDict
    from explorer.core.analysis.whatif.scenario import WhatIfSection
from explorer.core.bus import Failure
from explorer.core.viewstate.store_jobs import GetSetting, SetSetting
from explorer.widgets import palette
from explorer.widgets.base import JobControls, Panel
from explorer.widgets.painters.common import label
from explorer.widgets.painters.whatif import (effect_line, headline, paint_graph, paint_interval,
                                              refutation_rows, summary)
from explorer.widgets.whatif_graph import GraphEditor, GraphView

log = logging.getLogger(__name__)
SETTING = "causal_graph"
SLIDER_STEPS = 1000


class WhatIfPanel(JobControls, Panel):
    """WhatIfPanel(session). Paints the cohort frame's what-if; see the module doc."""

    topic = bus.FRAME
    wrap_controls = True

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.state = WhatIfState()
        self.jobs = session.panel_jobs(self)   # the session's store-free runner
        self.jobs.busy.connect(self._busy)
        self.jobs.idle.connect(self._idle)
        self._cancel_note = ""  # why the running estimate was dropped (shown when it stops)
        self.jobs.dropped.connect(self._dropped)

        self._build_controls()
        left = self._build_graph()
        right = self._build_results()
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([400, 720])
        self.split = split
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)

        session.storeChanged.connect(self._load_graph_setting)
        # a what-if of the old cohort is stale: stop it now rather than let it take the CPU
        # from the new cohort's analysis (it reruns when the new frame arrives)
        session.cohortChanged.connect(self._cohort_changed)
        session.selectedCasesChanged.connect(self._on_selected_cases)
        self._drawn = False  # the graph is drawn when the panel is first shown (start-up speed)
        self._run_when_shown = False  # inputs changed behind another tab: estimate when shown

    def _build_controls(self) -> None:
        """The sentence of controls: "Set [treatment] to [value], effect on [outcome] [Run]"."""
        self.treatment = QComboBox()
        self.outcome = QComboBox()
        for box in (self.treatment, self.outcome):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            box.setMinimumContentsLength(13)  # "KV-cache hit rate" is not cut at 1600 px
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setMinimumWidth(100)
        self.set_box = QDoubleSpinBox()
        self.set_box.setKeyboardTracking(False)
        self.set_box.setDecimals(3)
        self.run_button = QPushButton(pgettext("button", "Run"))  # the verb (运行); a run is "Run"
        self.cancel_button = QPushButton(_("Cancel"))
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(70)
        self.progress.setVisible(False)
        self.progress.setProperty("busyOnly", True)  # shown by _busy only, not with the controls
        # one sentence: "Set [treatment] to [value], effect on [outcome] [Run]"
        self.treatment.setToolTip(_("Treatment: the engine metric the scenario sets"))
        self.outcome.setToolTip(_("Outcome: what the scenario predicts"))
        for w in (QLabel(_("Set")), self.treatment, QLabel(_("to")), self.slider,
                  self.set_box, QLabel(_("effect on")), self.outcome,
                  self.run_button, self.cancel_button, self.progress):
            self.top.addWidget(w)
        self.top.addStretch(1)
        self.treatment.currentIndexChanged.connect(self._treatment_changed)
        self.outcome.currentIndexChanged.connect(self._outcome_changed)
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.sliderReleased.connect(self._inputs_changed)
        self.set_box.valueChanged.connect(self._value_edited)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(lambda: self.cancel())

    def _build_graph(self) -> QSplitter:
        """The causal graph's drawing above its DOT editor (the left column)."""
        self.scene = QGraphicsScene(self)
        self.view = GraphView(self.scene)
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.view.setBackgroundBrush(QColor(palette.BACKGROUND))
        self.graph_editor = GraphEditor(
            self.graph_text, known=lambda: self.frame.columns if self.frame is not None else None,
            applied=lambda: self.graph_text)
        self.editor = self.graph_editor.editor
        self.graph_status = self.graph_editor.graph_status
        self.apply_button = self.graph_editor.apply_button
        self.default_button = self.graph_editor.default_button
        self.apply_button.clicked.connect(lambda: self.apply_graph())  # not clicked(checked=False) as save
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.view)
        left.addWidget(self.graph_editor)
        left.setSizes([420, 160])
        self.graph_column = left
        return left

    def _build_scale_row(self) -> QHBoxLayout:
        """The SLA scaling scenario: "SLA if [metric] changes by [pct]" (its text below it)."""
        self.scale_metric = QComboBox()
        for m in SCALE_METRICS:
            self.scale_metric.addItem(label(m), m)
        self.scale_pct = QSpinBox()
        self.scale_pct.setRange(*SCALE_PCT_RANGE)
        self.scale_pct.setValue(self.state.scale_pct)
        self.scale_pct.setSuffix(" %")
        self.scale_pct.setKeyboardTracking(False)
        self.scale_text = QLabel()
        self.scale_text.setWordWrap(True)
        scale_row = QHBoxLayout()
        scale_row.addWidget(QLabel(_("SLA if")))
        scale_row.addWidget(self.scale_metric)
        scale_row.addWidget(QLabel(_("changes by")))
        scale_row.addWidget(self.scale_pct)
        scale_row.addStretch(1)
        self.scale_metric.currentIndexChanged.connect(lambda _i: self.run_scale())
        self.scale_pct.valueChanged.connect(lambda _v: self.run_scale())
        return scale_row

    def _build_results(self) -> QScrollArea:
        """The results column: applies-to line, headline, effect, SLA scaling row, interval
        plot, refuters, assumptions, notes and method, scrolled in a small dock."""
        self.applies = QLabel()
        self.applies.setWordWrap(True)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        f = self.headline.font()
        f.setPointSizeF(f.pointSizeF() * 1.15)
        f.setBold(True)
        self.headline.setFont(f)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.effect = QLabel()
        self.effect.setWordWrap(True)
        scale_row = self._build_scale_row()
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot_widget.setMaximumHeight(150)
        self.plot_widget.setMinimumHeight(110)
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.getViewBox().setMouseEnabled(False, False)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels([_("Refuter"), _("New effect"),
                                              _("Verdict"), _("Why")])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        hh = self.table.horizontalHeader()
        for i in range(3):
            hh.setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        hh.sectionResized.connect(lambda *_: self._fit_table())
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plot_widget.setVisible(False)  # until a result (no empty axes while estimating)
        self.table.setVisible(False)
        self.assumptions = QLabel()
        self.assumptions.setWordWrap(True)
        self.assumptions.setTextFormat(Qt.TextFormat.RichText)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet(f"color: {palette.WARN};")
        self.method = QLabel()
        self.method.setWordWrap(True)
        self.method.setStyleSheet(f"color: {palette.MUTED};")
        results = QWidget()
        rl = QVBoxLayout(results)
        rl.setContentsMargins(4, 0, 4, 0)
        for w, stretch in ((self.applies, 0), (self.headline, 0), (self.effect, 0),
                           (self.plot_widget, 0), (self.table, 0), (self.assumptions, 0),
                           (self.notes, 0), (self.method, 0)):
            rl.addWidget(w, stretch)
            if w is self.effect:
                rl.addLayout(scale_row)
                rl.addWidget(self.scale_text)
        rl.addStretch(1)
        right = QScrollArea()  # a small dock scrolls the results instead of squeezing them
        right.setWidget(results)
        right.setWidgetResizable(True)
        right.setFrameShape(QFrame.Shape.NoFrame)
        right.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return right

    # -- inputs --------------------------------------------------------------------------------------
    @property
    def frame(self) -> pd.DataFrame | None:
        return self.state.frame

    @property
    def result(self) -> dict | None:
        return self.state.result

    @property
    def scale(self) -> dict | None:
        return self.state.scale

    @property
    def graph_text(self) -> str:
        return self.state.graph_text

    @property
    def graph(self):
        """The causal graph in use: the default one is parsed on first use, not at start-up."""
        return self.state.graph

    def on_results(self, update: bus.Update) -> None:
        whatif = bus.SECTION["whatif"]
        if bus.FRAME in update:
            self.state.delivered = whatif in update   # a report brings its result: no rerun
            super().on_results(update)
        if whatif in update:
            self.show_whatif(update.view(whatif))

    def paint(self, frame: Any) -> str | None:
        """Take a new cohort frame: fill the pickers and, when the panel is visible, run."""
        self.state.selected_ids = getattr(self.session, "selected_cases", None)
        why = self.state.set_frame(frame)
        if why == NO_CASES:
            return _("No case in the cohort.")
        if why is not None:
            return _("No case of the cohort is bound to a trace request with engine "
                     "metrics, so there is nothing to intervene on.")
        self._fill_pickers()
        self.draw_graph()
        self._show_applies()
        if self.isVisible() and not self.state.delivered:
            self._run_timer().start()
        return None

    def set_print_layout(self, on: bool) -> None:
        """A report's picture: the results across the panel's width, without the causal graph
        (the report prints the graph as its own figure, at a legible size)."""
        self.graph_column.setVisible(not on)

    STACK_BELOW = 1000  # px: a narrower panel puts the graph above the results (issue 33:
    #                     beside them on a laptop it got ~250 px and cut its node names)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        QTimer.singleShot(0, self._fit_table)   # wrapped "why" texts
        split = getattr(self, "split", None)
        want = Qt.Orientation.Vertical if self.width() < self.STACK_BELOW else Qt.Orientation.Horizontal
        if split is not None and split.orientation() != want:
            split.setOrientation(want)
            h = max(self.height(), 400)
            split.setSizes([int(h * 0.45), int(h * 0.55)] if want == Qt.Orientation.Vertical
                           else [400, 720])

    def show_result(self, value: Any) -> None:
        super().show_result(value)
        self.progress.setVisible(self.jobs.pending() > 0)   # the base shows every control

    def showEvent(self, ev):
        super().showEvent(ev)
        if not self._drawn:  # a tab behind another is "visible" too: draw when on screen
            QTimer.singleShot(0, self._first_draw)
            dock = self.parentWidget()
            while dock is not None and not hasattr(dock, "visibilityChanged"):
                dock = dock.parentWidget()
            if dock is not None and not getattr(self, "_dock_hooked", False):
                self._dock_hooked = True
                dock.visibilityChanged.connect(self._dock_shown)  # bound: dies with the panel
        # rendered off screen (a report figure): no slider, no editor; the drawing stays
        figure = self.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
        self.slider.setVisible(not figure and self.frame is not None)
        self.graph_editor.setVisible(not figure)
        if self.state.dirty and self.frame is not None and not self.state.delivered:
            self._run_timer().start()

    def _fill_pickers(self) -> None:
        """The pickers show the state's choices (and a report's result's, when not among them)."""
        st = self.state
        for box, items, cur in ((self.treatment, st.treatments(), st.treatment),
                                (self.outcome, st.outcomes(), st.outcome)):
            box.blockSignals(True)
            box.clear()
            for m in items + ([cur] if cur and cur not in items else []):
                box.addItem(self._name(m), m)
            box.setCurrentIndex(max(box.findData(cur), 0))
            box.blockSignals(False)
        self._show_value()

    def _name(self, m: str) -> str:
        if m == "badcase":
            return _("badcase (error rate)")
        if m == "sla_met":
            return _("SLA met")
        return label(m)

    def _show_value(self) -> None:
        """The value box and slider show the state's scenario value in its range."""
        st = self.state
        lo, hi = st.range
        self.set_box.blockSignals(True)
        self.set_box.setDecimals(3 if st.is_rate() else 1)
        self.set_box.setSingleStep(st.step())
        self.set_box.setRange(lo, hi)
        self.set_box.setValue(st.set_value)
        self.set_box.blockSignals(False)
        self._sync_slider()

    def _sync_slider(self) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(round(self.state.fraction() * SLIDER_STEPS))
        self.slider.blockSignals(False)

    def _slider_moved(self, pos: int) -> None:
        self.state.set_scenario_value(self.state.value_at(pos / SLIDER_STEPS))
        self.set_box.blockSignals(True)
        self.set_box.setValue(self.state.set_value)
        self.set_box.blockSignals(False)
        if not self.slider.isSliderDown():   # keyboard / click: run now; drag: on release
            self._inputs_changed()

    def _value_edited(self, v: float) -> None:
        self.state.set_scenario_value(v)
        self._sync_slider()
        self._inputs_changed()

    def _treatment_changed(self, _i: int) -> None:
        t = self.treatment.currentData()
        if t in self.state.treatments():
            self.state.choose_treatment(t)
            self._show_value()
        self._inputs_changed()

    def _outcome_changed(self, _i: int) -> None:
        o = self.outcome.currentData()
        if o in self.state.outcomes():
            self.state.choose_outcome(o)
        self._inputs_changed()

    def _inputs_changed(self) -> None:
        self.state.dirty = True
        self._show_applies()
        if not self.off_screen():
            self.draw_graph()
        else:  # off screen (a tab behind another): drawn when shown (_first_draw); parsing
            self._drawn = False  # the graph imports networkx, ~0.9 s on the UI thread
        # a tab behind another is "visible" too: its estimate runs when the tab comes to
        # front (_dock_shown), not beside the cohort's analyses for a panel nobody sees
        if self.frame is not None:
            self._run_when_shown = self.off_screen()
            if not self._run_when_shown:
                self._run_timer().start()

    def _dock_shown(self, on: bool) -> None:
        """The dock's tab came to front: draw the graph, and run the estimate whose inputs
        (the selection, the scenario) changed while it was behind another tab."""
        if not on:
            return
        QTimer.singleShot(0, self._first_draw)
        if self._run_when_shown and self.frame is not None:
            self._run_when_shown = False
            self._run_timer().start()

    def _run_timer(self) -> QTimer:
        if not hasattr(self, "_rt"):
            self._rt = QTimer(self, singleShot=True, interval=250)
            self._rt.timeout.connect(self.run)
        return self._rt

    def _on_selected_cases(self, ids) -> None:
        self.state.selected_ids = ids
        self._inputs_changed()

    def _show_applies(self) -> None:
        applies = self.state.applies_to()
        if applies is None:
            self.applies.setText("")
            return
        kind, n = applies
        if kind == "selected":
            text = _("Scenario for the {n} selected cases.").format(n=by_spec(n, ','))
        else:
            text = _("Scenario for the cluster's {n} badcases (select cases elsewhere to "
                     "change this).").format(n=by_spec(n, ','))
        self.applies.setText(text)

    def _sla_thresholds(self) -> dict | None:
        """The SLA panel's thresholds (the session's "sla" result), so SLA met is judged alike."""
        sla = self.session.results.view(bus.SECTION["sla"]) \
            if hasattr(self.session, "results") else None
        if isinstance(sla, dict) and isinstance(sla.get("thresholds"), dict):
            return dict(sla["thresholds"])
        # the SLA analysis not run yet (its tab never shown, Session.deferred): the thresholds
        # it would use, those set for it, else None (the what-if's defaults are the SLA's)
        asked = (getattr(self.session, "params", {}).get("sla") or {}).get("thresholds")
        return dict(asked) if isinstance(asked, dict) else None

    # -- running -----------------------------------------------------------------------------------
    def run(self) -> None:
        """Run the state's what-if in the panel's worker (a newer run replaces an older one)."""
        self._run_timer().stop()
        self._run_when_shown = False
        self.state.thresholds = self._sla_thresholds()   # SLA met as the SLA panel judges it
        query = self.state.query()
        if query is None:
            return
        self._cancel_note = ""
        self._show_applies()
        self._status(_("Estimating…"))
        self.cancel_button.setEnabled(True)

        def job(ctx):   # a cancel raises errors.Cancelled, the worker's own: dropped
            ctx.progress(0, 0, "importing DoWhy")
            return query.run(progress=lambda d, n: ctx.progress(d, n, "what-if"),
                             cancelled=ctx.cancelled)
        self.jobs.submit("whatif", job, self._done, self._failed, label=_("What-if"))
        self.run_scale()

    def run_scale(self) -> None:
        """SLA attainment with the chosen metric scaled (whatif_scale) in the panel's worker;
        the SLA panel's thresholds when it has them."""
        self.state.scale_metric = self.scale_metric.currentData()
        self.state.scale_pct = self.scale_pct.value()
        self.state.thresholds = self._sla_thresholds()
        query = self.state.scale_query()
        if query is None:
            self.scale_text.setText(_("(not in this data)") if self.frame is not None else "")
            return
        self.scale_text.setText(_("estimating…"))
        self.jobs.submit("whatif-scale", lambda ctx: query.run(cancelled=ctx.cancelled),
                           self._scaled, lambda e: self.scale_text.setText(str(e)),
                           label=_("SLA what-if"))

    def _scaled(self, d: ScaleDict) -> None:
        self.state.scale = d
        self.scale_text.setText(d.get("text", ""))

    def cancel(self, note: str = "") -> None:
        self._cancel_note = note
        self._run_timer().stop()
        self.jobs.cancel("whatif-scale")
        self.jobs.cancel("whatif")
        self._status(note or _("Cancelled."))
        self._idle()

    def _dropped(self, _key: str) -> None:
        if self.jobs.pending():  # a newer run replaced it (its status stays) or another drops
            return
        self._status(self._cancel_note or _("Cancelled."))
        self._cancel_note = ""

    def _fit_table(self) -> None:
        """Rows as high as their wrapped text, the table as high as its rows (the results
        column scrolls; a report figure shows every refuter)."""
        t = self.table
        t.resizeRowsToContents()
        rows = sum(t.rowHeight(r) for r in range(t.rowCount()))
        t.setFixedHeight(rows + t.horizontalHeader().sizeHint().height() + 2 * t.frameWidth() + 2)

    def _cohort_changed(self) -> None:
        if self.jobs.pending() or self._run_timer().isActive():
            self.cancel(_("The cohort changed: the what-if reruns on its new cases."))

    def _done(self, d: WhatIfSection) -> None:
        self.show_whatif(d)

    def _failed(self, err: BaseException) -> None:
        self.state.result = None
        self._clear_results()
        self._status(str(err), error=True)

    # -- painting results ------------------------------------------------------------------------------
    def show_whatif(self, value: Any) -> None:
        """Paint a `whatif` result dict, or the reason there is none (Failure / status dict)."""
        self.state.delivered = True
        if isinstance(value, Failure):
            self._clear_results()
            self._status(value.message, error=not value.nodata)
        elif isinstance(value, dict) and "reason" in value and "estimate" not in value:
            self._clear_results()
            self._status(str(value["reason"]), error=value.get("status") == "error")
        elif isinstance(value, dict):
            self.state.take_result(value)
            self.headline.setText(headline(value) + no_change_note(value))
            self.headline.setStyleSheet("")
            self.effect.setText(effect_line(value))
            self.plot_widget.setVisible(paint_interval(self.plot, value) is None)
            self._fill_table(value)
            self.table.setVisible(self.table.rowCount() > 0)
            items = "".join(f"<li>{_esc(a)}</li>" for a in value.get("assumptions") or [])
            assume = _("These numbers assume:")
            self.assumptions.setText(
                f"<b>{_esc(assume)}</b><ul style='margin:0'>{items}</ul>"
                if items else "")
            self.notes.setText("\n".join(value.get("warnings") or []))
            n, nd = value.get("n"), value.get("n_dropped")
            self.method.setText((value.get("method") or "") + (
                f" · n = {by_spec(int(n), ',')}" if isinstance(n, (int, float)) else "") + (
                ", " + _("{n} dropped").format(n=by_spec(int(nd), ','))
                if isinstance(nd, (int, float)) and nd else ""))
            self._fill_pickers()   # the result's treatment, outcome and value
            self.draw_graph()
        if self._stack.currentIndex() == 0 and self.frame is None:
            self._stack.setCurrentIndex(1)   # a report hands a result without a frame

    def _fill_table(self, d: dict) -> None:
        rows = refutation_rows(d)
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, text in enumerate(row):
                item = QTableWidgetItem(_(text) if j == 2 else text)  # verdicts: refute.VERDICTS
                if j == 2:
                    item.setForeground(QColor(palette.ACCENT if text == "passes" else palette.BAD))
                item.setToolTip(qt_plain_tip(row[3]))
                self.table.setItem(i, j, item)
        self._fit_table()

    def _clear_results(self) -> None:
        """No result: no empty axes or empty table either."""
        self.headline.setText("")
        self.effect.setText("")
        self.plot.clear()
        self.plot_widget.setVisible(False)
        self.table.setRowCount(0)
        self.table.setVisible(False)
        self.assumptions.setText("")
        self.notes.setText("")
        self.method.setText("")

    def _status(self, text: str, error: bool = False) -> None:
        self.headline.setText(text)
        self.headline.setStyleSheet(f"color: {palette.BAD};" if error else "")

    # -- the graph -----------------------------------------------------------------------------------
    def _first_draw(self) -> None:
        """Draw the graph once the panel is really on screen (not a tab behind another)."""
        if not self._drawn and self.isVisible() and not self.visibleRegion().isEmpty():
            self.draw_graph()

    def draw_graph(self) -> None:
        self._drawn = True
        r = self.result or {}
        same = (r.get("treatment") == self.treatment.currentData()
                and r.get("outcome") == self.outcome.currentData())
        paint_graph(self.scene, self.graph.nodes, self.graph.edges, self.graph.latent,
                    unobserved=self.state.unobserved(),
                    treatment=self.treatment.currentData() or r.get("treatment"),
                    outcome=self.outcome.currentData() or r.get("outcome"),
                    adjust=(r.get("common_causes") or ()) if same else ())
        self.view.fit()

    def validate(self) -> bool:
        """Check the editor's text; say what is wrong and where (GraphEditor.validate)."""
        return self.graph_editor.validate()

    def apply_graph(self, save: bool = True) -> bool:
        """Use the editor's graph (when valid): redraw, keep it with the session, rerun."""
        if not self.validate():
            return False
        text = self.editor.toPlainText()
        self.state.set_graph(text)
        self.apply_button.setEnabled(False)
        if save:
            self.session.store_job("whatif-graph", SetSetting(SETTING, text), lambda _r: None,
                                   lambda e: self._status(str(e), error=True),
                                   label=_("Saving the causal graph"))
        if self.frame is not None:
            self._fill_pickers()
        self._inputs_changed()
        return True

    def _load_graph_setting(self) -> None:
        self.session.store_job("whatif-graph-load", GetSetting(SETTING), self._graph_loaded,
                               lambda e: None, label=_("Reading the causal graph"))

    def _graph_loaded(self, text: Any) -> None:
        new = text if isinstance(text, str) and text.strip() else default_graph_text()
        if new == self.graph_text:
            return
        self.editor.setPlainText(new)
        if not self.apply_graph(save=False):   # a stored graph that no longer parses
            self._status(_("The session's causal graph is not valid; fix it in the "
                           "editor."), error=True)

    # -- out -------------------------------------------------------------------------------------------
    def report_args(self) -> dict:
        """The panel's scenario as run_whatif keyword arguments (WhatIfState.report_args), for
        a report exported from the window to show what the user set up."""
        self.state.thresholds = self._sla_thresholds()   # SLA met as the run judged it
        return self.state.report_args()

    def report_result(self) -> dict | None:
        """The finished result of exactly report_args(), for an exported report to show as it
        is (no DoWhy in the exporting process); None when the inputs changed since or a run is
        under way."""
        return None if self.jobs.pending() else self.state.report_result()

    def copy_text(self) -> str:
        """The result in full, or, before Run, the scenario set up (so a copy is never empty)."""
        if self.result:
            return summary(self.result)
        if self.message() is None and self.treatment.currentData():
            return _("What-if (not run yet): set {treatment} to {value}, effect on {outcome}").format(
                    treatment=self.treatment.currentText(),
                    value=by_spec(self.set_box.value(), 'g'),
                    outcome=self.outcome.currentText())
        return super().copy_text()

    def closeEvent(self, ev):
        self.jobs.cancel()
        super().closeEvent(ev)


def no_change_note(d: dict) -> str:
    """' – the interval includes zero change' when the effect's interval [ci_low, ci_high]
    holds 0 (the scenario cannot be told from no change), else ''. d: a `whatif` dict."""
    lo, hi = d.get("ci_low"), d.get("ci_high")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo <= 0 <= hi:
        return " – the interval includes zero change"
    return ""


def _esc(s: str) -> str:
    from explorer.core.escape import html_text
    return html_text(s)


