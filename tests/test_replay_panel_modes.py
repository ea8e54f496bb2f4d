"""The Replay panel's validation mode (issue 34): choosing leave one out runs the core's
leave_one_out (the dispatch the CLI's --mode uses) and its table holds exactly the numbers that
function returns for the same ladder, recomputed here by calling it; "both" shows one table per
mode, each heading naming its mode; the panel rendered offscreen in English and Chinese."""
from __future__ import annotations

import pytest

from tests.conftest import REAL

pytest.importorskip("pytestqt")

LADDER = REAL / "aibrix" / "ps_experiment_v0.2.1_20250323"
RATES = ("0.1", "0.5", "0.9", "1.3")   # 4 of the 11 rates: keeps it quick
needs_real = pytest.mark.skipif(not LADDER.is_dir(), reason="real aibrix data absent")


@pytest.fixture
def panel(session, qtbot):
    from explorer.widgets.replay import ReplayPanel
    p = ReplayPanel(session)
    qtbot.addWidget(p)
    p.resize(1366, 768)
    p.show()
    yield p
    p.jobs.cancel()
    p.jobs.wait(20000)


def _load(session, panel, qtbot):
    session.load_paths([str(LADDER / f"naive_output_{r}.csv") for r in RATES])
    qtbot.waitUntil(lambda: panel.run_box.count() == len(RATES), timeout=60000)
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)


def _choose(panel, mode: str) -> None:
    panel.validate_mode.setCurrentIndex(panel.validate_mode.findData(mode))


def _validate(panel, qtbot):
    panel.state.validations.clear()
    panel.validate_button.click()
    qtbot.waitUntil(lambda: bool(panel.state.validations), timeout=300000)
    return next(iter(panel.state.validations.values()))


def _cells(table) -> list[list[str]]:
    return [[table.item(i, j).text() for j in range(table.columnCount())]
            for i in range(table.rowCount())]


def _expected_cells(v: dict) -> list[list[str]]:
    """The table's cells written from the core's dict with plain formatting, not the widget's."""
    out = []
    units = {"ttft_ms": "ms", "tpot_ms": "ms/token", "e2e_ms": "ms", "throughput": "tok/s"}
    names = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "e2e_ms": "E2E", "throughput": "throughput"}

    def num(x, u):
        return f"{x:,.1f} {u}" if abs(x) >= 10 else f"{x:.3f} {u}"

    def pct(e):
        if e is None:
            return "–"
        x = 100 * e
        return f"{0.0 if abs(x) < 0.05 else x:+.1f}%"
    for h in v["held_out"]:
        for m in ("ttft_ms", "tpot_ms", "e2e_ms", "throughput"):
            if m in h:
                s = h[m]
                out.append([f"{names[m]} @ {v['setting_key']} {h['setting']:g}",
                            num(s["observed"], units[m]), num(s["replayed"], units[m]),
                            pct(s["error"]), pct(s.get("p90_error"))])
    return out


@needs_real
def test_leave_one_out_in_the_panel_is_the_core_functions(session, panel, qtbot):
    from explorer.core.replay.loo import leave_one_out
    _load(session, panel, qtbot)
    _choose(panel, "loo")
    assert panel.state.validate_mode == "loo"
    seen = []
    panel.progress.valueChanged.connect(seen.append)
    outer = _validate(panel, qtbot)
    assert seen and not panel.progress.isVisible()
    (v,) = outer["validations"]
    assert v["mode"] == "loo" and v["kind"] == "validated"
    # the same ladder, the same settings the panel's job was given, through the core directly
    job = panel.state.validate_job()
    expected = leave_one_out(session.store, job.config, v["group"],
                             replicas=job.replicas or None, routing=job.routing or None)
    assert [h["setting"] for h in v["held_out"]] == [float(r) for r in RATES]
    assert [h["setting"] for h in expected["held_out"]] == [float(r) for r in RATES]
    for got, exp in zip(v["held_out"], expected["held_out"]):
        for m in ("ttft_ms", "tpot_ms", "e2e_ms", "throughput"):
            for k in exp[m]:
                assert got[m][k] == exp[m][k], (got["setting"], m, k)
    assert v["median_abs_error"] == expected["median_abs_error"]
    assert v["label"] == expected["label"]
    # on screen: only the LOO table, its heading naming the mode, cells = the core's numbers
    assert set(panel.validation.tables) == {"loo"}
    head = panel.validation.headings["loo"].text()
    assert head == f"Held-out errors, leave one out: {expected['label']}"
    assert expected["label"].startswith(f"leave-one-out at {len(RATES)} settings")
    assert _cells(panel.validation.tables["loo"]) == _expected_cells(expected)
    assert panel.validation.isVisible() and not panel.split.isVisible()
    assert "each of 4 settings predicted from the other settings' fits" in panel.answer.text()
    # the copy holds the heading and the table
    assert panel.copy_text().splitlines()[0] == head


@needs_real
def test_both_modes_one_table_each_named(session, panel, qtbot, tmp_path):
    from explorer import translators
    from explorer.core.replay.validate import validate_ladder
    _load(session, panel, qtbot)
    _choose(panel, "both")
    outer = _validate(panel, qtbot)
    assert [o["mode"] for o in outer["validations"]] == ["low-high", "loo"]
    assert list(panel.validation.tables) == ["low-high", "loo"]
    low = outer["validations"][0]
    job = panel.state.validate_job()
    exp = validate_ladder(session.store, job.config, low["group"])
    assert _cells(panel.validation.tables["low-high"]) == _expected_cells(exp)
    assert len(exp["held_out"]) == len(RATES) - 1
    assert panel.validation.headings["low-high"].text() == (
        f"Held-out errors, fit on low, predict high: {exp['label']}")
    assert panel.validation.headings["loo"].text().startswith(
        "Held-out errors, leave one out: leave-one-out at 4 settings")
    # the error that applies to a scenario of the run names both validations
    panel.blocks.setValue(panel.blocks.value() + 1000)
    applies = panel.state.error_applies()["text"]
    assert exp["label"] in applies and "leave-one-out at 4 settings" in applies
    panel.grab().save(str(tmp_path / "replay_validate_en.png"))
    translators.install("zh_CN")
    try:
        from explorer.widgets.replay import ReplayPanel
        zh = ReplayPanel(session)
        qtbot.addWidget(zh)
        zh.resize(1366, 768)
        zh.show()
        assert zh.validate_mode.itemText(1) == "留一法"
        zh.paint(session.data["replay_runs"])   # the runs offered, as the session sends them
        _choose(zh, "both")
        zh_v = _validate(zh, qtbot)
        assert zh.validation.headings["loo"].text().startswith("留出设置的误差，留一法：留一法验证 4 个设置")
        assert zh.validation.headings["low-high"].text().startswith(
            "留出设置的误差，低设置拟合、预测高设置：已在 3 个设置上验证")
        # the same numbers in either language
        assert _cells(zh.validation.tables["loo"])[0][1:] == _cells(
            panel.validation.tables["loo"])[0][1:]
        assert zh_v["validations"][1]["median_abs_error"] == outer["validations"][1]["median_abs_error"]
        zh.grab().save(str(tmp_path / "replay_validate_zh.png"))
        zh.jobs.cancel()
    finally:
        translators.install("en")
    import os
    out = os.environ.get("REPLAY_PNG_DIR")
    if out:   # to look at them: REPLAY_PNG_DIR=/tmp/x pytest ...
        import shutil
        for f in tmp_path.glob("*.png"):
            shutil.copy(f, out)


def test_an_unknown_mode_is_refused():
    from explorer.core.replay.loo import validators
    from explorer.core.viewstate.replay import ReplayState
    assert [m for m, _f in validators("both")] == ["low-high", "loo"]
    with pytest.raises(ValueError):
        ReplayState().set(validate_mode="sideways")
