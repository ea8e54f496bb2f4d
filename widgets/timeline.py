"""The Timeline panel: one request's life (phases, events, token gaps) and what ran beside it.

TimelinePanel(session) follows the session: a single selected case opens its bound request,
a new cohort opens its worst badcase when nothing is shown yet. show_request(run_id,
request_id) opens any request (tests and other panels call it). The queries run in the
session's worker (key "timeline"); painting is widgets.painters.timeline.build_figure, which the
report reuses. Mouse: wheel / drag zoom and pan the time axes; hovering gives exact values;
clicking a neighbour in the swimlane opens it; Back returns to the previous request.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (QCheckBox, QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton,
                               QStackedWidget, QToolTip, QVBoxLayout, QWidget)

from explorer.core import timeline as core
from widgets.painters import timeline as painter

HOVER_PX = 6


def fetch_view(store, run_id: str, request_id: str, window_s: float = 30.0,
               frame: pd.DataFrame | None = None, compare: bool = False) -> dict[str, Any]:
    """Everything the panel paints (Qt-free; runs in a worker): {"tl": Timeline.to_dict(),
    "nb": neighbours DataFrame, "control": Timeline.to_dict() | None, "note": str}."""
    tl = core.request_timeline(store, run_id, request_id)
    nb = core.neighbours(store, run_id, request_id, window_s)
    out: dict[str, Any] = {"tl": tl.to_dict(), "nb": nb, "control": None, "note": ""}
    if compare:
        if frame is None or not len(frame):
            out["note"] = "compare needs a cohort: no cohort frame yet"
        else:
            try:
                c_run, c_rid = core.typical_control_request(store, frame)
                out["control"] = core.request_timeline(store, c_run, c_rid).to_dict()
            except Exception as e:  # noqa: BLE001 - shown in the panel
                out["note"] = f"no typical control request: {e}"
    return out


class TimelinePanel(QWidget):
    """Timeline of the selected request, its ITL sequence, and the swimlane of neighbours.

    Signals: requestShown(run_id, request_id) after painting; failed(message)."""

    requestShown = Signal(str, str)
    failed = Signal(str)
    chart = True  # Ctrl+C copies the picture beside the data (widgets.base.copy_mime)

    def __init__(self, session=None, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self._store = None
        self.frame: pd.DataFrame | None = None
        self.current: tuple[str, str] | None = None
        self.view_data: dict[str, Any] | None = None
        self.figure: dict[str, Any] = {}
        self.history: list[tuple[str, str]] = []
        self._auto_pick: tuple[str, str] | None = None

        self.back = QPushButton(self.tr("Back"))
        self.back.setEnabled(False)
        self.back.clicked.connect(self.go_back)
        self.compare = QCheckBox(self.tr("Compare with a typical control request"))
        self.compare.setToolTip(self.tr("The control request whose TPOT is nearest the control "
                                        "group's median TPOT, on the same time scale"))
        self.compare.toggled.connect(lambda _on: self.current and self.show_request(*self.current, record=False))
        self.window = QDoubleSpinBox()
        self.window.setRange(1, 3600)
        self.window.setValue(30)
        self.window.setSuffix(self.tr(" s"))
        self.window.setPrefix("± ")
        self.window.setToolTip(self.tr("Swimlane window around the request"))
        self.window.editingFinished.connect(lambda: self.current and self.show_request(*self.current, record=False))
        reset = QPushButton(self.tr("Reset zoom"))
        reset.clicked.connect(self.reset_zoom)
        bar = QHBoxLayout()
        for w in (self.back, self.compare, QLabel(self.tr("Neighbours")), self.window, reset):
            bar.addWidget(w)
        bar.addStretch(1)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground("w")
        self.view.scene().sigMouseMoved.connect(self._hover)
        self.view.scene().sigMouseClicked.connect(self._clicked)
        self.readout = QLabel(self.tr("Hover over the timeline for exact values."))
        self.readout.setTextFormat(Qt.TextFormat.PlainText)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setWordWrap(True)  # a long hover text must not widen the dock
        self.msg = QLabel(self.tr("Select a case bound to a request (or a request) to see its "
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
    def store(self):
        return self.session.store if self.session is not None else self._store

    def set_store(self, store) -> None:
        """Use `store` directly (no session: queries then run on the calling thread)."""
        self._store = store

    def set_cohort_frame(self, frame: pd.DataFrame | None) -> None:
        """The cohort (analysis.cohort_frame) the compare mode picks its control request from."""
        self.frame = frame

    def show_request(self, run_id: str, request_id: str, record: bool = True) -> None:
        """Open a request: query in the session's worker (synchronously without a session),
        then paint and emit requestShown; a failure is shown in place and emits failed."""
        if record and self.current and self.current != (run_id, request_id):
            self.history.append(self.current)
        self.back.setEnabled(bool(self.history))
        store, win, frame, cmp = self.store, self.window.value(), self.frame, self.compare.isChecked()
        if store is None:
            return self._fail(self.tr("Nothing loaded yet."))

        def job(_ctx=None):
            return fetch_view(store, run_id, request_id, win, frame, cmp)
        if self.session is not None:
            self.session.runner.submit("timeline", job, self._paint, self._on_error,
                                       label=self.tr("Opening request timeline"))
        else:
            try:
                self._paint(job())
            except Exception as e:  # noqa: BLE001 - shown in place
                self._on_error(e)

    def go_back(self) -> None:
        if self.history:
            self.show_request(*self.history.pop(), record=False)

    def clear(self) -> None:
        self.current, self.view_data, self.figure, self.history = None, None, {}, []
        self._auto_pick = None
        self.back.setEnabled(False)
        self.view.clear()
        self.stack.setCurrentIndex(0)

    def _on_results(self, update: dict) -> None:
        frame = update.get("frame")
        if isinstance(frame, pd.DataFrame):
            self.frame = frame
            # follow the cohort's worst badcase until the user opens a request of their own
            if self.current is None or self.current == self._auto_pick:
                try:
                    pick = core.worst_badcase(frame)
                except Exception:  # noqa: BLE001 - no bound badcase: keep what is shown
                    return
                if pick != self.current:
                    self._auto_pick = pick
                    self.show_request(*pick, record=False)

    def _on_cases(self, ids) -> None:
        if not ids or len(ids) != 1 or self.store is None:
            return
        case_id = next(iter(ids))
        hit = core.case_request(self.store, case_id)
        if hit is None:
            self.msg.setText(self.tr("Case %1 is not bound to a trace request.").replace("%1", str(case_id)))
            self.stack.setCurrentIndex(0)
        else:
            self.show_request(*hit)

    def message(self) -> str | None:
        """The sentence shown instead of the timeline, or None when a request is shown."""
        return self.msg.text() if self.stack.currentIndex() == 0 else None

    def copy_text(self) -> str:
        """The request shown, as TSV: its phases (start, end, duration in ms from arrival),
        events, and every inter-token gap."""
        if self.message() is not None or not self.view_data:
            return self.message() or ""
        tl = self.view_data["tl"]
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
    def _paint(self, data: dict) -> None:
        tl = data["tl"]
        self.current = (tl["run_id"], tl["request_id"])
        self.view_data = data
        if not self.figure:
            self.figure = painter.make_plots(self.view.ci)
        painter.paint_figure(self.figure, tl, data["nb"], data["control"])
        notes = list(tl["notes"]) + ([data["note"]] if data["note"] else [])
        notes += sorted({p["note"] for p in tl["phases"] if p["note"] and p["kind"] != "preempted"})
        nb = data["nb"]
        text = (self.tr("%1 neighbour in flight within ± %2 s.") if len(nb) == 1 else
                self.tr("%1 neighbours in flight within ± %2 s."))
        self.readout.setText(text.replace("%1", f"{len(nb):,}")
                             .replace("%2", f"{self.window.value():g}")
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
        tl, tol = d["tl"], HOVER_PX * px
        if plot_key == "timeline":
            rows = [(0.0, tl)] + ([(1.0, d["control"])] if d["control"] else [])
            for row, t in rows:
                if abs(y - (row + painter.BAR_H / 2 + 0.12)) < 0.15:
                    e = painter.hit_event(t, x, tol)
                    if e:
                        return painter.describe_event(e)
                p = painter.hit_phase(t, x, y, row)
                if p:
                    return painter.describe_phase(p)
        elif plot_key == "itl":
            for t in [tl] + ([d["control"]] if d["control"] else []):
                i = painter.hit_token(t, x, tol)
                if i is not None:
                    return painter.describe_token(t, i)
            pre = [p for p in tl["preemptions"] if p["start_ms"] <= x <= p["end_ms"]]
            if pre:
                return painter.describe_phase(pre[0])
        elif plot_key == "swimlane":
            i = painter.hit_neighbour(d["nb"], self.figure.get("lanes"), x, y)
            if i is not None:
                return painter.describe_neighbour(d["nb"].iloc[i].to_dict())
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
        i = painter.hit_neighbour(self.view_data["nb"], self.figure["lanes"], pt.x(), pt.y())
        if i is not None:
            self.show_request(self.current[0], str(self.view_data["nb"]["request_id"].iloc[i]))


def _sentence(note: str) -> str:
    """A note as a sentence of the readout: capitalised, ending with a full stop."""
    note = note.strip()
    if not note:
        return ""
    note = note[0].upper() + note[1:]
    return note if note.endswith((".", "!", "?", ")")) else note + "."
