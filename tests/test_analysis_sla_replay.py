"""The replay of an SLA violation period (replay.sla_period): the observed attainment equals
sla_windows' (DuckDB), the replays' attainment and window verdicts are recomputed with the
replay's public simulate() and numpy / pandas, and a replay whose calibration cannot reproduce
the observed period says it cannot tell."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer.core.replay.sla_period import replay_period, report_replay
from explorer.core.analysis.sla_windows import sla_windows
from explorer.core.errors import NoData
from explorer.core.replay import EngineConfig, TraceRequest, requests_from_store, simulate, write_run
from explorer.core.store import Store

THR = {"thresholds": {"ttft_ms": 500.0, "tpot_ms": 50.0}}


def _trace(seed=0):
    """4 req/s for 20 minutes, 14 req/s in minutes 8-12: more than 8 running sequences serve."""
    rng = np.random.default_rng(seed)
    t, out = 0.0, []
    while t < 1200:
        t += rng.exponential(1 / (14.0 if 480 <= t < 720 else 4.0))
        out.append(TraceRequest(str(len(out)), t, int(rng.integers(200, 800)), int(rng.integers(100, 300))))
    return out


@pytest.fixture(scope="module")
def observed():
    s = Store()
    res = simulate(_trace(), EngineConfig(max_num_seqs=8, max_num_batched_tokens=2048))
    write_run(s, res, label="obs")
    yield s, sla_windows(s, THR)
    s.close()


def _by_hand(rq: pd.DataFrame, t0, lo, hi, thr=THR["thresholds"]):
    """Per-request attainment and window verdicts in [lo, hi) with pandas (no error here)."""
    r = rq[(rq["arrival_s"] >= lo) & (rq["arrival_s"] < hi)]
    met = np.logical_and.reduce([r[m] <= t for m, t in thr.items()])
    k = np.floor((r["arrival_s"] - t0) / 60.0).astype(int)
    q = r.groupby(k)[list(thr)].quantile(0.95)
    wins = np.logical_and.reduce([q[m] <= t for m, t in thr.items()])
    return met.sum() / len(r), int(wins.sum()), len(q)


def _worst(w):
    return min((p for p in w.periods if not p["isolated"]), key=lambda p: p["attainment"])


def test_more_seqs_would_have_met(observed):
    s, w = observed
    per = _worst(w)
    r = replay_period(s, w, per, {"max_num_seqs": 64}).to_dict()
    # observed: the same number as sla_windows' DuckDB period
    assert r["observed"]["n_met"] == per["n_met"] and r["observed"]["n_judged"] == per["n_judged"]
    assert r["observed"]["attainment"] == pytest.approx(per["attainment"], rel=1e-12)
    # the replays recomputed: simulate() the same trace with the calibrated step time
    params = {k: r["calibration"]["params"][k] for k in r["calibration"]["params"]}
    assert r["calibration"]["replicas"] == 1
    trace = [t for t in requests_from_store(s, per["run_id"])
             if per["start_s"] - 600 <= t.arrival_s < per["end_s"]]
    t0 = min(x["start_s"] for x in w.windows)
    for key, cfg in (("base", EngineConfig(max_num_seqs=8, max_num_batched_tokens=2048)),
                     ("scenario", EngineConfig(max_num_seqs=64, max_num_batched_tokens=2048))):
        rq = simulate(trace, replace(cfg, **params)).requests
        att, wmet, wn = _by_hand(rq, t0, per["start_s"], per["end_s"])
        assert r[key]["attainment"] == pytest.approx(att, rel=1e-12)
        assert (r[key]["windows_met"], r[key]["windows_judged"]) == (wmet, wn)
    assert r["observed"]["attainment"] < 0.1 and r["scenario"]["attainment"] == pytest.approx(1.0)
    assert r["verdict"] == "met" and not r["reasons"]
    # one run, no ladder to validate on: the replay's own status says so
    assert r["calibration"]["validation"]["kind"] == "not validated"
    assert "max-num-seqs 64 (observed 8)" in r["sentence"]


def test_slightly_more_seqs_still_misses(observed):
    s, w = observed
    r = replay_period(s, w, _worst(w), {"max_num_seqs": 9}).to_dict()
    assert r["scenario"]["attainment"] < 0.82
    assert r["verdict"] == "not_met"


def test_poor_calibration_says_it_cannot_tell():
    """Observed TTFT replaced by noise unrelated to the load (uniform 0-1,000 ms): the replay's
    step time cannot reproduce the period's attainment, so no claim is made."""
    s = Store()
    res = simulate(_trace(1), EngineConfig(max_num_seqs=8, max_num_batched_tokens=2048))
    rng = np.random.default_rng(3)
    rq = res.requests.copy()
    rq["ttft_ms"] = rng.uniform(0, 1000, len(rq))
    write_run(s, replace(res, requests=rq), label="noisy")
    w = sla_windows(s, THR)
    per = _worst(w)
    r = replay_period(s, w, per, {"max_num_seqs": 64}).to_dict()
    assert r["verdict"] == "uncertain" and r["reasons"]
    gap = abs(r["base"]["attainment"] - r["observed"]["attainment"])
    assert r["calibration"].get("warning") or gap >= abs(r["scenario"]["attainment"] - 0.82)
    s.close()


def test_no_recorded_setting_is_no_data():
    from explorer.demo import sla_collapse as sc
    s = Store()
    sc.load(s, 0, True)
    w = sla_windows(s)
    with pytest.raises(NoData, match="num_gpu_blocks"):
        replay_period(s, w, _worst(w), {"num_gpu_blocks": 4096})
    out = report_replay(s, w)
    assert out["status"] == "no_data" and "max-num-seqs" in out["reason"]
    s.close()


def test_report_replays_the_worst_period(observed):
    s, w = observed
    out = report_replay(s, w)
    assert out["status"] == "ok" and out["setting"]["scenario"]["max_num_seqs"] == 16
    assert out["period"]["start_s"] == _worst(w)["start_s"]


def test_sentence_in_chinese(observed):
    from explorer.core.i18n import set_language
    s, w = observed
    try:
        set_language("zh_CN")
        r = report_replay(s, w, {"max_num_seqs": 64})
        assert "本可达到目标" in r["sentence"] and "违约时段" in r["sentence"]
    finally:
        set_language("en")


def test_out_of_sample_error_blocks_the_claim():
    from explorer.core.replay.sla_period import verdict
    ok = {"ttft_ms": {"error": 0.01}, "tpot_ms": {"error": -0.02}}
    assert verdict(0.3, 0.31, 0.95, 0.82, ok) == ("met", [])
    assert verdict(0.3, 0.31, 0.5, 0.82, ok) == ("not_met", [])
    bad = {**ok, "validation": {"kind": "validated", "median_error": 0.4, "settings": 4}}
    v, why = verdict(0.3, 0.31, 0.95, 0.82, bad)
    assert v == "uncertain" and "40%" in why[0]
    # the margin rule: the base replay 0.2 off the observed, the scenario 0.1 above the target
    assert verdict(0.3, 0.5, 0.92, 0.82, ok)[0] == "uncertain"


def test_report_section_shows_the_replay(observed):
    from explorer.core.analysis.sla_report import markdown
    from explorer.core.replay.sla_period import diagnose_with_replay
    s, w = observed
    d = diagnose_with_replay(s, THR, whatif=False).to_dict()
    rp = d["diagnosis"]["replay"]
    assert rp["status"] == "ok" and rp["period"]["start_s"] == _worst(w)["start_s"]
    md = markdown(d)
    assert "### Replay of the worst violation period" in md and rp["sentence"].split(":")[0] in md
    assert "Replay error under other settings: not validated" in md


def test_no_replay_leaves_out_the_period_replay(observed):
    """report --no-replay (params["replay"] False) replays no period either ("not requested",
    as the replay section says); without it the section replays the worst one (the section
    registry passes the choice on)."""
    from types import SimpleNamespace

    from explorer.core.sections import _sla_diagnosis
    s, _w = observed
    run = lambda params: SimpleNamespace(store=s, params=params, cancelled=None)  # noqa: E731
    without = _sla_diagnosis(run({"sla": THR, "replay": False})).to_dict()["diagnosis"]
    with_it = _sla_diagnosis(run({"sla": THR})).to_dict()["diagnosis"]
    assert without["replay"] == {"status": "no_data", "reason": "not requested"}  # in English
    assert with_it["replay"]["status"] == "ok"
