"""Benchmark of the replay engine (run on demand: `.venv/bin/python bench/replay.py [--n 1000000]`).

1. The real Mooncake conversation trace (12,031 requests, ../shared/data/real/mooncake):
   wall and CPU time of simulate() for a few settings (target: < 2 s each).
2. A synthetic multi-turn trace of --n requests (default 1,000,000; seeded): Poisson
   arrivals, conversations whose turns extend the previous prompt's hash ids, log-normal
   prompt and output lengths (target: < 2 min).
Prints one line per run: settings, requests, wall s, CPU s, hit rates (the capacity-comparable
share of prompt tokens served from cache and its per-request mean first, then vLLM's
per-scheduling-attempt hit_rate_blocks), preemptions, TTFT/TPOT.
The machine is shared: CPU seconds (time.process_time) are the fairer figure.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer.core.replay import EngineConfig, TraceRequest, read_mooncake, simulate  # noqa: E402


def synthetic_trace(n: int, seed: int = 0, rate_per_s: float = 25.0) -> list[TraceRequest]:
    """n requests: each starts a new conversation with probability 0.35, else continues a
    random live one (its prompt = the previous prompt + the previous answer + a new question,
    sharing the previous hash ids); a 2-block system prompt shared by all conversations."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / rate_per_s, n))
    q_len = np.clip(rng.lognormal(6.3, 0.9, n), 16, 8000).astype(int)
    out_len = np.clip(rng.lognormal(5.0, 0.8, n), 1, 2000).astype(int)
    new_conv = rng.random(n) < 0.35
    pick = rng.random(n)
    next_id = 1000
    convs: list[tuple[tuple, int]] = []  # (hash ids, prompt tokens so far incl. answers)
    out = []
    system = (1, 2)
    for i in range(n):
        if new_conv[i] or not convs:
            hashes, tokens = system, 1024
            slot = None
        else:
            slot = int(pick[i] * len(convs))
            hashes, tokens = convs[slot]
        tokens_new = tokens + int(q_len[i])
        nb = -(-tokens_new // 512)
        extra = nb - len(hashes)
        if extra > 0:
            hashes = hashes + tuple(range(next_id, next_id + extra))
            next_id += extra
        # a partial last block changes as the conversation grows: a fresh id for it
        if tokens_new % 512:
            hashes = hashes[:-1] + (next_id,)
            next_id += 1
        out.append(TraceRequest(str(i), float(arrivals[i]), tokens_new, int(out_len[i]), hashes))
        full = (tokens_new + int(out_len[i])) // 512
        keep = (hashes[:full], tokens_new + int(out_len[i]))
        if tokens_new + out_len[i] > 24000:
            if slot is not None:
                convs[slot] = convs[-1]
                convs.pop()
        elif slot is None:
            convs.append(keep)
            if len(convs) > 2000:
                convs.pop(0)
        else:
            convs[slot] = keep
    return out


def run(name: str, trace, cfg: EngineConfig, events: bool = True) -> dict:
    w0, c0 = time.perf_counter(), time.process_time()
    res = simulate(trace, cfg, record_events=events)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    s = res.summary
    print(f"{name:28s} {cfg.label():52s} n={s['requests']:>8d} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
          f"served from cache: tok {s['hit_rate_tokens']:.3f} req {s['hit_rate_per_request']:.3f} "
          f"(vLLM per-attempt blocks {s['hit_rate_blocks']:.3f})  preempt {s['preemptions']:>6d}  "
          f"TTFT {s['ttft_ms_mean']:.0f} ms  TPOT {s['tpot_ms_mean']:.2f} ms  "
          f"events {len(res.events)}", flush=True)
    return {"wall": wall, "cpu": cpu, **s}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="synthetic requests (default 1M)")
    ap.add_argument("--skip-synthetic", action="store_true")
    args = ap.parse_args()
    conv = read_mooncake(ROOT.parent / "shared" / "data" / "real" / "mooncake" / "conversation_trace.jsonl")
    for cfg in (EngineConfig(),
                EngineConfig(block_size=512),
                EngineConfig(num_gpu_blocks=65536),
                EngineConfig(num_gpu_blocks=20000),
                EngineConfig(num_gpu_blocks=20000, eviction="fifo"),
                EngineConfig(num_gpu_blocks=20000, eviction="lfu"),
                EngineConfig(num_gpu_blocks=20000, eviction="s3fifo"),
                EngineConfig(num_gpu_blocks=20000, max_num_seqs=64)):
        run("mooncake conversation", conv, cfg)
    if not args.skip_synthetic:
        t0 = time.perf_counter()
        trace = synthetic_trace(args.n)
        print(f"synthetic trace of {args.n} requests built in {time.perf_counter() - t0:.1f} s")
        run("synthetic", trace, EngineConfig(num_gpu_blocks=60000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
