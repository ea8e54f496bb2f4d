"""SLA attainment and goodput recomputed with numpy from the raw arrays."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis.sla import DEFAULT_THRESHOLDS, sla_attainment
from explorer.core.errors import NoData

RNG = np.random.default_rng(4)
N = 300
RUN = np.where(np.arange(N) < 200, "a", "b")
ARR = np.r_[np.sort(RNG.uniform(0, 60, 200)), np.sort(RNG.uniform(0, 30, 100))]
TTFT = RNG.exponential(400, N)
TPOT = RNG.normal(40, 10, N)
TPOT[::25] = np.nan                       # not judged unless errored
E2E = TTFT + 100 * TPOT
ERR = np.where(RNG.random(N) < 0.05, "HTTP 429", None)
TOK = RNG.integers(10, 300, N)
TENANT = RNG.choice(["t1", "t2", None], N)


def _two_runs(**extra):
    """A store with runs a (1.0) and b (2.0) and the module's N requests (extra columns too)."""
    from explorer.core.store import Store
    s = Store()
    s.add_run("a", engine_version="1.0")
    s.add_run("b", engine_version="2.0")
    s.append("requests", pd.DataFrame({
        "run_id": RUN, "request_id": [f"q{i}" for i in range(N)], "arrival_s": ARR,
        "ttft_ms": TTFT, "tpot_ms": TPOT, "e2e_ms": np.nan_to_num(E2E, nan=1000.0), "error": ERR,
        "completion_tokens": TOK, **extra}))
    return s


@pytest.fixture(scope="module")
def loaded():
    s = _two_runs(tenant=TENANT)
    s.append("cases", pd.DataFrame({"case_id": ["c1", "c2"], "category": ["alg", "geo"], "correct": True}))
    s.append("case_links", pd.DataFrame({"case_id": ["c1", "c2"], "run_id": "a",
                                         "request_id": ["q0", "q1"], "level": 1}))
    yield s
    s.close()


def _expect(mask, thr=DEFAULT_THRESHOLDS):
    err = pd.notna(ERR)
    have = np.isfinite(TTFT) & np.isfinite(TPOT)
    judged = mask & (err | have)
    with np.errstate(invalid="ignore"):
        met = judged & ~err & (TTFT <= thr["ttft_ms"]) & (TPOT <= thr["tpot_ms"])
    return judged.sum(), met.sum(), (mask & ~judged).sum(), TOK[met].sum()


def _span(run):
    m = RUN == run
    e2e = np.nan_to_num(E2E, nan=1000.0)
    return (ARR[m] + e2e[m] / 1000).max() - ARR[m].min()


def test_overall_and_by_run(loaded):
    d = sla_attainment(loaded).to_dict()
    assert d["thresholds"] == {"ttft_ms": 500.0, "tpot_ms": 50.0}
    n, k, unj, tok = _expect(np.ones(N, bool))
    a = d["attainment"]
    assert (a["n"], a["n_met"], a["n_unjudged"]) == (n, k, unj)
    span = _span("a") + _span("b")
    assert a["share"] == pytest.approx(k / n)
    assert a["goodput_rps"] == pytest.approx(k / span)
    assert a["goodput_tps"] == pytest.approx(tok / span)
    runs = {r["key"]: r for r in d["by"]["run"]}
    for run in ("a", "b"):
        n, k, _, _ = _expect(RUN == run)
        assert runs[run]["n_met"] == k and runs[run]["goodput_rps"] == pytest.approx(k / _span(run))
    assert [r["key"] for r in d["by"]["version"]] == ["1.0", "2.0"]


def test_tenant_and_category(loaded):
    d = sla_attainment(loaded).to_dict()
    ten = {r["key"]: r for r in d["by"]["tenant"]}
    assert set(ten) == {"t1", "t2"}
    n, k, _, _ = _expect(TENANT == "t1")
    assert (ten["t1"]["n"], ten["t1"]["n_met"]) == (n, k)
    cat = {r["key"]: r for r in d["by"]["category"]}
    assert set(cat) == {"alg", "geo"} and cat["alg"]["n"] + cat["alg"]["n_unjudged"] == 1


def test_edited_thresholds(loaded):
    thr = {"ttft_ms": 200.0, "tpot_ms": 45.0}
    d = sla_attainment(loaded, None, {"thresholds": thr}).to_dict()
    n, k, _, _ = _expect(np.ones(N, bool), thr)
    assert d["attainment"]["n_met"] == k
    with pytest.raises(ValueError, match="unknown SLA metric"):
        sla_attainment(loaded, None, {"thresholds": {"nope": 1}})


def test_no_requests_is_no_data(store):
    with pytest.raises(NoData, match="no trace"):
        sla_attainment(store)


def test_cases_without_a_category_give_no_category_rows():
    """A request bound only to uncategorised cases has no category row; one bound to a
    categorised case counts there; with an eval, the runs are still those of its links."""
    from explorer.core.analysis import Cohort
    s = _two_runs()
    s.append("cases", pd.DataFrame({"case_id": ["c1", "c2", "c3"], "eval_id": ["e", "e", "f"],
                                    "category": [None, None, "alg"], "correct": True}))
    s.append("case_links", pd.DataFrame({"case_id": ["c1", "c2", "c3"], "run_id": ["b", "b", "a"],
                                         "request_id": ["q250", "q251", "q3"], "level": 1}))
    d = sla_attainment(s).to_dict()
    n, k, unj, _ = _expect(np.arange(N) == 3)
    assert [(r["key"], r["n"], r["n_met"], r["n_unjudged"]) for r in d["by"]["category"]] == [
        ("alg", n, k, unj)]
    e = sla_attainment(s, Cohort(eval_id="e")).to_dict()
    assert e["by"]["category"] == []
    n, k, unj, _ = _expect(RUN == "b")
    assert (e["attainment"]["n"], e["attainment"]["n_met"], e["attainment"]["n_unjudged"]) == (n, k, unj)
    s.close()
