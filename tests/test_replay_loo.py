"""Leave-one-out validation (replay/loo.py): each held-out setting's errors recomputed here with
pandas from the raw aibrix CSVs and from this test's own replays with the pooled constants."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from explorer.core.replay import EngineConfig
from explorer.core.replay.io import requests_from_store
from explorer.core.replay.loo import leave_one_out
from explorer.core.replay.model import DEFAULT_TIMING
from explorer.core.replay.replicas import simulate_replicas
from explorer.core.store import Store
from tests.conftest import REAL

NAIVE = REAL / "aibrix" / "ps_experiment_v0.2.1_20250323"
needs_real = pytest.mark.skipif(not NAIVE.is_dir(), reason="real aibrix data absent")
RATES = ("0.1", "0.5", "0.9")


def _raw(q: str) -> pd.DataFrame:
    d = pd.read_csv(NAIVE / f"naive_output_{q}.csv")
    return pd.DataFrame({
        "request_id": "u" + d["user_id"].astype(str) + "-q" + d["question_id"].astype(str),
        "arrival_s": d["launch_time"], "completion_tokens": d["generation_tokens"],
        "ttft_ms": d["ttft"] * 1000.0,
        "tpot_ms": d["generation_time"] * 1000.0 / (d["generation_tokens"] - 1),
        "e2e_ms": (d["finish_time"] - d["launch_time"]) * 1000.0})


def _thr(df: pd.DataFrame) -> float:
    end = df["arrival_s"] + df["e2e_ms"] / 1000.0
    return df["completion_tokens"].sum() / (end.max() - df["arrival_s"].min())


@needs_real
def test_leave_one_out_errors_recomputed_with_pandas():
    store = Store()
    for q in RATES:
        store.load_file(NAIVE / f"naive_output_{q}.csv")
    v = leave_one_out(store, EngineConfig(), routing="random", seeds=2, max_evaluations=10)
    assert v["mode"] == "leave-one-out" and v["fit"]["replicas_source"] == "deployment"
    assert [h["setting"] for h in v["held_out"]] == [float(q) for q in RATES]
    cal = {c["run_id"]: c for c in v["calibrations"]}
    for h, q in zip(v["held_out"], RATES):
        # nothing of the held-out run in its constants: the median of the others' fits
        others = [c for r, c in cal.items() if r != h["run_id"]]
        assert h["run_id"] not in h["fitted_on"] and len(h["fitted_on"]) == len(RATES) - 1
        for p in DEFAULT_TIMING:
            assert h["params"][p] == pytest.approx(np.median([c["params"][p] for c in others]))
        # the v0.2.1 pods' engine by hand (docs/replay.md): vLLM 0.7.0 V0, no chunked prefill,
        # budget max(32000, 2048); an A100-80G's KV capacity
        cfg = replace(EngineConfig(), chunked_prefill=False, max_num_batched_tokens=32000,
                      num_gpu_blocks=29205, **h["params"])
        trace = requests_from_store(store, h["run_id"])
        frames = [simulate_replicas(trace, cfg, h["replicas"], routing="random", seed=s).requests
                  for s in range(2)]
        raw = _raw(q)
        pool = pd.concat(frames)
        for m in ("ttft_ms", "tpot_ms", "e2e_ms"):
            o = raw[m].dropna()
            r = pool[m].dropna()
            assert h[m]["observed"] == pytest.approx(o.mean(), rel=1e-9)
            assert h[m]["error"] == pytest.approx(r.mean() / o.mean() - 1, rel=1e-9)
            assert h[m]["p90_error"] == pytest.approx(
                np.quantile(r, 0.9) / np.quantile(o, 0.9) - 1, rel=1e-9)
        t_rep = np.mean([_thr(f.assign(completion_tokens=f["completion_tokens"])) for f in frames])
        assert h["throughput"]["error"] == pytest.approx(t_rep / _thr(raw) - 1, rel=1e-9)
    med = v["median_abs_error"]
    assert med["tpot_ms"] == pytest.approx(np.median([abs(h["tpot_ms"]["error"])
                                                      for h in v["held_out"]]))
    worst = max(med["ttft_ms"], med["tpot_ms"])
    assert v["label"] == f"leave-one-out at 3 settings, median error {worst:.0%}"


def test_leave_one_out_needs_three_settings():
    from explorer.core.errors import NoData
    with pytest.raises(NoData):
        leave_one_out(Store(), EngineConfig())


@needs_real
def test_cli_validate_mode_loo(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    folder = tmp_path / NAIVE.name        # the experiment's folder name names the deployment
    folder.mkdir()
    for q in RATES:                       # links to the real files, not copies
        (folder / f"naive_output_{q}.csv").symlink_to(NAIVE / f"naive_output_{q}.csv")
    env = dict(os.environ, PYTHONPATH=str(root), QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-m", "explorer", "replay", "--validate", str(folder),
                        "--mode", "both", "--routing", "random", "--json"], cwd=root, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    low, loo = json.loads(r.stdout)["validations"]
    assert "mode" not in low and len(low["held_out"]) == 2
    assert loo["mode"] == "leave-one-out" and len(loo["held_out"]) == 3
    assert loo["fit"]["replicas"] == 8 and loo["fit"]["replicas_source"] == "deployment"
    errs = [abs(h["ttft_ms"]["error"]) for h in loo["held_out"]]
    assert loo["median_abs_error"]["ttft_ms"] == pytest.approx(float(np.median(errs)))


def test_panel_state_carries_replicas_and_routing():
    from explorer.core.viewstate.replay import ReplayRun, ReplayState
    st = ReplayState()
    st.set_runs([ReplayRun(run_id="r", label="r", n=3)])
    assert (st.replicas, st.routing) == (0, "")          # auto: the deployment's, else fitted
    st.set(replicas=8, routing="connection")
    job = st.validate_job()
    assert (job.replicas, job.routing) == (8, "connection")
    with pytest.raises(ValueError):
        st.set(routing="sticky")
    with pytest.raises(ValueError):
        st.set(replicas=-1)
