"""Replay panel (widgets/replay.py): UI -> model (Run adds a simulated run to the session with
the replay's figures; Sweep draws hit rate against capacity) and model -> UI (loading a trace
fills the run picker; an empty session shows why there is nothing to replay)."""
from __future__ import annotations

import pytest

from tests.connection_threads import connection_threads

pytest.importorskip("pytestqt")


@pytest.fixture
def panel(session, qtbot):
    from explorer.widgets.replay import ReplayPanel
    p = ReplayPanel(session)
    qtbot.addWidget(p)
    p.show()
    yield p
    p.jobs.cancel()
    p.jobs.wait(20000)


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
    # headline: vLLM's hit rate over first queries by tokens leads; preempted re-queries are
    # counted apart; the older per-attempt hit_rate_blocks follows, explained
    status = panel.status.text().splitlines()
    assert status[0].startswith(f"prefix-cache hit rate {100 * expected['hit_rate']:.1f}% of "
                                "first-query tokens")
    assert expected["preemptions"] > 0 and status[1].startswith("preempted requests re-queried")
    assert "older per-attempt block count" in status[2]
    assert labels[0] == "prefix-cache hit rate (first-query tokens)"
    assert panel.table.item(0, 2).text() == f"{expected['hit_rate']:.3f}"
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
    hits = [r["hit_rate"] for r in panel.sweep if r["rejected"] == 0]
    assert hits == sorted(hits) and len(hits) >= 4
    # the sweep starts where every request fits; only the capacity asked for may reject some
    assert all(r["rejected"] == 0 for r in panel.sweep if r["num_gpu_blocks"] != 1500)
    # the chart draws that comparable figure (not hit_rate_blocks) against capacity
    curve = panel.plot.listDataItems()[0]
    drawn = [r for r in panel.sweep if r["num_gpu_blocks"]]
    assert list(curve.yData) == pytest.approx([r["hit_rate"] for r in drawn])
    assert "prefix-cache hit rate" in panel.status.text()


def test_sweep_of_a_trace_without_hash_ids_draws_no_hit_rate(panel):
    rows = [{"num_gpu_blocks": c, "prefix_information": False, "hit_rate_tokens": None,
             "hit_rate_blocks": None, "preemptions": p, "rejected": 0}
            for c, p in ((100, 5), (1000, 0))]
    panel.show_sweep(rows)
    assert "no prefix information in this trace (no hash_ids)" in panel.status.text().lower()
    assert len(panel.plot.listDataItems()) == 0
    assert panel.sweep[0]["preemptions"] > panel.sweep[-1]["preemptions"] == 0


def test_run_on_the_aiperf_example_shows_its_calibration(real, session, panel, qtbot):
    """The replay is calibrated on the run's observed TTFT / TPOT before it runs; the panel says
    by how much it was off before, what it reproduces after, and what it dropped."""
    from explorer.core.replay.calibrate import calibrate_run
    path = real / "aiperf_example" / "profile_export.jsonl"
    session.load_paths([str(path)])
    qtbot.waitUntil(lambda: panel.run_box.count() >= 1, timeout=30000)
    panel.add_run.setChecked(False)
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    cal = panel.calibration
    assert cal is not None and cal.warning is None and not panel.warning.isVisibleTo(panel)
    expected = calibrate_run(session.store, panel.run_box.currentData(), panel.config()).to_dict()
    text = panel.status.text()
    assert (f"calibration TTFT: observed mean {expected['ttft_ms']['observed']:,.1f} ms, replayed "
            f"{expected['ttft_ms']['replayed']:,.1f}") in text
    assert f"before calibration {expected['before']['ttft_ms']['error']:+.1%}" in text
    assert "11 request(s) dropped: errored (499 RequestCancellationError" in text
    assert panel.result.summary["ttft_ms_mean"] == pytest.approx(expected["ttft_ms"]["replayed"])


def test_a_calibration_warning_is_shown_prominently(panel):
    panel.show_warning("Calibration error above 25% (TPOT +190%): the replay does not "
                       "reproduce the observed run; its what-if answers may mislead.")
    assert not panel.warning.isHidden() and "above 25%" in panel.warning.text()
    panel.show_warning(None)
    assert panel.warning.isHidden()


def test_report_section_paints_answer_table_and_sweep(panel):
    sec = {"setting": {"label": "40,000 KV blocks (observed 10,000)"}, "observed_badcases": 304,
           "predicted_badcases": 222.2, "ci_low": 210.0, "ci_high": 237.0,
           "sentence": "304 observed, 222.2 predicted",
           "calibration": {"ttft_ms": {"observed": 100.0, "replayed": 150.0, "error": 0.5},
                           "before": {}, "step_time": "default", "warning": "Calibration error "
                           "above 25% (TTFT +50%)"},
           "replay": {"hit_rate": {"observed_settings": 0.04, "scenario": 0.05},
                      "preemptions": {"observed_settings": 748, "scenario": 0}},
           "sweep": {"rows": [{"num_gpu_blocks": c, "hit_rate": h, "preemptions": p, "rejected": 0}
                              for c, h, p in ((1000, 0.1, 9), (4000, 0.2, 0))]}}
    panel.show_report(sec)
    assert panel.answer.text() == "304 observed, 222.2 predicted"
    assert panel.warning.isVisibleTo(panel) and "TTFT +50%" in panel.warning.text()
    labels = [panel.table.item(i, 0).text() for i in range(panel.table.rowCount())]
    assert labels[0] == "badcases (observed → predicted)"
    assert panel.table.item(0, 2).text() == "222.2" and panel.table.item(0, 3).text() == "-26.9%"
    assert list(panel.plot.listDataItems()[0].yData) == [0.1, 0.2]


def test_report_sweeps_of_two_runs_are_drawn_in_two_colours(panel):
    """The report's `sweeps` (e.g. both Mooncake traces): one hit-rate curve per run, named by
    its run; decade ticks labelled on the log axis; one sentence per sweep."""
    sweeps = [{"run_id": rid, "requests": 100, "eviction": "lru", "monotone": True,
               "rows": [{"num_gpu_blocks": c, "hit_rate": h, "preemptions": p, "rejected": 0}
                        for c, h, p in rows]}
              for rid, rows in (("mooncake:conversation_trace", ((8000, 0.04, 5143), (46000, 0.05, 5),
                                                                 (9_000_000, 0.37, 0))),
                                ("mooncake:synthetic_trace", ((12000, 0.03, 245), (3_800_000, 0.65, 0))))]
    panel.show_report({"predicted_badcases": None, "reason": "No badcase", "sweep": sweeps[0],
                       "sweeps": sweeps})
    items = panel.plot.listDataItems()
    assert [list(i.yData) for i in items] == [[0.04, 0.05, 0.37], [0.03, 0.65]]
    assert items[0].opts["pen"].color() != items[1].opts["pen"].color()
    names = [label.text for _s, label in panel.plot.legend.items]
    assert "hit rate (mooncake:synthetic_trace)" in names
    major = panel.plot.getAxis("bottom")._tickLevels[0]
    assert [t for _v, t in major] == ["10k", "100k", "1M"]
    text = panel.status.text()
    assert text.count("never falls as the capacity grows") == 2 and "5,143 → 0" in text


def test_predict_badcases_on_the_demo(session, panel, qtbot):
    """Predict badcases: the cohort's window replayed at the observed settings and under the
    panel's, the answer painted as the report paints it; the numbers are predict()'s own."""
    from explorer.core.analysis.cohort import Cohort
    from explorer.core.replay.badcases import gather_inputs, predict
    cluster = "计算题中间步骤出错"
    assert session.load_demo()
    qtbot.waitUntil(lambda: panel.run_box.count() >= 2, timeout=300000)
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    session.set_cluster(cluster)
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=120000)
    panel.blocks.setValue(250_000)
    panel.eviction.setCurrentText("lru")
    panel.seqs.setValue(256)
    panel.batched.setValue(8192)
    panel.block_size.setValue(16)
    panel.predict_button.click()
    qtbot.waitUntil(lambda: panel.prediction is not None, timeout=300000)
    p = panel.prediction
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    want = predict(gather_inputs(session.store, Cohort(cluster=cluster, control=session.control)),
                   panel.scenario())
    assert p.predicted_badcases == pytest.approx(want.predicted_badcases)
    assert p.observed_badcases == want.observed_badcases > p.ci_high
    text = panel.answer.text()
    assert text.startswith(f"Badcases: {p.observed_badcases} observed, "
                           f"{p.predicted_badcases:.1f} predicted under 250,000 KV blocks")
    labels = [panel.table.item(i, 0).text() for i in range(panel.table.rowCount())]
    assert labels[0] == "badcases (observed → predicted)"
    assert "calibration TTFT" in panel.status.text()


def test_the_panel_never_touches_the_store_on_the_ui_thread(session, panel, qtbot):
    """The runs offered arrive from the session's worker ("replay_runs"); the run's settings,
    its trace and the simulated run written back are read and written there too: the
    connection records the thread of every use."""
    import json
    import threading

    import pandas as pd
    st = session.store
    st.append("runs", pd.DataFrame([{"run_id": "r", "label": "small", "format": "csv",
                                     "config": json.dumps({"max_num_seqs": 4})}]))
    st.append("requests", pd.DataFrame(
        [{"run_id": "r", "request_id": f"q{i}", "arrival_s": 0.05 * i, "prompt_tokens": 300 + i,
          "completion_tokens": 40} for i in range(12)]))
    with connection_threads(st) as used:
        session.rescan()
        qtbot.waitUntil(lambda: panel.run_box.count() == 1 and panel.seqs.value() == 4,
                        timeout=30000)
        panel.blocks.setValue(60)
        panel.add_run.setChecked(True)   # off by default (issue 33)
        panel.run_button.click()
        qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
        qtbot.waitUntil(lambda: panel.run_box.count() == 2, timeout=30000)  # the replay, added
        qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=30000)
    assert panel.result.summary["requests"] == 12
    assert used and threading.get_ident() not in used


@pytest.fixture
def two_runs(session, panel, qtbot):
    """Runs "a" (12 requests) and "b" (5, its config holding null settings) in the session,
    offered by the panel."""
    import json

    import pandas as pd
    st = session.store
    st.append("runs", pd.DataFrame(
        [{"run_id": "a", "label": "A", "format": "csv", "config": json.dumps({"max_num_seqs": 4})},
         {"run_id": "b", "label": "B", "format": "csv",
          "config": json.dumps({"max_num_seqs": None, "max_num_batched_tokens": None,
                                "block_size": None})}]))
    st.append("requests", pd.DataFrame(
        [{"run_id": "a", "request_id": f"a{i}", "arrival_s": 0.05 * i, "prompt_tokens": 300 + i,
          "completion_tokens": 40} for i in range(12)]
        + [{"run_id": "b", "request_id": f"b{i}", "arrival_s": 0.1 * i, "prompt_tokens": 200,
            "completion_tokens": 20} for i in range(5)]))
    session.rescan()
    qtbot.waitUntil(lambda: panel.run_box.count() == 2 and panel.seqs.value() == 4, timeout=30000)
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=30000)
    return session


def test_a_null_recorded_setting_keeps_the_one_shown(two_runs, panel, qtbot):
    """Run b's config holds null for max-num-seqs, batched tokens and block size: picking it
    reads its settings without an error and keeps the ones shown."""
    panel.seqs.setValue(8)
    panel.run_box.setCurrentIndex(panel.run_box.findData("b"))
    qtbot.waitUntil(lambda: two_runs.runner.pending() == 0, timeout=30000)
    assert panel.state.run_id == "b"
    assert (panel.seqs.value(), panel.block_size.value()) == (8, 16)
    assert not panel.status.property("error")


@pytest.mark.parametrize("button", ["run_button", "sweep_button"])
def test_picking_another_run_while_the_trace_is_read(two_runs, panel, qtbot, monkeypatch, button):
    """Run (or Sweep) on run a, then run b picked while a's trace is still being read: a's
    trace, when it arrives, starts nothing and raises nothing; Run on b then replays b."""
    from explorer.core.viewstate.replay import TraceQuery
    session, held = two_runs, []
    submit = session.runner.submit

    def hold_trace(key, fn, on_result, *a, **kw):   # the trace read is held back
        if key == "replay-trace":
            held.append(on_result)
            return None
        return submit(key, fn, on_result, *a, **kw)
    monkeypatch.setattr(session.runner, "submit", hold_trace)
    assert panel.state.run_id == "a"
    getattr(panel, button).click()
    assert len(held) == 1 and panel.status.text() == "Reading the trace…"
    panel.run_box.setCurrentIndex(panel.run_box.findData("b"))
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=30000)
    held[0](TraceQuery("a").run(session.store))     # a's trace arrives after b was picked
    assert panel.jobs.pending() == 0 and panel.result is None and panel.sweep is None
    assert panel.status.text() == "Cancelled." and panel.state.trace is None
    monkeypatch.undo()
    panel.run_button.click()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    assert panel.result.summary["requests"] == 5


def test_settings_that_stopped_working_before_the_cohort_arrived(panel, qtbot, monkeypatch):
    """Predict badcases checks the settings again when the cohort arrives: settings that no
    longer work are said in the status, nothing is run."""
    session, held = panel.session, []
    monkeypatch.setattr(session, "cohort", lambda: object())
    monkeypatch.setattr(session.runner, "submit",
                        lambda key, fn, on_result, *a, **kw: held.append(on_result))
    panel.predict_button.click()
    assert len(held) == 1
    panel.state.max_num_seqs = 0                    # not through set(): no range check
    held[0](None)
    assert panel.jobs.pending() == 0 and panel.prediction is None
    assert "max_num_seqs must be >= 1" in panel.status.text()
    assert panel.status.property("error")


def test_validate_on_an_aibrix_ladder_with_progress(real, session, panel, qtbot):
    """Validate (issue 34): fit on the ladder's lowest rate, predict the higher ones, in the
    session's worker with the panel's progress; the table holds each held-out rate's observed
    and replayed means, recomputed here from the raw CSVs; Run then says which error applies."""
    import numpy as np
    import pandas as pd
    folder = real / "aibrix" / "ps_experiment_v0.3.0_20250519"
    files = [folder / f"naive_output_{r}.csv" for r in ("0.1", "0.5", "0.9")]
    session.load_paths([str(f) for f in files])
    qtbot.waitUntil(lambda: panel.run_box.count() == 3, timeout=30000)
    seen = []
    panel.progress.valueChanged.connect(seen.append)
    panel.validate_button.click()
    qtbot.waitUntil(lambda: bool(panel.state.validations), timeout=120000)
    outer = next(iter(panel.state.validations.values()))
    (v,) = outer["validations"]                             # the default mode: fit on low
    assert v["mode"] == "low-high" and outer["mode"] == "low-high"
    assert v["kind"] == "validated" and len(v["held_out"]) == 2
    assert v["text"].startswith("validated at 2 settings")
    assert seen and not panel.progress.isVisible()         # progress shown, then hidden
    table = panel.validation.tables["low-high"]
    labels = [table.item(i, 0).text() for i in range(table.rowCount())]
    row = labels.index("TTFT @ request_rate_qps 0.9")
    raw = pd.read_csv(files[2])
    assert table.item(row, 1).text() == f"{raw['ttft'].mean() * 1000:,.1f} ms"
    assert panel.validation.headings["low-high"].text().startswith(
        "Held-out errors, fit on low, predict high: validated at 2 settings")
    err = v["held_out"][1]["ttft_ms"]
    assert np.isclose(err["error"], err["replayed"] / (raw["ttft"].mean() * 1000) - 1)
    assert "validated at 2 settings" in panel.answer.text()


def test_kv_sizes_are_written_with_thousands_separators(panel):
    """The bytes-per-token and blocks boxes write 131,072 as the tables do (trust3 saw 131072)."""
    panel.bpt.setValue(131072)
    panel.blocks.setValue(40000)
    assert panel.bpt.cleanText() == f"{131072:,}"
    assert panel.blocks.cleanText() == f"{40000:,}"


def test_a_report_section_stopped_by_its_budget_says_partial(panel):
    """The report's replay section cut by its time budget: the panel (and so the report's
    picture of it) says so, with the section's own note."""
    note = ("stopped after 61 s (the report's 60 s budget for the replay, while sweeping r: "
            "capacity 3 of 5 (8,000 KV blocks, 100 requests)): 2 of 5 capacities swept, the "
            "other 3 did not finish")
    sweep = {"run_id": "r", "requests": 100, "eviction": "lru", "monotone": True,
             "stopped": note, "rows": [{"num_gpu_blocks": c, "hit_rate": h, "preemptions": 0,
                                        "rejected": 0} for c, h in ((8000, 0.1), (16000, 0.2))]}
    panel.show_report({"predicted_badcases": None, "reason": "No badcase", "sweep": sweep,
                       "sweeps": [sweep], "budget": {"seconds": 60, "elapsed_s": 61.2,
                                                     "stopped": note}})
    assert f"Partial: {note}" in panel.status.text().splitlines()
    panel.show_report({"predicted_badcases": None, "reason": "No badcase", "sweep": sweep,
                       "sweeps": [sweep], "budget": {"seconds": 60, "elapsed_s": 2.0,
                                                     "stopped": None}})
    assert "Partial" not in panel.status.text()


def test_a_sweep_without_prefix_information_is_said_in_chinese(session, qtbot):
    """The sweep line of a trace without hash ids said its reason in English in a Chinese
    report ("no prefix information in this trace ..."): it is translated."""
    from explorer import translators
    translators.install("zh_CN")
    try:
        from explorer.widgets.replay import ReplayPanel
        zh = ReplayPanel(session)
        qtbot.addWidget(zh)
        rows = [{"num_gpu_blocks": c, "hit_rate": None, "preemptions": 0, "rejected": 0,
                 "prefix_information": False} for c in (100, 200)]
        lines = zh.show_sweeps([{"run_id": "r", "rows": rows, "monotone": None,
                                 "eviction": "lru", "requests": 55, "requests_total": 55}])
        assert len(lines) == 1 and "该 trace 没有前缀信息（无 hash_ids）：命中率没有意义" in lines[0]
        assert "no prefix information" not in lines[0]
        zh.jobs.cancel()
        zh.jobs.wait(20000)
    finally:
        translators.install("en")
