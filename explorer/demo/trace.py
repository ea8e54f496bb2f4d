"""Seeded synthesis of a multi-turn arrival trace in the Mooncake format.

The Mooncake format (kvcache-ai/Mooncake, FAST25-release/traces): one JSON object a line with
`timestamp` (ms from the trace start), `input_length`, `output_length` (tokens) and `hash_ids`
(ids of the 512-token prompt blocks; equal ids = the same prefix block, so a later turn of a
conversation repeats the ids of the earlier turn's full blocks).

The model behind `synthesize_trace` (the parameters are the fields of `FIT`):

* Conversations start as a Poisson process (conversations_per_s). A conversation at depth d
  (d = 0 for its first turn) goes on to one more turn with probability
  1 - cont_c / (d + cont_b): follow-up turns get likelier the longer a conversation already is.
* A follow-up turn arrives a log-normal "think time" after the previous one.
* Arrival times are logged on a 3-second tick (the real trace's timestamps are multiples of
  ~3000 ms), which is what makes the real inter-arrival times so bursty (coefficient of
  variation ~3: most gaps are 0, one gap per tick is 3000 ms).
* Every prompt starts with one shared system-prompt block (hash id 0). A first turn's prompt is
  system_tokens plus either a short message (exponential, probability p_short_prompt) or a long
  document (log-normal). A follow-up turn's prompt is the previous prompt + the previous answer
  + a new user message (log-normal: most are a few dozen tokens, some are pasted documents);
  it repeats the hash ids of the previous prompt's full 512-token blocks.
* Output lengths: a mixture of short answers (log-normal, probability p_short_out) and a main
  log-normal.

How FIT was fitted: on ../shared/data/real/mooncake/conversation_trace.jsonl (12,031 requests,
59 minutes). Chains were recovered by following shared hash-id prefixes (a request whose
longest already-seen prefix is longer than block 0 continues the request that last wrote that
block). Request rate = requests / duration (3.40/s), 61.3% of them first turns; continuation
probabilities per depth (0.31, 0.42, 0.51, 0.59, ...) fitted by cont_c, cont_b; think times
from the parent -> child gaps (quartiles 66 / 123 / 264 s -> log-normal median 123 s, sigma
1.03); follow-up messages from child prompt - (parent prompt + parent output) (median 23
tokens, p90 4,255); root prompts: 28% within 900..1500 tokens, the rest log-normal (log-mean
9.05, log-sd 0.94); outputs: 28% short answers, quartiles 156 / 350 / 472 tokens. The last few
values were then nudged until the synthetic quantiles matched (bench/demo.py prints real and
synthetic statistics side by side; tests/test_demo_trace.py checks them with stated
tolerances). The real file itself is never copied.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError

BLOCK_TOKENS = 512  # tokens per hash_ids block (Mooncake)
TICK_MS = 3000      # the real trace logs arrivals on a 3-second tick


@dataclass(frozen=True)
class MooncakeFit:
    """Parameters of the trace model (see the module docstring for how they were fitted)."""
    rate_per_s: float = 3.40           # requests per second (sizes the window for n requests)
    conversations_per_s: float = 2.15  # new conversations per second (real: 0.613 x 3.40,
                                       # raised so the synthetic request rate is 3.40/s)
    cont_c: float = 3.55               # P(one more turn | depth d) = 1 - cont_c / (d + cont_b)
    cont_b: float = 5.1
    think_median_s: float = 123.0      # think time between turns, log-normal
    think_sigma: float = 1.03
    system_tokens: int = 890           # shared system prompt (block 0)
    p_short_prompt: float = 0.28       # first turn: short message ...
    short_prompt_mean: float = 180.0   #   ... exponential, mean tokens
    long_prompt_logmean: float = 9.05  # ... else a long document, log-normal (natural log)
    long_prompt_logsd: float = 0.94
    msg_median: float = 40.0           # follow-up user message, log-normal (tokens)
    msg_sigma: float = 2.7
    p_short_out: float = 0.28          # output: short answers with this probability
    short_out_median: float = 35.0
    short_out_sigma: float = 1.3
    out_median: float = 405.0
    out_sigma: float = 0.37
    max_tokens: int = 131_072          # context limit: prompts are truncated to it


FIT = MooncakeFit()
WARMUP_S = 900.0    # conversations started before the trace window
GENERATOR_VERSION = 2  # bump when the model changes: it keys the on-disk cache


def synthesize_trace(n_requests: int = 3000, seed: int = 7, fit: MooncakeFit = FIT) -> pd.DataFrame:
    """A synthetic Mooncake-style trace of exactly `n_requests` requests, deterministic in `seed`.

    Returns a DataFrame sorted by arrival with columns timestamp (int ms from the start),
    input_length, output_length (int tokens), hash_ids (list[int], one id per started
    512-token block), conversation_id (int) and turn (0 for a conversation's first request).
    Raises ValueError when n_requests < 1.
    """
    if n_requests < 1:
        raise ValueError("n_requests must be at least 1")
    rng = np.random.default_rng(seed)
    # conversations start from WARMUP_S before the trace so that it opens in steady state
    # (follow-ups of earlier conversations already arriving), like a window cut from a log
    duration_s = 1.2 * n_requests / fit.rate_per_s + 60.0
    n_conv = rng.poisson(fit.conversations_per_s * (duration_s + WARMUP_S))
    starts = np.sort(rng.uniform(-WARMUP_S, duration_s, n_conv))

    conv, turn, t_s, inp, out, parent = [], [], [], [], [], []
    for c, t0 in enumerate(starts):
        t, d, prev = float(t0), 0, -1
        while t < duration_s:
            i = len(t_s)
            if prev < 0:
                if rng.random() < fit.p_short_prompt:
                    body = rng.exponential(fit.short_prompt_mean)
                else:
                    body = rng.lognormal(fit.long_prompt_logmean, fit.long_prompt_logsd)
                n_in = fit.system_tokens + int(body)
            else:
                msg = rng.lognormal(np.log(fit.msg_median), fit.msg_sigma)
                n_in = inp[prev] + out[prev] + 1 + int(msg)
            if rng.random() < fit.p_short_out:
                n_out = rng.lognormal(np.log(fit.short_out_median), fit.short_out_sigma)
            else:
                n_out = rng.lognormal(np.log(fit.out_median), fit.out_sigma)
            conv.append(c)
            turn.append(d)
            t_s.append(t)
            inp.append(min(n_in, fit.max_tokens))
            out.append(int(min(max(1, round(n_out)), 4096)))
            parent.append(prev)
            if rng.random() >= 1.0 - fit.cont_c / (d + fit.cont_b):
                break
            prev, d = i, d + 1
            t += rng.lognormal(np.log(fit.think_median_s), fit.think_sigma)

    t_arr = np.asarray(t_s)
    order = np.lexsort((np.arange(len(t_arr)), t_arr))
    order = order[t_arr[order] >= 0.0][:n_requests]
    keep = set(order.tolist())

    # hash ids: block 0 is the shared system prompt; a follow-up repeats its parent's full
    # blocks (when the parent is in the trace) and gets fresh ids for the rest.
    next_id = 1
    blocks: dict[int, list[int]] = {}
    for i in sorted(keep, key=lambda k: (t_arr[k], k)):
        n_blocks = -(-inp[i] // BLOCK_TOKENS)
        p = parent[i]
        shared = [0]
        if p >= 0 and p in blocks:
            full = inp[p] // BLOCK_TOKENS
            shared = blocks[p][:max(1, min(full, n_blocks))]
        new = list(range(next_id, next_id + n_blocks - len(shared)))
        next_id += len(new)
        blocks[i] = shared + new

    ticks = np.floor(t_arr[order] * 1000.0 / TICK_MS).astype(np.int64)
    tick_jitter = rng.integers(-1, 2, size=int(ticks.max()) + 2)  # ms wobble of the logger
    tick_jitter[0] = 0
    ts_ms = ticks * TICK_MS + tick_jitter[ticks]
    ts_ms = np.maximum.accumulate(ts_ms - ts_ms[0])
    return pd.DataFrame({
        "timestamp": ts_ms.astype(np.int64),
        "input_length": np.asarray(inp, dtype=np.int64)[order],
        "output_length": np.asarray(out, dtype=np.int64)[order],
        "hash_ids": [blocks[i] for i in order],
        "conversation_id": np.asarray(conv, dtype=np.int64)[order],
        "turn": np.asarray(turn, dtype=np.int64)[order],
    })


def write_mooncake(trace: pd.DataFrame, path: str | Path) -> Path:
    """Write a trace as Mooncake JSONL (timestamp, input_length, output_length, hash_ids)."""
    path = Path(path)
    with open(path, "w", encoding="utf-8") as fh:
        for ts, n_in, n_out, h in zip(trace["timestamp"], trace["input_length"],
                                      trace["output_length"], trace["hash_ids"]):
            fh.write(json.dumps({"timestamp": int(ts), "input_length": int(n_in),
                                 "output_length": int(n_out), "hash_ids": [int(x) for x in h]}))
            fh.write("\n")
    return path


def read_mooncake_trace(path: str | Path) -> pd.DataFrame:
    """Read a Mooncake-format JSONL trace into the frame `synthesize_trace` returns.

    conversation_id / turn are recovered from shared hash-id prefixes (a request continues the
    request that last wrote the longest already-seen prefix beyond block 0). Raises InputError
    naming the file, line and field for a line that is not a JSON object or lacks a field,
    and for an empty trace.
    """
    path = Path(path)
    rows = []
    try:
        fh = open(path, encoding="utf-8")
    except OSError as e:
        raise InputError(path, f"cannot be opened: {e.strerror or e}") from None
    with fh:
        for ln, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise InputError(path, f"not a JSON object ({e.msg})", line=ln) from None
            if not isinstance(obj, dict):
                raise InputError(path, "not a JSON object", line=ln)
            rec = []
            for f in ("timestamp", "input_length", "output_length"):
                v = obj.get(f)
                if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                    raise InputError(path, "missing or not a non-negative number", ln, f)
                rec.append(int(v))
            h = obj.get("hash_ids", [])
            if not isinstance(h, list) or not all(isinstance(x, int) for x in h):
                raise InputError(path, "not a list of integers", ln, "hash_ids")
            rows.append((*rec, h))
    if not rows:
        raise InputError(path, "no requests in the trace")
    df = pd.DataFrame(rows, columns=["timestamp", "input_length", "output_length", "hash_ids"])
    df = df.sort_values("timestamp", kind="stable").reset_index(drop=True)
    last_writer: dict[int, int] = {}
    conv = np.zeros(len(df), dtype=np.int64)
    turn = np.zeros(len(df), dtype=np.int64)
    n_conv = 0
    for i, h in enumerate(df["hash_ids"]):
        k = 0
        while k < len(h) and h[k] in last_writer:
            k += 1
        if k > 1:
            p = last_writer[h[k - 1]]
            conv[i], turn[i] = conv[p], turn[p] + 1
        else:
            conv[i], n_conv = n_conv, n_conv + 1
        for x in h:
            last_writer[x] = i
    df["conversation_id"], df["turn"] = conv, turn
    return df
