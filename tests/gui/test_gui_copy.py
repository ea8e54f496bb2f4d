"""Ctrl+C copies the focused panel, every panel: tables as TSV with the full text, charts as
their picture plus their data; after Alt+N (View > Go to panel) it is that panel, also the ones
inside a scroll area (What-if, Timeline, Replay), never the header."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from explorer.widgets.mainwindow import panel_shortcut

CHARTS = {"tree", "heatmap", "distributions", "versions", "sla", "timeline"}


def _go(window, name):
    """Trigger View > Go to panel's action for `name` (its Alt+N shortcut)."""
    names = [n for n in window.docks if n != "header"]
    key = QKeySequence(panel_shortcut(names.index(name)))
    act = next(a for a in window.findChildren(type(window.save_action)) if a.shortcut() == key)
    act.trigger()


def _copy(window):
    cb = QApplication.clipboard()
    cb.clear()
    window.copy()
    return cb.mimeData()


def _open_a_request(window, qtbot):
    s = window.session
    frame = s.data["frame"]
    row = frame[frame["request_id"].notna()].iloc[0]
    tl = window.panels["timeline"]
    with qtbot.waitSignal(tl.requestShown, timeout=30000):
        s.open_request(row["run_id"], row["request_id"])
    return row


def test_ctrl_c_copies_every_panel_after_going_to_it(loaded, qtbot):
    window, _, cases = loaded
    s = window.session
    row = _open_a_request(window, qtbot)
    header = window.panels["header"].copy_text()
    for name in [n for n in window.docks if n != "header"]:
        _go(window, name)
        # a tab first shown computes its analysis then (Session.deferred): copy once it is in
        qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=30000)
        assert window.current_panel() is window.panels[name], name
        mime = _copy(window)
        text = mime.text()
        assert text and text != header, name
        assert text == window.panels[name].copy_text(), name
        assert mime.hasImage() == (name in CHARTS), name
        if name in CHARTS:
            assert not mime.imageData().isNull()
    # what each panel's text holds (full text, TSV)
    texts = {}
    for name in window.docks:
        if name != "header":
            _go(window, name)
            texts[name] = _copy(window).text()
    cl = texts["clusters"].splitlines()
    assert cl[0].split("\t") == ["Cluster", "Bad", "Share", "Bound"]
    assert {ln.split("\t")[0] for ln in cl[2:]} == set(cases.loc[~cases["correct"], "cluster"])
    assert texts["comparison"].splitlines()[0].startswith("metric\tbad_mean\tcontrol_mean")
    tree = s.data["tree"]
    assert len(texts["tree"].splitlines()) == len(tree["nodes"]) + 1 and "condition" in texts["tree"]
    assert texts["heatmap"].splitlines()[0].startswith("tpot_ms from\ttpot_ms to")
    frame = s.data["frame"]
    metric = window.panels["distributions"].metric_box.currentData()
    assert texts["distributions"].splitlines()[0] == f"case_id\tgroup\tselected\t{metric}"
    assert len(texts["distributions"].splitlines()) == int(frame[metric].notna().sum()) + 1
    assert "0.5.2" in texts["versions"] and "\t" in texts["versions"]
    assert "%" in texts["sla"]
    assert f"request\t{row['request_id']}" in texts["timeline"] and "phase\tstart_ms" in texts["timeline"]
    assert texts["cases"].splitlines()[0].startswith("case_id\tprompt")
    assert "…" not in texts["cases"]  # the prompts in full, never elided


@pytest.mark.parametrize("name", ["whatif", "timeline"])
def test_after_alt_0_or_9_ctrl_c_copies_that_panel_not_the_header(loaded, qtbot, name):
    """The What-if and Timeline panels live in scroll areas: focus lands on the panel itself."""
    window, _, _ = loaded
    if name == "timeline":
        _open_a_request(window, qtbot)
    _go(window, name)
    panel = window.panels[name]
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel or not window.isActiveWindow(), timeout=2000)
    text = _copy(window).text()
    assert text == panel.copy_text() and text != window.panels["header"].copy_text()
