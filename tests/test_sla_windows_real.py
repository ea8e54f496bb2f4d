"""SLA over time on a real QPS ladder (aibrix v0.3.0, naive stack, 11 request rates), read in
place: windows recomputed with pandas / numpy from the CSVs, the ladder's SLA failing from a
request rate on and the diagnosis naming the request-rate change as the workload."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis.sla_diagnosis import diagnose

FOLDER = "aibrix/ps_experiment_v0.3.0_20250519"
PARAMS = {"window_s": 10, "thresholds": {"ttft_ms": 5000.0, "tpot_ms": 50.0}}


@pytest.fixture(scope="module")
def ladder(real):
    from explorer.core.store import Store
    files = sorted((real / FOLDER).glob("aibrix_naive_output_*.csv"))
    s = Store()
    for f in files:
        s.load_file(f)
    yield s, files, diagnose(s, PARAMS, whatif=False).to_dict()
    s.close()


def test_windows_match_the_csvs(ladder):
    s, files, d = ladder
    assert len(files) == 11
    wins = pd.DataFrame(d["windows"])
    req = s.con.execute("SELECT run_id, arrival_s, ttft_ms, tpot_ms, error FROM requests").df()
    for f in files:
        csv = pd.read_csv(f)
        t = csv["launch_time"].to_numpy(dtype=float)
        k = np.floor((t - t.min()) / 10).astype(int)
        run = next(r for r in wins["run_id"].unique() if r.endswith(f.stem))
        w = wins[wins["run_id"] == run]
        np.testing.assert_array_equal(w["n"], np.bincount(k)[np.unique(k)])
        np.testing.assert_allclose(w["start_s"], t.min() + 10 * np.unique(k))
        # judged as the seed does: P95 of TTFT (ms) and TPOT against the bounds, from the store
        r = req[req["run_id"] == run]
        kk = np.floor((r["arrival_s"] - r["arrival_s"].min()) / 10).astype(int)
        for (ki, g), met, att in zip(r.groupby(kk), w["met"], w["attainment"]):
            ok = (np.percentile(g["ttft_ms"], 95) <= 5000) and (np.percentile(g["tpot_ms"], 95) <= 50)
            assert met == (bool(ok) if len(g) >= 5 else None)
            assert att == pytest.approx(((g["ttft_ms"] <= 5000) & (g["tpot_ms"] <= 50)).mean())
        np.testing.assert_allclose(
            np.sort(r["ttft_ms"].to_numpy()), np.sort(csv["ttft"].to_numpy() * 1000), rtol=1e-9)


def test_ladder_fails_from_a_rate_on_and_names_the_workload(ladder):
    _s, _f, d = ladder
    dg = d["diagnosis"]
    per = {p["run_id"].rsplit("_", 1)[-1] for p in dg["violations"] if not p["isolated"]}
    assert {"2.5", "2.9", "3.3", "3.7", "4.1"} <= per and not per & {"0.1", "0.5"}
    assert "request_rate" in dg["workload_changed"]
    rate = next(c for c in dg["causes"] if c["metric"] == "request_rate")
    wins = pd.DataFrame(d["windows"])
    assert rate["n_violated"] + rate["n_met"] == dg["windows_in_periods"] + int((wins["met"] == True).sum())  # noqa: E712
    steps = {st["step"]: st["verdict"] for st in dg["checklist"]}
    assert steps["kv_cache"] == "no_data"  # the CSVs carry no cache hits
