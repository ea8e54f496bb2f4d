"""A dozen requests worked out on paper through the replay engine (vLLM v1 semantics).

Settings: 8 KV blocks of 4 tokens, each trace hash id = one 4-token block (hash_block_tokens
4), max_num_seqs 2, max_num_batched_tokens 64 (no chunking), LRU, every step exactly 1 s
(step_base_ms 1000, the rest 0). kN..M below is the chained key of hash ids N..M.

Derivation (step s runs [t, t+1); a request is visible from the first step starting at or
after its arrival; q/h = queried/hit blocks of one scheduling attempt; hit cap =
(num_tokens - 1) // 4 blocks):
 R1 t0 p8 [1,2] o2: s1 q2 h0, 2 blocks, first token t1; s2 decode needs block 3 (8 % 4 == 0),
    finishes t2. Its blocks are released last first: LRU queue [k12, k1]; free 6.
 R2 t2 p9 [1,2,3] o1: s3 q3 h2 (cap 2; the third hash block has 1 token: not a full block),
    1 new block, finishes t3 (TTFT 1 s). Queue [k12, k1], free 6.
 R3 t3 p16 [5,6,7,8] o5 and R4 t3 p12 [1,2,9] o4: s4 R3 q4 h0 takes 4 blocks (free 2); R4
    q3 h2 (cap 2) takes 1 (free 1, nothing evictable). Both emit their first token at t4.
 s5: both decodes cross a block boundary (16 and 12 tokens): 2 blocks needed, 1 available ->
    preempt the most recently admitted, R4 (12 tokens computed, 1 output): its 3 blocks stay
    cached and are released last first: queue [k129, k12, k1]. R3 gets the free block. No
    admission in a step with a preemption.
 s6, s7, s8: R4 (13 tokens now) is tried each step: q4 h3 (cap 3), needs 1 new block, but the
    3 evictable blocks are its own hit -> blocked (3 attempts counted: q12 h9). R3 finishes at
    t8 (20 tokens computed: its 5th block holds output tokens, key private to R3); release:
    queue [k129, k12, k1, uR3, k5678, k567, k56, k5].
 s9: R4 resumes: q4 h3, takes k1, k12, k129, 1 new block evicts uR3 (eviction 1: a finished
    request's last block goes first). Tokens at t9 (2nd), t10, t11; finishes t11: queue
    [k5678, k567, k56, k5, k129, k12, k1], free 1.
 R5 t20 p8 [5,6] o1: q2, k5 and k56 cached but cap (8-1)//4 = 1 -> h1; 1 new block from free.
    Release: queue [k5678, k567, k129, k12, k1, k56, k5], free 1 (its copy of block 2 was a
    duplicate of k56, freed without hash).
 R6 t30 p20 [10..14] o1: q5 h0, 5 blocks: free 1 + evict k5678, k567, k129, k12 (evictions
    2-5). Release: queue [k1, k56, k5, k10-14, k10-13, k10-12, k10-11, k10], free 0.
 R7 t40 p12 [1,2,3] o1: q3 h1 (k12 was evicted), 2 new blocks evict k56, k5 (6-7).
 R8 t50 p12 [1,2,3] o1: q3 h2 (cap), 1 new block evicts k10-14 (8). Free 1 after.
 R9 t60 p4 [10] o3: q1 h0 (cap (4-1)//4 = 0), block from free; its first decode step needs a
    block: evicts k10-13 (9). Finishes t63; free 2.
 R10 t70 p4 [20] o2, R11 t70 p4 [21] o3, R12 t70 p4 [1] o1: s R10 q1 h0, R11 q1 h0 take the 2
    free blocks; max_num_seqs 2 -> R12 not tried (no query counted). Next step both decodes
    need a block: evict k10-12, k10-11 (10-11); R10 finishes t72. R12 is admitted at t72 (q1
    h0: cap 0 although k1 is cached), queue 2 s, done t73 with R11.
Totals: queries 2+3+4+3+12+4+2+5+3+3+1+1+1+1 = 45 blocks, hits 0+2+0+2+9+3+1+0+1+2 = 20,
evicted 11 blocks, 1 preemption; at the end 6 cached blocks (k123, k12, k10, k20, k21, k1) +
2 free = 8.
"""
from __future__ import annotations

import pytest

from explorer.core.replay import EngineConfig, TraceRequest, simulate

REQS = [  # id, arrival s, prompt, output, hash ids
    ("R1", 0, 8, 2, (1, 2)), ("R2", 2, 9, 1, (1, 2, 3)), ("R3", 3, 16, 5, (5, 6, 7, 8)),
    ("R4", 3, 12, 4, (1, 2, 9)), ("R5", 20, 8, 1, (5, 6)), ("R6", 30, 20, 1, (10, 11, 12, 13, 14)),
    ("R7", 40, 12, 1, (1, 2, 3)), ("R8", 50, 12, 1, (1, 2, 3)), ("R9", 60, 4, 3, (10,)),
    ("R10", 70, 4, 2, (20,)), ("R11", 70, 4, 3, (21,)), ("R12", 70, 4, 1, (1,)),
]
CFG = EngineConfig(num_gpu_blocks=8, block_size=4, max_num_seqs=2, max_num_batched_tokens=64,
                   eviction="lru", step_base_ms=1000.0, step_per_decode_seq_ms=0.0,
                   step_per_prefill_token_ms=0.0, step_prefill_base_ms=0.0)


@pytest.fixture(scope="module")
def res():
    trs = [TraceRequest(i, float(a), p, o, h, hash_block_tokens=4) for i, a, p, o, h in REQS]
    return simulate(trs, CFG, record_itl=True)


def test_counts(res):
    s = res.summary
    assert s["cache_query_blocks"] == 45
    assert s["cache_hit_blocks"] == 20
    assert s["hit_rate_blocks"] == pytest.approx(20 / 45)
    assert s["evicted_blocks"] == 11
    assert s["preemptions"] == 1
    assert s["requests"] == 12 and s["finished"] == 12 and s["rejected"] == 0


def test_per_request(res):
    rq = res.requests.set_index("request_id")
    assert rq.loc["R4", "num_preemptions"] == 1
    assert rq["num_preemptions"].sum() == 1
    cached = {"R2": 8, "R4": 8, "R5": 4, "R7": 4, "R8": 8}
    for rid in rq.index:
        assert rq.loc[rid, "cached_prompt_tokens"] == cached.get(rid, 0), rid
    assert rq.loc["R2", "kv_cache_hit_rate"] == pytest.approx(8 / 9)
    # R4: arrival 3, first token 4, preempted at 4, resumed 8, tokens 9, 10, 11
    assert rq.loc["R4", "ttft_ms"] == pytest.approx(1000)
    assert rq.loc["R4", "e2e_ms"] == pytest.approx(8000)
    assert rq.loc["R4", "tpot_ms"] == pytest.approx(7000 / 3)
    assert rq.loc["R3", "tpot_ms"] == pytest.approx(1000)
    assert rq.loc["R12", "queue_ms"] == pytest.approx(2000)
    assert rq.loc["R9", "e2e_ms"] == pytest.approx(3000)
    assert (rq["completion_tokens"] == [o for *_, o, _ in REQS]).all()


def test_events_of_the_preempted_request(res):
    ev = res.events[res.events.request_id == "R4"]
    assert list(zip(ev.kind, ev.ts_s)) == [
        ("arrived", 3), ("queued", 3), ("scheduled", 3), ("first_token", 4), ("preempted", 4),
        ("resumed", 8), ("finished", 11)]


def test_itl_of_the_preempted_request(res):
    tl = res.token_latencies[res.token_latencies.request_id == "R4"]
    assert list(tl.itl_ms) == [5000, 1000, 1000]   # tokens at 4, 9, 10, 11
