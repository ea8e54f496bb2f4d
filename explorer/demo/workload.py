"""Build the demo workload (trace -> engine replay for two versions -> eval cases) and load it.

`build_demo` is pure and deterministic in its seed (and the trace file's bytes when one is
given); its frames are cached on disk under $TRACE_EXPLORER_CACHE (default
~/.cache/trace-explorer)/demo/<key>/ where the key hashes the seed, the request count, the
trace's bytes and the source of explorer/demo and explorer/core/replay, so a changed generator
or engine never serves stale data. `load_demo` appends the frames to a store.

Two engine versions replay the same trace and differ in their KV cache (VERSIONS): "0.5.2"
keeps a 250,000-block pool (4M tokens, as with KV offload to host memory) with LRU eviction,
"0.6.1" a 10,000-block GPU-only pool (160k tokens) with FIFO eviction. On this trace the pool
size does the work: at equal size LRU, FIFO and LFU give hit rates within 0.01 of each other
(bench/demo.py), while the small pool loses the conversations' prefixes between turns (mean
per-request KV-cache hit rate 0.27 -> 0.16 at the default size) and, under bursts of long
prompts, runs out of blocks and preempts (about 9% of the newer version's requests). The eval
side is explorer.demo.cases (the planted effect is stated there).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..core.store import LoadReport, Store
from . import cases as casegen
from .trace import GENERATOR_VERSION, read_mooncake_trace, synthesize_trace

SEED = 7
N_REQUESTS = 2500
ENGINE = "vllm-sim"
MODEL = "Llama-3.1-8B-Instruct"
BENCHMARK = "demo-maths"
OLD, NEW = "0.5.2", "0.6.1"
# Engine settings per version (vLLM-like names; the timing defaults are the engine model's).
VERSIONS: dict[str, dict] = {
    OLD: {"num_gpu_blocks": 250_000, "eviction": "lru"},
    NEW: {"num_gpu_blocks": 10_000, "eviction": "fifo"},
}
# The eval ran against each version on a different day: wall clock of the trace's t = 0.
STARTED_AT = {OLD: datetime(2026, 1, 12, 9, 0, tzinfo=timezone.utc),
              NEW: datetime(2026, 1, 19, 9, 0, tzinfo=timezone.utc)}
OLD_CASE_SHARE = 0.35   # the older version's eval covers about a third of its requests
ID_SHARE = 0.9          # share of cases that carry their request id (the rest: fuzzy join)
CLOCK_SKEW_S = 0.35     # eval host clock ahead of the server's
CACHE_KEEP = 8          # demo cache entries kept on disk (most recently used)
ITL_MAX_REQUESTS = 5000  # longer traces skip per-token latencies (they double the replay time)
TABLES = ("runs", "requests", "request_events", "token_latencies", "evals", "cases")

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class DemoData:
    """The demo's frames, ids not yet assigned to a store: runs / evals keyed by `version`;
    requests / request_events / token_latencies / cases carry a `version` column (the run or
    eval they belong to)."""
    runs: pd.DataFrame
    requests: pd.DataFrame
    request_events: pd.DataFrame
    token_latencies: pd.DataFrame | pa.Table  # compact: version, trace_index, token_index, itl_ms
    evals: pd.DataFrame
    cases: pd.DataFrame
    label: str
    sha256: str


def cache_dir() -> Path:
    """$TRACE_EXPLORER_CACHE, else ~/.cache/trace-explorer."""
    env = os.environ.get("TRACE_EXPLORER_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "trace-explorer"


def _sources_digest() -> str:
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for d in (here, here.parent / "core" / "replay"):
        for f in sorted(d.glob("*.py")):
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _trace_sha(trace: pd.DataFrame) -> str:
    h = hashlib.sha256()
    for ts, n_in, n_out, ids in zip(trace["timestamp"], trace["input_length"],
                                    trace["output_length"], trace["hash_ids"]):
        h.update(json.dumps([int(ts), int(n_in), int(n_out), [int(x) for x in ids]]).encode())
    return h.hexdigest()


def build_demo(seed: int = SEED, n_requests: int = N_REQUESTS, trace_path: str | Path | None = None,
               progress: Progress | None = None) -> DemoData:
    """Synthesise (or read) the trace, replay it for both versions and draw the eval cases.

    trace_path: a Mooncake-format JSONL to use instead of the synthetic trace (all of it is
    replayed; n_requests is then ignored). Raises InputError for an unreadable trace.
    progress(done, total, what) is called between stages and during the replays.
    """
    from ..core.association import prompt_hash
    from ..core.replay import EngineConfig, simulate

    def tick(done, what):
        if progress:
            progress(done, 100, what)

    tick(0, "generating the trace")
    trace, label = _read_trace(seed, n_requests, trace_path)
    sha = _trace_sha(trace)
    n = len(trace)
    questions = casegen.make_questions(n, seed)
    hashes = [prompt_hash(q.prompt) for q in questions]

    runs, reqs, events, itls, evals, cases = [], [], [], [], [], []
    for vi, version in enumerate((OLD, NEW)):
        cfg = EngineConfig(**VERSIONS[version])
        trs = _engine_requests(trace, version)
        base = 5 + 45 * vi
        res = simulate(trs, cfg, progress=(lambda d, t, b=base, v=version:
                                           tick(b + int(40 * d / max(t, 1)), f"replaying engine {v}")),
                       record_itl=n <= ITL_MAX_REQUESTS)
        epoch = STARTED_AT[version].timestamp()
        rq, idx = _requests_frame(res.requests, trace, hashes, epoch, version)
        reqs.append(rq)
        ev = res.events.copy()
        ev["ts_s"] = ev["ts_s"] + epoch
        ev["version"] = version
        events.append(ev)
        itls.append(_itl_frame(res.token_latencies, trs, version))
        runs.append(_run_row(version, cfg, res.summary, seed, n, label, sha))
        evals.append({"version": version, "format": "demo", "model": MODEL,
                      "benchmark": BENCHMARK, "source_path": label, "source_sha256": sha,
                      "simulated": True})
        cases.append(_draw_cases(rq, idx, questions, hashes, seed, vi, version))
    tick(95, "writing the eval cases")
    return DemoData(runs=pd.DataFrame(runs), requests=pd.concat(reqs, ignore_index=True),
                    request_events=pd.concat(events, ignore_index=True),
                    token_latencies=pd.concat(itls, ignore_index=True),
                    evals=pd.DataFrame(evals), cases=pd.concat(cases, ignore_index=True),
                    label=label, sha256=sha)


def _read_trace(seed: int, n_requests: int, trace_path: str | Path | None
                ) -> tuple[pd.DataFrame, str]:
    """The trace (read from trace_path, else synthesised) and the demo's label for it."""
    if trace_path is not None:
        trace = read_mooncake_trace(trace_path)
        return trace, f"demo workload (simulated, seed {seed}, trace {Path(trace_path).name})"
    return synthesize_trace(n_requests, seed), f"demo workload (simulated, seed {seed})"


def _blocks(trace: pd.DataFrame) -> list[tuple[int, ...]]:
    """Each request's prompt prefix blocks (the trace's hash_ids) as a tuple of ints."""
    return [tuple(int(x) for x in h) for h in trace["hash_ids"]]


def _engine_requests(trace: pd.DataFrame, version: str) -> list:
    """The trace as the engine's TraceRequests, ids req-<version>-<row, 5 digits>."""
    from ..core.replay import TraceRequest
    arrival = (trace["timestamp"].to_numpy(dtype=float) / 1000.0).tolist()
    n_in = trace["input_length"].astype(int).tolist()
    n_out = trace["output_length"].astype(int).tolist()
    blocks = _blocks(trace)
    conv = trace["conversation_id"].astype(int).tolist()
    return [TraceRequest(request_id=f"req-{version}-{i:05d}", arrival_s=arrival[i],
                         prompt_tokens=n_in[i], output_tokens=n_out[i], hash_ids=blocks[i],
                         session_id=str(conv[i]))
            for i in range(len(trace))]


def _requests_frame(replayed: pd.DataFrame, trace: pd.DataFrame, hashes: list[str],
                    epoch: float, version: str) -> tuple[pd.DataFrame, np.ndarray]:
    """One version's replayed requests on the wall clock (epoch = its trace's t = 0) with
    their prompt hash, trace position and version; and each row's trace row index."""
    conv = trace["conversation_id"].astype(int).tolist()
    turn = trace["turn"].astype(int).tolist()
    blocks = _blocks(trace)
    rq = replayed.copy()
    idx = rq["request_id"].str.rsplit("-", n=1).str[1].astype(int).to_numpy()
    rq["arrival_s"] = rq["arrival_s"] + epoch
    rq["prompt_hash"] = [hashes[i] for i in idx]
    # hash_ids: the prompt's 512-token prefix blocks, so the Replay panel can replay the
    # demo's own runs with prefix caching (as a loaded Mooncake trace keeps them)
    rq["extra"] = [json.dumps({"conversation_id": conv[i], "turn": turn[i],
                               "trace_index": int(i), "hash_ids": list(blocks[i])})
                   for i in idx]
    rq["version"] = version
    return rq, idx


def _itl_frame(tl: pd.DataFrame | None, trs: list, version: str) -> pd.DataFrame:
    """One version's per-token latencies, compact: trace row index instead of the id string
    (rebuilt with 5 digits in _write_demo, which ITL_MAX_REQUESTS < 100000 keeps exact)."""
    if tl is None:
        tl = pd.DataFrame({"request_id": [], "token_index": [], "itl_ms": []})
    return pd.DataFrame({
        "version": pd.Categorical([version] * len(tl), categories=[OLD, NEW]),
        "trace_index": pd.Categorical(tl["request_id"], categories=[t.request_id for t in trs])
        .codes.astype(np.int32),
        "token_index": tl["token_index"].to_numpy(np.int32),
        "itl_ms": tl["itl_ms"].to_numpy(float)})


def _run_row(version: str, cfg, summary: dict, seed: int, n: int, label: str, sha: str) -> dict:
    """The runs table's row of one version's simulated run (its engine settings and the
    replay's summary in `config`)."""
    return {"version": version, "engine": ENGINE, "engine_version": version,
            "model": MODEL, "benchmark": BENCHMARK, "format": "demo",
            "label": f"{ENGINE} {version} (simulated)", "source_path": label,
            "source_sha256": sha,
            "started_at": STARTED_AT[version].replace(tzinfo=None),
            "config": json.dumps({**cfg.to_dict(), "engine_model": cfg.label(),
                                  "seed": seed, "requests": n, "simulated": True,
                                  "summary": _jsonable(summary)}),
            "simulated": True}


def _jsonable(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, (np.integer, np.floating)):
            v = v.item()
        if isinstance(v, float) and not np.isfinite(v):
            v = None
        if isinstance(v, (int, float, str, bool)) or v is None:
            out[k] = v
    return out


def _draw_cases(rq: pd.DataFrame, idx: np.ndarray, questions, hashes, seed: int, vi: int,
                version: str) -> pd.DataFrame:
    r = np.random.default_rng([seed, 0x63617365, vi])
    n = len(rq)
    take = np.ones(n, bool) if version == NEW else r.random(n) < OLD_CASE_SHARE
    p = casegen.p_planted(rq["kv_cache_hit_rate"].to_numpy(float),
                          rq["num_preemptions"].to_numpy(float))
    planted = r.random(n) < p
    noise = r.random(n) < casegen.P_NOISE
    with_id = r.random(n) < ID_SHARE
    skew = CLOCK_SKEW_S + r.uniform(0.0, 0.05, n)
    tok_off = r.choice([-1, 0, 0, 0, 1], n)
    rids = rq["request_id"].tolist()
    arr = rq["arrival_s"].to_numpy(float)
    ptok = rq["prompt_tokens"].to_numpy(int)
    ctok = rq["completion_tokens"].to_numpy(int)
    rows = []
    for j in np.flatnonzero(take):
        i = int(idx[j])
        q = questions[i]
        ref, pred, ok, cluster = casegen.answer(q, r, bool(planted[j]), bool(noise[j]))
        rows.append({
            "version": version, "local_id": f"{i:05d}", "model": MODEL, "benchmark": BENCHMARK,
            "category": q.category, "prompt": q.prompt, "prompt_hash": hashes[i],
            "reference": ref, "prediction": pred, "correct": ok, "cluster": cluster,
            "request_id": rids[j] if with_id[j] else None,
            "timestamp_s": float(arr[j] + skew[j]),
            "prompt_tokens": int(ptok[j] + tok_off[j]),
            "completion_tokens": int(ctok[j]),
            "extra": json.dumps({"simulated": True, "template": q.solve.__qualname__.split(".")[0]}),
        })
    return pd.DataFrame(rows)


def _cache_key(seed: int, n_requests: int, trace_path) -> str:
    h = hashlib.sha256(f"demo|{GENERATOR_VERSION}|{seed}|{n_requests}|".encode())
    if trace_path is not None:
        from ..core.store import sha256_of
        h.update(sha256_of(trace_path).encode())
    h.update(_sources_digest().encode())
    return h.hexdigest()[:20]


def cached_build(seed: int = SEED, n_requests: int = N_REQUESTS,
                 trace_path: str | Path | None = None, progress: Progress | None = None,
                 use_cache: bool = True) -> DemoData:
    """build_demo through the on-disk cache (a cache that cannot be read or written is
    ignored: the demo is then built in memory)."""
    if not use_cache:
        return build_demo(seed, n_requests, trace_path, progress)
    folder = cache_dir() / "demo" / _cache_key(seed, n_requests, trace_path)
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        os.utime(folder)  # recently used: kept by _prune
        frames = {t: pd.read_parquet(folder / f"{t}.parquet") for t in TABLES
                  if t != "token_latencies"}
        # the largest frame stays an Arrow table: DuckDB reads it without a pandas copy
        frames["token_latencies"] = pq.read_table(folder / "token_latencies.parquet")
        return DemoData(**frames, label=meta["label"], sha256=meta["sha256"])
    except (OSError, ValueError, KeyError):
        pass
    data = build_demo(seed, n_requests, trace_path, progress)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-"))
        for t in TABLES:
            frame = getattr(data, t)
            if isinstance(frame, pd.DataFrame):
                frame.to_parquet(tmp / f"{t}.parquet", index=False)
            else:
                pq.write_table(frame, tmp / f"{t}.parquet")
        (tmp / "meta.json").write_text(json.dumps({"label": data.label, "sha256": data.sha256}),
                                       encoding="utf-8")
        try:
            tmp.rename(folder)
        except OSError:  # another process cached it first
            shutil.rmtree(tmp, ignore_errors=True)
        _prune(folder.parent, CACHE_KEEP)
    except OSError:
        pass
    return data


def _prune(root: Path, keep: int) -> None:
    """Remove all but the `keep` most recently used demo cache entries under root (a changed
    generator or engine source makes a new entry; the old ones are never read again)."""
    entries = [p for p in root.iterdir() if p.is_dir() and len(p.name) == 20
               and all(c in "0123456789abcdef" for c in p.name)]
    entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for p in entries[keep:]:
        shutil.rmtree(p, ignore_errors=True)


def write_demo(store: Store, data: DemoData) -> list[LoadReport]:
    """Append a built demo to the store in one transaction (holding the store's load lock, as
    Store.load_file does); one LoadReport per run and per eval, recorded in `inputs`. Returns
    the reports."""
    with getattr(store, "_lock", contextlib.nullcontext()):
        return _write_demo(store, data)


def _write_demo(store: Store, data: DemoData) -> list[LoadReport]:
    reports: list[LoadReport] = []
    run_ids, eval_ids = {}, {}
    con = store.con
    con.execute("BEGIN TRANSACTION")
    try:
        for row in data.runs.to_dict("records"):
            v = row.pop("version")
            run_ids[v] = store.new_id("runs", "run_id", f"demo-{ENGINE}-{v}")
            store.append("runs", pd.DataFrame([{"run_id": run_ids[v], **row}]))
        for row in data.evals.to_dict("records"):
            v = row.pop("version")
            eval_ids[v] = store.new_id("evals", "eval_id", f"{BENCHMARK}@{v}")
            store.append("evals", pd.DataFrame([{"eval_id": eval_ids[v], **row}]))
        rq = data.requests.assign(run_id=data.requests["version"].map(run_ids)).drop(columns="version")
        store.append("requests", rq)
        ev = data.request_events.assign(
            run_id=data.request_events["version"].map(run_ids)).drop(columns="version")
        store.append("request_events", ev)
        con.register("_demo_itl", data.token_latencies)
        try:
            con.execute("""INSERT INTO token_latencies (run_id, request_id, token_index, itl_ms)
                SELECT CASE version::VARCHAR WHEN $old THEN $old_run ELSE $new_run END,
                       'req-' || version::VARCHAR || '-' || lpad(trace_index::VARCHAR, 5, '0'),
                       token_index, itl_ms
                FROM _demo_itl""", {"old": OLD, "old_run": run_ids[OLD], "new_run": run_ids[NEW]})
        finally:
            con.unregister("_demo_itl")
        cs = data.cases.assign(eval_id=data.cases["version"].map(eval_ids))
        cs["case_id"] = cs["eval_id"] + ":" + cs["local_id"]
        store.append("cases", cs.drop(columns=["version", "local_id"]))
        for v in (OLD, NEW):
            n_req = int((data.requests["version"] == v).sum())
            reports.append(LoadReport(
                path=f"{data.label}: {ENGINE} {v} trace", format="demo", kind="trace",
                sha256=data.sha256, run_ids=[run_ids[v]], rows_loaded=n_req,
                columns={"timestamp": "arrival_s (/1000, + run start)",
                         "input_length": "prompt_tokens", "output_length": "completion_tokens"}))
        for v in (OLD, NEW):
            reports.append(LoadReport(
                path=f"{data.label}: {BENCHMARK} eval on {v}", format="demo", kind="eval",
                sha256=data.sha256, eval_ids=[eval_ids[v]],
                rows_loaded=int((data.cases["version"] == v).sum())))
        for r in reports:
            record_input(store, r)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return reports


def record_input(store: Store, r: LoadReport) -> None:
    """Record one LoadReport in the store's `inputs` table (provenance)."""
    next_id = store.execute("SELECT coalesce(max(input_id), 0) + 1 FROM inputs").fetchall()[0][0]
    store.append("inputs", pd.DataFrame([{
        "input_id": next_id, "path": r.path, "sha256": r.sha256, "format": r.format,
        "kind": r.kind, "rows_loaded": r.rows_loaded, "rows_skipped": r.rows_skipped,
        "skipped_reasons": json.dumps(r.skipped_reasons), "columns": json.dumps(r.columns),
        "run_ids": json.dumps(r.run_ids), "eval_ids": json.dumps(r.eval_ids), "error": r.error,
        "loaded_at": datetime.now(timezone.utc).replace(tzinfo=None)}]))
