"""The replay's default step-time model comes from the real SGLang bench_one_batch file.

../shared/data/real/sglang_bench_one_batch/result_bs1_128.jsonl (sgl-project/sglang): batch
1/16/64/128 x input 256/512 x output 32/256, two groups split by bare `torch:` / `te:` lines.
"""
from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from explorer.core.replay import DEFAULT_TIMING, EngineConfig, TraceRequest, simulate


@pytest.fixture(scope="module")
def rows(real):
    path = real / "sglang_bench_one_batch" / "result_bs1_128.jsonl"
    out = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip().startswith("{")]
    assert len(out) == 32
    return out


def test_decode_constants_are_the_least_squares_fit(rows):
    bs = np.array([r["batch_size"] for r in rows], float)
    tpot_ms = np.array([r["median_decode_latency"] for r in rows]) * 1000
    slope, intercept = np.polyfit(bs, tpot_ms, 1)
    assert DEFAULT_TIMING["step_base_ms"] == pytest.approx(intercept, abs=5e-4)
    assert DEFAULT_TIMING["step_per_decode_seq_ms"] == pytest.approx(slope, rel=1e-3)
    # the calibration points: TPOT 3.8 ms at batch 1 to 6.3 ms at batch 128
    assert 3.7 < intercept + slope < 4.1 and 6.0 < intercept + 128 * slope < 6.4


def test_prefill_constants_are_the_least_squares_fit(rows):
    groups = defaultdict(list)
    for r in rows:
        groups[r["batch_size"] * r["input_len"]].append(r["prefill_latency"] * 1000)
    # 8 configurations (two share 32768 tokens), each the median of its 4 rows
    per_cfg = defaultdict(list)
    for r in rows:
        per_cfg[(r["batch_size"], r["input_len"])].append(r["prefill_latency"] * 1000)
    x = np.array([b * i for b, i in per_cfg], float)
    y = np.array([np.median(v) for v in per_cfg.values()])
    slope, intercept = np.polyfit(x, y, 1)
    assert DEFAULT_TIMING["step_per_prefill_token_ms"] == pytest.approx(slope, rel=1e-3)
    assert DEFAULT_TIMING["step_base_ms"] + DEFAULT_TIMING["step_prefill_base_ms"] == \
        pytest.approx(intercept, abs=5e-3)


def test_simulated_tpot_follows_the_batch(rows):
    """A batch of b equal requests arriving together, prefilled in one step as bench_one_batch
    does, decodes at step_base + b * per_seq ms per token, near the file's median TPOT."""
    for b in (1, 16, 128):
        cfg = EngineConfig(max_num_batched_tokens=max(256 * b, 256))
        trs = [TraceRequest(str(i), 0.0, 256, 33) for i in range(b)]
        res = simulate(trs, cfg, record_events=False)
        want = cfg.step_base_ms + b * cfg.step_per_decode_seq_ms
        assert res.requests["tpot_ms"].to_numpy() == pytest.approx(want, rel=1e-9)
        measured = np.median([r["median_decode_latency"] * 1000 for r in rows
                              if r["batch_size"] == b])
        assert want == pytest.approx(measured, rel=0.06)


def test_fit_timing_recovers_the_constants_of_a_replay():
    """Requests replayed with known constants in batches of 1..40 (decode) and one at a time
    (prefill): fitting TPOT on batch size and prefill time on prompt tokens gives them back
    (the prefill intercept is step_base + step_prefill_base)."""
    from explorer.core.replay import fit_timing

    truth = EngineConfig(step_base_ms=5.0, step_per_decode_seq_ms=0.05,
                         step_per_prefill_token_ms=0.02, step_prefill_base_ms=7.0,
                         max_num_batched_tokens=65536)
    trs, t = [], 0.0
    for b in (1, 5, 10, 20, 40):
        for j in range(b):
            trs.append(TraceRequest(f"{b}-{j}", t, 100 + 37 * j, 50))
        t += 100.0
    rq = simulate(trs, truth, record_events=False).requests
    fit = fit_timing(rq.assign(prefill_ms=np.nan, ttft_ms=np.nan))
    assert fit.fitted == ("decode",)
    assert fit.params["step_base_ms"] == pytest.approx(5.0, rel=1e-6)
    assert fit.params["step_per_decode_seq_ms"] == pytest.approx(0.05, rel=1e-6)
    singles = [TraceRequest(str(i), 100.0 * i, 200 + 300 * i, 2) for i in range(12)]
    rq1 = simulate(singles, truth, record_events=False).requests
    fit = fit_timing(rq1)
    assert "prefill" in fit.fitted
    assert fit.params["step_per_prefill_token_ms"] == pytest.approx(0.02, rel=1e-6)
    assert fit.params["step_prefill_base_ms"] == pytest.approx(7.0 + 5.0 - fit.params["step_base_ms"], rel=1e-6)


def test_fit_timing_without_timings_raises():
    import pandas as pd
    from explorer.core.errors import NoData
    from explorer.core.replay import fit_timing

    with pytest.raises(NoData):
        fit_timing(pd.DataFrame({"prompt_tokens": [10, 20], "ttft_ms": [None, None]}))
