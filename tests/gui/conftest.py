"""GUI fixtures: a QApplication set up like the app's (font, style), a Session, a MainWindow
with throw-away QSettings."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings


@pytest.fixture(scope="session")
def qapp_args():
    return ["trace-explorer-tests"]


@pytest.fixture(autouse=True)
def _closed_widgets_deleted():
    """pytest-qt closes a test's widgets and calls deleteLater(), which Qt carries out only
    when an event loop next runs: a test without qtbot.wait* left its windows and panels
    alive into the next tests (and every QApplication.setStyleSheet re-polishes each widget
    alive). Delete them when the test ends (this teardown runs after pytest-qt's)."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent
    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def app(qapp):
    from explorer.app import make_app
    return make_app()


@pytest.fixture
def session(app):
    from explorer.session import Session
    s = Session()
    yield s
    s.cancel()
    for r in s.runners():
        r.wait(20000)
    s.store.close()


@pytest.fixture
def window(session, qtbot, tmp_path):
    from explorer.widgets.mainwindow import MainWindow
    w = MainWindow(session, QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.stop_workers(20000)


def painted(window, timeout: float = 60.0):
    """The window's panels, each painted with its latest result: a panel on a tab behind
    another keeps its result unpainted until shown (Panel.ensure_painted), and the analyses
    the window defers to when their tab is first shown (Session.deferred: heatmap, SLA,
    engine) are asked for by it and waited for here."""
    import time

    from PySide6.QtWidgets import QApplication
    for panel in window.panels.values():
        if hasattr(panel, "ensure_painted"):
            panel.ensure_painted()
    end = time.monotonic() + timeout
    while window.session.runner.pending():
        if time.monotonic() > end:
            raise TimeoutError("deferred analyses not done")
        QApplication.processEvents()
        time.sleep(0.005)
    QApplication.processEvents()
    for panel in window.panels.values():  # the deferred results arrived while off screen
        if hasattr(panel, "ensure_painted"):
            panel.ensure_painted()
    return window.panels


def on_screen(window, qtbot, name):
    """Bring a panel's tab to the front, as a user does before working in it; it paints then
    (an analysis deferred until its tab is shown, Session.deferred, is computed first)."""
    window.show_panel(name)
    panel = window.panels[name]
    s = window.session
    qtbot.waitUntil(lambda: not panel.stale and s.runner.pending() == 0
                    and not (name in s.deferred and s.data.get(name) is None), timeout=30000)
    return panel


def synthetic_store(n_requests: int = 3000, n_cases: int = 700, seed: int = 1):
    """A small store with a planted effect: badcases go with preemptions and a low KV-cache hit
    rate. Two runs (engine versions 0.5.2 / 0.6.1), every case bound (level 1) to one request.
    Returns (store, requests DataFrame, cases DataFrame) so tests can recompute with numpy."""
    import numpy as np
    import pandas as pd

    from explorer.core.store import Store
    rng = np.random.default_rng(seed)
    store = Store()
    for i, v in enumerate(("0.5.2", "0.6.1")):
        store.add_run(f"run{i}", engine="vllm", engine_version=v, benchmark="maths", format="test")
    run = np.where(np.arange(n_requests) < n_requests // 2, "run0", "run1")
    req = pd.DataFrame({
        "run_id": run, "request_id": [f"r{i}" for i in range(n_requests)],
        "arrival_s": rng.uniform(0, 600, n_requests),
        "prompt_tokens": rng.integers(50, 3000, n_requests),
        "completion_tokens": rng.integers(10, 500, n_requests),
        "kv_cache_hit_rate": rng.beta(3, 2, n_requests),
        "num_preemptions": rng.poisson(0.4, n_requests),
        "tpot_ms": rng.gamma(4, 4, n_requests), "ttft_ms": rng.gamma(3, 60, n_requests),
        "queue_ms": rng.gamma(2, 20, n_requests), "e2e_ms": rng.gamma(5, 500, n_requests),
        "batch_size": rng.integers(1, 48, n_requests).astype(float)})
    store.append("requests", req)
    store.add_eval("ev", benchmark="maths")
    idx = rng.choice(n_requests, n_cases, replace=False)
    r = req.iloc[idx].reset_index(drop=True)
    p_bad = 0.08 + 0.5 * (r["num_preemptions"] >= 1) * (r["kv_cache_hit_rate"] < 0.5)
    correct = rng.random(n_cases) > p_bad
    clusters = np.array(["计算错误", "format error", "单位换算"])
    cases = pd.DataFrame({
        "case_id": [f"ev:{i}" for i in range(n_cases)], "eval_id": "ev",
        "category": rng.choice(["algebra", "geometry"], n_cases),
        "prompt": [f"问题 {i}: 2 + {i} = ?" for i in range(n_cases)], "prediction": "answer",
        "correct": correct, "cluster": np.where(correct, None, rng.choice(clusters, n_cases)),
        "request_id": r["request_id"]})
    store.append("cases", cases)
    store.append("case_links", pd.DataFrame({"case_id": cases["case_id"], "run_id": r["run_id"],
                                             "request_id": r["request_id"], "level": 1, "score": 1.0}))
    return store, req, cases


@pytest.fixture
def loaded(window, qtbot):
    """The window over the synthetic store, every analysis done."""
    store, req, cases = synthetic_store()
    s = window.session
    s.store.close()
    s.store = store
    with qtbot.waitSignal(s.runner.idle, timeout=60000):
        s.rescan()
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    return window, req, cases
