"""The decode step's KV read (EngineConfig.step_per_kv_token_ms), the deployment facts it comes
from, per-connection routing under kube-proxy's IPVS mode, and the interval over what the
aibrix files leave open (GPU, kube-proxy mode): every figure recomputed here by hand or with
this test's own replays."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.replay import EngineConfig, TraceRequest, simulate
from explorer.core.replay.engine import _Engine
from explorer.core.replay.model import kv_bytes_per_token, kv_read_ms_per_token
from explorer.core.replay.replicas import connection_routes, simulate_replicas
from tests.conftest import REAL

AIBRIX = REAL / "aibrix"
V021 = AIBRIX / "ps_experiment_v0.2.1_20250323"
V030 = AIBRIX / "ps_experiment_v0.3.0_20250519"
needs_real = pytest.mark.skipif(not V030.is_dir(), reason="real aibrix data absent")

KV = EngineConfig(step_base_ms=10.0, step_per_decode_seq_ms=0.5, step_per_prefill_token_ms=0.01,
                  step_prefill_base_ms=20.0, step_per_kv_token_ms=0.001,
                  max_num_batched_tokens=16384)


def test_kv_bytes_and_read_time_of_llama_8b_on_an_a100():
    # Llama-3.1-8B: K and V, 32 layers, 8 KV heads, head dim 128, 2 bytes
    assert kv_bytes_per_token(32, 8, 128, 2) == 2 * 32 * 8 * 128 * 2 == 131072
    # at the A100 80GB's 2,039 GB/s: 6.43e-5 ms a token, 1.35 ms for a 21,073-token context
    ms = kv_read_ms_per_token(131072, 2.039e12)
    assert ms == pytest.approx(131072 / 2.039e12 * 1e3, rel=1e-12)
    assert 21073 * ms == pytest.approx(1.3546, abs=1e-3)
    with pytest.raises(ValueError):
        kv_read_ms_per_token(0, 2e12)
    with pytest.raises(ValueError):
        EngineConfig(step_per_kv_token_ms=-1.0).validate()


def test_lone_decode_step_reads_its_context():
    """One request: prefill 4,000 tokens in one step, then each decode step costs base +
    per-sequence + kv x 4,000 (its context at decode entry)."""
    r = simulate([TraceRequest("a", 0.0, 4000, 11)], KV).requests.iloc[0]
    assert r.ttft_ms == pytest.approx(10.0 + 20.0 + 0.01 * 4000)
    assert r.tpot_ms == pytest.approx(10.0 + 0.5 + 0.001 * 4000)


def test_two_decodes_pay_for_both_contexts():
    """Two requests arriving together (1,000 and 5,000 tokens, both fit one step's budget):
    prefilled in step 1, they decode side by side; every shared step costs base + 2 x
    per-sequence + kv x (1,000 + 5,000); after the short one finishes the long one pays its own."""
    res = simulate([TraceRequest("s", 0.0, 1000, 6), TraceRequest("l", 0.0, 5000, 11)], KV)
    rq = res.requests.set_index("request_id")
    both = 10.0 + 2 * 0.5 + 0.001 * 6000
    alone = 10.0 + 0.5 + 0.001 * 5000
    assert rq.loc["s", "tpot_ms"] == pytest.approx(both)
    # the long one: 5 steps together, then 5 alone
    assert rq.loc["l", "tpot_ms"] == pytest.approx((5 * both + 5 * alone) / 10)
    # without the KV term the shared step is the old model's
    old = simulate([TraceRequest("s", 0.0, 1000, 6), TraceRequest("l", 0.0, 5000, 11)],
                   EngineConfig(**{**KV.to_dict(), "step_per_kv_token_ms": 0.0})).requests
    assert old.set_index("request_id").loc["s", "tpot_ms"] == pytest.approx(10.0 + 2 * 0.5)


def test_kv_read_jumps_equal_step_by_step():
    """The decode-only jumps of the engine give what stepping gives with the KV term on (its
    context sum is constant within a jump), under preemption too."""
    rng = np.random.default_rng(3)
    t = np.cumsum(rng.exponential(0.05, 200))
    trace = [TraceRequest(str(i), float(t[i]), int(rng.integers(50, 3000)),
                          int(rng.integers(2, 200))) for i in range(200)]
    cfg = EngineConfig(**{**KV.to_dict(), "num_gpu_blocks": 900, "max_num_batched_tokens": 2048})
    out = []
    for jumps in (True, False):
        eng = _Engine(trace, cfg, record_events=True, record_itl=False)
        eng.jumps = jumps
        eng.run(None, None)
        out.append(eng.result())
    a, b = out
    assert a.summary["preemptions"] > 0 and a.summary["steps"] == b.summary["steps"]
    num = a.requests.select_dtypes("number").columns
    assert np.allclose(a.requests[num].to_numpy(float), b.requests[num].to_numpy(float),
                       equal_nan=True, rtol=1e-9)


def test_ipvs_round_robin_connections_by_hand():
    """New connections go to engines 0, 1, 2, ... in turn (IPVS rr); an idle connection is
    reused (oldest first) and carries its engine."""
    arrival = [0.0, 0.1, 0.2, 1.5, 1.6, 20.0]
    finish = [1.0, 1.2, 0.3, 2.0, 2.1, 21.0]
    # 0 opens c0 (engine 0), 1 opens c1 (1), 2 opens c2 (2); at 1.5 c0, c1 and c2 are idle:
    # c0 (oldest) -> 0; at 1.6 c1 -> 1; at 20.0 all idle > 5 s: closed, a new one -> engine 3
    assert connection_routes(arrival, finish, 4, np.random.default_rng(0),
                             new_connection="round-robin") == [0, 1, 2, 0, 1, 3]


def _store(folder, names):
    from explorer.core.store import Store
    st = Store()
    runs = [st.load_file(folder / n).run_ids[0] for n in names]
    return st, runs


@needs_real
def test_deployment_gives_the_kv_read_of_its_gpus():
    from explorer.core.replay.deployments import deployment_of, with_kv_read
    st, (r21,) = _store(V021, ["naive_output_0.1.csv"])
    st3, (r30,) = _store(V030, ["naive_output_0.1.csv"])
    d21, d30 = deployment_of(st, r21), deployment_of(st3, r30)
    assert [g[0] for g in d21["gpus"]] == ["A100-80G"]           # k8s_stack.yaml affinity
    assert [g[0] for g in d30["gpus"]] == ["A100-80G", "H20"]    # aibrix_naive.yaml affinity
    cfg = with_kv_read(d21, EngineConfig())
    assert cfg.step_per_kv_token_ms == pytest.approx(131072 / 2.039e12 * 1e3, rel=1e-12)
    # the KV-cache capacity, by hand: (0.9 x 80 GiB - 8,030,261,248 x 2 bytes of weights) /
    # (131,072 bytes x 16 tokens a block) on the A100; 96 GiB on the H20
    a100 = int((0.9 * 80 * 2 ** 30 - 8_030_261_248 * 2) // (131072 * 16))
    h20 = int((0.9 * 96 * 2 ** 30 - 8_030_261_248 * 2) // (131072 * 16))
    assert (a100, h20) == (29205, 36578)
    assert cfg.num_gpu_blocks == a100
    assert with_kv_read(d30, EngineConfig(), gpu=d30["gpus"][1]).num_gpu_blocks == h20
    # ~22 of the ladder's 21,173-token requests fit one pod's cache
    assert a100 * 16 // (21073 + 100) == 22
    # a value the caller set is kept; nothing known, nothing changed
    kept = with_kv_read(d21, EngineConfig(step_per_kv_token_ms=1e-4, num_gpu_blocks=500))
    assert (kept.step_per_kv_token_ms, kept.num_gpu_blocks) == (1e-4, 500)
    assert with_kv_read(None, EngineConfig()) == EngineConfig()


@needs_real
def test_what_the_files_leave_open_widens_the_interval():
    """v0.3.0 naive, fitted at 0.1 QPS: the fit names the GPU (A100 or H20) and the kube-proxy
    mode as unidentified, and the predicted interval of mean TPOT at 2.1 QPS covers this test's
    own replays under each: the iptables point (pooled seeds) and IPVS round-robin."""
    from explorer.core.replay.io import requests_from_store
    from explorer.core.replay.validate import fit, predict
    st, (src, tgt) = _store(V030, ["naive_output_0.1.csv", "naive_output_2.1.csv"])
    f = fit(st, src, EngineConfig())
    params = {u["param"] for u in f.unidentified}
    assert {"gpu", "kube_proxy_mode"} <= params and f.routing == "connection"
    names = [a[0] for a in f.alternatives]
    assert "GPU H20" in names and any(len(a) > 3 and a[3] == "connection-rr"
                                      for a in f.alternatives)
    # the fitted point reproduces the source's lone TPOT with the A100's KV read in it
    kv = 131072 / 2.039e12 * 1e3
    assert f.config.step_per_kv_token_ms == pytest.approx(kv, rel=1e-12)
    p = predict(f, st, tgt)
    trace = requests_from_store(st, tgt)
    point = pd.concat([simulate_replicas(trace, f.config, 8, routing="connection", seed=s).requests
                       for s in range(f.seeds)])["tpot_ms"].mean()
    ipvs = simulate_replicas(trace, f.config, 8, routing="connection-rr").requests["tpot_ms"].mean()
    h20 = next(a[1] for a in f.alternatives if a[0] == "GPU H20")
    # the H20 alternative keeps the source's lone decode step: base + kv x mean prompt
    ctx = float(pd.read_csv(V030 / "naive_output_0.1.csv")["prompt_tokens"].mean())
    assert h20.step_base_ms + h20.step_per_kv_token_ms * ctx == pytest.approx(
        f.config.step_base_ms + f.config.step_per_kv_token_ms * ctx, rel=1e-9)
    lo, hi = p["tpot_ms"]["interval"]
    assert p["tpot_ms"]["replayed"] == pytest.approx(point, rel=1e-9)
    assert lo <= min(point, ipvs) * (1 + 1e-9) and max(point, ipvs) * (1 - 1e-9) <= hi
    assert ipvs != pytest.approx(point, rel=0.02)   # the mode matters: the interval is wider
