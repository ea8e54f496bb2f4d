"""Replay panel (widgets/replay.py): UI -> model (Run adds a simulated run to the session with
the replay's figures; Sweep draws hit rate against capacity) and model -> UI (loading a trace
fills the run picker; an empty session shows why there is nothing to replay)."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")


@pytest.fixture
def session(qapp):
    from explorer.session import Session
    s = Session()
    yield s
    s.runner.wait(20000)
    s.store.close()


@pytest.fixture
def panel(session, qtbot):
    from widgets.replay import ReplayPanel
    p = ReplayPanel(session)
    qtbot.addWidget(p)
    p.show()
    yield p
    p.runner.cancel()
    p.runner.wait(20000)


def test_empty_session_says_why(panel):
    panel.show_result([])
    assert "Load a trace" in panel.message()


def test_run_and_sweep_on_a_mooncake_trace(real, session, panel, qtbot, tmp_path):
    from explorer.core.replay import EngineConfig, read_mooncake, simulate
    # the first 1000 requests of the real synthetic trace, copied to tmp_path (keeps it quick)
    src = (real / "mooncake" / "synthetic_trace.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "synthetic_1000.jsonl"
    path.write_text("".join(src[:1000]))
    session.load_paths([str(path)])
    qtbot.waitUntil(lambda: panel.run_box.count() == 1, timeout=30000)
    panel.blocks.setValue(1500)
    panel.add_run.setChecked(True)
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    expected = simulate(read_mooncake(path), EngineConfig(num_gpu_blocks=1500),
                        record_events=False).summary
    assert panel.result.summary["preemptions"] == expected["preemptions"]
    labels = [panel.table.item(i, 0).text() for i in range(panel.table.rowCount())]
    row = labels.index("preemptions")
    assert panel.table.item(row, 2).text() == str(expected["preemptions"])
    assert panel.table.item(row, 1).text() == "–"          # Mooncake records no preemptions
    # headline: the capacity-comparable share of prompt tokens served from cache leads; vLLM's
    # per-attempt hit_rate_blocks follows, explained
    status = panel.status.text().splitlines()
    assert status[0].startswith("prompt tokens served from the prefix cache: "
                                f"{100 * expected['hit_rate_tokens']:.1f}%")
    assert "vLLM-style, counted per scheduling attempt" in status[1]
    assert labels[0] == "prompt tokens served from cache"
    assert panel.table.item(0, 2).text() == f"{expected['hit_rate_tokens']:.3f}"
    # the store belongs to the session's worker: wait until it is idle, then read on a cursor
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=30000)
    cur = session.store.cursor()
    assert cur.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 2
    sim = cur.execute("SELECT simulated, label FROM runs WHERE format = 'replay'").df()
    assert bool(sim.simulated.iloc[0]) and "1500x16" in sim.label.iloc[0]
    panel.run_sweep()
    qtbot.waitUntil(lambda: panel.sweep is not None, timeout=120000)
    assert 1500 in [r["num_gpu_blocks"] for r in panel.sweep]
    # where no request is too large to fit, more capacity never lowers the hit rate
    hits = [r["hit_rate_tokens"] for r in panel.sweep if r["rejected"] == 0]
    assert hits == sorted(hits) and len(hits) >= 4
    # the chart draws that comparable figure (not hit_rate_blocks) against capacity
    curve = panel.plot.listDataItems()[0]
    drawn = [r for r in panel.sweep if r["num_gpu_blocks"]]
    assert list(curve.yData) == pytest.approx([r["hit_rate_tokens"] for r in drawn])
    assert "prompt tokens served from cache" in panel.status.text()


def test_sweep_of_a_trace_without_hash_ids_draws_no_hit_rate(panel):
    rows = [{"num_gpu_blocks": c, "prefix_information": False, "hit_rate_tokens": None,
             "hit_rate_blocks": None, "preemptions": p, "rejected": 0}
            for c, p in ((100, 5), (1000, 0))]
    panel.show_sweep(rows)
    assert "no prefix information in this trace (no hash_ids)" in panel.status.text().lower()
    assert len(panel.plot.listDataItems()) == 0
    assert panel.sweep[0]["preemptions"] > panel.sweep[-1]["preemptions"] == 0
