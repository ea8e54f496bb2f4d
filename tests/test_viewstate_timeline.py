"""TimelineState (Qt-free): which request the Timeline panel opens, its Back history, following
the cohort's worst badcase until the user picks, the window's range, and the query that a
worker runs (a selected case resolved to its bound request, or Unbound). Expected requests are
picked here by hand from the hand-built frames and store."""
from __future__ import annotations

import pandas as pd
import pytest

from explorer.core.viewstate.timeline import (TimelineQuery, TimelineState, TimelineView, Unbound,
                                              fetch_view)

RUN = "run-1"


def _view(rid, run=RUN):
    return TimelineView({"run_id": run, "request_id": rid}, pd.DataFrame())


def _frame(bad_tpot: dict, control_tpot: dict | None = None):
    rows = [{"case_id": f"b{r}", "grp": "bad", "run_id": RUN, "request_id": r, "tpot_ms": t}
            for r, t in bad_tpot.items()]
    rows += [{"case_id": f"c{r}", "grp": "control", "run_id": RUN, "request_id": r, "tpot_ms": t}
             for r, t in (control_tpot or {}).items()]
    return pd.DataFrame(rows)


def test_history_records_what_was_shown_before_and_back_walks_it():
    s = TimelineState()
    assert s.reopen() is None and s.back() is None and not s.can_back()
    for rid in ("a", "b", "b", "c"):            # opening the same request twice records once
        q = s.open(RUN, rid)
        assert (q.run_id, q.request_id, q.case_id) == (RUN, rid, None)
        s.shown(_view(rid))
    assert s.current == (RUN, "c") and s.history == [(RUN, "a"), (RUN, "b")]
    q = s.back()
    assert q.request_id == "b" and s.history == [(RUN, "a")]
    s.shown(_view("b"), record=False)           # Back does not record where it came from
    assert s.current == (RUN, "b") and s.history == [(RUN, "a")]
    s.clear()
    assert s.current is None and s.history == [] and s.frame is None


def test_queries_freeze_the_settings_they_were_made_with():
    s = TimelineState()
    frame = _frame({"r1": 5.0})
    s.frame, s.compare, s.window_s = frame, True, 12
    q = s.open(RUN, "r1")
    s.compare, s.window_s = False, 60
    assert (q.window_s, q.compare) == (12.0, True) and q.frame is frame
    assert s.open_case("e:7") == TimelineQuery(None, None, "e:7", 60.0, False)


@pytest.mark.parametrize("bad", [0, 0.5, 3601, float("nan")])
def test_window_outside_its_range_is_refused(bad):
    s = TimelineState()
    with pytest.raises(ValueError):
        s.window_s = bad
    assert s.window_s == 30.0


def test_follows_the_worst_badcase_until_the_user_picks():
    s = TimelineState()
    first = _frame({"r1": 10.0, "r2": 40.0, "r3": 20.0})
    q = s.follow(first)                          # highest TPOT among the bound badcases
    assert q.request_id == "r2" and s.frame is first
    s.shown(_view("r2"), record=False)
    assert s.follow(first) is None               # already shown: nothing to open
    q = s.follow(_frame({"r4": 1.0, "r5": 2.0}))
    assert q.request_id == "r5"
    s.shown(_view("r5"), record=False)
    s.shown(_view("mine"))                       # the user's own choice is kept
    assert s.follow(first) is None and s.frame is first
    assert s.follow(None) is None                # no frame (a failure): nothing changes
    assert s.follow(_frame({})) is None          # no bound badcase: keep what is shown


@pytest.fixture
def two_requests(store):
    store.append("requests", pd.DataFrame(
        [{"run_id": RUN, "request_id": r, "arrival_s": a, "ttft_ms": 100.0, "e2e_ms": 900.0,
          "tpot_ms": t} for r, a, t in (("r1", 10.0, 9.0), ("r2", 10.5, 30.0), ("r3", 11.0, 12.0))]))
    store.append("cases", pd.DataFrame({"case_id": ["e:1", "e:2"], "correct": [False, True]}))
    store.append("case_links", pd.DataFrame({"case_id": ["e:1"], "run_id": [RUN],
                                             "request_id": ["r2"], "level": [1], "score": [1.0]}))
    return store


def test_a_case_query_opens_its_bound_request_or_says_unbound(two_requests):
    s = TimelineState()
    v = s.open_case("e:1").run(two_requests)
    assert isinstance(v, TimelineView) and v.key == (RUN, "r2")
    assert sorted(v.nb["request_id"]) == ["r1", "r3"]      # both in flight within ± 30 s
    assert s.open_case("e:2").run(two_requests) == Unbound("e:2")


def test_compare_fetches_the_control_nearest_the_median_tpot(two_requests):
    frame = _frame({"r2": 30.0}, {"r1": 9.0, "r3": 12.0, "r4": 11.0})
    frame = frame[frame["request_id"] != "r4"]  # median of 9 and 12: both 1.5 away, r1 first
    v = fetch_view(two_requests, RUN, "r2", frame=frame, compare=True)
    assert v.control["request_id"] == "r1" and v.note == ""
    v = fetch_view(two_requests, RUN, "r2", compare=True)
    assert v.control is None and "needs a cohort" in v.note
