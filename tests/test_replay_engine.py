"""Replay engine mechanics: block conservation, in-use blocks never evicted, chunked prefill
timing, rejection, cancel / progress, bad settings, write_run into the store, the CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core.replay import (Cancelled, EngineConfig, TraceRequest, blocks_for_gb,
                                  read_mooncake, simulate, write_run)
from explorer.core.replay.engine import _Engine


@pytest.fixture(scope="module")
def small(real):
    return read_mooncake(real / "mooncake" / "synthetic_trace.jsonl")[:600]


@pytest.mark.parametrize("eviction", ["lru", "lfu", "fifo", "s3fifo"])
def test_blocks_are_conserved_and_in_use_blocks_never_evicted(small, eviction):
    cfg = EngineConfig(num_gpu_blocks=6000, eviction=eviction, max_num_seqs=64)
    eng = _Engine(small, cfg, record_events=False, record_itl=False)
    victim = eng.policy.victim
    seen = []

    def checked_victim():
        key = victim()
        e = eng.entries[key]
        assert e[1] == 0 and e[0] > 0, "an entry in use was chosen for eviction"
        seen.append(key)
        return key

    eng.policy.victim = checked_victim
    eng.run(None, None)
    s = eng.result().summary
    assert seen and s["evicted_blocks"] > 0 and s["preemptions"] > 0
    sizes = [e[0] for e in eng.entries.values()]
    assert all(e[1] == 0 for e in eng.entries.values())          # nobody holds a block
    assert eng.free + sum(sizes) == cfg.num_gpu_blocks          # nothing leaked
    assert eng.evictable == sum(sizes)
    assert s["finished"] + s["rejected"] == len(small)


def test_chunked_prefill_timing():
    """20,000 prompt tokens with an 8192-token budget: chunks 8192, 8192, 3616 in three steps,
    the first token at the end of the third; then 4 decode steps of one sequence."""
    cfg = EngineConfig(max_num_batched_tokens=8192)
    res = simulate([TraceRequest("a", 0.0, 20000, 5)], cfg, record_itl=True)
    r = res.requests.iloc[0]
    step = lambda p: cfg.step_base_ms + cfg.step_prefill_base_ms + cfg.step_per_prefill_token_ms * p
    assert r.ttft_ms == pytest.approx(step(8192) * 2 + step(3616))
    dec = cfg.step_base_ms + cfg.step_per_decode_seq_ms
    assert r.tpot_ms == pytest.approx(dec)
    assert r.e2e_ms == pytest.approx(r.ttft_ms + 4 * dec)
    assert r.queue_ms == 0 and r.num_preemptions == 0 and r.batch_size == pytest.approx(1)
    assert list(res.token_latencies.itl_ms) == pytest.approx([dec] * 4)
    assert res.summary["steps"] == 3 + 4


@pytest.mark.parametrize("eviction", ["lru", "lfu", "fifo", "s3fifo"])
def test_decode_jumps_equal_step_by_step(small, eviction):
    """Advancing decode-only stretches in one jump gives exactly what stepping one engine
    step at a time gives: same per-request figures, events, counters (under memory pressure,
    with preemptions and evictions; the waiting head blocked for blocks through a stretch
    is queried every step and may become admissible when its own hit entries are evicted)."""
    cfg = EngineConfig(num_gpu_blocks=5000, eviction=eviction, max_num_seqs=48)
    out = []
    for jumps in (True, False):
        eng = _Engine(small[:300], cfg, record_events=True, record_itl=True)
        eng.jumps = jumps
        eng.run(None, None)
        out.append(eng.result())
    a, b = out
    assert a.summary["preemptions"] > 0 and a.summary["evicted_blocks"] > 0
    for k in ("cache_query_blocks", "cache_hit_blocks", "evicted_blocks", "preemptions", "steps",
              "hit_rate_tokens", "rejected"):
        assert a.summary[k] == b.summary[k], k
    num = a.requests.select_dtypes("number").columns
    assert np.allclose(a.requests[num].to_numpy(float), b.requests[num].to_numpy(float),
                       equal_nan=True, rtol=1e-9)
    assert list(a.events.kind) == list(b.events.kind)
    assert np.allclose(a.events.ts_s, b.events.ts_s, rtol=1e-9)
    assert np.allclose(a.token_latencies.itl_ms, b.token_latencies.itl_ms, rtol=1e-9)


def test_decode_jumps_do_not_change_results(small):
    """The same trace with arrivals far apart (long decode-only stretches) and with every
    request alone: TPOT is exactly one decode step of one sequence."""
    trs = [TraceRequest(t.request_id, i * 1000.0, min(t.prompt_tokens, 4000), t.output_tokens,
                        ()) for i, t in enumerate(small[:50])]
    res = simulate(trs, EngineConfig(num_gpu_blocks=1000))
    cfg = res.config
    tp = res.requests.loc[res.requests.completion_tokens > 1, "tpot_ms"]
    assert np.allclose(tp, cfg.step_base_ms + cfg.step_per_decode_seq_ms)
    assert res.summary["preemptions"] == 0


def test_too_large_request_is_rejected():
    res = simulate([TraceRequest("big", 0.0, 1000, 10), TraceRequest("ok", 0.0, 100, 10)],
                   EngineConfig(num_gpu_blocks=20))
    rq = res.requests.set_index("request_id")
    assert rq.loc["big", "finish_reason"] == "error" and "KV blocks" in rq.loc["big", "error"]
    assert np.isnan(rq.loc["big", "ttft_ms"])
    assert rq.loc["ok", "finish_reason"] == "stop" and rq.loc["ok", "completion_tokens"] == 10
    assert res.summary["rejected"] == 1
    assert "error" in set(res.events.kind)


def test_finish_reason_is_stop_for_a_natural_end(small):
    """The trace's output length is where the model stopped by itself: every replayed request
    that produced it finished with "stop" (never "length": the model has no length limit), also
    after a preemption; its "finished" event says so."""
    res = simulate(small[:300], EngineConfig(num_gpu_blocks=3000))
    rq = res.requests
    s = res.summary
    assert s["preemptions"] > 0 and s["rejected"] > 0
    ok = rq[rq.error.isna()]
    assert set(ok.finish_reason) == {"stop"} and len(ok) == s["finished"]
    assert set(rq[rq.error.notna()].finish_reason) == {"error"}
    want = {t.request_id: t.output_tokens for t in small[:300]}
    assert (ok.completion_tokens.to_numpy() == ok.request_id.map(want).to_numpy()).all()
    fin = res.events[res.events.kind == "finished"]
    assert len(fin) == s["finished"] and set(fin.detail) == {"stop"}


@pytest.mark.parametrize("prompt", [0, -396])
def test_empty_or_negative_prompt_is_rejected_not_a_hang(prompt):
    """A trace row with input_length 0 (or a negative count from a bad loader) used to loop
    forever: it is rejected at arrival, the others replay."""
    res = simulate([TraceRequest("a", 0.0, prompt, 5), TraceRequest("b", 0.1, 100, 3)],
                   EngineConfig(num_gpu_blocks=100))
    rq = res.requests.set_index("request_id")
    assert rq.loc["a", "finish_reason"] == "error" and "nothing to prefill" in rq.loc["a", "error"]
    assert rq.loc["b", "finish_reason"] == "stop" and rq.loc["b", "completion_tokens"] == 3
    assert res.summary["rejected"] == 1 and res.summary["finished"] == 1


def test_cancel_and_progress(small):
    calls = []
    simulate(small, EngineConfig(num_gpu_blocks=3000), progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (len(small), len(small))
    with pytest.raises(Cancelled):
        simulate(small, EngineConfig(num_gpu_blocks=3000), cancelled=lambda: True)


def test_bad_settings():
    with pytest.raises(ValueError, match="eviction"):
        simulate([], EngineConfig(eviction="mru"))
    with pytest.raises(ValueError, match="max_num_batched_tokens"):
        EngineConfig(max_num_seqs=512, max_num_batched_tokens=256).validate()
    with pytest.raises(ValueError, match="divide"):
        simulate([TraceRequest("a", 0, 2000, 2, (1, 2, 3, 4))], EngineConfig(block_size=24))
    assert blocks_for_gb(1.0, 131072, 16) == int(1e9 // (131072 * 16))


def test_write_run(store, small):
    res = simulate(small[:200], EngineConfig(num_gpu_blocks=4000))
    run_id = write_run(store, res, label=res.config.label(), benchmark="mooncake synthetic")
    run = store.df("SELECT * FROM runs WHERE run_id = ?", [run_id]).iloc[0]
    assert bool(run.simulated) and run.label == res.config.label() and run.format == "replay"
    cfg = json.loads(run.config)
    assert cfg["num_gpu_blocks"] == 4000 and cfg["summary"]["requests"] == 200
    rq = store.df("SELECT * FROM requests WHERE run_id = ? ORDER BY arrival_s, request_id", [run_id])
    assert len(rq) == 200
    assert rq.num_preemptions.sum() == res.summary["preemptions"]
    kinds = set(store.df("SELECT DISTINCT kind FROM request_events WHERE run_id = ?", [run_id]).kind)
    assert {"arrived", "queued", "scheduled", "first_token", "finished"} <= kinds
    assert write_run(store, res, label=res.config.label()) != run_id


def test_cli_json(real, capsys):
    from explorer.__main__ import main
    rc = main(["replay", str(real / "mooncake" / "synthetic_trace.jsonl"), "--blocks", "0",
               "--block-size", "512", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    for k in ("requests", "hit_rate_blocks", "hit_rate_per_request", "preemptions",
              "ttft_ms_mean", "tpot_ms_mean"):
        assert k in doc
    assert doc["requests"] == 3993 and doc["config"]["num_gpu_blocks"] is None


def test_cli_bad_file(tmp_path, capsys):
    """Nothing usable: exit 1, the message names the file, line and field (more cases in
    tests/test_replay_cli.py)."""
    from explorer.__main__ import main
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"timestamp": 1, "input_length": 5, "output_length": -3}\n')
    assert main(["replay", str(bad), "--blocks", "100"]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and ":1:" in err and "output_length" in err


def test_cli_fits_timing_to_a_trace_with_timings(real, capsys):
    """aibrix client_output.jsonl carries per-request TTFT (54 rows, 52 with timings): the
    prefill half of the step-time model is fitted to it; Mooncake has no timings."""
    from explorer.__main__ import main
    assert main(["replay", str(real / "aibrix" / "client_output.jsonl"), "--blocks", "2000",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["timing"].startswith("fitted") and "prefill" in doc["timing"]
    assert doc["config"]["step_per_prefill_token_ms"] != EngineConfig().step_per_prefill_token_ms
    assert main(["replay", str(real / "aibrix" / "client_output.jsonl"), "--blocks", "2000",
                 "--timing", "default", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["timing"].startswith("default")


def test_cache_that_holds_one_request_makes_progress():
    """Capacity = exactly one request's blocks, every request sharing a prefix: no livelock,
    every request finishes, blocks are conserved."""
    trs = [TraceRequest(str(i), 0.001 * i, 1024, 64, (7, 8)) for i in range(20)]
    cfg = EngineConfig(num_gpu_blocks=(1024 + 64) // 16, block_size=16)
    eng = _Engine(trs, cfg, record_events=False, record_itl=False)
    eng.run(None, None)
    s = eng.result().summary
    assert s["finished"] == 20 and s["rejected"] == 0
    assert eng.free + sum(e[0] for e in eng.entries.values()) == cfg.num_gpu_blocks
    assert s["cache_hit_blocks"] > 0
