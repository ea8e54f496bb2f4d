"""Metric comparison: every statistic recomputed with scipy / numpy from the raw arrays."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer.core.analysis import Cohort
from explorer.core.analysis.compare import compare_metrics, welch_mean_diff_ci
from explorer.core.errors import NoData

RNG = np.random.default_rng(11)
NB, NC = 40, 120
N = NB + NC
CORRECT = np.r_[np.zeros(NB, bool), np.ones(NC, bool)]
HIT = np.r_[RNG.beta(2, 5, NB), RNG.beta(5, 2, NC)]          # planted: badcases hit less
PRE = np.r_[RNG.poisson(3, NB), RNG.poisson(0.5, NC)].astype(float)
TPOT = RNG.normal(30, 5, N)
TPOT[[3, 50, 51]] = np.nan                                  # missing values are dropped
FINISH = np.where(RNG.random(N) < np.r_[np.full(NB, .4), np.full(NC, .05)], "length", "stop")
PROMPT = RNG.integers(50, 500, N)
BATCH = np.full(N, 8.0)                                     # no variation


@pytest.fixture(scope="module")
def loaded():
    from explorer.core.store import Store
    s = Store()
    s.add_run("r", engine_version="1")
    ids = [f"q{i}" for i in range(N)]
    s.append("requests", pd.DataFrame({
        "run_id": "r", "request_id": ids, "kv_cache_hit_rate": HIT, "num_preemptions": PRE,
        "tpot_ms": TPOT, "finish_reason": FINISH, "batch_size": BATCH, "prompt_tokens": PROMPT}))
    s.append("cases", pd.DataFrame({"case_id": [f"e:{i}" for i in range(N)], "eval_id": "e",
                                    "category": "math", "correct": CORRECT,
                                    "cluster": np.where(CORRECT, None, "c1")}))
    s.append("case_links", pd.DataFrame({"case_id": [f"e:{i}" for i in range(N)], "run_id": "r",
                                         "request_id": ids, "level": 1}))
    yield s
    s.close()


@pytest.fixture(scope="module")
def table(loaded):
    return {r["metric"]: r for r in compare_metrics(loaded, Cohort("c1")).to_dict()}


def _raw(x):
    b, c = x[~CORRECT], x[CORRECT]
    return b[np.isfinite(b)], c[np.isfinite(c)]


@pytest.mark.parametrize("metric,arr", [("kv_cache_hit_rate", HIT), ("num_preemptions", PRE),
                                        ("tpot_ms", TPOT), ("prompt_tokens", PROMPT.astype(float))])
def test_numeric_rows_match_scipy(table, metric, arr):
    b, c = _raw(arr)
    row = table[metric]
    assert row["n_bad"] == len(b) and row["n_control"] == len(c)
    assert row["bad_mean"] == pytest.approx(b.mean())
    assert row["control_mean"] == pytest.approx(c.mean())
    assert row["diff_pct"] == pytest.approx((b.mean() - c.mean()) / abs(c.mean()) * 100)
    assert row["p_value"] == pytest.approx(stats.mannwhitneyu(b, c).pvalue, rel=1e-9)
    sp = np.sqrt(((len(b) - 1) * np.var(b, ddof=1) + (len(c) - 1) * np.var(c, ddof=1))
                 / (len(b) + len(c) - 2))
    assert row["cohens_d"] == pytest.approx((b.mean() - c.mean()) / sp)
    # Welch's interval, by hand: the difference +- t(0.975, Welch-Satterthwaite df) x SE
    lo, hi = _welch_by_hand(b, c)
    assert row["ci_low"] == pytest.approx(lo, rel=1e-9) and row["ci_high"] == pytest.approx(hi, rel=1e-9)
    assert row["ci_low"] < b.mean() - c.mean() < row["ci_high"]


def _welch_by_hand(b, c, level=0.95):
    vb, vc = b.var(ddof=1) / len(b), c.var(ddof=1) / len(c)
    df = (vb + vc) ** 2 / (vb ** 2 / (len(b) - 1) + vc ** 2 / (len(c) - 1))
    half = stats.t.ppf(0.5 + level / 2, df) * np.sqrt(vb + vc)
    return b.mean() - c.mean() - half, b.mean() - c.mean() + half


def test_benjamini_hochberg_over_the_table(table):
    tested = [r for r in table.values() if r["p_value"] is not None]
    adj = stats.false_discovery_control([r["p_value"] for r in tested])
    assert [r["p_adjusted"] for r in tested] == pytest.approx(list(adj))
    assert table["kv_cache_hit_rate"]["p_adjusted"] < 0.001
    assert table["kv_cache_hit_rate"]["cohens_d"] < -1


def test_no_variation_gives_null_and_reason(table):
    row = table["batch_size"]
    assert row["p_value"] is None and row["cohens_d"] is None and "variation" in row["reason"]
    assert row["diff_pct"] == 0
    assert "ttft_ms" not in table  # no data at all: left out


def test_categorical_rows_use_fisher(table):
    row = table["finish_reason_length"]
    fb = (FINISH[~CORRECT] == "length").sum()
    fc = (FINISH[CORRECT] == "length").sum()
    res = stats.fisher_exact([[fb, NB - fb], [fc, NC - fc]])
    assert row["bad_mean"] == pytest.approx(fb / NB) and row["control_mean"] == pytest.approx(fc / NC)
    assert row["p_value"] == pytest.approx(res.pvalue) and row["odds_ratio"] == pytest.approx(res.statistic)
    pre = table["preempted"]
    assert pre["bad_mean"] == pytest.approx((PRE[~CORRECT] >= 1).mean())
    assert table["errored"]["p_value"] is None  # no request errored


def test_json_has_no_nan(table):
    import json
    json.dumps(list(table.values()), allow_nan=False)


def test_welch_interval_covers_the_true_difference_at_its_level():
    """Over 400 seeded skewed samples (lognormal TTFT-like badcases, 40 of them, against 900
    controls), the 95% interval holds the true difference of means about 95% of the time."""
    rng = np.random.default_rng(3)
    true = np.exp(0.5) * (np.exp(0.8 ** 2 / 2) - np.exp(0.5 ** 2 / 2))
    hits = 0
    for _ in range(400):
        b, c = np.exp(0.5 + 0.8 * rng.standard_normal(40)), np.exp(0.5 + 0.5 * rng.standard_normal(900))
        lo, hi = welch_mean_diff_ci(b, c)
        hits += lo <= true <= hi
    assert 0.90 <= hits / 400 <= 0.98


def test_too_few_values(store):
    store.append("cases", pd.DataFrame({"case_id": ["a", "b", "c"], "category": "x",
                                        "correct": [False, True, True], "cluster": ["k", None, None],
                                        "prompt_tokens": [5, 6, 9]}))
    rows = {r["metric"]: r for r in compare_metrics(store, Cohort("k")).to_dict()}
    assert rows["prompt_tokens"]["p_value"] is None and "too few" in rows["prompt_tokens"]["reason"]
    assert rows["prompt_tokens"]["bad_mean"] == 5
    store.append("cases", pd.DataFrame({"case_id": ["z"], "category": "y", "correct": [False],
                                        "cluster": ["lonely"]}))
    with pytest.raises(NoData, match="no control"):
        compare_metrics(store, Cohort("lonely"))
