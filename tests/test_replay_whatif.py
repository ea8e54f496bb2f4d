"""`replay FILE --what-if`: the step time is fitted at the settings the trace was served with
(recorded, the deployment's, else vLLM's defaults) and the same arrivals are replayed with only
the settings given changed. A plain `replay FILE --max-num-seqs 8` takes 8 as the observed
setting and reproduces the observed means by construction (the new-user trial's "wrong
number"); the what-if must not."""
from __future__ import annotations

import json
from dataclasses import fields

import pytest

from explorer.__main__ import main
from explorer.core.replay.model import EngineConfig
from explorer.core.replay.replicas import simulate_replicas

STEP = {f.name for f in fields(EngineConfig) if f.name.startswith("step_")}


def _json(capsys, *argv):
    assert main(["replay", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _trace(path):
    from explorer.core.replay import requests_from_store
    from explorer.core.store import Store
    store = Store()
    try:
        rep = store.load_file(path)
        return requests_from_store(store, rep.run_ids[0])
    finally:
        store.close()


def _only_changes(doc, changed: set[str]):
    """The scenario is the observed engine with the fitted step time and the changes alone."""
    obs, scn = doc["observed_config"], doc["scenario_config"]
    for k, v in scn.items():
        if k in changed:
            assert v == doc["changes"][k], k
        elif k in STEP:
            assert v == pytest.approx(doc["calibration"]["params"].get(k, obs[k]), rel=1e-12), k
        else:
            assert v == obs[k], k


def test_aiperf_what_if_fits_at_vllms_defaults_and_replays_the_change(real, capsys):
    path = real / "aiperf_example" / "profile_export.jsonl"
    doc = _json(capsys, path, "--what-if", "--blocks", "2000", "--max-num-batched-tokens", "2048")
    # fitted where the trace was served: vLLM's defaults (named as assumed), capacity unknown
    assert doc["observed_config"]["max_num_batched_tokens"] == 8192
    assert doc["observed_sources"]["max_num_batched_tokens"] == "default"
    assert doc["observed_config"]["num_gpu_blocks"] is None
    assert doc["observed_sources"]["num_gpu_blocks"] == "unknown"
    assert doc["changes"] == {"num_gpu_blocks": 2000, "max_num_batched_tokens": 2048}
    _only_changes(doc, set(doc["changes"]))
    cal = doc["calibration"]
    for m in ("ttft_ms", "tpot_ms"):
        assert abs(cal[m]["error"]) < 0.02
    # the observed-settings replay is the calibrated one
    assert doc["observed"]["ttft_ms_mean"] == pytest.approx(cal["ttft_ms"]["replayed"], rel=1e-9)
    # the scenario replayed again, outside the CLI, and its means recomputed with pandas
    res = simulate_replicas(_trace(path), EngineConfig(**doc["scenario_config"]),
                            doc["replicas"], routing=doc["routing"])
    ok = res.requests[res.requests["error"].isna()]
    assert doc["scenario"]["ttft_ms_mean"] == pytest.approx(ok["ttft_ms"].mean(), rel=1e-9)
    assert doc["scenario"]["preemptions"] == res.summary["preemptions"]
    # a 2,000-block cache and a quarter of the token budget must cost something here
    assert doc["scenario"]["ttft_ms_mean"] > doc["observed"]["ttft_ms_mean"]
    for k, c in doc["change"].items():
        if c["ratio"] is not None:
            assert c["ratio"] == pytest.approx(c["scenario"] / c["observed"] - 1, rel=1e-12), k
    assert doc["error_applies"]["kind"] == "not validated" and doc["error_applies"]["reason"]


def test_a_known_deployment_is_fitted_at_its_own_scheduler(real, capsys):
    """aibrix v0.3.0 naive: vLLM 0.8.5 V1 on a >= 70 GiB GPU ran 1,024 sequences (the
    deployment's), 8 pods per keep-alive connection; the what-if changes max-num-seqs only."""
    path = real / "aibrix" / "ps_experiment_v0.3.0_20250519" / "naive_output_2.1.csv"
    doc = _json(capsys, path, "--what-if", "--max-num-seqs", "8")
    assert doc["observed_config"]["max_num_seqs"] == 1024
    assert doc["observed_sources"]["max_num_seqs"] == "deployment"
    assert doc["scenario_config"]["max_num_seqs"] == 8
    assert (doc["replicas"], doc["routing"]) == (8, "connection")
    _only_changes(doc, {"max_num_seqs"})
    # fewer running sequences: requests queue longer
    assert doc["scenario"]["queue_ms_mean"] > doc["observed"]["queue_ms_mean"]
    assert main(["replay", str(path), "--what-if", "--max-num-seqs", "8"]) == 0
    out = capsys.readouterr().out
    assert "what if max-num-seqs 8 (observed 1,024, the deployment's)" in out
    assert "8 replicas, connection routing" in out and "error that applies: not validated" in out
    # the plain replay of the same flags takes 8 as observed: it fits there instead
    plain = _json(capsys, path, "--max-num-seqs", "8")
    assert plain["config"]["max_num_seqs"] == 8


@pytest.mark.parametrize("argv, code, said", [
    (["--what-if"], 2, "needs at least one setting to change"),
    (["--what-if", "--max-num-seqs", "8", "--timing", "default"], 2, "fits the step time itself"),
])
def test_what_if_refusals(real, capsys, argv, code, said):
    path = real / "aiperf_example" / "profile_export.jsonl"
    assert main(["replay", str(path), *argv]) == code
    assert said in capsys.readouterr().err


def test_a_mooncake_trace_has_nothing_to_compare_against(real, capsys):
    path = real / "mooncake" / "conversation_trace.jsonl"
    assert main(["replay", str(path), "--what-if", "--blocks", "100"]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "records no latencies" in err
