"""From engine to answers (issue 20): replay the cohort's window under a scenario and predict how
many badcases would remain, on the demo, whose badcases were planted through the cache with a
known formula (explorer.demo.cases.p_planted): the prediction is checked against that truth."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis.cohort import Cohort

CLUSTER = "计算题中间步骤出错"   # the demo's planted cluster


@pytest.fixture(scope="module")
def demo_store():
    from explorer.core.store import Store
    from explorer.demo import load_demo
    s = Store()
    load_demo(s)
    yield s
    s.close()


@pytest.fixture(scope="module")
def inputs(demo_store):
    from explorer.core.replay.badcases import gather_inputs
    return gather_inputs(demo_store, Cohort(cluster=CLUSTER))


def _truth(pc: pd.DataFrame) -> float:
    """Expected badcases under the scenario by the demo's own generating model: a planted
    failure is U < p(h, n) with one uniform U per case, so a failed case fails again with
    probability min(1, p_new / p_obs) and a correct one fails with (p_new - p_obs) / (1 - p_obs)
    when positive."""
    from explorer.demo.cases import p_planted
    po, pn = p_planted(pc.h_obs, pc.n_obs), p_planted(pc.h_new, pc.n_new)
    y = pc.y.to_numpy()
    return float(np.where(y == 1, np.minimum(1, pn / po), np.maximum(0, (pn - po) / (1 - po))).sum())


def test_the_observed_settings_predict_the_observed_badcases(inputs):
    from explorer.core.replay.badcases import predict
    assert inputs.observed.num_gpu_blocks == 10_000 and inputs.observed.eviction == "fifo"
    p = predict(inputs, {})
    assert p.predicted_badcases == pytest.approx(p.observed_badcases)
    assert p.ci_low == p.ci_high == p.observed_badcases
    # the demo's runs were made by the engine model itself: nothing to calibrate
    assert abs(p.calibration["ttft_ms"]["error"]) < 0.01
    assert abs(p.calibration["tpot_ms"]["error"]) < 0.01


def test_a_larger_cache_removes_badcases_as_planted(inputs):
    from explorer.core.replay.badcases import predict
    p = predict(inputs, {"num_gpu_blocks": 250_000, "eviction": "lru"})
    d = p.to_dict()
    for k in ("setting", "observed_badcases", "predicted_badcases", "ci_low", "ci_high",
              "calibration"):
        assert k in d
    truth = _truth(p.per_case)
    assert p.observed_badcases == int(p.per_case.y.sum()) > 200
    # the scenario removes preemptions and raises the hit rate
    assert p.per_case.n_new.max() == 0 and p.per_case.h_new.mean() > p.per_case.h_obs.mean() + 0.05
    assert p.ci_low <= truth <= p.ci_high
    assert p.predicted_badcases == pytest.approx(truth, rel=0.08)
    assert p.ci_high < p.observed_badcases        # fewer badcases, beyond chance
    assert "250,000 KV blocks (observed 10,000)" in p.sentence()


def test_joint_counterfactual_recovers_a_known_logistic():
    """Synthetic cases with a known outcome model: the predicted count under moved treatments
    is close to the truth computed from that model."""
    from explorer.core.analysis.whatif.joint import joint_counterfactual
    rng = np.random.default_rng(5)
    n = 4000
    prompt = rng.lognormal(7, 0.6, n)
    batch = rng.integers(1, 64, n).astype(float)
    comp = rng.lognormal(5, 0.5, n)
    h = np.clip(rng.beta(2, 5, n) + 0.0001 * (prompt - prompt.mean()) / 100, 0, 1)
    pre = rng.poisson(0.3 + batch / 100)
    p = 1 / (1 + np.exp(-(-3 + 2.5 * (1 - h) + 0.7 * np.minimum(pre, 3))))
    u = rng.random(n)
    y = (u < p).astype(int)
    frame = pd.DataFrame({"kv_cache_hit_rate": h, "num_preemptions": pre.astype(float),
                          "batch_size": batch, "prompt_tokens": prompt, "completion_tokens": comp,
                          "badcase": y})
    target = pd.Series(True, index=frame.index)
    h2, n2 = np.clip(h + 0.3, 0, 1), np.zeros(n)
    jc = joint_counterfactual(frame, {"kv_cache_hit_rate": h2, "num_preemptions": n2}, target)
    p2 = 1 / (1 + np.exp(-(-3 + 2.5 * (1 - h2))))
    truth = float((u < p2).sum())            # the same U: the counterfactual world itself
    assert sorted(jc.adjustment) == ["batch_size", "completion_tokens", "prompt_tokens"]
    assert jc.observed == y.sum()
    assert jc.ci_low <= truth <= jc.ci_high
    assert jc.predicted == pytest.approx(truth, rel=0.1)


def test_report_section_on_the_demo(demo_store):
    """The report's `replay` section: DESIGN.md's keys, the default scenario (4x the observed
    KV blocks) and a capacity sweep whose first-query hit rate never falls."""
    from explorer.core.replay.section import replay_section
    d = replay_section(demo_store, Cohort(cluster=CLUSTER))
    assert {"setting", "observed_badcases", "predicted_badcases", "ci_low", "ci_high",
            "calibration"} <= set(d)
    assert d["setting"]["scenario"]["num_gpu_blocks"] == 4 * d["setting"]["observed"]["num_gpu_blocks"]
    assert d["ci_low"] <= d["predicted_badcases"] <= d["ci_high"] < d["observed_badcases"]
    rows = d["sweep"]["rows"]
    caps = [r["num_gpu_blocks"] for r in rows]
    assert len(rows) >= 5 and caps == sorted(caps) and 10_000 in caps and 40_000 in caps
    hits = [r["hit_rate"] for r in rows]
    assert d["sweep"]["monotone"] and hits == sorted(hits)
    # which error applies (issue 34): the demo has one run, no ladder to validate the scenario on
    ea = d["error_applies"]
    assert ea["calibration"]["kind"] == "in-sample"
    assert ea["scenario"]["kind"] == "not validated" and "ladder" in ea["scenario"]["reason"]


def test_report_section_without_badcases_still_sweeps(real, tmp_path):
    from explorer.core.replay.section import replay_section
    from explorer.core.store import Store
    src = (real / "mooncake" / "synthetic_trace.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "synthetic_800.jsonl"
    path.write_text("".join(src[:800]))
    s = Store()
    s.load_file(path)
    d = replay_section(s, Cohort())
    s.close()
    assert d["predicted_badcases"] is None and "none of the cohort's badcases is bound" in d["reason"]
    rows = d["sweep"]["rows"]
    assert len(rows) >= 5 and all(r["rejected"] == 0 for r in rows)
    hits = [r["hit_rate"] for r in rows]
    assert d["sweep"]["monotone"] and hits == sorted(hits) and hits[-1] > hits[0]


def test_report_sweeps_both_mooncake_traces(real, tmp_path):
    """Without badcases the report sweeps every replayable run: both Mooncake traces (their
    first requests, copied to tmp), each first-query hit rate never falling with capacity, each
    rate recomputed from the replay's per-request rows, and report.md tabulates both."""
    from explorer.core.replay import EngineConfig, requests_from_store, simulate
    from explorer.core.replay.section import replay_section
    from explorer.core.report import render_markdown
    from explorer.core.store import Store
    s = Store()
    for name, n in (("conversation", 1500), ("synthetic", 800)):
        src = (real / "mooncake" / f"{name}_trace.jsonl").read_text().splitlines(keepends=True)
        path = tmp_path / f"{name}_{n}.jsonl"
        path.write_text("".join(src[:n]))
        assert s.load_file(path).error is None
    d = replay_section(s, Cohort())
    assert d["predicted_badcases"] is None and len(d["sweeps"]) == 2 and d["sweep"] is d["sweeps"][0]
    for sw in d["sweeps"]:
        rows = sw["rows"]
        assert sw["eviction"] == "lru" and len(rows) >= 5 and all(r["rejected"] == 0 for r in rows)
        hits = [r["hit_rate"] for r in rows]
        assert sw["monotone"] is True and hits == sorted(hits) and hits[-1] > 2 * hits[0]
        # the smallest capacity, replayed again: hits / queries of first queries from the rows
        res = simulate(requests_from_store(s, sw["run_id"]),
                       EngineConfig(num_gpu_blocks=rows[0]["num_gpu_blocks"]), record_events=False)
        rq = res.requests
        assert hits[0] == pytest.approx(rq["cached_prompt_tokens"].sum() / rq["prompt_tokens"].sum())
    md = render_markdown({"replay": d})
    assert md.count("the first-query hit rate never falls as the capacity grows") == 2
    s.close()


def test_a_sweep_without_hash_ids_is_neither_monotone_nor_falling():
    """A trace without hash ids has no hit rate: the sweep says so, not 'FALLS somewhere'."""
    from explorer.core.replay import EngineConfig, TraceRequest
    from explorer.core.replay.section import capacity_sweep
    from explorer.core.report import _md_sweep
    trace = [TraceRequest(str(i), i * 0.05, 800, 50) for i in range(200)]
    sw = {"run_id": "r", **capacity_sweep(trace, EngineConfig(), {})}
    assert sw["monotone"] is None and all(r["hit_rate"] is None for r in sw["rows"])
    text = _md_sweep(sw)
    assert "FALLS" not in text and "no hash_ids" in text


def test_report_cli_sets_the_replay_scenario(tmp_path, monkeypatch):
    """report --replay-blocks/--replay-eviction/--replay-max-num-seqs reach the replay
    section as its scenario; a bad value is a usage error (exit 2)."""
    import explorer.core.report as core_report
    from explorer.__main__ import main
    seen = {}

    def fake_write(store, cohort, out, formats, params=None, **kw):
        seen["params"] = params
        return []
    monkeypatch.setattr(core_report, "write_report", fake_write)
    path = tmp_path / "t.jsonl"
    path.write_text('{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}\n')
    argv = ["report", str(path), "--out", str(tmp_path / "r"), "--no-whatif"]
    assert main(argv + ["--replay-blocks", "250000", "--replay-eviction", "lru",
                        "--replay-max-num-seqs", "64"]) == 0
    assert seen["params"]["replay"] == {"num_gpu_blocks": 250000, "eviction": "lru",
                                        "max_num_seqs": 64}
    assert main(argv + ["--replay-blocks", "inf"]) == 0
    assert seen["params"]["replay"] == {"num_gpu_blocks": None}
    seen.clear()
    assert main(argv) == 0 and "replay" not in seen["params"]
    assert main(argv + ["--replay-blocks", "lots"]) == 2
