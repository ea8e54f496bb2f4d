"""The replay out of sample (issue 34): fit on one run, predict another, errors recomputed here
independently from the raw files (pandas) and from replays this test runs itself; parameters the
source cannot identify widen the interval."""
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer.core.replay import EngineConfig, TraceRequest, simulate, write_run
from explorer.core.replay.replicas import simulate_replicas
from explorer.core.replay.validate import fit, predict, validate_ladder
from explorer.core.store import Store
from tests.conftest import REAL

ROOT = Path(__file__).resolve().parents[1]
NAIVE = REAL / "aibrix" / "ps_experiment_v0.2.1_20250323"
needs_real = pytest.mark.skipif(not NAIVE.is_dir(), reason="real aibrix data absent")


def _raw(path: Path) -> pd.DataFrame:
    """aibrix CSV read with pandas: TTFT and TPOT in ms as aibrix records them (ttft in s;
    generation_time over the tokens after the first)."""
    d = pd.read_csv(path)
    return pd.DataFrame({"ttft_ms": d["ttft"] * 1000.0,
                         "tpot_ms": d["generation_time"] * 1000.0 / (d["generation_tokens"] - 1)})


@needs_real
def test_held_out_error_recomputed_independently():
    src, tgt = NAIVE / "naive_output_0.1.csv", NAIVE / "naive_output_2.1.csv"
    store = Store()
    s_run = store.load_file(src).run_ids[0]
    t_run = store.load_file(tgt).run_ids[0]
    f = fit(store, s_run, EngineConfig(), replicas=8, routing="random")
    p = predict(f, store, t_run)
    assert p["label"] == "out-of-sample" and f.calibration.n_traced == 11  # only the source fitted
    # observed: from the raw file, not the store
    raw = _raw(tgt)
    assert p["ttft_ms"]["observed"] == pytest.approx(raw["ttft_ms"].mean(), rel=1e-9)
    assert p["tpot_ms"]["observed"] == pytest.approx(raw["tpot_ms"].mean(), rel=1e-9)
    assert p["ttft_ms"]["p90_observed"] == pytest.approx(np.quantile(raw["ttft_ms"], 0.9), rel=1e-9)
    # replayed: this test's own replays of the target with the fitted constants, pooled seeds
    from explorer.core.replay.io import requests_from_store
    trace = requests_from_store(store, t_run)
    pool = pd.concat([simulate_replicas(trace, f.config, 8, routing="random", seed=s).requests
                      for s in range(f.seeds)])
    for m in ("ttft_ms", "tpot_ms"):
        rep = pool[m].to_numpy(float)
        assert p[m]["replayed"] == pytest.approx(rep.mean(), rel=1e-9)
        assert p[m]["error"] == pytest.approx(rep.mean() / raw[m].mean() - 1, rel=1e-9)
        assert p[m]["p90_replayed"] == pytest.approx(np.quantile(rep, 0.9), rel=1e-9)
        lo, hi = p[m]["interval"]
        assert lo <= p[m]["replayed"] <= hi
    # the measured held-out errors with random routing: TTFT +13 %, TPOT +113 % since round 7
    # replays v0.2.1's real engine (vLLM 0.7.0 V0, no chunked prefill: a decode waits every
    # queued prefill out); +16 % / +94 % in round 6, +14 % / +58 % before (docs/replay.md).
    # A guard against a regression to the first measurement's 30-57x, not a claim of accuracy
    assert abs(p["ttft_ms"]["error"]) < 0.3
    assert abs(p["tpot_ms"]["error"]) < 1.5


def _trace(n, gap_s, prompts, out=40, seed=0):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.5, 1.5, n) * gap_s)
    return [TraceRequest(str(i), float(t[i]), int(prompts[i % len(prompts)]), out)
            for i in range(n)]


TRUTH = EngineConfig(step_base_ms=8.0, step_per_decode_seq_ms=0.5,
                     step_per_prefill_token_ms=0.08, step_prefill_base_ms=40.0)


def _observed_run(store, trace, label):
    """A run whose observations are a replay with TRUTH (the truth is known)."""
    return write_run(store, simulate(trace, TRUTH, record_events=False), label=label)


def test_unidentifiable_parameter_widens_the_interval():
    store = Store()
    # sources at a light load (batch sizes vary: the decode split is identified in both): one
    # prompt length (the prefill split cannot be identified) or several
    same = _observed_run(store, _trace(40, 0.4, [3000]), "same")
    varied = _observed_run(store, _trace(40, 0.4, [500, 1500, 3000, 6000]), "varied")
    target = _observed_run(store, _trace(120, 0.15, [500, 1500, 3000, 6000], seed=1), "target")
    f_same = fit(store, same, EngineConfig(), replicas=1)
    f_var = fit(store, varied, EngineConfig(), replicas=1)
    assert "prefill_split" in {u["param"] for u in f_same.unidentified}
    assert {u["param"] for u in f_var.unidentified} == set()
    p_same, p_var = predict(f_same, store, target), predict(f_var, store, target)
    w = {k: p["ttft_ms"]["interval"][1] - p["ttft_ms"]["interval"][0]
         for k, p in (("same", p_same), ("varied", p_var))}
    assert w["same"] > 0.05 * p_same["ttft_ms"]["replayed"]   # a real spread, not rounding
    assert w["same"] > 2 * w["varied"]
    # the identified fit is the better prediction of a target with other prompt lengths
    assert abs(p_var["ttft_ms"]["error"]) < abs(p_same["ttft_ms"]["error"]) + 0.05


def test_unknown_replica_count_widens_the_interval_to_its_choices():
    store = Store()
    src = _observed_run(store, _trace(20, 6.0, [2000]), "src")     # nothing overlaps
    truth4 = simulate_replicas(_trace(200, 0.05, [2000], seed=2), TRUTH, 4).requests
    from explorer.core.replay.model import ReplayResult
    tgt = write_run(store, ReplayResult(truth4, pd.DataFrame(columns=["request_id", "ts_s", "kind",
                                                                      "detail"]), None, {},
                                        TRUTH), label="tgt4")
    f = fit(store, src, EngineConfig())
    assert "replicas" in {u["param"] for u in f.unidentified}
    p = predict(f, store, tgt)
    lo, hi = p["ttft_ms"]["interval"]
    assert p["ttft_ms"]["within_interval"] and lo <= p["ttft_ms"]["observed"] <= hi
    given = predict(fit(store, src, EngineConfig(), replicas=4), store, tgt)
    glo, ghi = given["ttft_ms"]["interval"]
    assert ghi - glo < 0.5 * (hi - lo)        # the deployment fact narrows it


def _cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "explorer", "replay", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout)


@needs_real
def test_cli_calibrate_from_is_out_of_sample():
    r = _cli(str(NAIVE / "naive_output_1.7.csv"), "--calibrate-from",
             str(NAIVE / "naive_output_0.1.csv"), "--blocks", "inf", "--replicas", "8",
             "--routing", "random", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    cal = doc["calibration"]
    assert cal["label"] == "out-of-sample" and cal["target_run"] != doc["fit"]["source_run"]
    raw = _raw(NAIVE / "naive_output_1.7.csv")
    assert cal["ttft_ms"]["observed"] == pytest.approx(raw["ttft_ms"].mean(), rel=1e-9)
    assert {u["param"] for u in doc["fit"]["unidentified"]} == {"prefill_split", "decode_split"}


@needs_real
def test_cli_validate_folder(tmp_path):
    for f in NAIVE.glob("naive_output_*.csv"):     # a folder of one ladder (links, not copies)
        (tmp_path / f.name).symlink_to(f)
    r = _cli("--validate", str(tmp_path), "--replicas", "8", "--routing", "random", "--json")
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)["validations"][0]
    assert v["fit"]["setting"] == 0.1 and len(v["held_out"]) == 10
    assert [h["setting"] for h in v["held_out"]] == sorted(h["setting"] for h in v["held_out"])
    errs = [abs(h["ttft_ms"]["error"]) for h in v["held_out"]]
    assert v["median_abs_error"]["ttft_ms"] == pytest.approx(float(np.median(errs)))
    med = v["median_abs_error"]
    worst = max(med["ttft_ms"], float(np.median([abs(h["tpot_ms"]["error"]) for h in v["held_out"]])))
    assert v["label"] == f"validated at 10 settings, median error {worst:.0%}"


def test_cli_refuses_nonsense(tmp_path):
    r = _cli()
    assert r.returncode == 2 and "FILE" in r.stderr
    r = _cli("--validate", str(tmp_path / "nope"))
    assert r.returncode == 1 and "nope" in r.stderr
    r = _cli(str(tmp_path / "x.csv"))
    assert r.returncode == 1 and "no such file" in r.stderr
    # no capacity and no known deployment to take it from
    (tmp_path / "m.jsonl").write_text('{"timestamp": 0, "input_length": 9, "output_length": 2}\n')
    r = _cli(str(tmp_path / "m.jsonl"))
    assert r.returncode == 2 and "--blocks" in r.stderr


def test_in_sample_source_is_reproduced_exactly_enough():
    """The source itself is in-sample: its calibration error is small, and is labelled apart."""
    store = Store()
    src = _observed_run(store, _trace(30, 5.0, [500, 1500, 3000, 6000]), "src")
    f = fit(store, src, replace(EngineConfig()), replicas=1)
    cal = f.calibration.to_dict()
    assert abs(cal["ttft_ms"]["error"]) < 0.02 and abs(cal["tpot_ms"]["error"]) < 0.02
    # the ladder needs settings: a store without them has none to validate
    with pytest.raises(Exception):
        validate_ladder(store, EngineConfig())
