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
