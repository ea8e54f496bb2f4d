"""Replay panel: re-run an observed trace run through the engine model (explorer.core.replay)
under other KV-cache and scheduler settings, show the result beside the observed run, add it
to the session as a simulated run, and sweep the KV capacity (hit rate and preemptions against
capacity). The hit rate shown first and charted is vLLM's own, over first queries by tokens
(summary hit_rate: prefix_cache_hits / prefix_cache_queries; preempted re-queries are counted
apart, as vLLM does); the older per-attempt hit_rate_blocks follows it, explained.

A view over explorer.core.viewstate.replay.ReplayState, which holds the runs offered (the
session's "replay_runs" payload) and the one chosen, validates the settings into an
EngineConfig and makes the work: its store reads run in the session's worker (one at a time),
its simulations on the session's runner of store-free jobs (Session.compute), with the panel's
own progress and Cancel beside the status bar's. paint() submits nothing.
"""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.i18n import _, ngettext, pgettext
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QHeaderView, QLabel,
                               QProgressBar, QPushButton, QSpinBox, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout)

from explorer.core.replay import EVICTION_POLICIES, EngineConfig
from explorer.core.viewstate.store_jobs import WriteReplayRun
from explorer.core.replay.compare import (NO_PREFIX, calibration_lines, comparison_rows,
                                          hit_rate_lines)
from explorer.core.viewstate.replay import RANGES, ReplayState, section_rows
from explorer.widgets.base import JobControls, Panel
from explorer.widgets.painters.replay import plot_sweeps
from explorer.widgets.replay_validation import ValidationView


WARN_TEXT = "#9A5B00"   # palette.WARN darkened to read as text on white (contrast 5.6:1)


def _fmt(v: Any, unit: str = "") -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        s = by_spec(int(v), ',')   # a count summed as a float ("0", never "0.000")
    elif isinstance(v, float):
        s = by_spec(v, '.3f') if abs(v) < 10 else by_spec(v, '.1f')
    else:
        s = str(v)
    return f"{s} {unit}".strip()


class ReplayPanel(JobControls, Panel):
    """ReplayPanel(session): pick the trace run and the settings, Run or Sweep capacity."""

    topic = bus.REPLAY_RUNS   # sent after every load: the runs to offer (ReplayRun dicts)
    wrap_controls = True

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.state = ReplayState()
        self.jobs = session.panel_jobs(self)   # the session's store-free runner
        self.jobs.busy.connect(self._busy)
        self.jobs.idle.connect(self._idle)
        self.jobs.dropped.connect(lambda _k: self._status(_("Cancelled.")))

        self._build_controls()
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels([_("metric"), _("observed"),
                                              _("replay"), _("change %")])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._build_plot()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setObjectName("muted")
        # a calibration error above 25 % is said prominently, above everything else
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setProperty("error", True)
        self.warning.setStyleSheet("font-weight: bold; color: #b00020;")
        self.warning.setVisible(False)
        self.answer = QLabel()
        self.answer.setWordWrap(True)
        self.answer.setVisible(False)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(self.plot_widget)
        split.setSizes([460, 800])
        self.split = split
        self.validation.setVisible(False)   # the last validation's tables, per mode
        # before a run or a sweep: what each button shows, not an empty table and empty axes
        self.hint = QLabel(_(
            "Run replays the chosen trace under the settings above and compares it with the "
            "observed run; Sweep capacity charts the prefix-cache hit rate and the preemptions "
            "against the KV-cache capacity; Predict badcases says how many of the cohort's "
            "badcases would remain."))
        self.hint.setWordWrap(True)
        self.hint.setObjectName("muted")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.table.setVisible(False)
        self.plot_widget.setVisible(False)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.warning)
        lay.addWidget(self.answer)
        lay.addWidget(self.hint)
        lay.addWidget(split, 1)
        lay.addWidget(self.validation, 1)
        lay.addWidget(self.status)

    def _build_controls(self) -> None:
        """The row of controls: the trace run, the KV-cache and scheduler settings, Add as run,
        Run, Sweep capacity, Predict badcases, Cancel and the progress bar."""
        st = self.state
        self.run_box = QComboBox()  # a long run label (a replay added as a run) is cut at
        self.run_box.setSizeAdjustPolicy(  # 32 characters, the list shows it whole
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.run_box.setMinimumContentsLength(32)
        self.blocks = QSpinBox()
        self.blocks.setRange(*RANGES["blocks"])
        self.blocks.setValue(st.blocks)
        self.blocks.setSpecialValueText(_("infinite"))
        self.blocks.setSuffix(_(" blocks"))
        self.gb = QDoubleSpinBox()
        self.gb.setRange(*RANGES["gb"])
        self.gb.setDecimals(2)
        self.gb.setSpecialValueText(_("(GB)"))
        self.gb.setSuffix(" GB")
        self.bpt = QSpinBox()
        self.bpt.setRange(*RANGES["bytes_per_token"])
        self.bpt.setValue(st.bytes_per_token)
        self.bpt.setSuffix(_(" B/token"))
        for box in (self.blocks, self.bpt):  # 131,072 as the tables write it
            box.setGroupSeparatorShown(True)
        self.bpt.setToolTip(_("KV bytes per token (Llama-3.1-8B fp16: 131072)"))
        self.block_size = QSpinBox()
        self.block_size.setRange(*RANGES["block_size"])
        self.block_size.setValue(st.block_size)
        self.block_size.setPrefix(_("block "))
        self.eviction = QComboBox()
        self.eviction.addItems(list(EVICTION_POLICIES))
        self.eviction.setCurrentText(st.eviction)
        self.seqs = QSpinBox()
        self.seqs.setRange(*RANGES["max_num_seqs"])
        self.seqs.setValue(st.max_num_seqs)
        self.seqs.setPrefix(_("max seqs "))
        self.batched = QSpinBox()
        self.batched.setRange(*RANGES["max_num_batched_tokens"])
        self.batched.setValue(st.max_num_batched_tokens)
        self.batched.setPrefix(_("batched tokens "))
        self.replicas = QSpinBox()   # 0: the deployment's published count, else fitted
        self.replicas.setRange(*RANGES["replicas"])
        self.replicas.setPrefix(_("replicas "))
        self.replicas.setSpecialValueText(_("replicas: auto"))
        self.replicas.setToolTip(_(
            "Engine replicas behind the trace: auto takes the deployment's published count "
            "(aibrix ps-experiment: 8 pods), else fits it where the run shows it"))
        self.routing = QComboBox()
        for text, value in ((_("routing: auto"), ""), (_("round-robin"), "round-robin"),
                            (_("random per request"), "random"),
                            (_("per connection (Kubernetes Service)"), "connection")):
            self.routing.addItem(text, value)
        self.add_run = QCheckBox(_("Add as run"))
        self.add_run.setChecked(st.add_run)
        self.run_button = QPushButton(pgettext("button", "Run"))  # the verb (运行); a run is "Run"
        self.sweep_button = QPushButton(_("Sweep capacity"))
        self.predict_button = QPushButton(_("Predict badcases"))
        self.predict_button.setToolTip(_(
            "Replay the cohort's time window at the observed settings and under the settings "
            "shown, and predict with the what-if's outcome model how many of its badcases "
            "would remain"))
        self.validate_button = QPushButton(_("Validate"))
        self.validate_button.setToolTip(_(
            "Fit on the lowest setting of the chosen run's ladder of runs (request rates, "
            "concurrencies) and predict each higher one: the replay's out-of-sample error"))
        self.validation = ValidationView()
        self.validate_mode = self.validation.mode_box   # fit on low / leave one out / both
        self.cancel_button = QPushButton(_("Cancel"))
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(140)
        self.progress.setVisible(False)
        self.progress.setProperty("busyOnly", True)  # shown by _busy only, not with the controls
        for w in (QLabel(_("Trace")), self.run_box, self.blocks, self.gb, self.bpt,
                  self.block_size, self.eviction, self.seqs, self.batched, self.replicas,
                  self.routing, self.add_run,
                  self.run_button, self.sweep_button, self.predict_button,
                  self.validate_mode, self.validate_button,
                  self.cancel_button, self.progress):
            self.top.addWidget(w)
        self.top.addStretch(1)
        for w in (self.blocks, self.gb, self.bpt, self.block_size, self.seqs, self.batched,
                  self.replicas):
            w.valueChanged.connect(self._edited)
        self.routing.currentIndexChanged.connect(self._edited)
        self.validate_mode.currentIndexChanged.connect(
            lambda _i: self.state.set(validate_mode=self.validate_mode.currentData()))
        self.eviction.currentTextChanged.connect(self._edited)
        self.add_run.toggled.connect(self._edited)
        self.run_button.clicked.connect(self.run)
        self.sweep_button.clicked.connect(self.run_sweep)
        self.predict_button.clicked.connect(self.run_prediction)
        self.validate_button.clicked.connect(self.run_validation)
        self.cancel_button.clicked.connect(self.cancel)
        self.run_box.currentIndexChanged.connect(self._run_picked)
        self.session.cohortChanged.connect(self._hide_answer)  # bound: dropped with the panel

    def _hide_answer(self) -> None:
        self.answer.setVisible(False)

    def _build_plot(self) -> None:
        """The sweep's chart: the first-query hit rate (left axis) and the preemptions (right
        axis, a second view box) against the KV capacity (log)."""
        self.plot_widget = pg.PlotWidget(background="w")
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setLabel("bottom", _("KV-cache capacity (blocks, log)"))
        self.plot.setLabel("left", _("hit rate (first queries)"))
        self.plot.setLogMode(x=True, y=False)
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.pre_view = pg.ViewBox()
        self.plot.showAxis("right")
        self.plot.scene().addItem(self.pre_view)
        self.plot.getAxis("right").linkToView(self.pre_view)
        self.pre_view.setXLink(self.plot)
        self.plot.getAxis("right").setLabel(_("preemptions"))
        for ax in ("left", "right", "bottom"):
            self.plot.getAxis(ax).enableAutoSIPrefix(False)
        self.plot.vb.sigResized.connect(
            lambda: self.pre_view.setGeometry(self.plot.vb.sceneBoundingRect()))

    def _results_shown(self, validation: bool = False) -> None:
        """The hint only while neither the table, the chart nor a validation has anything to
        show; a validation's tables in place of the table and chart, until Run or Sweep."""
        self.validation.setVisible(validation)
        self.split.setVisible(not validation)
        self.hint.setVisible(self.table.isHidden() and self.plot_widget.isHidden()
                             and not validation)
        self._fit_split()

    STACK_BELOW = 960  # px: a narrower panel stacks the table above the chart (print: 1000)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._fit_split()

    def _fit_split(self) -> None:
        """Table beside the chart on a wide panel; on a laptop's, the table above the chart at
        the height of its rows (every value in full, no sideways scrolling; the dock scrolls
        down instead)."""
        stacked = self.width() < self.STACK_BELOW
        self.split.setOrientation(Qt.Orientation.Vertical if stacked else Qt.Orientation.Horizontal)
        rows = self.table.rowCount()
        if stacked and rows:
            h = (self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
                 + sum(self.table.rowHeight(i) for i in range(rows)))
            self.table.setMinimumHeight(h)
        else:
            self.table.setMinimumHeight(0)
        self.plot_widget.setMinimumHeight(240 if stacked else 0)
        if not stacked and rows:  # beside the chart: the table as wide as its columns
            hh = self.table.horizontalHeader()
            need = (sum(max(self.table.sizeHintForColumn(c), hh.sectionSizeHint(c))
                        for c in range(self.table.columnCount()))
                    + 2 * self.table.frameWidth() + 4)
            self.table.setMinimumWidth(min(need, self.width() * 3 // 5))
        else:
            self.table.setMinimumWidth(0)

    # -- the state's values ------------------------------------------------------------------
    result = property(lambda self: self.state.result)            # last ReplayResult
    calibration = property(lambda self: self.state.calibration)  # its CalibrationResult
    sweep = property(lambda self: self.state.sweep)
    prediction = property(lambda self: self.state.prediction)    # last BadcasePrediction

    # -- session data ---------------------------------------------------------------------------
    def paint(self, runs: Any) -> str | None:
        """The runs to offer (the session's "replay_runs"): fill the picker; nothing is run."""
        changed = self.state.set_runs(runs)
        self.run_box.blockSignals(True)
        self.run_box.clear()
        for r in self.state.runs:
            self.run_box.addItem(f"{r['label']} ({r['n']})", r["run_id"])
        self.run_box.setCurrentIndex(max(self.run_box.findData(self.state.run_id), 0))
        self.run_box.blockSignals(False)
        if not self.state.runs:
            return _("Load a trace with arrival times and prompt lengths (e.g. a Mooncake "
                     "trace) to replay it under other KV-cache and scheduler settings.")
        if changed:
            self._settings_of_run()
        return None

    def _run_picked(self, _i: int) -> None:
        self.state.choose_run(self.run_box.currentData())
        self._settings_of_run()

    def _edited(self, *_a) -> None:
        """A setting changed: into the state (a capacity in GB sets the blocks shown)."""
        try:
            self.state.set(blocks=self.blocks.value(), gb=self.gb.value(),
                           bytes_per_token=self.bpt.value(), block_size=self.block_size.value(),
                           eviction=self.eviction.currentText(), max_num_seqs=self.seqs.value(),
                           max_num_batched_tokens=self.batched.value(),
                           replicas=self.replicas.value(), routing=self.routing.currentData(),
                           add_run=self.add_run.isChecked())
        except ValueError as e:
            self._status(str(e), error=True)
        if self.blocks.value() != self.state.blocks:
            self.blocks.setValue(self.state.blocks)

    def _show_settings(self) -> None:
        """The controls show the state's settings (the run's observed ones)."""
        st = self.state
        for w, v in ((self.blocks, st.blocks), (self.block_size, st.block_size),
                     (self.seqs, st.max_num_seqs), (self.batched, st.max_num_batched_tokens)):
            w.blockSignals(True)
            w.setValue(v)
            w.blockSignals(False)
        self.eviction.blockSignals(True)
        self.eviction.setCurrentText(st.eviction)
        self.eviction.blockSignals(False)

    def config(self) -> EngineConfig:
        """The settings shown as an EngineConfig (ValueError when they cannot work)."""
        return self.state.config()

    # -- running --------------------------------------------------------------------------------
    def _with_trace(self, then) -> None:
        """Run then() once the chosen run's trace is read (in the session's worker)."""
        query = self.state.trace_query()
        if query is None:
            if self.state.trace is not None:
                then()
            return
        def got(trace):
            if trace.run_id != self.state.run_id:   # another run was picked while it was read
                self._status(_("Cancelled."))
                return
            self.state.take_trace(trace)
            then()
        self._status(_("Reading the trace…"))
        self.session.store_job("replay-trace", query, got, self._failed,
                               label=_("Replay: reading the trace"))

    def run(self) -> None:
        """Replay the chosen run with the settings shown (a newer run replaces an older one)."""
        try:
            self.state.config()
        except ValueError as e:
            self._status(str(e), error=True)
            return
        self._with_trace(self._simulate)

    def _simulate(self) -> None:
        try:   # the settings or the run may have changed since Run was clicked
            job = self.state.replay_job()
        except (ValueError, RuntimeError) as e:
            self._status(str(e), error=True)
            return
        self.cancel_button.setEnabled(True)
        self._status(ngettext("Replaying {n} request…", "Replaying {n} requests…", len(job.trace.requests)).format(
            n=len(job.trace.requests)))
        def done(rc):
            self.state.keep_calibration(job, rc[1])
            self._done(rc[0], job.trace.run_id, job.trace.observed, rc[1])
        self._submit("replay", lambda ctx: job.run(ctx.progress, ctx.cancelled), done,
                     _("Replay"))

    def _submit(self, key: str, job, done, label: str) -> None:
        """A simulation on the session's store-free runner (a cancel raises errors.Cancelled:
        dropped)."""
        self.jobs.submit(key, job, done, self._failed, label=label)

    def _done(self, res, run_id: str, observed: dict, cal=None) -> None:
        self.state.result, self.state.calibration = res, cal
        self.show_comparison(comparison_rows(observed, res.summary))
        s = res.summary
        # uncalibrated absolute latencies are the model's defaults: said in the warning colour
        self.show_warning(cal.warning if cal is not None else _(
            "Not calibrated: the run records no TTFT or TPOT, so the replay's absolute latencies "
            "(TTFT, TPOT, E2E) are the engine model's defaults, not this engine's; read the "
            "changes between settings, not the values."), warn=cal is None)
        applies = self.state.error_applies()
        if cal is None or applies["kind"] == "not validated":
            self._mark_latency_rows(None if cal is None else _(
                "Not validated: no prediction of this run at other settings was checked"))
        dropped = cal.dropped if cal is not None else {}
        n_drop = sum(dropped.values())
        note = _("not calibrated: the run records no TTFT or TPOT")
        cal_lines = calibration_lines(cal.to_dict() if cal is not None else None, note)
        # one verdict per run: calibrated at the settings the run recorded, on its whole trace
        scope = _("Calibrated once for {run}, at the settings it recorded, on its whole trace "
                  "({requests} requests): every scenario of this run shows this verdict. Predict "
                  "badcases calibrates on the cohort's time window instead.").format(
                          run=run_id, requests=by_spec(s['requests'], ',')) if cal is not None else ""
        # headline: vLLM's first-query hit rate, preempted re-queries apart, then calibration
        self._status("\n".join(hit_rate_lines(s)) + "\n"
                     + _("{label}: {requests} requests, {preemptions} preemptions, {evicted} blocks evicted.").format(
                             label=res.config.label(), requests=str(s["requests"]),
                             preemptions=str(s["preemptions"]), evicted=str(s["evicted_blocks"]))
                     + "".join("\n" + _("{n} request(s) dropped: {reason}").format(
                             n=str(k), reason=why)
                               for why, k in dropped.items())
                     + "\n" + "\n".join(cal_lines) + ("\n" + scope if scope else "")
                     + "\n" + _("Error that applies to these figures: {error}").format(
                             error=applies["text"]))
        if n_drop:
            self.status.setToolTip(_("{replayed} of {total} requests replayed").format(
                    replayed=str(s["requests"]), total=str(s["requests"] + n_drop)))
        if self.state.add_run:
            write = WriteReplayRun(res, f"{res.config.label()} of {run_id}", {"replayed_run": run_id})
            self.session.store_job("replay-write", write, lambda _rid: self.session.rescan(),
                                   self._failed, label=_("Replay: adding the run"))

    def show_warning(self, text: str | None, warn: bool = False) -> None:
        """Show (or hide, with None) the prominent calibration warning (warn: in the warning
        colour, for latencies not calibrated, rather than the error colour)."""
        self.warning.setText(text or "")
        self.warning.setStyleSheet("font-weight: bold; color: %s;" % (WARN_TEXT if warn
                                                                       else "#b00020"))
        self.warning.setVisible(bool(text))

    def _mark_latency_rows(self, tip: str | None = None) -> None:
        """The replay's latency cells (ms) in the warning colour, their tooltip saying why."""
        tip = tip or _("Not calibrated: the engine model's default step time")
        for i in range(self.table.rowCount()):
            item = self.table.item(i, 2)
            if item is not None and " ms" in item.text():
                item.setForeground(QColor(WARN_TEXT))
                item.setToolTip(tip)

    # -- badcases under the scenario ------------------------------------------------------------
    def scenario(self) -> dict:
        """The settings shown, as the scenario's changes to the observed run's settings."""
        return self.state.scenario()

    def run_prediction(self) -> None:
        """Replay the cohort's window at the observed settings and under the settings shown;
        predict how many of its badcases would remain (explorer.core.replay.badcases)."""
        from explorer.core.viewstate.replay import CohortQuery
        cohort = self.session.cohort()
        if cohort is None:
            self._status(_("No cohort to predict for."), error=True)
            return
        try:
            self.state.config()
        except ValueError as e:
            self._status(str(e), error=True)
            return
        query = CohortQuery(cohort)

        def compute(inputs):
            try:   # the settings are checked again: they may have changed since the click
                job = self.state.predict_job(inputs)
            except (ValueError, RuntimeError) as e:
                self._status(str(e), error=True)
                return
            self.cancel_button.setEnabled(True)
            self._submit("replay", lambda ctx: job.run(
                progress=lambda d, n: ctx.progress(d, n, "predict"), cancelled=ctx.cancelled),
                self.show_prediction, _("Replay: badcases"))
        self._status(_("Reading the cohort…"))
        self.session.store_job("replay-cohort", query, compute, self._failed,
                               label=_("Replay: reading the cohort"))

    def show_prediction(self, p) -> None:
        """Paint a BadcasePrediction as the report paints its section: the answer line, the
        calibration (warning above 25 %), the table of badcases, calibration and replay."""
        self.state.prediction = p
        d = p.to_dict()
        d["sentence"] = _("Badcases: {observed} observed, {predicted} predicted under {setting} (95% interval "
                          "{low} to {high}), {n_cases} cases of {run} replayed.").format(
                                  observed=str(p.observed_badcases),
                                  predicted=by_spec(p.predicted_badcases, '.1f'),
                                  setting=p.setting["label"], low=by_spec(p.ci_low, '.0f'),
                                  high=by_spec(p.ci_high, '.0f'), n_cases=str(p.n_cases),
                                  run=p.run_id)
        self.show_report(d)
        self.status.setText(self.status.text() + "\n" + self.scope_note(p) + "\n" + p.model)

    def scope_note(self, p) -> str:
        """Why Predict's figures differ from Run's: it replays the cohort's time window (its own
        calibration, its own load), Run the whole trace."""
        w = p.window or {}
        text = _("Predict badcases replays the cohort's window of {run} ({start} s to {end} s, {requests} "
                 "requests) and calibrates on it; Run replays the whole trace. Preemptions "
                 "and calibration errors of the two differ as their load differs.").format(
                         run=p.run_id, start=by_spec(w.get('start_s', 0), ',.0f'),
                         end=by_spec(w.get('end_s', 0), ',.0f'),
                         requests=by_spec(w.get('requests', 0), ','))
        res = self.state.result
        pre = (p.replay or {}).get("preemptions") or {}
        if res is not None and pre.get("scenario") is not None:
            text += " " + _("Here: {trace} preemptions over the whole trace, {window} in the window.").format(
                    trace=by_spec(res.summary['preemptions'], ','),
                    window=by_spec(pre['scenario'], ',.0f'))
        return text

    def _settings_of_run(self) -> None:
        """Fill the controls with the settings the chosen run records (its observed ones, read
        in the session's worker), so a scenario starts from them."""
        query = self.state.settings_query()
        if query is None:
            return
        def fill(observed: dict) -> None:
            if query.run_id != self.state.run_id or not observed:
                return
            try:
                self.state.apply_observed(observed)
            except (TypeError, ValueError) as e:   # a recorded setting that is not a number
                self._status(str(e), error=True)
            self._show_settings()
        self.session.store_job("replay-settings", query, fill, self._failed,
                               label=_("Replay: settings"))

    def show_comparison(self, rows: list[dict]) -> None:
        """Fill the observed-vs-replay table from compare.comparison_rows."""
        self.table.setVisible(True)
        self._results_shown()
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            d = r["diff_pct"]
            diff = None if d is None else f"{by_spec(0.0 if abs(d) < 0.05 else d, '+.1f')}%"  # no "-0.0%"
            for j, text in enumerate((_(r["label"]), _fmt(r["observed"], r["unit"]),
                                      _fmt(r["replay"], r["unit"]), diff or "–")):
                item = QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self._stack.setCurrentIndex(1)
        self._fit_split()

    def show_report(self, sec: dict) -> None:
        """Paint the report's `replay` section (explorer.core.replay.section.replay_section): the
        badcase answer, the calibration warning, a table (badcases, calibration, the replay at
        the observed settings vs the scenario) and the capacity sweep."""
        cal = sec.get("calibration") or {}
        self.show_warning(cal.get("warning"))
        if sec.get("predicted_badcases") is not None:
            self.answer.setText(sec.get("sentence") or "")
        else:
            self.answer.setText(_("No badcase prediction: {reason}").format(
                    reason=str(sec.get("reason") or "")))
        self.answer.setVisible(True)
        names = {"badcases": _("badcases (observed → predicted)"),
                 "ttft_ms": _("TTFT mean, calibration"),
                 "tpot_ms": _("TPOT mean, calibration"),
                 "hit_rate": _("hit rate: observed settings → scenario"),
                 "preemptions": _("preemptions: observed settings → scenario")}
        rows = [dict(r, label=names[r["metric"]]) for r in section_rows(sec)]
        self.table.setHorizontalHeaderLabels([_("metric"), _("observed"),
                                              _("replay"), _("change %")])
        self.show_comparison(rows)
        self.table.setVisible(bool(rows))   # no prediction: the sweep alone
        self._results_shown()
        self.table.resizeColumnsToContents()
        # the table's labels are long here: give it half the width
        self.split.setSizes([660, 640])
        lines = calibration_lines(cal) if cal else []
        lines += [_("{n} request(s) dropped: {reason}").format(n=str(k), reason=why)
                  for why, k in (cal.get("dropped") or {}).items()]
        sweeps = sec.get("sweeps") or ([sec["sweep"]] if (sec.get("sweep") or {}).get("rows") else [])
        if sweeps:
            lines += self.show_sweeps(sweeps)
        ea = (sec.get("error_applies") or {}).get("scenario")
        if ea:
            lines.append(_("Error that applies to the scenario: {error}").format(error=ea["text"]))
        stopped = (sec.get("budget") or {}).get("stopped")
        if stopped:  # the report's time bound ran out: the section is partial and says why
            lines.append(_("Partial: {reason}").format(reason=stopped))
        self._status("\n".join([l for l in lines] + [w for w in sec.get("warnings") or []
                                                     if w != cal.get("warning")]))

    def text_only(self) -> list[str] | None:
        """The lines the panel shows when it has neither a table nor a chart to show (no bound
        badcase and a sweep that draws nothing): the report prints them as text instead of a
        picture of an empty panel. None when there is a figure."""
        if not (self.table.isHidden() and self.plot_widget.isHidden()):
            return None
        labels = (self.warning, self.answer, self.status)
        return [line for w in labels if not w.isHidden() for line in w.text().split("\n")
                if line.strip()]

    def _of_requests(self, sw: dict) -> str:
        """'12,031' or 'the first 20,000 of 1,000,000' (a sweep replays at most
        section.SWEEP_MAX_REQUESTS requests)."""
        n, total = sw.get("requests", 0), sw.get("requests_total")
        if total and total > n:
            return _("the first {n} of {total}").format(n=by_spec(n, ','),
                                                        total=by_spec(total, ','))
        return by_spec(n, ',')

    def run_sweep(self) -> None:
        """Replay the chosen run at six capacities (geometric) and plot hit rate and preemptions."""
        try:
            self.state.config()
        except ValueError as e:
            self._status(str(e), error=True)
            return

        def go():
            try:   # the settings or the run may have changed since Sweep was clicked
                job = self.state.sweep_job()
            except (ValueError, RuntimeError) as e:
                self._status(str(e), error=True)
                return
            self.cancel_button.setEnabled(True)
            self._status(ngettext("Sweeping {n} capacity…", "Sweeping {n} capacities…", len(job.capacities)).format(
                n=len(job.capacities)))
            self._submit("replay", lambda ctx: job.run(
                progress=lambda d, n: ctx.progress(d, n, "sweep"), cancelled=ctx.cancelled),
                self.show_sweep, _("Replay sweep"))
        self._with_trace(go)

    def show_sweep(self, rows: list[dict]) -> None:
        """Plot the panel's own sweep: vLLM's first-query hit rate (left axis; comparable
        across capacities, unlike the per-attempt hit_rate_blocks, which a small thrashing
        cache inflates) and preemptions (right axis) vs capacity."""
        self.state.sweep = rows
        (drawn,) = plot_sweeps(self.plot, self.pre_view, [{"rows": rows}],
                               _("prefix-cache hit rate"), _("preemptions"))
        if not drawn:
            return
        self.plot_widget.setVisible(True)
        self._results_shown()
        rows = drawn
        x = [int(r["num_gpu_blocks"]) for r in rows]
        no_prefix = not rows[0].get("prefix_information", True)
        hit = [r.get("hit_rate") for r in rows]
        pre = [int(r["preemptions"]) for r in rows]
        self._stack.setCurrentIndex(1)
        hits = ("" if no_prefix or hit[0] is None or hit[-1] is None else
                _("prefix-cache hit rate {first} → {last}; ").format(
                        first=by_spec(hit[0], '.3f'), last=by_spec(hit[-1], '.3f')))
        self._status(_("Sweep from {smallest} to {largest} blocks: ").format(
                smallest=by_spec(x[0], ','), largest=by_spec(x[-1], ',')) + hits
                     + _("preemptions {first} → {last}; {rejected} request(s) too large for the smallest "
                         "cache.").format(first=by_spec(pre[0], ','),
                                          last=by_spec(pre[-1], ','),
                                          rejected=str(rows[0].get("rejected", 0)))
                     + (f" {_(NO_PREFIX)[0].upper()}{_(NO_PREFIX)[1:]}." if no_prefix else ""))

    def show_sweeps(self, sweeps: list[dict]) -> list[str]:
        """Plot the report's sweeps (one colour per run) and return one line per sweep."""
        self.state.sweep = sweeps[0].get("rows") if sweeps else None
        plot_sweeps(self.plot, self.pre_view, sweeps, _("hit rate"),
                    _("preemptions"))
        # a sweep without prefix information whose preemptions are all 0 draws flat nothing
        # (aibrix's CSVs: an empty chart with a legend in the report): its line says it
        self.plot_widget.setVisible(any(
            (sw.get("rows") or [{}])[0].get("prefix_information", True)
            or any(r.get("preemptions") for r in sw["rows"]) for sw in sweeps if sw.get("rows")))
        self._results_shown()
        lines = []
        for sw in sweeps:
            rows = sw.get("rows") or []
            if not rows:
                lines.append(_("Capacity sweep of {run}: {reason}").format(
                        run=str(sw.get("run_id")), reason=str(sw.get("reason") or "")))
                continue
            hits = [r["hit_rate"] for r in rows if r.get("hit_rate") is not None]
            mono = sw.get("monotone")
            verdict = (_(NO_PREFIX) if mono is None else
                       _("the first-query hit rate {trend} as the capacity grows{span}").format(
                               trend=_("never falls") if mono else _("FALLS somewhere"),
                               span=f" ({by_spec(hits[0], '.3f')} → {by_spec(hits[-1], '.3f')})" if hits else ""))
            lines.append(_("Capacity sweep of {run} ({requests} requests, {upper}): {verdict}; preemptions "
                           "{first} → {last}.").format(run=str(sw.get("run_id")),
                                                       requests=self._of_requests(sw),
                                                       upper=str(sw.get("eviction", "")).upper(),
                                                       verdict=verdict,
                                                       first=by_spec(rows[0]['preemptions'], ','),
                                                       last=by_spec(rows[-1]['preemptions'], ',')))
        return lines

    # -- out of sample --------------------------------------------------------------------------
    def run_validation(self) -> None:
        """Validate the replay on the chosen run's ladder in the mode chosen (fit on low,
        predict high; leave one out; both: explorer.core.replay.loo.validators, the CLI's
        dispatch), in the session's worker with this panel's progress."""
        try:
            job = self.state.validate_job()
        except RuntimeError as e:
            self._status(str(e), error=True)
            return
        self.cancel_button.setEnabled(True)
        self._status(_("Validating the replay on the run's ladder…"))
        self.session.store_job(
            "replay-validate", job, self.show_validation, self._validation_failed,
            label=_("Replay: validating"), progress="validate",
            on_progress=lambda d, n, _t: self._busy("", d, n))

    def _validation_failed(self, err: BaseException) -> None:
        self._idle()
        self._failed(err)

    def show_validation(self, v: dict) -> None:
        """Paint a validation (ValidateJob's result): per mode run, its heading (the mode and
        its verdict) and held-out errors (replay_validation.ValidationView), the answer line,
        what the source could not identify."""
        self._idle()
        self.state.validations[v["run_id"]] = v
        answer, warning = self.validation.show_validation(v)
        self._results_shown(validation=True)
        self._stack.setCurrentIndex(1)
        self.answer.setText(answer)
        self.answer.setVisible(bool(answer))
        reasons = [f"{self.validation.mode_name(o['mode'])}: {o.get('reason', '')}"
                   for o in v["validations"] if o["kind"] != "validated"]
        if v["kind"] != "validated":
            self.show_warning(_("Not validated: {reasons}").format(reasons="; ".join(reasons)),
                              warn=True)
        else:
            self.show_warning(warning, warn=True)
        unid = {u["reason"] for o in v["validations"] for u in
                (o.get("fit") or {}).get("unidentified", ())}
        self._status("\n".join([_("Not identified: {names}").format(names=u) for u in sorted(unid)]
                               + ([v["text"]] if v["kind"] != "validated" else [])))

    def cancel(self) -> None:
        self.jobs.cancel("replay")
        self.session.runner.cancel("replay-validate")
        self._status(_("Cancelled."))
        self._idle()

    def _failed(self, err: BaseException) -> None:
        self._status(str(err) or type(err).__name__, error=True)

    def _status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setProperty("error", error)
        if error and self._stack.currentIndex() == 0:
            self.show_message(text, error=True)

    def copy_text(self) -> str:
        """The table as TSV (a validation's: each mode's heading and table); before a run, the
        message or the hint shown instead."""
        from explorer.core.escape import tsv
        if not self.validation.isHidden():
            return self.validation.copy_text()
        rows = [tsv([[self.table.item(i, j).text() if self.table.item(i, j) else ""
                      for j in range(4)]]) for i in range(self.table.rowCount())]
        # nothing run yet: the message, or the hint shown in place of the table and chart
        return "\n".join(rows) or self.message() or (
            self.hint.text() if not self.hint.isHidden() else "")

    def closeEvent(self, ev):
        self.jobs.cancel()
        super().closeEvent(ev)
