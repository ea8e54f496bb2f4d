"""ReplayState (Qt-free): the runs offered and the one chosen, the scenario's settings checked
against their ranges (a capacity in GB converted to blocks, computed here from the bytes), the
EngineConfig they make, the run's observed settings, and the store reads / simulations it
names (checked against the core's own simulate() on a small hand-built run)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from explorer.core.replay import EngineConfig, simulate
from explorer.core.viewstate.replay import (ReplayRun, ReplayState, ReplayTrace, TraceQuery,
                                            replay_runs)

RUNS = [ReplayRun(run_id="a", label="A", n=10), ReplayRun(run_id="b", label="B", n=5)]


def test_the_chosen_run_stays_while_offered():
    s = ReplayState()
    assert s.set_runs(RUNS) and s.run_id == "a"
    s.choose_run("b")
    assert not s.set_runs(list(reversed(RUNS))) and s.run_id == "b"
    assert s.set_runs(RUNS[:1]) and s.run_id == "a"    # b went away: the first
    assert s.set_runs([]) and s.run_id is None and s.trace_query() is None
    with pytest.raises(ValueError):
        s.choose_run("zzz")


def test_settings_are_checked_and_gb_sets_the_blocks():
    s = ReplayState()
    assert s.config() == EngineConfig(num_gpu_blocks=None, block_size=16, max_num_seqs=256,
                                      max_num_batched_tokens=8192, eviction="lru")
    s.set(gb=40.0)                          # 40e9 B / (131072 B/token x 16 tokens/block)
    assert s.blocks == int(40e9 // (131072 * 16)) == 19073
    s.set(block_size=32)
    assert s.blocks == int(40e9 // (131072 * 32))
    s.set(blocks=500, gb=40.0)              # the blocks typed in win while the GB stay
    assert s.blocks == 500 and s.config().num_gpu_blocks == 500
    for bad in ({"eviction": "random"}, {"max_num_seqs": 0}, {"blocks": -1},
                {"block_size": 5000}):
        with pytest.raises(ValueError):
            s.set(**bad)
    with pytest.raises(KeyError):
        s.set(colour="red")
    s.set(max_num_seqs=512, max_num_batched_tokens=100)   # raised to max-num-seqs, as vLLM asks
    assert s.config().max_num_batched_tokens == 512
    assert s.scenario() == {"num_gpu_blocks": 500, "eviction": "lru", "max_num_seqs": 512,
                            "max_num_batched_tokens": 512}


def test_observed_settings_start_the_scenario():
    s = ReplayState()
    s.apply_observed({"num_gpu_blocks": 10000, "eviction": "fifo", "max_num_seqs": 64,
                      "max_num_batched_tokens": 2048, "block_size": 32, "other": 1})
    assert (s.blocks, s.eviction, s.max_num_seqs, s.max_num_batched_tokens, s.block_size) == \
        (40000, "fifo", 64, 2048, 32)   # the scenario starts at 4x the observed blocks
    assert s.observed_config().num_gpu_blocks == 10000 and not s.add_run
    s.apply_observed({"num_gpu_blocks": None, "eviction": "no-such-policy"})
    assert s.blocks == 0 and s.eviction == "fifo" and s.config().num_gpu_blocks is None
    # a run config holding null for a setting did not record it: the value stays
    s.apply_observed({"max_num_seqs": None, "max_num_batched_tokens": None, "block_size": None,
                      "eviction": None})
    assert (s.max_num_seqs, s.max_num_batched_tokens, s.block_size, s.eviction) == \
        (64, 2048, 32, "fifo")


@pytest.fixture
def small_run(store):
    """Twelve requests sharing no prefix, arriving 50 ms apart, bound to one observed run."""
    store.append("runs", pd.DataFrame([{"run_id": "r", "label": "small", "format": "csv",
                                        "config": json.dumps({"max_num_seqs": 4})}]))
    store.append("requests", pd.DataFrame(
        [{"run_id": "r", "request_id": f"q{i}", "arrival_s": 0.05 * i, "prompt_tokens": 300 + i,
          "completion_tokens": 40} for i in range(12)]
        + [{"run_id": "r", "request_id": "no-arrival", "prompt_tokens": 5}]))
    return store


def test_store_reads_and_the_replay_match_the_core(small_run):
    assert replay_runs(small_run) == [{"run_id": "r", "label": "small", "n": 12}]
    s = ReplayState()
    s.set_runs(replay_runs(small_run))
    s.apply_observed(s.settings_query().run(small_run))
    assert s.max_num_seqs == 4
    s.set(blocks=60)
    with pytest.raises(RuntimeError):
        s.replay_job()                      # the trace is not read yet
    q = s.trace_query()
    assert q == TraceQuery("r")
    trace = q.run(small_run)
    assert isinstance(trace, ReplayTrace) and len(trace.requests) == 12
    assert trace.calibration_inputs is None        # no latencies recorded: no calibration
    s.take_trace(trace)
    assert s.trace_query() is None
    res, cal = s.replay_job().run()
    want = simulate(trace.requests, EngineConfig(num_gpu_blocks=60, max_num_seqs=4,
                                                 max_num_batched_tokens=8192)).summary
    assert cal is None and res.summary["preemptions"] == want["preemptions"]
    assert res.summary["requests"] == want["requests"] == 12
    sweep = s.sweep_job()
    assert 60 in sweep.capacities and len(sweep.capacities) >= 6
    rows = sweep.run()
    assert [r["num_gpu_blocks"] for r in rows] == list(sweep.capacities)
    s.choose_run(None)
    assert s.trace is None


def test_section_rows_of_a_reports_replay_section():
    from explorer.core.viewstate.replay import section_rows
    sec = {"observed_badcases": 304, "predicted_badcases": 222.2,
           "calibration": {"ttft_ms": {"observed": 100.0, "replayed": 150.0}, "tpot_ms": None},
           "replay": {"hit_rate": {"observed_settings": 0.04, "scenario": 0.05},
                      "preemptions": {"observed_settings": 0, "scenario": 3}}}
    rows = section_rows(sec)
    assert [r["metric"] for r in rows] == ["badcases", "ttft_ms", "hit_rate", "preemptions"]
    assert rows[0]["diff_pct"] == pytest.approx((222.2 - 304) / 304 * 100)
    assert rows[1]["unit"] == "ms" and rows[1]["diff_pct"] == pytest.approx(50.0)
    assert rows[3]["diff_pct"] is None              # from 0: no percentage
    assert section_rows({"predicted_badcases": None, "reason": "no badcase"}) == []
