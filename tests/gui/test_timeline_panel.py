"""Timeline panel (pytest-qt, no sleeps): show_request paints a real AIPerf request, clicking a
neighbour in the swimlane opens it, hovering reads exact values, a selected case opens its bound
request, compare mode draws the typical control, and empty / all-NaN inputs say why."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt

from tests.connection_threads import connection_threads
from explorer.widgets.timeline import TimelinePanel

TIMEOUT = 20000


def _immortalise_singletons() -> None:
    """PySide6 6.12.0 under Python 3.11 drops one reference to None (void Qt calls) or to
    True/False (bool Qt calls) per call; after enough painting the interpreter aborts with
    "none_dealloc" / "bool_dealloc", here at the end of the test session. Python 3.12 made
    these singletons immortal (PEP 683); do the same here. PySide6 6.11.3 does not leak.
    TODO(lead): pin pyside6-essentials<6.12 (or Python >= 3.12) and drop this."""
    import ctypes
    import sys

    import PySide6
    if sys.version_info >= (3, 12) or not PySide6.__version__.startswith("6.12"):
        return
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40


_immortalise_singletons()


@pytest.fixture
def loaded(session, real):
    rep = session.store.load_file(real / "aiperf_example" / "profile_export.jsonl")
    if rep.error:
        pytest.skip(f"the AIPerf loader (engineer T's) failed: {rep.error}")
    recs = [json.loads(x) for x in (real / "aiperf_example" / "profile_export.jsonl").read_text().splitlines()]
    ok = [r for r in recs if not r.get("error")]
    return session, rep.run_ids[0], ok


@pytest.fixture
def panel(loaded, qtbot):
    session, run, ok = loaded
    p = TimelinePanel(session)
    qtbot.addWidget(p)
    p.resize(1200, 800)
    p.show()
    qtbot.waitExposed(p)
    return p


def _laid_out(panel) -> bool:
    rects = [panel.figure[k].sceneBoundingRect() for k in ("timeline", "itl", "swimlane")]
    return all(a.bottom() <= b.top() for a, b in zip(rects, rects[1:]))


def _open(qtbot, panel, run, rid):
    with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
        panel.show_request(run, rid)
    qtbot.waitUntil(lambda: _laid_out(panel), timeout=TIMEOUT)
    panel.view.grab()  # paints once: the view boxes settle their auto ranges
    return sig.args


def test_show_request_paints_phases_itl_and_swimlane(loaded, panel, qtbot):
    _session, run, ok = loaded
    r = ok[5]
    rid = r["metadata"]["x_request_id"]
    assert _open(qtbot, panel, run, rid) == [run, rid]
    assert panel.stack.currentIndex() == 1
    tl = panel.view_data.tl
    assert tl["request_id"] == rid and tl["source"] == "events"
    n_icl = len(r["metrics"]["inter_chunk_latency"]["value"])
    assert len(tl["itl"]["itl_ms"]) == n_icl
    # the ITL curve drawn holds every token gap, at the token times
    curves = [i for i in panel.figure["itl"].listDataItems()
              if isinstance(i, pg.PlotDataItem) and len(i.xData) == n_icl]
    assert curves and np.allclose(curves[0].yData, r["metrics"]["inter_chunk_latency"]["value"])
    assert panel.figure["itl"].getViewBox().state["linkedViews"][0] is not None  # x-linked
    assert str(len(panel.view_data.nb)) in panel.readout.text()


def test_hover_gives_exact_values(loaded, panel, qtbot):
    _session, run, ok = loaded
    r = ok[0]
    _open(qtbot, panel, run, r["metadata"]["x_request_id"])
    ttft = r["metrics"]["ttft"]["value"]
    plot = panel.figure["timeline"]
    scene = plot.vb.mapViewToScene(QPointF(ttft / 2, 0.0))
    panel._hover(scene)
    assert panel.readout.text().startswith("prefill: 0 ms")
    assert f"{ttft:,.0f} ms" in panel.readout.text()
    icl = r["metrics"]["inter_chunk_latency"]["value"]
    x = ttft + sum(icl[:3])  # the third token gap
    panel._hover(panel.figure["itl"].vb.mapViewToScene(QPointF(x, icl[2])))
    assert panel.readout.text().startswith("token 3: ITL")
    assert f"{icl[2]:.4g} ms" in panel.readout.text()


def test_clicking_a_neighbour_opens_it(loaded, panel, qtbot):
    _session, run, ok = loaded
    first = ok[20]["metadata"]["x_request_id"]
    _open(qtbot, panel, run, first)
    nb, lanes = panel.view_data.nb, panel.figure["lanes"]
    i = int(np.argmax(nb["end_s"] - nb["start_s"]))  # a long bar, easy to hit
    target = nb["request_id"].iloc[i]
    x = (nb["start_s"].iloc[i] + nb["end_s"].iloc[i]) / 2
    plot = panel.figure["swimlane"]
    scene = plot.vb.mapViewToScene(QPointF(x, lanes[i] + 1))
    pos = panel.view.mapFromScene(scene)
    with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
        qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert sig.args == [run, target]
    assert panel.back.isEnabled()
    with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
        panel.back.click()
    assert sig.args == [run, first]


def test_selected_case_opens_its_bound_request(loaded, panel, qtbot):
    session, run, ok = loaded
    rid = ok[3]["metadata"]["x_request_id"]
    st = session.store
    st.append("cases", pd.DataFrame({"case_id": ["t:1"], "correct": [False]}))
    st.append("case_links", pd.DataFrame({"case_id": ["t:1"], "run_id": [run], "request_id": [rid],
                                          "level": [1], "score": [1.0]}))
    with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
        session.selectedCasesChanged.emit(frozenset({"t:1"}))
    assert sig.args == [run, rid]


def test_compare_draws_the_typical_control_on_the_same_axis(loaded, panel, qtbot):
    _session, run, ok = loaded
    tpot = {r["metadata"]["x_request_id"]: r["metrics"]["inter_token_latency"]["value"] for r in ok}
    ids = list(tpot)
    frame = pd.DataFrame({"case_id": [f"c{i}" for i in range(12)],
                          "grp": ["bad"] * 2 + ["control"] * 10, "run_id": run,
                          "request_id": ids[:12], "tpot_ms": [tpot[i] for i in ids[:12]]})
    ctl = np.array([tpot[i] for i in ids[2:12]])
    expect = ids[2:12][int(np.argmin(np.abs(ctl - np.median(ctl))))]
    panel.set_cohort_frame(frame)
    _open(qtbot, panel, run, ids[0])
    with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT):
        panel.compare.setChecked(True)
    control = panel.view_data.control
    assert control is not None and control["request_id"] == expect
    ticks = panel.figure["timeline"].getAxis("left")._tickLevels[0]
    assert [t[1] for t in ticks] == ["badcase", "typical control"]


def test_empty_nan_and_unknown_inputs_say_why(loaded, panel, qtbot):
    session, run, _ok = loaded
    session.publish({"frame": pd.DataFrame(columns=["case_id", "grp", "run_id", "request_id"])})
    session.publish({"frame": pd.DataFrame([{"case_id": "e:1", "grp": "bad", "run_id": math.nan,
                                                         "request_id": math.nan, "tpot_ms": math.nan}])})
    assert panel.stack.currentIndex() == 0 and "Select a case" in panel.msg.text()
    with qtbot.waitSignal(panel.failed, timeout=TIMEOUT) as sig:
        panel.show_request(run, "no-such-request")
    assert "not in run" in sig.args[0] and panel.msg.text() == sig.args[0]
    session.store.append("requests", pd.DataFrame([{"run_id": run, "request_id": "bare"}]))
    _open(qtbot, panel, run, "bare")  # a row with every metric NULL still paints
    assert "no timing columns recorded" in panel.readout.text()


def test_pack_lanes_uses_the_fewest_lanes_without_overlap():
    from explorer.widgets.painters.timeline import pack_lanes
    rng = np.random.default_rng(5)
    s = rng.uniform(0, 100, 500)
    e = s + rng.gamma(2, 3, 500)
    lanes = pack_lanes(s, e)
    for k in np.unique(lanes):
        m = np.argsort(s[lanes == k])
        ss, ee = s[lanes == k][m], e[lanes == k][m]
        assert (ss[1:] > ee[:-1]).all()  # no overlap within a lane
    depth = max(int(((s <= t) & (e >= t)).sum()) for t in s)  # max in flight
    assert lanes.max() + 1 == depth


def test_a_new_cohort_opens_its_worst_badcase_until_the_user_picks(loaded, panel, qtbot):
    session, run, ok = loaded
    ids = [r["metadata"]["x_request_id"] for r in ok]
    tpot = {r["metadata"]["x_request_id"]: r["metrics"]["inter_token_latency"]["value"] for r in ok}

    def frame(bad):
        return pd.DataFrame({"case_id": [f"c{i}" for i in range(len(bad))], "grp": "bad",
                             "run_id": run, "request_id": bad, "tpot_ms": [tpot[b] for b in bad]})
    first, second = ids[:5], ids[5:10]
    with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
        session.publish({"frame": frame(first)})
    assert sig.args[1] == max(first, key=tpot.get)
    with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
        session.publish({"frame": frame(second)})
    assert sig.args[1] == max(second, key=tpot.get)
    _open(qtbot, panel, run, ids[20])  # the user's own choice is kept
    session.publish({"frame": frame(first)})
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=TIMEOUT)
    assert panel.current == (run, ids[20])


def test_readout_notes_are_sentences():
    """QA read "± 30 s. no per-token latencies for this request no first-token time…": each
    note is its own capitalised sentence."""
    from explorer.widgets.timeline import _sentence
    notes = ["no per-token latencies for this request",
             "no first-token time: prefill and decode not separable", "Already one."]
    assert "".join(f" {_sentence(n)}" for n in notes) == (
        " No per-token latencies for this request. No first-token time: prefill and decode not"
        " separable. Already one.")


def test_the_panel_never_touches_the_store_on_the_ui_thread(loaded, panel, qtbot):
    """Every store read (open, a selected case, a new cohort, compare, the window, Back) runs
    in the session's worker: the connection records the thread of every use."""
    import threading
    session, run, ok = loaded
    ids = [r["metadata"]["x_request_id"] for r in ok]
    st = session.store
    st.append("cases", pd.DataFrame({"case_id": ["t:1"], "correct": [False]}))
    st.append("case_links", pd.DataFrame({"case_id": ["t:1"], "run_id": [run], "request_id": [ids[3]],
                                          "level": [1], "score": [1.0]}))
    with connection_threads(st) as used:
        _open(qtbot, panel, run, ids[0])
        with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
            session.selectedCasesChanged.emit(frozenset({"t:1"}))
        assert sig.args == [run, ids[3]]
        frame = pd.DataFrame({"case_id": ["c0", "c1"], "grp": ["bad", "control"], "run_id": run,
                              "request_id": ids[5:7], "tpot_ms": [50.0, 10.0]})
        panel.clear()
        with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
            session.publish({"frame": frame})       # follows the worst badcase
        assert sig.args == [run, ids[5]]
        with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT):
            panel.compare.setChecked(True)
        assert panel.view_data.control["request_id"] == ids[6]
        panel.window.setValue(5)
        with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT):
            panel.window.editingFinished.emit()
        assert panel.view_data.window_s == 5
        _open(qtbot, panel, run, ids[8])
        with qtbot.waitSignal(panel.requestShown, timeout=TIMEOUT) as sig:
            panel.back.click()
        assert sig.args == [run, ids[5]]
        qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=TIMEOUT)
    assert used and threading.get_ident() not in used
