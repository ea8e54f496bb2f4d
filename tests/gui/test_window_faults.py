"""The window under the faults of issue 36 (round 2): out of memory inside a worker's job, a
SIGTERM to the app. A job's MemoryError ends as one message naming the file or the section, the
rest loaded and shown; a signalled window saves its session and the next start reopens it."""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.core.store import Store

ROOT = Path(__file__).resolve().parents[2]
COLS = "request_id,arrival_s,prompt_tokens,completion_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason\n"


def _csv(path: Path, n: int, seed: int = 0) -> Path:
    path.write_text(COLS + "".join(
        f"{path.stem}-{i},{1.7e9 + i / 10 + seed},{100 + i % 90},{10 + i % 7},{20.0 + (i * 7 + seed) % 50},"
        f"{8.0 + i % 5},{300.0 + 3 * i},stop\n" for i in range(n)))
    return path


def test_out_of_memory_in_a_load_names_the_file_and_the_others_load(session, qtbot, tmp_path,
                                                                     monkeypatch):
    from explorer.core.formats import generic_table
    files = [_csv(tmp_path / f"{n}.csv", 30, k) for k, n in enumerate("abc")]
    real_load = generic_table.load

    def load(path, *a, **kw):
        if Path(path).name == "b.csv":
            raise MemoryError()
        return real_load(path, *a, **kw)
    monkeypatch.setattr(generic_table, "load", load)
    said: list[str] = []
    session.message.connect(said.append)
    with qtbot.waitSignal(session.runner.idle, timeout=60000):
        session.load_paths([str(f) for f in files])
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    errors = [r.error for r in session.data["inputs"] if r.error]
    assert len(errors) == 1 and "b.csv" in errors[0] and "out of memory" in errors[0]
    assert "Traceback" not in errors[0]
    assert session.store.count("requests") == 60  # a.csv and c.csv whole
    assert any("b.csv" in m and "out of memory" in m for m in said)  # the status bar
    assert session.data["cohort"] is not None and not hasattr(session.data["cohort"], "error")


def test_out_of_memory_in_a_section_is_that_sections_message(session, qtbot, monkeypatch):
    from explorer.core import sections as pipeline
    from explorer.core.windowdata import Failure
    from tests.gui.conftest import synthetic_store

    def boom(_r):
        raise MemoryError()
    monkeypatch.setattr(pipeline, "SECTIONS", tuple(
        dataclasses.replace(s, compute=boom) if s.key == "tree" else s for s in pipeline.SECTIONS))
    store, req, _cases = synthetic_store(n_requests=1500, n_cases=300)
    session.store.close()
    session.store = store
    with qtbot.waitSignal(session.runner.idle, timeout=60000):
        session.rescan()
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    tree = session.data["tree"]
    assert isinstance(tree, Failure) and "out of memory" in str(tree) and "Decision tree" in str(tree)
    # the other sections stand, with their numbers (the cohort's size is the store's)
    cohort = session.data["cohort"]
    assert isinstance(cohort, dict) and not isinstance(cohort, Failure)
    assert not isinstance(session.data["comparison"], Failure)
    assert store.count("requests") == len(req)


def test_out_of_memory_in_the_cli_report_still_stops_the_command(monkeypatch):
    """The window's section error is opt-in: the report's pipeline still raises (exit 3)."""
    from explorer.core import sections as pipeline
    from tests.gui.conftest import synthetic_store

    def boom(_r):
        raise MemoryError()
    sec = next(s for s in pipeline.SECTIONS if s.key == "tree")
    r = pipeline.Run(synthetic_store(n_requests=300, n_cases=60)[0], None, {})
    with pytest.raises(MemoryError):
        pipeline.compute(dataclasses.replace(sec, compute=boom), r)


def _env(tmp_path: Path) -> dict:
    return dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_STATE_HOME=str(tmp_path / "state"),
                XDG_CONFIG_HOME=str(tmp_path / "config"), TRACE_EXPLORER_LOG="INFO",
                PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def _log(tmp_path: Path) -> Path:
    return tmp_path / "state" / "trace-explorer" / "trace-explorer.log"


def _start_and_wait_idle(tmp_path: Path, args: list[str], inputs: int) -> subprocess.Popen:
    """A real `trace-explorer` window process (offscreen); returns once its log says the
    window is idle with `inputs` inputs listed."""
    log = _log(tmp_path)
    if log.exists():
        log.write_text("")
    proc = subprocess.Popen([sys.executable, "-m", "explorer", *args], env=_env(tmp_path),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if log.exists() and f"window idle: {inputs} inputs" in log.read_text(errors="replace"):
            return proc
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"the window never became idle: {proc.communicate()}")


def _terminate(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)  # nothing hangs
    return proc.returncode, err


def test_sigterm_saves_the_session_and_the_next_start_reopens_it(tmp_path):
    files = [_csv(tmp_path / f"run{k}.csv", 40, k) for k in range(3)]
    proc = _start_and_wait_idle(tmp_path, [str(f) for f in files], 3)
    rc, err = _terminate(proc)
    saved = tmp_path / "state" / "trace-explorer" / "recovery" / "session.duckdb"
    assert rc == 143, err
    assert "interrupted (SIGTERM)" in err and str(saved) in err and "Traceback" not in err
    s = Store.open(saved)
    try:  # what was loaded is in it, row for row
        assert s.count("requests") == 120
        assert sorted(Path(r[0]).name for r in s.con.execute(
            "SELECT source_path FROM runs").fetchall()) == ["run0.csv", "run1.csv", "run2.csv"]
    finally:
        s.close()
    # the next start (no file given) reopens it, once: it is moved aside, kept
    proc = _start_and_wait_idle(tmp_path, [], 3)
    assert not saved.exists() and len(list(saved.parent.glob("reopened-*.duckdb"))) == 1
    rc, err = _terminate(proc)
    assert rc == 143 and saved.is_file(), err  # and saved again: still the three files
    s = Store.open(saved)
    try:
        assert s.count("requests") == 120
    finally:
        s.close()


def test_sigterm_during_a_load_keeps_the_files_loaded_before_it(tmp_path):
    """SIGTERM while a folder loads: the load is cancelled (its current file rolled back),
    what was committed is saved whole; no file is saved half-loaded."""
    folder = tmp_path / "many"
    folder.mkdir()
    for k in range(300):
        _csv(folder / f"f{k:03d}.csv", 1 + k % 3, k)
    env = _env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "explorer", str(folder)], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6)  # the imports and part of the load
    rc, err = _terminate(proc)
    assert rc == 143 and "Traceback" not in err, err
    saved = tmp_path / "state" / "trace-explorer" / "recovery" / "session.duckdb"
    if "nothing was loaded" in err:
        assert not saved.exists()
        return
    s = Store.open(saved)
    try:
        rows = dict(s.con.execute("SELECT r.source_path, count(*) FROM requests q "
                                  "JOIN runs r USING (run_id) GROUP BY 1").fetchall())
        for path, n in rows.items():  # each file saved is whole
            assert n == 1 + int(Path(path).stem[1:]) % 3, path
    finally:
        s.close()


def test_inputs_panel_caps_its_run_editors(window, qtbot, tmp_path):
    """A folder of one-run files: editors for the first MAX_RUN_EDITORS_TOTAL runs, a plain row
    (label and version as text) for each run past them; every run listed."""
    from PySide6.QtWidgets import QLineEdit
    from explorer.widgets import inputs
    folder = tmp_path / "runs"
    folder.mkdir()
    n = inputs.MAX_RUN_EDITORS_TOTAL + 25
    for k in range(n):
        _csv(folder / f"r{k:03d}.csv", 1, k)
    s = window.session
    with qtbot.waitSignal(s.runner.idle, timeout=120000):
        s.load_paths([str(folder)])
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    panel = window.panels["inputs"]
    panel.ensure_painted()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == n, timeout=30000)
    labels = [w for w in panel.findChildren(QLineEdit) if w.objectName().startswith("run-label:")]
    assert len(labels) == inputs.MAX_RUN_EDITORS_TOTAL
    plain = [panel.tree.topLevelItem(i).child(j).text(0) for i in range(n)
             for j in range(panel.tree.topLevelItem(i).childCount())
             if "edit in the Runs panel" in panel.tree.topLevelItem(i).child(j).text(0)]
    assert len(plain) == 25 and all(t.startswith("run r") for t in plain)
