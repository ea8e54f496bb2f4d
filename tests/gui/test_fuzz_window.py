"""The fuzz inputs (tests/fuzz_inputs.py) dropped on the window: the good files load, every bad
one is listed in the Inputs panel with its reason and named in the status bar, nothing is
shown as a traceback, the files stay byte-identical; Cancel rolls back the file being read;
closing the window while a job runs returns within two seconds."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.fuzz_inputs import dropped_inputs

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    """The dropped folder (tests/fuzz_inputs.dropped_inputs)."""
    yield from dropped_inputs(tmp_path, monkeypatch)


def test_window_lists_every_bad_file_and_keeps_the_good_ones(window, session, qtbot, inputs):
    messages: list[str] = []
    session.message.connect(messages.append)
    window.load([str(inputs.folder)])
    qtbot.waitUntil(lambda: "inputs" in session.data and session.runner.pending() == 0,
                    timeout=60000)
    reports = {r.path: r for r in session.data["inputs"]}
    for p in inputs.good:
        assert reports[str(p)].error is None and reports[str(p)].rows_loaded > 0
    for p in inputs.bad.values():
        assert reports[str(p)].error.startswith(str(p))
    for p in inputs.special.values():
        assert reports[str(p)].skipped_file
    panel = window.panels["inputs"]
    shown = [panel.tree.topLevelItem(i) for i in range(panel.tree.topLevelItemCount())]
    errors = [it.child(0).text(0) for it in shown if it.text(4) == "error"]
    assert len(errors) == len(inputs.bad) and not any("Traceback" in e for e in errors)
    failed_msgs = [m for m in messages if "could not be read" in m]
    assert failed_msgs and str(inputs.bad["overflow"]) in " ".join(failed_msgs)
    assert session.store.count("cases") > 0 and session.data["meta"]["requests"] > 0


def test_cancel_rolls_back_the_file_being_read_and_says_so(window, session, qtbot, inputs,
                                                           monkeypatch):
    """Cancel pressed while the second file loads: the first stays (the window shows it), the
    second is rolled back and the status bar says so."""
    from explorer.core.store import Store
    started, release = threading.Event(), threading.Event()
    real = Store.load_file

    def load_file(self, path, format=None):
        if Path(path) == inputs.good[1]:
            started.set()
            release.wait(30)  # the user presses Cancel meanwhile
        return real(self, path, format)
    monkeypatch.setattr(Store, "load_file", load_file)
    messages: list[str] = []
    session.message.connect(messages.append)
    session.load_paths([str(inputs.good[0]), str(inputs.good[1])])
    qtbot.waitUntil(started.is_set, timeout=30000)
    session.cancel()
    release.set()
    qtbot.waitUntil(lambda: session.runner.pending() == 0 and any("cancelled" in m for m in messages),
                    timeout=60000)
    reports = {r.path: r for r in session.data["inputs"]}
    assert reports[str(inputs.good[0])].error is None
    assert "nothing of it was kept" in reports[str(inputs.good[1])].error
    assert session.store.count("cases") == 0 and session.data["meta"]["requests"] > 0
    assert any(str(inputs.good[1]) in m and "rolled back" in m for m in messages), messages


def test_closing_the_window_returns_soon_while_a_job_hangs(window, session):
    """A job that never returns (a read that blocks) does not keep the window from closing."""
    gate = threading.Event()
    session.runner.submit("stuck", lambda ctx: gate.wait(60), lambda _r: None)
    t0 = time.perf_counter()
    window.close()
    took = time.perf_counter() - t0
    gate.set()  # let the thread end so the test's teardown is clean
    session.runner.wait(20000)
    # the close waits CLOSE_WAIT_MS for the job, then goes; the rest of closing (settings, the
    # docks' state) took 0.1-0.6 s on a loaded 2-core machine: 1 s of room for it, 58 s short
    # of the job's own end
    from explorer.widgets.mainwindow import CLOSE_WAIT_MS
    assert took < CLOSE_WAIT_MS / 1000 + 1.0, took


@pytest.mark.parametrize("setting, value, named", [
    ("chosen_cluster", "{not json", "table 'settings'"),             # not JSON at all
    ("association.tolerances", '{"window_s": 1e300}', "association.tolerances"),  # overflows
    ("association.ambiguous", '"not a list"', "association.ambiguous"),
])
def test_opening_a_session_with_malformed_settings_keeps_what_is_loaded(
        window, session, qtbot, inputs, tmp_path, setting, value, named):
    """File > Open Session on a file whose settings the app cannot use: the status bar names
    the file and the setting, the files loaded before stay (store and Inputs panel), and a
    later drop still loads."""
    import duckdb
    from explorer.core.store import Store
    bad = tmp_path / "malformed.duckdb"
    Store().save_as(bad)
    con = duckdb.connect(str(bad))  # another program wrote text where JSON belongs
    con.execute("ALTER TABLE settings ALTER value TYPE VARCHAR")
    con.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", [setting, value])
    con.close()
    messages: list[str] = []
    session.message.connect(messages.append)
    session.load_paths([str(inputs.good[0])])
    qtbot.waitUntil(lambda: "inputs" in session.data and session.runner.pending() == 0,
                    timeout=60000)
    before = session.store.count("requests")
    assert before > 0
    session.open_session(str(bad))
    qtbot.waitUntil(lambda: session.runner.pending() == 0 and
                    any(str(bad) in m for m in messages), timeout=60000)
    said = next(m for m in messages if str(bad) in m)
    assert named in said and "Traceback" not in said, said
    assert session.store.count("requests") == before
    assert [r.path for r in session.data["inputs"]] == [str(inputs.good[0])]
    session.load_paths([str(inputs.good[1])])  # a later load is not broken by the refusal
    qtbot.waitUntil(lambda: session.runner.pending() == 0 and
                    str(inputs.good[1]) in [r.path for r in session.data["inputs"]], timeout=60000)
    assert session.store.count("cases") > 0 and session.store.count("requests") == before
