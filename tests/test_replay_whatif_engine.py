"""The report's replay section and the replay -> badcases what-if replay a known deployment's
run with the engine plain `replay` and the validation use (deployments.with_kv_read, issue 34):
its vLLM scheduler, KV read, pod KV capacity, replica count and routing; an unknown deployment's
settings are unchanged."""
from __future__ import annotations

import json
from dataclasses import asdict, fields

import pandas as pd
import pytest

from explorer.core.analysis.cohort import Cohort
from explorer.core.replay.model import EngineConfig

RUN = ("aibrix", "ps_experiment_v0.2.1_20250323", "naive_output_0.1.csv")


def _path(real):
    p = real.joinpath(*RUN)
    if not p.is_file():
        pytest.skip(f"{p} absent")
    return p


def _bound_store(path):
    """A store of the run with every third request bound to a badcase of cluster "x"."""
    from explorer.core.store import Store
    st = Store()
    rid = st.load_file(path).run_ids[0]
    ids = list(st.df("SELECT request_id FROM requests WHERE run_id = ?", [rid])
               ["request_id"].astype(str))
    case = [f"c{i}" for i in range(len(ids))]
    bad = [i % 3 == 0 for i in range(len(ids))]
    st.append("cases", pd.DataFrame({"case_id": case, "category": "alg",
                                     "correct": [not b for b in bad],
                                     "cluster": ["x" if b else None for b in bad]}))
    st.append("case_links", pd.DataFrame({"case_id": case, "run_id": rid, "request_id": ids,
                                          "level": 1}))
    return st, rid


def _cli(path, capsys) -> dict:
    from explorer.__main__ import main
    assert main(["replay", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _recorder(monkeypatch, module):
    """Record (config, replicas, routing) of every simulate_replicas call made from module."""
    calls = []
    real_sim = module.simulate_replicas

    def sim(trace, config, replicas=1, *a, routing="round-robin", **kw):
        calls.append((config, replicas, routing))
        return real_sim(trace, config, replicas, *a, routing=routing, **kw)
    monkeypatch.setattr(module, "simulate_replicas", sim)
    return calls


def test_whatif_replays_the_clis_engine(real, capsys, monkeypatch):
    """The what-if at the observed settings of aibrix v0.2.1's naive 0.1 QPS run replays, after
    calibration, the CLI's engine: V0 scheduler (no chunked prefill, 32,000 tokens), the A100's
    KV read and 29,205 blocks a pod, 8 pods behind kube-proxy (connection routing)."""
    from explorer.core.errors import NoData
    from explorer.core.replay import badcases
    path = _path(real)
    doc = _cli(path, capsys)
    st, rid = _bound_store(path)
    try:
        inp = badcases.gather_inputs(st, Cohort("x"))
        calls = _recorder(monkeypatch, badcases)
        # the run records no per-request hit rate: the outcome model has no case to fit, but
        # only after both replays ran
        with pytest.raises(NoData):
            badcases.predict(inp, {})
    finally:
        st.close()
    assert (inp.replicas, inp.routing) == (8, "connection")
    cal = set(doc["calibration"]["params"])
    facts = {k: v for k, v in doc["config"].items() if k not in cal}
    assert facts["num_gpu_blocks"] == 29205 and facts["chunked_prefill"] is False
    assert {k: getattr(inp.observed, k) for k in facts} == facts
    base, reps, routing = calls[0]
    assert (reps, routing) == (doc["calibration"]["replicas"], doc["calibration"]["routing"])
    assert {k: getattr(base, k) for k in facts} == facts
    # the calibration fitted the same step time as the CLI's (same run, engine and pods)
    for k in cal:
        assert getattr(base, k) == pytest.approx(doc["config"][k], rel=1e-6), k


def test_section_sweeps_the_clis_engine(real, capsys, monkeypatch):
    """The report's replay section of that run (no prediction: no hit rate to fit the outcome
    model on) sweeps the capacity with the CLI's scheduler, KV read, pods and routing, and says
    why there is no prediction."""
    from explorer.core.replay import section
    path = _path(real)
    doc = _cli(path, capsys)
    st, rid = _bound_store(path)
    calls = _recorder(monkeypatch, section)
    try:
        d = section.replay_section(st, Cohort("x"))
    finally:
        st.close()
    assert d["predicted_badcases"] is None and "kv_cache_hit_rate" in d["reason"]
    assert d["sweep"]["run_id"] == rid and d["sweep"]["rows"]
    assert len(calls) == len(d["sweep"]["rows"])
    cal = set(doc["calibration"]["params"])
    facts = {k: v for k, v in doc["config"].items() if k not in cal | {"num_gpu_blocks"}}
    for cfg, reps, routing in calls:
        assert {k: getattr(cfg, k) for k in facts} == facts
        assert (reps, routing) == (doc["replicas"], doc["routing"]) == (8, "connection")


def test_an_unknown_deployment_is_unchanged():
    """The demo's runs are no published deployment: the what-if's engine is the recorded
    settings over EngineConfig's defaults, one engine, round-robin."""
    from explorer.core.replay.badcases import engine_of, gather_inputs, observed_settings
    from explorer.core.store import Store
    from explorer.demo import load_demo
    s = Store()
    load_demo(s)
    try:
        inp = gather_inputs(s, Cohort(cluster="计算题中间步骤出错"))
        rec = observed_settings(s, inp.run_id)
        cfg, dep = engine_of(s, inp.run_id, rec)
    finally:
        s.close()
    assert dep == {} and cfg == EngineConfig(**rec) == inp.observed
    assert (inp.replicas, inp.routing) == (None, "round-robin")
    assert inp.observed.step_per_kv_token_ms == 0 and rec["num_gpu_blocks"] == 10_000
    assert {f.name for f in fields(EngineConfig)} >= set(asdict(cfg))
