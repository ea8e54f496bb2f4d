"""Issue 33, replay: the scenario starts at 4x the observed blocks with "Add as run" off; a
run is calibrated at the settings it recorded (not the scenario's), so every scenario of a run
shows one verdict, equal to calibrate_run at the observed settings; a run without latencies
warns that the absolute latencies are not calibrated."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import explorer.demo as demo


def test_demo_run_is_calibrated_once_at_its_observed_settings():
    from explorer.core.replay.calibrate import calibrate_run
    from explorer.core.replay.model import EngineConfig
    from explorer.core.store import Store
    from explorer.core.viewstate.replay import ReplayState, replay_runs
    s = Store()
    demo.load_demo(s)
    st = ReplayState()
    st.set_runs(replay_runs(s))
    run = "demo-vllm-sim-0.6.1"
    st.choose_run(run)
    recorded = st.settings_query().run(s)
    st.apply_observed(recorded)
    assert st.blocks == 4 * recorded["num_gpu_blocks"] and st.add_run is False
    st.take_trace(st.trace_query().run(s))
    job = st.replay_job()
    assert job.config.num_gpu_blocks == 4 * recorded["num_gpu_blocks"]
    observed = EngineConfig(num_gpu_blocks=recorded["num_gpu_blocks"], block_size=16,
                            max_num_seqs=256, max_num_batched_tokens=8192, eviction="fifo")
    assert job.observed == observed
    res, cal = job.run()
    want = calibrate_run(s, run, observed).to_dict()
    got = cal.to_dict()
    for m in ("ttft_ms", "tpot_ms"):
        assert got[m]["error"] == pytest.approx(want[m]["error"], abs=1e-9)
    # calibrated where the latencies were measured: the mean is reproduced, no red warning
    assert abs(got["ttft_ms"]["error"]) < 0.05 and cal.warning is None
    st.keep_calibration(job, cal)
    st.set(blocks=20000)   # another scenario of the same run: the same verdict, not refitted
    assert st.replay_job().calibration is cal
    s.close()


def test_uncalibrated_latencies_warn(qtbot):
    from explorer.session import Session
    from explorer.widgets.replay import WARN_TEXT, ReplayPanel
    session = Session()
    panel = ReplayPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.add_run.isChecked()
    st = session.store
    st.append("runs", pd.DataFrame([{"run_id": "r", "label": "small", "format": "csv",
                                     "config": json.dumps({"num_gpu_blocks": 50})}]))
    st.append("requests", pd.DataFrame(
        [{"run_id": "r", "request_id": f"q{i}", "arrival_s": 0.05 * i, "prompt_tokens": 300 + i,
          "completion_tokens": 40} for i in range(12)]))
    session.rescan()
    qtbot.waitUntil(lambda: panel.run_box.count() == 1 and panel.blocks.value() == 200,
                    timeout=30000)
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    assert panel.warning.isVisibleTo(panel) and "Not calibrated" in panel.warning.text()
    assert WARN_TEXT.lower() in panel.warning.styleSheet().lower()
    ms = [panel.table.item(i, 2) for i in range(panel.table.rowCount())
          if " ms" in panel.table.item(i, 2).text()]
    assert ms and all(i.foreground().color().name().lower() == WARN_TEXT.lower() for i in ms)
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=30000)
    assert st.cursor().execute("SELECT count(*) FROM runs").fetchall()[0][0] == 1  # not added
    panel.jobs.cancel()
    panel.jobs.wait(20000)
    for r in session.runners():
        r.wait(20000)
    st.close()
