"""Interaction benchmark of the window (issue 5): with N requests loaded (default 1,000,000),
the time from choosing a cluster to every panel repainted (p50 / p95 over 20 choices; target
p95 <= 150 ms), and the time from launch to the window shown (target <= 2 s).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/interaction.py [--requests N] [--choices 20]

The store is synthetic (numpy, seeded): two runs (engine versions 0.5.2 / 0.6.1), N requests
with every canonical metric, 6,000 eval cases in 6 clusters (--clusters N: 1,000 x N cases in N
clusters, ~300 badcases each, N >= 6; N = 21 makes every one of 20 choices a first visit), each case
bound (level 1) to one request. "Repainted" = the Session published the analysis results of the new cohort and the
panels painted them (the slots run synchronously), measured with processEvents until then. The
sections whose tab is behind another (Session.deferred: heatmap, SLA, engine) are computed when
their tab is first shown, so a cluster change does not include them and they are not missing.
Launch = a fresh interpreter importing the app, building the window and showing it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CLUSTERS = ["计算题中间步骤错误", "final answer format", "unit conversion", "单位换算错误",
            "answered another question", "truncated output"]


def cluster_names(n: int) -> list[str]:
    """The 6 named clusters, then "cluster 7", "cluster 8", ... up to n."""
    return (CLUSTERS + [f"cluster {i}" for i in range(len(CLUSTERS) + 1, n + 1)])[:n]


def build_store(n_requests: int, n_cases: int = 6000, seed: int = 0, n_clusters: int = len(CLUSTERS)):
    from explorer.core.store import Store
    rng = np.random.default_rng(seed)
    store = Store()
    for i, v in enumerate(("0.5.2", "0.6.1")):
        store.add_run(f"run{i}", engine="vllm", engine_version=v, benchmark="bench", format="synthetic",
                      simulated=True)
    half = n_requests // 2
    run = np.where(np.arange(n_requests) < half, "run0", "run1")
    tpot = rng.gamma(4, 4, n_requests)
    req = pd.DataFrame({
        "run_id": run, "request_id": [f"r{i}" for i in range(n_requests)],
        "arrival_s": np.concatenate([np.sort(rng.uniform(0, 3600, half)),
                                     np.sort(rng.uniform(0, 3600, n_requests - half))]),
        "prompt_tokens": rng.integers(50, 4000, n_requests),
        "completion_tokens": rng.integers(10, 800, n_requests),
        "kv_cache_hit_rate": rng.beta(3, 2, n_requests), "ttft_ms": rng.gamma(3, 60, n_requests),
        "tpot_ms": tpot, "e2e_ms": tpot * 300, "queue_ms": rng.gamma(2, 20, n_requests),
        "num_preemptions": rng.poisson(0.3, n_requests), "batch_size": rng.integers(1, 64, n_requests).astype(float),
    })
    store.append("requests", req)
    store.add_eval("eval0", benchmark="bench", simulated=True)
    idx = rng.choice(n_requests, n_cases, replace=False)
    correct = rng.random(n_cases) > 0.3
    cases = pd.DataFrame({
        "case_id": [f"eval0:{i}" for i in range(n_cases)], "eval_id": "eval0",
        "category": rng.choice(["math", "physics"], n_cases), "prompt": "question",
        "prediction": "answer", "correct": correct,
        "cluster": np.where(correct, None, rng.choice(cluster_names(n_clusters), n_cases)),
        "request_id": req["request_id"].to_numpy()[idx]})
    store.append("cases", cases)
    store.append("case_links", pd.DataFrame({"case_id": cases["case_id"], "run_id": run[idx],
                                             "request_id": cases["request_id"], "level": 1, "score": 1.0}))
    return store


LAUNCH_CHILD = """
import time; t0 = time.perf_counter()
import os, sys
sys.argv = ["trace-explorer"]
from explorer import app as A
hook = A.install_excepthook
def first_show(window=None, interactive=True):  # run_app installs it right after window.show()
    hook(window, interactive)
    from PySide6.QtCore import QTimer
    def shown():  # the first turn of the event loop: the window is on screen
        print(time.perf_counter() - t0, flush=True)
        os._exit(0)
    QTimer.singleShot(0, shown)
A.install_excepthook = first_show
from explorer.__main__ import main
main()
"""


def launch_seconds() -> float:
    """A fresh interpreter running the real entry point (explorer.__main__.main -> run_app)
    up to the first turn of the event loop after the window is shown."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", LAUNCH_CHILD], cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, QT_QPA_PLATFORM="offscreen"), check=True)
    total = time.perf_counter() - t0
    inside = float(out.stdout.strip().splitlines()[-1])
    print(f"launch: {total:.2f} s from exec to window shown ({inside:.2f} s after the interpreter started)")
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--choices", type=int, default=20)
    ap.add_argument("--clusters", type=int, default=len(CLUSTERS),
                    help="badcase clusters (each ~300 badcases); 21 makes all 20 choices first visits")
    ap.add_argument("--without", default="", help="panels to leave out, e.g. whatif,timeline")
    a = ap.parse_args()
    launch_seconds()

    from PySide6.QtCore import QSettings
    from explorer.app import make_app
    from explorer.core import bus
    from explorer.session import ANALYSIS_KEYS, Session
    import explorer.widgets.mainwindow as mw
    from explorer.widgets.mainwindow import MainWindow
    skip = set(filter(None, a.without.split(",")))
    mw.PANELS[:] = [p for p in mw.PANELS if p[0] not in skip]

    from collections import defaultdict

    from explorer.widgets.base import Panel
    paint_ms: dict = defaultdict(list)
    orig = Panel.show_result

    def timed(self, value):  # UI-thread time spent painting, per panel
        t = time.perf_counter()
        orig(self, value)
        paint_ms[type(self).__name__].append((time.perf_counter() - t) * 1000)
    Panel.show_result = timed

    t0 = time.perf_counter()
    store = build_store(a.requests, n_cases=1000 * max(6, a.clusters), n_clusters=a.clusters)
    print(f"store: {a.requests:,} requests built in {time.perf_counter() - t0:.1f} s")
    app = make_app()
    session = Session(store)
    win = MainWindow(session, QSettings(os.devnull, QSettings.Format.IniFormat))
    win.show()
    done = {"t": None, "first": None}

    def seen(update):  # first stage: cohort/comparison/tree/cases; last: conclusion
        if bus.SECTION["comparison"] in update and done["first"] is None:
            done["first"] = time.perf_counter()
        if bus.SECTION["conclusion"] in update and done["t"] is None:
            done["t"] = time.perf_counter()
    session.resultsChanged.connect(seen)

    def wait_idle():
        while session.runner.pending():
            app.processEvents()
            time.sleep(0.001)
        app.processEvents()

    session.rescan()
    wait_idle()
    names = [c["name"] for c in session.data.get("clusters") or []]
    ok = [k for k in ANALYSIS_KEYS if isinstance(session.data.get(k), (dict, list))]
    # the sections whose tab is behind another (Session.deferred) are computed when the tab is
    # first shown, not at a cluster change: not missing, and not part of the times below
    deferred = [k for k in ANALYSIS_KEYS if k in session.deferred and k not in ok]
    missing = [k for k in ANALYSIS_KEYS if k not in ok and k not in deferred]
    print(f"clusters: {len(names)}; panels with a result: {', '.join(ok) or 'none'}"
          + (f"; deferred until their tab is shown: {', '.join(deferred)}" if deferred else "")
          + (f"; MISSING: {', '.join(missing)}" if missing else ""))
    cold, warm, firsts = [], [], []
    seen_before = {session.cluster}
    order = [names[i % len(names)] for i in range(a.choices + 1)]
    for i, name in enumerate(order):
        if name == session.cluster:
            session.set_cluster(None)
            wait_idle()
        done["t"] = done["first"] = None
        t = time.perf_counter()
        session.set_cluster(name)
        wait_idle()
        win.repaint()
        ms = ((done["t"] or time.perf_counter()) - t) * 1000
        if i:  # the first choice warms caches (imports of scipy / sklearn)
            (warm if name in seen_before else cold).append(ms)
            if name not in seen_before:
                firsts.append(((done["first"] or time.perf_counter()) - t) * 1000)
        seen_before.add(name)
    cold, warm, firsts = np.array(cold), np.array(warm), np.array(firsts)
    pct = lambda x, q: f"{np.percentile(x, q):.0f}" if len(x) else "–"  # noqa: E731
    print(f"choose a cluster not seen before ({len(cold)} choices) -> header, comparison, tree, "
          f"distributions, cases repainted: p50 {pct(firsts, 50)} ms, p95 {pct(firsts, 95)} ms; "
          f"every panel repainted (conclusion last): p50 {pct(cold, 50)} ms, p95 {pct(cold, 95)} ms")
    print(f"choose a cluster seen before ({len(warm)} choices; results kept per cohort) -> every "
          f"panel repainted: p50 {pct(warm, 50)} ms, p95 {pct(warm, 95)} ms (target p95 <= 150 ms)")
    allv = np.concatenate([cold, warm])
    print(f"all {len(allv)} choices: p50 {pct(allv, 50)} ms, p95 {pct(allv, 95)} ms")
    print("UI-thread paint per panel (median ms): " + ", ".join(
        f"{k} {np.median(v):.0f}" for k, v in sorted(paint_ms.items(), key=lambda kv: -np.median(kv[1]))))
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
