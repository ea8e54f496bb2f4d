"""State of the Timeline panel (Qt-free): which request is shown, the Back history, the cohort
frame it follows, the swimlane window and the compare mode; and the query that fetches what the
panel paints (TimelineQuery.run(store), called in the session's worker, never on the UI thread).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from explorer.core import timeline as core

WINDOW_RANGE_S = (1.0, 3600.0)   # the swimlane window around the request, seconds (±)


@dataclass(frozen=True)
class TimelineView:
    """What the Timeline panel paints for one request (the typed payload of its query).

    tl: Timeline.to_dict() of the request; nb: neighbours() DataFrame (the swimlane);
    control: Timeline.to_dict() of the typical control request in compare mode, else None;
    note: why compare mode shows no control ('' when it does or is off); window_s: the
    swimlane window the neighbours were fetched with."""
    tl: dict[str, Any]
    nb: pd.DataFrame
    control: dict[str, Any] | None = None
    note: str = ""
    window_s: float = 30.0

    @property
    def key(self) -> tuple[str, str]:
        return str(self.tl["run_id"]), str(self.tl["request_id"])


@dataclass(frozen=True)
class Unbound:
    """The answer to a case query when the case is bound to no trace request."""
    case_id: str


def fetch_view(store, run_id: str, request_id: str, window_s: float = 30.0,
               frame: pd.DataFrame | None = None, compare: bool = False) -> TimelineView:
    """Everything the panel paints for one request (reads the store: run it in a worker)."""
    tl = core.request_timeline(store, run_id, request_id)
    nb = core.neighbours(store, run_id, request_id, window_s)
    control, note = None, ""
    if compare:
        if frame is None or not len(frame):
            note = "compare needs a cohort: no cohort frame yet"
        else:
            try:
                c_run, c_rid = core.typical_control_request(store, frame)
                control = core.request_timeline(store, c_run, c_rid).to_dict()
            except Exception as e:  # noqa: BLE001 - shown in the panel
                note = f"no typical control request: {e}"
    return TimelineView(tl.to_dict(), nb, control, note, window_s)


@dataclass(frozen=True)
class TimelineQuery:
    """One request to open (run_id, request_id), or the request a case is bound to (case_id),
    with the state's settings frozen when it was made. run(store) -> TimelineView, or Unbound
    for a case bound to no request."""
    run_id: str | None = None
    request_id: str | None = None
    case_id: str | None = None
    window_s: float = 30.0
    compare: bool = False
    frame: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    def run(self, store) -> TimelineView | Unbound:
        run_id, request_id = self.run_id, self.request_id
        if self.case_id is not None:
            hit = core.case_request(store, self.case_id)
            if hit is None:
                return Unbound(self.case_id)
            run_id, request_id = hit
        return fetch_view(store, run_id, request_id, self.window_s, self.frame, self.compare)


class TimelineState:
    """The Timeline panel's choices. The panel asks for a query (open, open_case, reopen,
    back, follow), runs it in a worker and hands the view back with shown(view, record)."""

    def __init__(self) -> None:
        self.current: tuple[str, str] | None = None   # the request painted
        self.history: list[tuple[str, str]] = []      # requests to go Back to
        self.frame: pd.DataFrame | None = None        # the cohort (compare mode, following)
        self.auto_pick: tuple[str, str] | None = None # the cohort's worst badcase, opened by us
        self._window_s = 30.0
        self.compare = False

    # -- settings ---------------------------------------------------------------------------
    @property
    def window_s(self) -> float:
        return self._window_s

    @window_s.setter
    def window_s(self, value: float) -> None:
        lo, hi = WINDOW_RANGE_S
        v = float(value)
        if not lo <= v <= hi:
            raise ValueError(f"swimlane window {v:g} s outside [{lo:g}, {hi:g}] s")
        self._window_s = v

    def can_back(self) -> bool:
        return bool(self.history)

    # -- queries ----------------------------------------------------------------------------
    def open(self, run_id: str, request_id: str) -> TimelineQuery:
        return TimelineQuery(str(run_id), str(request_id), None, self._window_s, self.compare,
                             self.frame)

    def open_case(self, case_id: str) -> TimelineQuery:
        return TimelineQuery(None, None, str(case_id), self._window_s, self.compare, self.frame)

    def reopen(self) -> TimelineQuery | None:
        """The request shown again (the window or compare mode changed), None when none."""
        return self.open(*self.current) if self.current else None

    def back(self) -> TimelineQuery | None:
        """The previous request (taken off the history), None when there is none."""
        return self.open(*self.history.pop()) if self.history else None

    def follow(self, frame: pd.DataFrame | None) -> TimelineQuery | None:
        """A new cohort frame: keep it for compare mode, and while the panel shows nothing or
        the request it picked itself, open the cohort's worst bound badcase (None when there
        is nothing new to open)."""
        if not isinstance(frame, pd.DataFrame):
            return None
        self.frame = frame
        if self.current is not None and self.current != self.auto_pick:
            return None   # the user's own choice is kept
        try:
            pick = core.worst_badcase(frame)
        except Exception:  # noqa: BLE001 - no bound badcase: keep what is shown
            return None
        if pick == self.current:
            return None
        self.auto_pick = pick
        return self.open(*pick)

    # -- results ----------------------------------------------------------------------------
    def shown(self, view: TimelineView, record: bool = True) -> None:
        """The view of a query is painted: it becomes current; the request shown before goes
        on the Back history when record (a Back or a refresh does not record)."""
        if record and self.current and self.current != view.key:
            self.history.append(self.current)
        self.current = view.key

    def clear(self) -> None:
        """A new store: nothing shown, no history, no cohort."""
        self.current, self.history, self.auto_pick, self.frame = None, [], None, None
