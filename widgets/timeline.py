"""The Timeline panel: one request's life (phases, events, token gaps) and what ran beside it.

TimelinePanel(session) follows the session: a single selected case opens its bound request,
a new cohort opens its worst badcase when nothing is shown yet. show_request(run_id,
request_id) opens any request (tests and other panels call it). What is shown and the Back
history are explorer.core.viewstate.timeline.TimelineState's; its queries run in the session's
worker (key "timeline"), never on the UI thread; show_view(view) paints a fetched view (the
report's picture); painting is widgets.painters.timeline, which the report reuses. Mouse: wheel / drag zoom and pan the time axes; hovering gives exact values;
clicking a neighbour in the swimlane opens it; Back returns to the previous request.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (QCheckBox, QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton,
                               QStackedWidget, QToolTip, QVBoxLayout, QWidget)

from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.viewstate.timeline import (WINDOW_RANGE_S, TimelineQuery, TimelineState,
                                              TimelineView, Unbound)
from explorer.widgets.base import off_screen, watch_dock
from explorer.widgets.painters import timeline as painter
from explorer.core.i18n import _

HOVER_PX = 6


class TimelinePanel(QWidget):
    """Timeline of the selected request, its ITL sequence, and the swimlane of neighbours.

    A view over explorer.core.viewstate.timeline.TimelineState: the state says which request
    to open and keeps the history; its queries run in the session's worker (never on the UI
    thread); without a session (a report's picture) the caller fetches and calls show_view.
    Signals: requestShown(run_id, request_id) after painting; failed(message)."""

    requestShown = Signal(str, str)
    failed = Signal(str)
    chart = True  # Ctrl+C copies the picture beside the data (widgets.base.copy_mime)

    def __init__(self, session=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.state = TimelineState()
        self.view_data: TimelineView | None = None
        self.figure: dict[str, Any] = {}
        self._follow_later: pd.DataFrame | None = None  # a cohort to follow once on screen
        self._dock_hooked = False

        self.back = QPushButton(_("Back"))
        self.back.setEnabled(False)
        self.back.clicked.connect(self.go_back)
        self.compare = QCheckBox(_("Compare with a typical control request"))
        self.compare.setToolTip(_("The control request whose TPOT is nearest the control "
                                  "group's median TPOT, on the same time scale"))
        self.compare.toggled.connect(self._compare_toggled)
        self.window = QDoubleSpinBox()
        self.window.setRange(*WINDOW_RANGE_S)
        self.window.setValue(self.state.window_s)
        self.window.setSuffix(_(" s"))
        self.window.setPrefix("± ")
        self.window.setToolTip(_("Swimlane window around the request"))
        self.window.editingFinished.connect(self._window_edited)
        reset = QPushButton(_("Reset zoom"))
        reset.clicked.connect(self.reset_zoom)
        bar = QHBoxLayout()
        for w in (self.back, self.compare, QLabel(_("Neighbours")), self.window, reset):
            bar.addWidget(w)
        bar.addStretch(1)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.view.scene().sigMouseMoved.connect(self._hover)
        self.view.scene().sigMouseClicked.connect(self._clicked)
        self.readout = QLabel(_("Hover over the timeline for exact values."))
        self.readout.setTextFormat(Qt.TextFormat.PlainText)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setWordWrap(True)  # a long hover text must not widen the dock
        self.msg = QLabel(_("Select a case bound to a request (or a request) to see its "
                            "timeline."))
        self.msg.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.msg.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.msg)
        body = QWidget()
        bl = QVBoxLayout(body)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.view, 1)
        bl.addWidget(self.readout)
        self.stack.addWidget(body)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addWidget(self.stack, 1)

        if session is not None:
            session.resultsChanged.connect(self._on_results)
            session.storeChanged.connect(self.clear)
            if hasattr(session, "selectedCasesChanged"):
                session.selectedCasesChanged.connect(self._on_cases)
            for name in ("requestActivated", "requestSelected"):  # (run_id, request_id)
                if hasattr(session, name):
                    getattr(session, name).connect(self.show_request)

    # -- data in ----------------------------------------------------------------------------
    @property
    def current(self) -> tuple[str, str] | None:
        return self.state.current

    @property
    def frame(self) -> pd.DataFrame | None:
        return self.state.frame

    def set_cohort_frame(self, frame: pd.DataFrame | None) -> None:
        """The cohort (analysis.cohort_frame) the compare mode picks its control request from."""
        self.state.frame = frame

    def show_request(self, run_id: str, request_id: str, record: bool = True) -> None:
        """Open a request: its query runs in the session's worker, then the view is painted
        and requestShown emitted; a failure is shown in place and emits failed."""
        self._submit(self.state.open(run_id, request_id), record)

    def _submit(self, query: TimelineQuery | None, record: bool) -> None:
        if query is None:
            return
        self._follow_later = None  # a request opened (by the user) replaces a pending follow
        if self.session is None:
            return self._fail(_("Nothing loaded yet."))
        self.session.store_job("timeline", query, lambda view: self._fetched(view, record),
                               self._on_error, label=_("Opening request timeline"))

    def _fetched(self, view, record: bool) -> None:
        if isinstance(view, Unbound):
            self.msg.setText(_("Case {case} is not bound to a trace request.").format(
                    case=view.case_id))
            self.stack.setCurrentIndex(0)
            return
        self.show_view(view, record)

    def _compare_toggled(self, on: bool) -> None:
        self.state.compare = on
        self._submit(self.state.reopen(), record=False)

    def _window_edited(self) -> None:
        if self.window.value() != self.state.window_s:
            self.state.window_s = self.window.value()
            self._submit(self.state.reopen(), record=False)

    def go_back(self) -> None:
        self._submit(self.state.back(), record=False)
        self.back.setEnabled(self.state.can_back())

    def clear(self) -> None:
        self.state.clear()
        self._follow_later = None
        self.view_data, self.figure = None, {}
        self.back.setEnabled(False)
        self.view.clear()
        self.stack.setCurrentIndex(0)

    def _on_results(self, update: bus.Update) -> None:
        # follow the cohort's worst badcase until the user opens a request of their own; off
        # screen (a tab behind another) only once shown: the query and the painting cost
        # about a second of a drop at 1M requests that nobody would see
        frame = update.get(bus.FRAME)
        if not isinstance(frame, pd.DataFrame):
            return
        if off_screen(self):
            self.state.frame, self._follow_later = frame, frame  # compare mode reads it now
            return
        self._follow_later = None
        self._submit(self.state.follow(frame), record=False)

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        if not self._dock_hooked:
            self._dock_hooked = watch_dock(self, self._dock_visible)
        if self._follow_later is not None:  # after the layout places it
            QTimer.singleShot(0, self._dock_visible)

    def _dock_visible(self, visible: bool | None = None) -> None:
        """Its tab came to front (or a check after showEvent): follow the cohort now."""
        if self._follow_later is not None and (visible if visible is not None
                                               else not off_screen(self)):
            frame, self._follow_later = self._follow_later, None
            self._submit(self.state.follow(frame), record=False)

    def _on_cases(self, ids) -> None:
        if ids and len(ids) == 1:
            self._submit(self.state.open_case(next(iter(ids))), record=True)

    def message(self) -> str | None:
        """The sentence shown instead of the timeline, or None when a request is shown."""
        return self.msg.text() if self.stack.currentIndex() == 0 else None

    def copy_text(self) -> str:
        """The request shown, as TSV: its phases (start, end, duration in ms from arrival),
        events, and every inter-token gap."""
        if self.message() is not None or not self.view_data:
            return self.message() or ""
        tl = self.view_data.tl
        lines = [f"run\t{tl['run_id']}", f"request\t{tl['request_id']}", "",
                 "phase\tstart_ms\tend_ms\tduration_ms\tnote"]
        lines += [f"{p['kind']}\t{p['start_ms']:g}\t{p['end_ms']:g}\t{p['duration_ms']:g}\t{p['note'] or ''}"
                  for p in tl["phases"]]
        lines += ["", "event\tt_ms\tdetail"]
        lines += [f"{e['kind']}\t{e['t_ms']:g}\t{e['detail'] or ''}" for e in tl["events"]]
        itl = tl.get("itl") or {}
        if itl.get("itl_ms"):
            lines += ["", "token\tt_ms\titl_ms\tabove_run_p99"]
            lines += [f"{i}\t{t:g}\t{g:g}\t{'yes' if a else 'no'}" for i, t, g, a in zip(
                itl["token_index"], itl["t_ms"], itl["itl_ms"], itl["above_p99"])]
        return "\n".join(lines)

    # -- painting ---------------------------------------------------------------------------
    def show_view(self, view: TimelineView, record: bool = True) -> None:
        """Paint a fetched view (TimelineQuery.run / fetch_view) and emit requestShown."""
        self.state.shown(view, record)
        self.back.setEnabled(self.state.can_back())
        self.view_data = view
        tl = view.tl
        if not self.figure:
            self.figure = painter.make_plots(self.view.ci)
        painter.paint_figure(self.figure, tl, view.nb, view.control)
        notes = list(tl["notes"]) + ([view.note] if view.note else [])
        notes += sorted({p["note"] for p in tl["phases"] if p["note"] and p["kind"] != "preempted"})
        nb = view.nb
        text = (_("{n} neighbour in flight within ± {window} s.") if len(nb) == 1 else
                _("{n} neighbours in flight within ± {window} s."))
        self.readout.setText(text.format(n=by_spec(len(nb), ','), window=by_spec(view.window_s, 'g'))
                             + "".join(f" {_sentence(n)}" for n in notes))
        self.stack.setCurrentIndex(1)
        self.requestShown.emit(*self.current)

    def _on_error(self, err: BaseException) -> None:
        self._fail(str(err) or type(err).__name__)

    def _fail(self, text: str) -> None:
        self.msg.setText(text)
        self.stack.setCurrentIndex(0)
        self.failed.emit(text)

    def reset_zoom(self) -> None:
        for key in ("itl", "swimlane", "concurrency"):
            if key in self.figure:
                self.figure[key].enableAutoRange()
        if "timeline" in self.figure:
            self.figure["itl"].enableAutoRange(x=False)
            self.figure["timeline"].setXRange(*self.figure["x_range_ms"], padding=0.02)

    # -- mouse ------------------------------------------------------------------------------
    def hover_text(self, plot_key: str, x: float, y: float, px: float) -> str | None:
        """What lies under data point (x, y) of one plot; px = one pixel in x data units."""
        d = self.view_data
        if d is None:
            return None
        tl, tol = d.tl, HOVER_PX * px
        if plot_key == "timeline":
            rows = [(0.0, tl)] + ([(1.0, d.control)] if d.control else [])
            for row, t in rows:
                if abs(y - (row + painter.BAR_H / 2 + 0.12)) < 0.15:
                    e = painter.hit_event(t, x, tol)
                    if e:
                        return painter.describe_event(e)
                p = painter.hit_phase(t, x, y, row)
                if p:
                    return painter.describe_phase(p)
        elif plot_key == "itl":
            for t in [tl] + ([d.control] if d.control else []):
                i = painter.hit_token(t, x, tol)
                if i is not None:
                    return painter.describe_token(t, i)
            pre = [p for p in tl["preemptions"] if p["start_ms"] <= x <= p["end_ms"]]
            if pre:
                return painter.describe_phase(pre[0])
        elif plot_key == "swimlane":
            i = painter.hit_neighbour(d.nb, self.figure.get("lanes"), x, y)
            if i is not None:
                return painter.describe_neighbour(d.nb.iloc[i].to_dict())
        return None

    def _plot_at(self, scene_pos):
        for key in ("timeline", "itl", "swimlane", "concurrency"):
            p = self.figure.get(key)
            if p is not None and p.sceneBoundingRect().contains(scene_pos):
                return key, p, p.vb.mapSceneToView(scene_pos)
        return None, None, None

    def _hover(self, scene_pos) -> None:
        key, plot, pt = self._plot_at(scene_pos)
        if key is None:
            return
        text = self.hover_text(key, pt.x(), pt.y(), plot.vb.viewPixelSize()[0])
        if text:
            self.readout.setText(text)
            QToolTip.showText(QCursor.pos(), text, self.view)

    def _clicked(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton or self.view_data is None:
            return
        key, _plot, pt = self._plot_at(ev.scenePos())
        if key != "swimlane":
            return
        i = painter.hit_neighbour(self.view_data.nb, self.figure["lanes"], pt.x(), pt.y())
        if i is not None:
            self.show_request(self.current[0], str(self.view_data.nb["request_id"].iloc[i]))


def _sentence(note: str) -> str:
    """A note as a sentence of the readout: capitalised, ending with a full stop ("。" when it
    is written in Chinese)."""
    note = note.strip()
    if not note:
        return ""
    note = note[0].upper() + note[1:]
    if note.endswith((".", "!", "?", ")", "。", "！", "？", "）")):
        return note
    return note + ("。" if any("\u4e00" <= c <= "\u9fff" for c in note) else ".")
