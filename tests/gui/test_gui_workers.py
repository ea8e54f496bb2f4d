"""Workers: results arrive on the UI thread; a result that arrives after a newer job of the same
key was submitted is dropped; cancel stops a running job; errors reach on_error."""
from __future__ import annotations

import threading

from PySide6.QtCore import QThread

from explorer.workers import Runner


def test_stale_result_is_dropped_and_fresh_one_delivered(qapp, qtbot):
    runner = Runner()
    gate = threading.Event()
    got, threads = [], []

    def slow(ctx):
        gate.wait(10)
        return "old"

    runner.submit("analysis", slow, got.append)
    runner.submit("analysis", lambda ctx: "new", lambda r: (got.append(r), threads.append(QThread.currentThread())))
    with qtbot.waitSignal(runner.idle, timeout=10000):
        gate.set()
    assert got == ["new"]
    assert threads == [qapp.thread()]  # delivered on the UI thread


def test_cancel_stops_a_running_job(qapp, qtbot):
    runner = Runner()
    started = threading.Event()
    seen = []

    def loop(ctx):
        started.set()
        while True:
            ctx.check()  # raises Cancelled once cancel() was called
            QThread.msleep(5)

    runner.submit("load", loop, seen.append)
    assert started.wait(10)
    with qtbot.waitSignal(runner.dropped, timeout=10000) as blocker:
        runner.cancel()
    assert blocker.args == ["load"] and seen == []


def test_job_error_reaches_on_error(qapp, qtbot):
    runner = Runner()
    errors = []

    def boom(ctx):
        raise ValueError("bad file x.json: line 3")

    with qtbot.waitSignal(runner.idle, timeout=10000):
        runner.submit("load", boom, lambda r: None, errors.append)
    assert len(errors) == 1 and "line 3" in str(errors[0])


def test_shutdown_waits_for_the_running_job_and_delivers_nothing(qapp, qtbot):
    runner = Runner()
    started, gate = threading.Event(), threading.Event()
    got = []

    def slow(ctx):
        started.set()
        gate.wait(10)
        return "late"

    runner.submit("analysis", slow, got.append)
    runner.submit("queued", lambda ctx: "never", got.append)  # still queued: dropped unrun
    assert started.wait(10)
    threading.Timer(0.1, gate.set).start()
    assert runner.shutdown(10000) is True
    qapp.processEvents()
    assert got == [] and runner.pending() == 0


def test_no_panel_keeps_a_pool_of_its_own(window):
    """Every job of the window runs on the Session's runners, which the status bar shows and
    its Cancel stops: no panel (What-if, Replay, ...) builds a Runner or a thread pool."""
    from PySide6.QtCore import QThreadPool
    assert window.findChildren(Runner) == [] and window.findChildren(QThreadPool) == []
    assert window.runners() == window.session.runners()


def test_a_panel_job_shows_in_the_status_bar_and_its_cancel_stops_it(window, qtbot):
    """A Replay simulation (a store-free job: Session.compute) shows its progress in the panel
    and in the status bar; the status bar's Cancel stops it and the panel says so."""
    from explorer.core.errors import Cancelled
    panel = window.panels["replay"]
    started, got = threading.Event(), []

    def simulation(ctx):
        ctx.progress(1, 4, "replaying")
        started.set()
        while not ctx.cancelled():
            QThread.msleep(5)
        raise Cancelled()
    panel.jobs.submit("replay", simulation, got.append, got.append)
    qtbot.waitUntil(lambda: started.is_set() and panel.progress.value() == 1, timeout=10000)
    assert not window.progress.isHidden() and not panel.progress.isHidden()
    assert window.progress.maximum() == 4 and panel.jobs.pending() == 1
    with qtbot.waitSignal(panel.jobs.dropped, timeout=10000):
        window.cancel_button.click()
    assert got == [] and panel.jobs.pending() == 0
    assert panel.status.text() == "Cancelled."
    qtbot.waitUntil(lambda: window.progress.isHidden() and panel.progress.isHidden(), timeout=5000)


def test_screenshot_exits_cleanly(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path
    png = tmp_path / "empty.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-m", "explorer", "--screenshot", str(png)],
                         cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert png.exists()
    noise = [ln for ln in out.stderr.splitlines() if "propagateSizeHints" not in ln and ln.strip()]
    assert not [ln for ln in noise if "deleted" in ln or "Traceback" in ln or "Error" in ln], noise


def test_shutdown_all_shares_one_deadline_across_runners(qapp):
    """Closing the window waits msecs in all, not msecs per runner: four runners whose jobs
    do not return within the budget are given up on after about one budget (each alone
    would take it all: four budgets one after another)."""
    import time

    from explorer.workers import shutdown_all
    gate = threading.Event()
    runners = [Runner() for _ in range(4)]
    started = [threading.Event() for _ in runners]
    for r, s in zip(runners, started):
        r.submit("stuck", lambda ctx, s=s: (s.set(), gate.wait(20)), lambda r: None)
    assert all(s.wait(10) for s in started)
    t0 = time.monotonic()
    ok = shutdown_all(runners, 400)
    took = time.monotonic() - t0
    gate.set()
    assert ok is False and 0.4 <= took < 1.2   # one after another: >= 1.6 s
    assert shutdown_all(runners, 10000) is True


def test_status_bar_shows_the_running_store_job_again_when_a_what_if_ends(window, qtbot):
    """A store job reports progress, a store-free job (what-if) reports its own and ends: the
    status bar shows the store job's label and progress again, not the ended job's."""
    session = window.session
    gate, started = threading.Event(), threading.Event()

    def load(ctx):
        ctx.progress(1, 4, "Loading x.jsonl")
        started.set()
        gate.wait(20)

    def whatif(ctx):
        ctx.progress(3, 5, "what-if")

    session.runner.submit("load-x", load, lambda r: None, label="Loading")
    assert started.wait(10)
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "Loading x.jsonl", timeout=10000)
    with qtbot.waitSignal(session.compute.idle, timeout=10000):
        session.compute.submit("whatif", whatif, lambda r: None, label="What-if")
    bar = window.progress
    assert window.statusBar().currentMessage() == "Loading x.jsonl"
    assert (bar.value(), bar.maximum()) == (1, 4) and bar.isVisible()
    assert window.cancel_button.isVisible()
    with qtbot.waitSignal(session.runner.idle, timeout=10000):
        gate.set()
    assert not bar.isVisible() and window.statusBar().currentMessage() == "Ready"
