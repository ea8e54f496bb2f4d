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
    assert d["predicted_badcases"] is None and "No badcase" in d["reason"]
    rows = d["sweep"]["rows"]
    assert len(rows) >= 5 and all(r["rejected"] == 0 for r in rows)
    hits = [r["hit_rate"] for r in rows]
    assert d["sweep"]["monotone"] and hits == sorted(hits) and hits[-1] > hits[0]
