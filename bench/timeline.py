"""Benchmark: open a request's timeline and its +-30 s swimlane in a 1M-request store.

Builds an in-memory store shaped like a big real one: R runs, N requests in total with random
UUID request ids (so zonemaps cannot prune by id; only the ART indexes help), arrivals sorted per
run (as loaders insert them), ~6 request_events per request (arrived, queued, scheduled,
first_token, finished, plus preempted/resumed for 5%), per-token latencies for a subset, and
bound cases. Then times request_timeline() + neighbours() for 20 random requests.

    .venv/bin/python bench/timeline.py [--requests 1000000] [--runs 4] [--itl-requests 100000]
                                       [--tokens 64] [--repeat 20] [--gui]

Target: p95 < 100 ms per request (timeline + swimlane). The first call per store builds the
indexes and caches the run's p99 ITL; it is reported separately ("cold").
--gui also times TimelinePanel.show_request (queries + painting, offscreen).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.core import timeline as tl  # noqa: E402
from explorer.core.store import Store  # noqa: E402


def build(n: int, runs: int, itl_requests: int, tokens: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = Store()
    per = n // runs
    all_ids = []
    for k in range(runs):
        run = f"bench-run-{k}"
        s.add_run(run, format="bench", engine="vllm", engine_version=f"0.{k}.0")
        ids = np.array([str(uuid.UUID(int=int(x))) for x in rng.integers(0, 2**63 - 1, per)])
        arr = np.sort(rng.uniform(0, per / 50.0, per))  # ~50 requests/s
        q = rng.gamma(1.5, 20, per)
        pre = rng.gamma(2, 40, per)
        out = rng.integers(16, 512, per)
        tpot = rng.gamma(8, 3, per)
        dec = tpot * (out - 1)
        e2e = q + pre + dec
        npre = (rng.random(per) < 0.05).astype(int)
        s.append("requests", pd.DataFrame({
            "run_id": run, "request_id": ids, "arrival_s": arr, "queue_ms": q, "prefill_ms": pre,
            "ttft_ms": q + pre, "decode_ms": dec, "tpot_ms": tpot, "e2e_ms": e2e,
            "completion_tokens": out, "prompt_tokens": rng.integers(64, 4096, per),
            "num_preemptions": npre, "batch_size": rng.uniform(1, 64, per)}))
        t = {"arrived": arr, "queued": arr, "scheduled": arr + q / 1e3,
             "first_token": arr + (q + pre) / 1e3, "finished": arr + e2e / 1e3}
        ev = [pd.DataFrame({"run_id": run, "request_id": ids, "ts_s": v, "kind": kind})
              for kind, v in t.items()]
        p = npre == 1
        mid = arr[p] + (q[p] + pre[p] + dec[p] / 2) / 1e3
        ev += [pd.DataFrame({"run_id": run, "request_id": ids[p], "ts_s": mid, "kind": "preempted"}),
               pd.DataFrame({"run_id": run, "request_id": ids[p], "ts_s": mid + 0.2, "kind": "resumed"})]
        evs = pd.concat(ev).sort_values("ts_s", kind="stable")
        s.append("request_events", evs)
        m = min(itl_requests // runs, per)
        s.append("token_latencies", pd.DataFrame({
            "run_id": run, "request_id": np.repeat(ids[:m], tokens),
            "token_index": np.tile(np.arange(1, tokens + 1), m).astype("int32"),
            "itl_ms": rng.gamma(8, 3, m * tokens)}))
        b = rng.choice(per, size=min(5000, per), replace=False)
        cids = [f"bench:{k}:{i}" for i in range(len(b))]
        s.append("cases", pd.DataFrame({"case_id": cids, "correct": rng.random(len(b)) < 0.7}))
        s.append("case_links", pd.DataFrame({"case_id": cids, "run_id": run,
                                             "request_id": ids[b], "level": 1, "score": 1.0}))
        all_ids += [(run, i) for i in ids]
    return s, all_ids


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--itl-requests", type=int, default=100_000)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--gui", action="store_true")
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    s, ids = build(a.requests, a.runs, a.itl_requests, a.tokens)
    print(f"store: {a.requests:,} requests, {s.count('request_events'):,} events, "
          f"{s.count('token_latencies'):,} token gaps, built in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(1)
    per = a.requests // a.runs
    m = a.itl_requests // a.runs
    # half the picks have per-token data, half do not
    picks = [ids[r * per + int(rng.integers(0, m if j % 2 == 0 else per))]
             for j, r in enumerate(rng.integers(0, a.runs, a.repeat))]

    t = time.perf_counter()
    indexed = tl.ensure_indexes(s)
    t_idx = time.perf_counter() - t
    t = time.perf_counter()
    for r in range(a.runs):
        tl.run_p99_itl_ms(s, f"bench-run-{r}")
    t_stats = (time.perf_counter() - t) / a.runs
    print(f"cold: index build {t_idx * 1e3:.0f} ms on {', '.join(indexed) or 'no table'} "
          f"(once per store), run stats "
          f"{t_stats * 1e3:.0f} ms per run (once, cached)")

    tt, tn, tot, sizes, gaps = [], [], [], [], []
    for run, rid in picks:
        t = time.perf_counter()
        timeline = tl.request_timeline(s, run, rid)
        t1 = time.perf_counter()
        nb = tl.neighbours(s, run, rid, window_s=30)
        t2 = time.perf_counter()
        tt.append(t1 - t)
        tn.append(t2 - t1)
        tot.append(t2 - t)
        sizes.append(len(nb))
        gaps.append(len(timeline.itl))

    def f(x):
        x = np.asarray(x) * 1e3
        return f"p50 {np.percentile(x, 50):6.1f}  p95 {np.percentile(x, 95):6.1f}  max {x.max():6.1f} ms"
    print(f"request_timeline      {f(tt)}")
    print(f"neighbours (+-30 s)   {f(tn)}   ({int(np.median(sizes))} neighbours median)")
    print(f"timeline + swimlane   {f(tot)}   over {a.repeat} requests "
          f"({sum(g > 0 for g in gaps)} with per-token data)")
    ok = np.percentile(np.asarray(tot) * 1e3, 95) < 100
    print("target p95 < 100 ms:", "met" if ok else "NOT met")

    if a.gui:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        import PySide6
        from PySide6.QtWidgets import QApplication
        from explorer.widgets.timeline import TimelinePanel
        if sys.version_info < (3, 12) and PySide6.__version__.startswith("6.12"):
            # PySide6 6.12 drops a reference to None on every void Qt call under Python 3.11
            # (None is immortal only from 3.12): repainting big figures 20 times would abort
            # with "none_dealloc". Pad None's refcount so the measurement can finish.
            _pad = [None] * 20_000_000  # noqa: F841
        app = QApplication.instance() or QApplication([])
        from explorer.core.viewstate.timeline import fetch_view
        panel = TimelinePanel(None)
        panel.resize(1400, 900)
        panel.show()
        tg = []
        for run, rid in picks:
            t = time.perf_counter()
            panel.show_view(fetch_view(s, run, rid))
            app.processEvents()
            tg.append(time.perf_counter() - t)
        print(f"panel.show_view      {f(tg)}   (queries + painting, offscreen)")
        sys.stdout.flush()
        os._exit(0)  # skip teardown: freeing the padding would let None's refcount reach 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
