"""SLA over time and its diagnosis, every number recomputed with pandas / numpy / scipy from the
generated frames (explorer.demo.sla_collapse), on a planted cache collapse and on the same
trace without it."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer.core.analysis.sla_diagnosis import diagnose
from explorer.core.analysis.sla_windows import sla_windows, window_params
from explorer.demo import sla_collapse as sc


def _store(seed, collapse):
    from explorer.core.store import Store
    s = Store()
    sc.load(s, seed, collapse)
    return s


@pytest.fixture(scope="module")
def planted():
    s = _store(0, True)
    yield s, diagnose(s).to_dict()
    s.close()


def _windows_by_hand(req, w=60.0, thr=(("tpot_ms", 50.0), ("ttft_ms", 500.0))):
    t0 = req["arrival_s"].min()
    k = np.floor((req["arrival_s"] - t0) / w).astype(int)
    err = req["error"].notna()
    out = []
    for kk, g in req.groupby(k):
        e = err[g.index]
        ok = e.mean() <= 0.005
        for m, t in thr:
            v = g[m].dropna().to_numpy()
            ok &= np.percentile(v, 95) <= t
        have = g[[m for m, _ in thr]].notna().all(axis=1)
        met = (~e) & np.logical_and.reduce([g[m] <= t for m, t in thr])
        out.append({"k": kk, "n": len(g), "met": bool(ok), "attainment": met.sum() / (e | have).sum(),
                    "error_rate": e.mean(), "p95_ttft_ms": np.percentile(g["ttft_ms"].dropna(), 95)})
    return pd.DataFrame(out)


def test_windows_match_pandas(planted):
    s, _d = planted
    req, _stats = sc.synthesize(0, True)
    got = sla_windows(s).frame
    want = _windows_by_hand(req)
    assert len(got) == len(want) == 40
    np.testing.assert_array_equal(got["n"], want["n"])
    assert list(got["met"]) == list(want["met"])
    np.testing.assert_allclose(got["attainment"], want["attainment"], rtol=1e-12)
    np.testing.assert_allclose(got["error_rate"], want["error_rate"], rtol=1e-12)
    np.testing.assert_allclose(got["p95_ttft_ms"], want["p95_ttft_ms"], rtol=1e-9)


def test_planted_period_and_change_points(planted):
    _s, d = planted
    per = [p for p in d["diagnosis"]["violations"] if not p["isolated"]]
    assert [(round(p["start_s"] - sc.T0), round(p["end_s"] - sc.T0)) for p in per] == [(1200, 1680)]
    cps = [round(c["at_s"] - sc.T0) for c in d["diagnosis"]["change_points"]]
    assert cps == [1200, 1680]


def _features_by_hand(req, state):
    t0 = req["arrival_s"].min()
    k = np.floor((req["arrival_s"] - t0) / 60).astype(int)
    g = req.assign(k=k).groupby("k")
    f = pd.DataFrame({"kv_cache_hit_rate": g["kv_cache_hit_rate"].mean(),
                      "queue_ms": g["queue_ms"].median(), "tpot_spread": g["tpot_ms"].std(),
                      "prompt_tokens": g["prompt_tokens"].mean()})
    f["state"] = state
    return f


def test_causes_match_scipy(planted):
    _s, d = planted
    req, _st = sc.synthesize(0, True)
    causes = {r["metric"]: r for r in d["diagnosis"]["causes"]}
    start = np.array([w["start_s"] for w in d["windows"]])
    state = np.array([w["met"] for w in d["windows"]], dtype=object)
    inper = (start >= sc.T0 + 1200) & (start < sc.T0 + 1680)
    state = np.where(inper, False, np.where(state == True, True, None))  # noqa: E712
    f = _features_by_hand(req, state)
    ps = {}
    for m in ("kv_cache_hit_rate", "queue_ms", "tpot_spread", "prompt_tokens"):
        b = f.loc[f.state == False, m].to_numpy()  # noqa: E712
        c = f.loc[f.state == True, m].to_numpy()  # noqa: E712
        assert causes[m]["violated"] == pytest.approx(b.mean(), rel=1e-9)
        assert causes[m]["met"] == pytest.approx(c.mean(), rel=1e-9)
        assert causes[m]["n_violated"] == len(b) == 8
        ps[m] = causes[m]["p_value"]
        if min(len(b), len(c)) >= 20:
            assert ps[m] == pytest.approx(stats.mannwhitneyu(b, c).pvalue)
    all_p = [r["p_value"] for r in d["diagnosis"]["causes"] if r["p_value"] is not None]
    q = stats.false_discovery_control(all_p, method="bh")
    got_q = [r["p_adjusted"] for r in d["diagnosis"]["causes"] if r["p_value"] is not None]
    np.testing.assert_allclose(got_q, q)
    assert causes["kv_cache_hit_rate"]["survives"] and not causes["queue_ms"]["survives"]


def test_tenant_rule_matches_pandas(planted):
    _s, d = planted
    req, _st = sc.synthesize(0, True)
    rel = req["arrival_s"] - req["arrival_s"].min()
    start = np.array([w["start_s"] - sc.T0 for w in d["windows"]])
    k = np.floor(rel / 60).astype(int)
    met = np.array([w["met"] for w in d["windows"]], dtype=object)[k]
    inper = ((rel >= 1200) & (rel < 1680)).to_numpy()
    keep = inper | (met == True)  # noqa: E712 - judged windows outside isolated failures
    r = req[keep]
    v = inper[keep]
    long_ = r["prompt_tokens"] > np.percentile(r["prompt_tokens"], 75)
    a = (long_ & (r["tenant"] == "acme")).to_numpy()
    rule = next(x for x in d["diagnosis"]["rules"] if x["antecedent"] == ["long_prompt", "tenant=acme"])
    assert rule["support"] == pytest.approx((a & v).mean())
    assert rule["confidence"] == pytest.approx((a & v).sum() / a.sum())
    assert rule["lift"] == pytest.approx(((a & v).sum() / a.sum()) / v.mean())
    p = stats.fisher_exact([[(a & v).sum(), (a & ~v).sum()], [(~a & v).sum(), (~a & ~v).sum()]],
                           alternative="greater").pvalue
    assert rule["p_value"] == pytest.approx(p, rel=1e-6, abs=1e-300)
    assert rule["survives"]
    del start


def test_whatif_matches_least_squares(planted):
    _s, d = planted
    wi = d["diagnosis"]["whatif"]
    f = pd.DataFrame(d["windows"])
    feats = _features_by_hand(sc.synthesize(0, True)[0], None)
    f["hit"] = feats["kv_cache_hit_rate"].to_numpy()
    f["rate"] = f["n"] / 60
    f["prompt"] = feats["prompt_tokens"].to_numpy()
    inper = (f["start_s"] >= sc.T0 + 1200) & (f["start_s"] < sc.T0 + 1680)
    use = inper | (f["met"] == True)  # noqa: E712
    g = f[use]
    X = np.column_stack([np.ones(len(g)), g["hit"], *[g[c] for c in ("rate", "prompt")
                                                      if c in [x.replace("request_rate", "rate").replace("prompt_tokens", "prompt") for x in wi["common_causes"]]]])
    beta = np.linalg.lstsq(X, g["attainment"].to_numpy(), rcond=None)[0]
    assert wi["estimate"] == pytest.approx(beta[1], rel=1e-6)
    med = g.loc[g["met"] == True, "hit"].median()  # noqa: E712
    v = g[inper[use]]
    pred = np.average(np.clip(v["attainment"] + beta[1] * (med - v["hit"]), 0, 1), weights=v["n_judged"])
    assert wi["predicted"] == pytest.approx(pred, rel=1e-6)
    assert wi["predicted_low"] <= wi["predicted"] <= wi["predicted_high"]
    assert wi["predicted"] > wi["observed"] + 0.2
    assert {r["name"] for r in wi["refutations"]} == {"placebo_treatment_refuter", "random_common_cause",
                                                      "data_subset_refuter"}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_planted_named_null_blames_nothing(seed):
    s = _store(seed, True)
    d = diagnose(s, whatif=False).to_dict()["diagnosis"]
    steps = {st["step"]: st["verdict"] for st in d["checklist"]}
    assert steps["kv_cache"] == "points_here" and "prefix caching" in d["modules"]
    assert any(r["survives"] and "tenant=acme" in r["antecedent"] for r in d["rules"])
    assert not any(r["survives"] and "tenant=acme" not in r["antecedent"] for r in d["rules"])
    assert "prompt_tokens" in d["workload_changed"]  # a workload change, named as such
    assert [round(p["start_s"] - sc.T0) for p in d["violations"] if not p["isolated"]][-1:] == [1200]
    s.close()
    s = _store(seed, False)
    d = diagnose(s, whatif=False).to_dict()["diagnosis"]
    assert d["modules"] == [] and d["workload_changed"] == []
    assert not any(r["survives"] for r in d["causes"]) and not any(r.get("survives") for r in d["rules"])
    assert all(st["verdict"] != "points_here" for st in d["checklist"])
    s.close()


def test_params_validated():
    with pytest.raises(ValueError, match="window"):
        window_params({"window_s": 0})
    with pytest.raises(ValueError, match="window"):
        window_params({"window_s": "soon"})
    with pytest.raises(ValueError, match="error_budget"):
        window_params({"error_budget": 2})
    with pytest.raises(ValueError, match="unknown SLA metric"):
        window_params({"thresholds": {"nope": 1}})
    assert window_params({"window_s": "30"})["window_s"] == 30.0


def test_window_size_is_a_param(planted):
    s, _d = planted
    w = sla_windows(s, {"window_s": 120}).frame
    assert len(w) == 20 and (w["end_s"] - w["start_s"] == 120).all()


def test_report_json_and_markdown(planted, tmp_path):
    import json

    import jsonschema

    from explorer.core.analysis import Cohort
    from explorer.core.report import build_report, render_markdown
    s, _d = planted
    doc = build_report(s, Cohort(), whatif=False).doc
    assert "windows" in doc["sla"] and "sla_diagnosis" not in doc
    schema = json.loads((__import__("pathlib").Path(__file__).parents[1] / "resources" /
                         "report.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(doc)), schema)
    text = render_markdown(doc)
    assert "SLA over time" in text and "tenant=acme" in text and "points here" in text


def _pelt(y):
    """ruptures' Pelt(model="l2") itself with the module doc's penalty: (breakpoints, penalty)."""
    import math
    import ruptures as rpt
    sigma = max(1.4826 * np.median(np.abs(np.diff(y))) / math.sqrt(2), 0.02)
    pen = 2 * sigma ** 2 * math.log(len(y))
    return rpt.Pelt(model="l2", min_size=2, jump=1).fit(y).predict(pen=pen), pen


def _penalised_cost(y, bkps, pen):
    """PELT's objective: the segments' sums of squared deviations + pen per change point."""
    edges = [0] + list(bkps)
    return sum(float(((y[a:b] - y[a:b].mean()) ** 2).sum()) for a, b in zip(edges, edges[1:])) \
        + pen * (len(bkps) - 1)


def test_change_points_are_pelt_l2():
    """The C PELT (KernelCPD, linear kernel) finds ruptures' Pelt(model="l2") breakpoints on
    series with 0-3 planted shifts (two runs at once), with the segment means either side; on
    series rounded to 0.1 (ties: two segmentations with the same cost) it finds one of equal
    penalised cost (both optimal; they may break the tie differently)."""
    from explorer.core.analysis.sla_windows import change_points
    g = np.random.default_rng(7)
    shifted = 0
    for trial in range(150):
        rounded = trial % 3 == 0
        frames, series = [], {}
        for run in ("a", "b"):
            n = int(g.integers(6, 160))
            y = g.binomial(200, 0.9, n) / 200
            for _ in range(int(g.integers(0, 4))):
                at = int(g.integers(1, n))
                y[at:] = np.clip(y[at:] - g.uniform(-0.3, 0.3), 0, 1)
            y = np.round(y, 1) if rounded else y
            starts = 1000.0 + 60.0 * np.arange(n)
            frames.append(pd.DataFrame({"run_id": run, "attainment": y, "start_s": starts}))
            series[run] = (y, starts)
        got = change_points(pd.concat(frames, ignore_index=True))
        for run, (y, starts) in series.items():
            mine = [c for c in got if c["run_id"] == run]
            if np.ptp(y) == 0:
                assert mine == []
                continue
            want, pen = _pelt(y)
            at = [int(np.searchsorted(starts, c["at_s"])) for c in mine]
            bkps = at + [len(y)]
            edges = [0] + bkps
            np.testing.assert_allclose([(c["before"], c["after"]) for c in mine],
                                       [(y[edges[i]:b].mean(), y[b:edges[i + 2]].mean())
                                        for i, b in enumerate(at)], rtol=1e-12)
            if not rounded:
                assert bkps == want
            else:
                assert _penalised_cost(y, bkps, pen) == pytest.approx(
                    _penalised_cost(y, want, pen), rel=1e-12, abs=1e-12)
            assert min(np.diff(edges)) >= 2
            shifted += len(want) > 1
    assert shifted > 60  # most series have a change point to find
