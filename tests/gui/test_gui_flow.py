"""The user's story in the window: drop files, choose a cluster, click a tree node, click a
heatmap cell; assert both directions (UI -> model and model -> UI) against numpy."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from explorer.session import Failure
from tests.gui.conftest import on_screen


def _drop(widget, paths):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    pos = widget.rect().center()
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    try:  # PySide6 < 6.12 takes a QPoint, later ones a QPointF
        enter = QDragEnterEvent(pos, *args)
    except TypeError:
        enter = QDragEnterEvent(QPointF(pos), *args)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted(), "the window refused the drag"
    drop = QDropEvent(QPointF(pos), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, drop)
    assert drop.isAccepted()


def test_dropping_files_fills_the_panels(window, qtbot, real):
    mmlu = real / "mmlu_pro_outputs" / "Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json"
    missing = real / "no_such_file.json"
    target = window.panels["comparison"].view.viewport()  # dropped anywhere: here on a table
    _drop(target, [mmlu, missing])
    s = window.session
    qtbot.waitUntil(lambda: isinstance(s.data.get("comparison"), (list, Failure)) and s.runner.pending() == 0,
                    timeout=60000)
    inputs = window.panels["inputs"].tree
    assert inputs.topLevelItemCount() == 2
    bad = [inputs.topLevelItem(i) for i in range(2) if inputs.topLevelItem(i).text(4) == "error"]
    assert len(bad) == 1 and "no_such_file" in bad[0].child(0).text(0)  # the bad file says why
    assert window.inputs_status.text() == "1 file loaded · 1 could not be read"
    # the MMLU-Pro file: every wrong answer is a badcase (pred != answer), counted with json
    import json
    raw = json.loads(mmlu.read_text())
    wrong = sum(1 for r in raw if r.get("pred") != r.get("answer"))
    clusters = window.panels["clusters"]
    assert clusters.model.rows[0][1] == f"{wrong:,}"  # "(all badcases)" row
    assert window.panels["comparison"].model.rowCount() > 0
    assert window.panels["cases"].model.rowCount() > 0
    assert window.panels["header"].message() is None


def test_choosing_a_cluster_updates_the_comparison(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    panel = window.panels["clusters"]
    proxy = panel.proxy
    row = next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data() == "format error")
    with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "comparison" in u.names()):
        panel.view.selectRow(row)
    assert s.cluster == "format error"
    comp = {r["metric"]: r for r in s.data["comparison"]}
    bad = cases[(~cases["correct"]) & (cases["cluster"] == "format error")]
    m = req.set_index("request_id").loc[bad["request_id"]]
    assert comp["tpot_ms"]["n_bad"] == len(bad)
    assert np.isclose(comp["tpot_ms"]["bad_mean"], m["tpot_ms"].mean())
    # model -> UI: the table and the header show the new cohort
    shown = panel.model.rows
    assert window.panels["comparison"].model.rowCount() == len(s.data["comparison"])
    header = dict((t, v) for t, v, _ in window.panels["header"].items)
    assert header["Cluster"] == "format error" and header["Badcases"].startswith(f"{len(bad)} ")
    assert shown  # the list itself is unchanged


def test_clicking_a_tree_node_selects_its_cases(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    tree = s.data["tree"]
    assert isinstance(tree, dict) and tree["nodes"], tree
    node = next(n for n in tree["nodes"] if n["parent"] is not None)
    tp = window.docks["tree"]
    tp.raise_()
    panel = window.panels["tree"]
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000):
        panel.click_node(node["id"])
    assert len(s.selected_cases) == node["n"]
    qtbot.waitUntil(lambda: window.panels["cases"].model.rowCount() == node["n"], timeout=30000)
    header = dict((t, v) for t, v, _ in window.panels["header"].items)
    assert header["Selected"].startswith(f"{node['n']} cases")
    # Esc clears, Back restores
    QTest.keyClick(window, Qt.Key.Key_Escape)
    assert s.selection is None
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000):
        s.back()
    assert len(s.selected_cases) == node["n"]


def test_clicking_a_heatmap_cell_selects_its_requests(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    on_screen(window, qtbot, "heatmap")  # its analysis waits for its tab (Session.deferred)
    with qtbot.waitSignal(s.resultsChanged, timeout=60000, check_params_cb=lambda u: "heatmap" in u.names()):
        s.set_params("heatmap", level="request", x_metric="tpot_ms", y_metric="queue_ms",
                     value_metric="e2e_ms")
    hm = s.data["heatmap"]
    counts = np.array(hm["counts"])
    iy, ix = np.unravel_index(np.argmax(counts), counts.shape)
    xe, ye = np.array(hm["x_edges"]), np.array(hm["y_edges"])
    last_x, last_y = ix == len(xe) - 2, iy == len(ye) - 2
    inx = (req["tpot_ms"] >= xe[ix]) & ((req["tpot_ms"] <= xe[ix + 1]) if last_x else (req["tpot_ms"] < xe[ix + 1]))
    iny = (req["queue_ms"] >= ye[iy]) & ((req["queue_ms"] <= ye[iy + 1]) if last_y else (req["queue_ms"] < ye[iy + 1]))
    expected = int((inx & iny).sum())
    window.docks["heatmap"].raise_()
    panel = window.panels["heatmap"]
    qtbot.waitUntil(lambda: panel.glw.isVisible(), timeout=10000)
    pos = panel.glw.mapFromScene(panel.cell_scene_pos(int(ix), int(iy)))
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=30000):
        QTest.mouseClick(panel.glw.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos.x(), pos.y()))
    assert s.selected_requests == expected == counts[iy, ix]


def test_a_result_for_an_older_cluster_is_dropped(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    dropped = []
    s.runner.dropped.connect(dropped.append)
    seen = []
    s.resultsChanged.connect(lambda u: seen.append(u.names()["cohort"]["cluster"]) if isinstance(u.names().get("cohort"), dict) else None)
    s.set_cluster("format error")
    s.set_cluster("单位换算")  # the user changed their mind before the first run finished
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    assert "analysis" in dropped
    assert seen == ["单位换算"]  # nothing of "format error" was painted
    header = dict((t, v) for t, v, _ in window.panels["header"].items)
    assert header["Cluster"] == "单位换算"


def test_save_and_reopen_a_session(loaded, qtbot, tmp_path):
    window, req, cases = loaded
    s = window.session
    before = [(c["name"], c["badcases"]) for c in s.data["clusters"]]
    assert len(before) > 1
    smallest = before[-1][0]  # not the one a fresh session starts on
    s.set_cluster(smallest)
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    path = str(tmp_path / "s.duckdb")
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.save_session(path)
    s.set_cluster(None)
    with qtbot.waitSignal(s.storeChanged, timeout=60000):
        s.open_session(path)
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    assert [(c["name"], c["badcases"]) for c in s.data["clusters"]] == before
    assert s.cluster == smallest and s.data["cohort"]["cluster"] == smallest
    assert s.data["comparison"] and window.panels["comparison"].message() is None


def test_export_takes_the_users_whatif_scenario(loaded, qtbot):
    """File > Export Report writes the scenario the user set in the What-if panel (not the
    defaults), with its result once it is finished and current."""
    window, _, _ = loaded
    panel = window.panels["whatif"]
    window.focus_panel("whatif")
    qtbot.waitUntil(lambda: panel.frame is not None, timeout=60000)
    panel.set_box.setValue(0.8)
    panel.run()
    qtbot.waitUntil(lambda: panel.jobs.pending() == 0 and panel.result is not None, timeout=120000)
    scenario = window.whatif_scenario()
    assert scenario["whatif"]["set_value"] == 0.8
    assert scenario["whatif"]["treatment"] == panel.treatment.currentData()
    assert scenario["whatif_result"] is panel.result
    assert panel.result["scenario"]["set"][scenario["whatif"]["treatment"]] == 0.8


def test_ctrl_c_copies_the_focused_table_as_tsv(loaded, qtbot):
    """Edit > Copy (Ctrl+C) on the metric comparison puts one TSV line per metric on the
    clipboard, as the README says (Markdown stays on the panel's own button)."""
    window, _, _ = loaded
    panel = window.panels["comparison"]
    window.focus_panel("comparison")
    rows = panel.value
    assert isinstance(rows, list) and rows
    QApplication.clipboard().clear()
    window.copy()
    lines = QApplication.clipboard().text().splitlines()
    assert len(lines) == len(rows) + 1 and all("\t" in ln for ln in lines)
    assert not lines[0].startswith("|")
