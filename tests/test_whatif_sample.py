"""The what-if's refuters past REFUTE_ROWS rows: a stratified sample of bounded size, stated in
the result, whose refutations agree with the full-data ones within the stated error."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import whatif as W
from explorer.core.analysis.whatif.refute import stratified_sample, subset_spread

GRAPH = """digraph {
  batch_size -> kv_cache_hit_rate;
  batch_size -> badcase;
  kv_cache_hit_rate -> badcase;
}"""


def binary(n, seed):
    """Latent-threshold SCM (tests/test_whatif.py's `binary`): W ~ Gamma(4, 8); T = clip(0.9 -
    0.012 W + N(0, 0.15), 0, 1); badcase = 1[U < sigmoid(-0.5 - 3 (T - 0.5) + 0.03 (W - 32))]."""
    r = np.random.default_rng(seed)
    w = r.gamma(4, 8, n)
    t = np.clip(0.9 - 0.012 * w + r.normal(0, 0.15, n), 0, 1)
    p = 1 / (1 + np.exp(-(-0.5 - 3 * (t - 0.5) + 0.03 * (w - 32))))
    y = (r.uniform(size=n) < p).astype(int)
    return pd.DataFrame({"case_id": [f"c{i:06d}" for i in range(n)], "batch_size": w,
                         "kv_cache_hit_rate": t, "badcase": y,
                         "grp": np.where(y == 1, "bad", "control")})


def test_stratified_sample_keeps_each_strata_share_order_and_seed():
    strata = np.repeat([0, 1, 2], [9000, 900, 100])
    got = stratified_sample(strata, 1000, seed=3, floor=20)
    assert (np.diff(got) > 0).all()                       # ascending, no repeats
    counts = np.bincount(strata[got], minlength=3)
    assert counts.tolist() == [900, 90, 20]                # 10 % each, the rare one floored
    assert (stratified_sample(strata, 1000, seed=3, floor=20) == got).all()
    assert not (stratified_sample(strata, 1000, seed=4, floor=20) == got).all()
    assert (stratified_sample(strata, 20000, seed=3) == np.arange(10000)).all()


@pytest.fixture(scope="module")
def pair():
    df = binary(24000, seed=7)
    full = W.run_whatif(df, "kv_cache_hit_rate", "badcase", 0.67, GRAPH, num_simulations=10,
                        refute_rows=10**9)
    samp = W.run_whatif(df, "kv_cache_hit_rate", "badcase", 0.67, GRAPH, num_simulations=10,
                        refute_rows=6000)
    return df, full, samp


def test_the_estimate_uses_every_row_and_the_sample_is_stated(pair):
    df, full, samp = pair
    assert full.refute_sample is None and full.to_dict()["refute_sample"] is None
    # steps 2-4 are the same computation on every row, sampled refuters or not
    assert (samp.estimate, samp.ci_low, samp.ci_high, samp.n) == (
        full.estimate, full.ci_low, full.ci_high, full.n)
    rs = samp.to_dict()["refute_sample"]
    assert rs["of"] == len(df) and abs(rs["n"] - 6000) <= 2
    assert rs["error"] == pytest.approx(
        subset_spread((full.ci_high - full.ci_low) / 2, rs["n"] / len(df)))
    assert rs["ci_low"] <= rs["estimate"] <= rs["ci_high"]
    assert any(f"{rs['n']} of the {len(df)} rows" in w for w in samp.warnings)


def test_sampled_refutations_agree_with_the_full_data_ones_within_the_stated_error(pair):
    _df, full, samp = pair
    err = samp.refute_sample["error"]
    # the sample's own estimate: within 3 standard deviations of the full-data one
    assert abs(samp.refute_sample["estimate"] - full.estimate) <= 3 * err
    by_full = {r.name: r for r in full.refutations}
    for r in samp.refutations:
        f = by_full[r.name]
        assert r.new_effect is not None and f.new_effect is not None, (r.why, f.why)
        assert abs(r.new_effect - f.new_effect) <= 3 * err, (r.name, r.new_effect,
                                                             f.new_effect, err)
        assert r.verdict == f.verdict, (r.name, r.why, f.why)
