"""Replicas and routing of the replay (replicas.py) against expectations computed here by hand
or from queueing theory, and the deployment facts (deployments.py) used instead of a fit."""


import numpy as np
import pandas as pd
import pytest

from explorer.core.replay import EngineConfig, TraceRequest, simulate
from explorer.core.replay.replicas import KEEPALIVE_S, connection_routes, simulate_replicas
from tests.conftest import REAL

NAIVE = REAL / "aibrix" / "ps_experiment_v0.2.1_20250323"
needs_real = pytest.mark.skipif(not NAIVE.is_dir(), reason="real aibrix data absent")

# one request at a time per engine, one output token: an engine is a deterministic FCFS server
SERIAL = EngineConfig(max_num_seqs=1, step_base_ms=5.0, step_per_decode_seq_ms=0.0,
                      step_per_prefill_token_ms=0.1, step_prefill_base_ms=15.0)


def _service_s(cfg=SERIAL, prompt=800) -> float:
    """A lone request's time in the engine (s), from the step model by hand: one prefill step."""
    return (cfg.step_base_ms + cfg.step_prefill_base_ms + cfg.step_per_prefill_token_ms * prompt) / 1000


def test_lone_request_time_is_the_hand_computed_step():
    r = simulate([TraceRequest("a", 0.0, 800, 1)], SERIAL).requests
    assert r["ttft_ms"].iloc[0] == pytest.approx(1000 * _service_s(), rel=1e-9)


def test_round_robin_replicas_match_the_hand_computed_queue():
    """D/D/1 by hand: arrivals every 0.6 S on one engine queue up (request j waits 0.4 j S);
    two engines round-robin each see a gap of 1.2 S and never queue."""
    s = _service_s()
    trace = [TraceRequest(str(j), 0.6 * s * j, 800, 1) for j in range(10)]
    one = simulate_replicas(trace, SERIAL, 1).requests.set_index("request_id")
    two = simulate_replicas(trace, SERIAL, 2, routing="round-robin").requests.set_index("request_id")
    for j in range(10):
        assert one.loc[str(j), "ttft_ms"] == pytest.approx(1000 * (s + 0.4 * j * s), rel=1e-6)
        assert two.loc[str(j), "ttft_ms"] == pytest.approx(1000 * s, rel=1e-6)


def test_random_routing_is_c_independent_md1_queues():
    """Poisson arrivals split at random over c engines: each engine is an M/D/1 queue at rate
    lambda / c, whose mean wait is Pollaczek-Khinchine's rho S / (2 (1 - rho))."""
    s, c, rho = _service_s(), 3, 0.6
    lam = rho * c / s
    rng = np.random.default_rng(7)
    t = np.cumsum(rng.exponential(1 / lam, 6000))
    trace = [TraceRequest(str(j), float(x), 800, 1) for j, x in enumerate(t)]
    waits = []
    for seed in range(3):
        rq = simulate_replicas(trace, SERIAL, c, routing="random", seed=seed).requests
        waits.append(rq["ttft_ms"].mean() / 1000 - s)
    expected = rho * s / (2 * (1 - rho))
    assert np.mean(waits) == pytest.approx(expected, rel=0.08)
    # and round-robin (Erlang-c arrivals per engine) queues less than random's M/D/1
    rr = simulate_replicas(trace, SERIAL, c, routing="round-robin").requests
    assert rr["ttft_ms"].mean() / 1000 - s < 0.5 * expected


class _Draws:
    """An rng whose draws are given (the test knows which engine each new connection gets)."""
    def __init__(self, draws):
        self.draws = list(draws)

    def integers(self, n):
        return self.draws.pop(0)


def test_connection_routes_by_hand():
    # r0 opens A; r1 at 1 s finds A busy (until 3), opens B; r2 at 2 s reuses B (idle since
    # 1.5 s); r3 at 10 s finds A and B idle longer than the keep-alive (5 s): a new connection;
    # r4 at 10.5 s: r3's connection is busy, opens a fourth
    arrival = [0.0, 1.0, 2.0, 10.0, 10.5]
    finish = [3.0, 1.5, 4.0, 11.0, 12.0]
    assert KEEPALIVE_S == 5.0
    assert connection_routes(arrival, finish, 4, _Draws([2, 0, 3, 1])) == [2, 0, 0, 3, 1]
    # within the keep-alive the oldest idle connection is taken first
    assert connection_routes([0, 0.1, 2, 2.1], [1, 1, 3, 3], 4, _Draws([1, 2])) == [1, 2, 1, 2]


def test_connection_routing_keeps_each_connection_on_its_engine():
    """Pairs of simultaneous requests every 3 S (within the keep-alive): the first pair opens
    two connections, every later pair reuses them, so all pairs see the same engines (both on
    one engine: one waits S; on two: none waits), unlike routing each request at random."""
    s = _service_s()
    gap = 3 * s
    assert gap < KEEPALIVE_S
    trace = [TraceRequest(f"{k}{x}", k * gap, 800, 1) for k in range(12) for x in "ab"]

    def pair_waits(routing, seed):
        rq = simulate_replicas(trace, SERIAL, 3, routing=routing, seed=seed).requests
        w = (rq.set_index("request_id")["ttft_ms"] / 1000 - s).round(6)
        return {round(float(w[f"{k}a"] + w[f"{k}b"]), 6) for k in range(12)}

    for seed in range(6):
        assert len(pair_waits("connection", seed)) == 1
    assert any(len(pair_waits("random", seed)) > 1 for seed in range(6))


@needs_real
def test_published_replica_count_is_used_and_its_absence_widens_the_interval():
    """aibrix ps-experiment `naive` (8 pods behind a Kubernetes Service, its manifests): the fit
    takes the deployment's replicas and routing; the same files with the benchmark unknown
    cannot tell the replicas from the 0.1 QPS run and the interval widens over the choices."""
    from explorer.core.replay.validate import REPLICA_CHOICES, fit, predict
    from explorer.core.store import Store
    store = Store()
    src = store.load_file(NAIVE / "naive_output_0.1.csv").run_ids[0]
    tgt = store.load_file(NAIVE / "naive_output_1.3.csv").run_ids[0]
    known = fit(store, src, EngineConfig())
    assert (known.replicas, known.routing) == (8, "connection")
    assert known.extra["replicas_source"] == "deployment"
    assert "replicas" not in {u["param"] for u in known.unidentified}
    store.execute("UPDATE runs SET benchmark = NULL")
    unknown = fit(store, src, EngineConfig(), routing="connection")
    assert unknown.extra["replicas_source"] == "fitted"
    why = {u["param"]: u["reason"] for u in unknown.unidentified}
    raw = pd.read_csv(NAIVE / "naive_output_0.1.csv")   # most in flight at once, recomputed
    inflight = max(int(((raw["launch_time"] <= t) & (raw["finish_time"] > t)).sum())
                   for t in raw["launch_time"])
    assert inflight < max(REPLICA_CHOICES)
    assert "replicas" in why and f"at most {inflight} requests" in why["replicas"]
    assert {a[2] for a in unknown.alternatives} >= set(REPLICA_CHOICES) - {unknown.replicas}
    pk, pu = predict(known, store, tgt), predict(unknown, store, tgt)
    for m in ("ttft_ms", "tpot_ms"):
        wk = pk[m]["interval"][1] - pk[m]["interval"][0]
        wu = pu[m]["interval"][1] - pu[m]["interval"][0]
        assert wu > 2 * wk, m
        # the widened interval reaches the one-engine prediction (its high end), by hand here
        one = pd.concat([simulate_replicas(
            __import__("explorer.core.replay.io", fromlist=["x"]).requests_from_store(store, tgt),
            unknown.config, 1).requests])
        assert pu[m]["interval"][1] >= one[m].mean() * (1 - 1e-9)


def test_calibration_warning_is_translated():
    """The warning sentence goes through the translation layer (zh_CN), its figures kept."""
    from explorer.core import i18n
    from explorer.core.replay.calibrate import calibrate
    trace = [TraceRequest(str(i), i * 2.0, 300, 20) for i in range(30)]
    base = simulate(trace, EngineConfig(), record_events=False).requests
    obs = pd.DataFrame({"request_id": base["request_id"], "ttft_ms": base["ttft_ms"] * 1e6,
                        "tpot_ms": base["tpot_ms"]})
    i18n.set_language("zh_CN")
    try:
        cal = calibrate(trace, obs, EngineConfig(), max_evaluations=8)
    finally:
        i18n.set_language("en")
    assert cal.warning.startswith("校准误差超过 25%（TTFT -") and "反事实推演" in cal.warning
