"""The bundled demo workload: a simulated Mooncake-style trace, replayed through the engine
model for two engine versions, with templated maths eval cases bound to its requests.

Everything here is simulated (DEMO_NOTE says so wherever the demo is shown):

* explorer.demo.trace: the seeded multi-turn arrival trace (Mooncake format) fitted to the real
  Mooncake conversation trace;
* explorer.core.replay (the engine model) replays it for engine versions "0.5.2" and "0.6.1"
  (explorer.demo.workload.VERSIONS: the newer one keeps fewer prefix-cache blocks);
* explorer.demo.cases: one maths question per request, wrong more often when the request saw a
  low KV-cache hit rate and several preemptions (the planted effect, formula in that module).
"""
from __future__ import annotations

from pathlib import Path

from ..core.errors import InputError
from ..core.store import LoadReport, Store

from ..core.names import DEMO_NOTE  # the core vocabulary owns the words (report meta)


def load_demo(store: Store, progress=None, *, seed: int | None = None,
              n_requests: int | None = None, trace_path: str | Path | None = None,
              use_cache: bool = True) -> list[LoadReport]:
    """Fill `store` with the simulated demo and return one LoadReport per run and per eval.

    Writes two runs (engine "vllm-sim", engine_version "0.5.2" and "0.6.1", simulated=true,
    config JSON with the engine settings), their requests (all canonical metrics, prompt_hash;
    arrival_s in unix seconds: the 0.5.2 run starts 2026-01-12 09:00 UTC, the 0.6.1 run a week
    later), request_events (arrived ... preempted / resumed ... finished), token_latencies
    (every generated token's inter-token latency; skipped for traces longer than
    workload.ITL_MAX_REQUESTS requests), two evals (simulated=true) with their cases and
    clusters (some named in Chinese), and `inputs` rows labelled "demo workload (simulated,
    seed N)"; then runs explorer.core.pipeline.prepare (clusters + binding) when that module
    exists. Deterministic in `seed` (default 7). Only one demo per store: a second call is
    refused (its request ids would collide).

    n_requests: trace length (default explorer.demo.workload.N_REQUESTS); trace_path: a
    Mooncake-format JSONL of your own to replay instead of the synthetic trace.
    progress(done, total, what) is called as the stages advance. Never raises for a bad trace
    file or a second load into the same store: the reports then carry `error` and the store is
    unchanged.
    """
    from . import workload

    seed = workload.SEED if seed is None else seed
    n_requests = workload.N_REQUESTS if n_requests is None else n_requests
    label = str(trace_path) if trace_path is not None else f"demo workload (simulated, seed {seed})"
    already = store.execute("SELECT count(*) FROM runs WHERE format = 'demo'").fetchall()[0][0]
    failed = None
    if already:
        failed = LoadReport(path=label, format="demo",
                            error=f"{label}: the demo workload is already loaded in this session")
    else:
        try:
            data = workload.cached_build(seed, n_requests, trace_path, progress, use_cache)
        except InputError as e:
            failed = LoadReport(path=label, format="demo", error=str(e))
    if failed is not None:
        workload.record_input(store, failed)
        return [failed]
    reports = workload.write_demo(store, data)
    from ..core import pipeline
    if progress:
        progress(98, 100, "binding cases to requests")
    pipeline.prepare(store)
    if progress:
        progress(100, 100, "done")
    return reports


__all__ = ["DEMO_NOTE", "load_demo"]
