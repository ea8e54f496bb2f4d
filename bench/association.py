"""Benchmark: bind 100k eval cases against 1M requests (explorer.core.association.bind_cases).

Synthetic but shaped like a real eval-vs-server join: 1M requests over ~55 min at 300 QPS
(Poisson arrivals, E2E 0.2-20 s, prompt tokens 50-8000, every prompt distinct); 100k cases
drawn from them: 90% carry their request id (level 1), 8% lost the id but keep prompt hash,
tokens +-1 and a clock skew of up to 3 s (level 2), 2% keep only tokens +1 and time (level 2
where no other request of the same length +-2 arrived in the window, else ambiguous).
Prints the time of bind_cases, the count per level, the ambiguous count, and checks that no
case was bound to a request other than its source.

Run: .venv/bin/python bench/association.py [--requests N] [--cases M] [--seed S]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.core.association import bind_cases  # noqa: E402
from explorer.core.store import Store  # noqa: E402


def build(store: Store, n_req: int, n_cases: int, seed: int) -> pd.DataFrame:
    """Fill the store; return the truth (case_id -> request_id)."""
    rng = np.random.default_rng(seed)
    t0 = 1_750_000_000.0
    idx = np.arange(n_req)
    rid = pd.Series(idx).map("chatcmpl-{:09d}".format)
    phash = pd.Series(rng.integers(0, 2**62, n_req)).map("{:016x}".format)
    req = pd.DataFrame({
        "run_id": "bench", "request_id": rid,
        "arrival_s": t0 + np.cumsum(rng.exponential(1 / 300.0, n_req)),
        "e2e_ms": rng.uniform(200, 20_000, n_req),
        "prompt_tokens": rng.integers(50, 8000, n_req).astype("int32"),
        "prompt_hash": phash})
    store.add_run("bench", model="bench-model")
    store.append("requests", req)
    pick = rng.choice(n_req, n_cases, replace=False)
    src = req.iloc[pick].reset_index(drop=True)
    kind = rng.choice(3, n_cases, p=[0.90, 0.08, 0.02])
    skew = rng.uniform(-3, 3, n_cases)
    cases = pd.DataFrame({
        "case_id": [f"ev:{i}" for i in range(n_cases)], "eval_id": "ev", "correct": False,
        "request_id": np.where(kind == 0, src.request_id, None),
        "prompt_hash": np.where(kind <= 1, src.prompt_hash, None),
        "prompt_tokens": np.where(kind == 0, src.prompt_tokens,
                                  src.prompt_tokens + np.where(kind == 1,
                                                               rng.choice([-1, 1], n_cases), 1)),
        "timestamp_s": src.arrival_s + np.where(kind == 0, 0.0, skew)})
    cases["prompt_tokens"] = cases["prompt_tokens"].astype("Int64")
    store.add_eval("ev", model="bench-model")
    store.append("cases", cases)
    return pd.DataFrame({"case_id": cases.case_id, "truth": src.request_id, "kind": kind})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    store = Store()
    t = time.perf_counter()
    truth = build(store, a.requests, a.cases, a.seed)
    t_build = time.perf_counter() - t
    t = time.perf_counter()
    result = bind_cases(store)
    t_bind = time.perf_counter() - t
    links = store.df("SELECT case_id, request_id FROM case_links").merge(truth, on="case_id")
    wrong = int((links.request_id != links.truth).sum())
    out = {"requests": a.requests, "cases": a.cases, "build_s": round(t_build, 2),
           "bind_s": round(t_bind, 2), "bound": result.bound,
           "per_level": result.per_level, "ambiguous": len(result.ambiguous),
           "wrong": wrong}
    print(json.dumps(out))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
