"""Conclusion: knowledge-base rules fire on the evidence and the narrative cites its numbers."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort, SectionError, load_knowledge_base, run_all
from explorer.core.analysis.conclusion import conclude
from explorer.core.analysis.fmt import fmt_num

RNG = np.random.default_rng(21)
NB, NC = 60, 240
N = NB + NC
BAD = np.r_[np.ones(NB, bool), np.zeros(NC, bool)]
HIT = np.where(BAD, RNG.beta(2, 6, N), RNG.beta(6, 2, N))
PRE = np.where(BAD, RNG.poisson(3, N), RNG.poisson(0.3, N))
TPOT = RNG.normal(30, 5, N)  # no effect


@pytest.fixture(scope="module")
def results():
    from explorer.core.store import Store
    s = Store()
    s.add_run("r", engine_version="1.0", benchmark="b")
    ids = [f"q{i}" for i in range(N)]
    s.append("requests", pd.DataFrame({"run_id": "r", "request_id": ids, "kv_cache_hit_rate": HIT,
                                       "num_preemptions": PRE, "tpot_ms": TPOT,
                                       "arrival_s": np.arange(N) * 0.5}))
    s.append("cases", pd.DataFrame({"case_id": ids, "category": "m", "correct": ~BAD,
                                    "cluster": np.where(BAD, "k", None)}))
    s.append("case_links", pd.DataFrame({"case_id": ids, "run_id": "r", "request_id": ids, "level": 1}))
    yield run_all(s, Cohort("k"))
    s.close()


def test_rules_fire_on_the_planted_effect(results):
    c = results["conclusion"].to_dict()
    assert {"prefix caching", "scheduler", "KV-cache policy"} <= set(c["modules"])
    assert "batching" not in c["modules"]  # TPOT does not differ
    rules = {e["rule"] for e in c["evidence"]}
    assert {"low_prefix_hits", "more_preemptions"} <= rules and "slow_decode" not in rules
    # the narrative cites the numbers it rests on
    hit = results["comparison"].row("kv_cache_hit_rate")
    assert fmt_num(hit.bad_mean) in c["narrative"] and fmt_num(hit.control_mean) in c["narrative"]
    assert "adjusted p < 0.001" in c["narrative"]
    flags = {f for s in c["suggestions"] for f in s["flags"]}
    assert {"--enable-prefix-caching", "--max-num-seqs"} <= flags
    assert [s["priority"] for s in c["suggestions"]] == sorted(s["priority"] for s in c["suggestions"])
    # the trace has no batch_size: the heatmap says why instead of failing
    assert isinstance(results["heatmap"], SectionError) and "batch_size" in results["heatmap"].reason


def test_no_evidence_says_what_is_missing():
    c = conclude({"comparison": SectionError("comparison", "the cohort has no badcase")}).to_dict()
    assert c["modules"] == [] and c["suggestions"] == []
    assert "no badcase" in c["narrative"]


def test_knowledge_base_is_well_formed_and_checked(tmp_path):
    kb = load_knowledge_base()
    assert len(kb["rules"]) >= 10
    for r in kb["rules"]:
        if r["evidence"] in ("comparison", "version_regression"):
            assert r["metric"] in kb["metrics"], r["id"]
    bad = tmp_path / "kb.toml"
    bad.write_text('[modules.a]\ndescription="x"\n[[rules]]\nid="r1"\nmodule="b"\n'
                   'evidence="comparison"\nmetric="m"\ndirection="higher"\nexplain="x"\n')
    with pytest.raises(ValueError, match="kb.toml: rule r1: unknown module"):
        load_knowledge_base(bad)


# ---- unbound badcases: no engine module is blamed -------------------------------------------
def _unbound_store(with_regression: bool):
    """Cases with no trace bound (badcases give much longer answers) and, optionally, two
    releases of an unrelated benchmark whose TTFT triples."""
    from explorer.core.store import Store
    rng = np.random.default_rng(4)
    n = 150
    wrong = rng.random(n) < 0.4
    lengths = np.where(wrong, rng.integers(800, 2000, n), rng.integers(100, 600, n))
    s = Store()
    s.append("cases", pd.DataFrame({
        "case_id": [f"e:{i}" for i in range(n)], "eval_id": "e", "category": "math",
        "correct": ~wrong, "cluster": np.where(wrong, "math", None),
        "prompt": ["q" * int(k) for k in rng.integers(50, 60, n)],
        "prediction": ["a" * int(k) for k in lengths]}))
    ttft = {}
    if with_regression:
        for ver, scale in (("1.0", 100), ("2.0", 300)):
            s.add_run(ver, engine_version=ver, benchmark="other")
            ttft[ver] = rng.exponential(scale, 200)
            s.append("requests", pd.DataFrame({"run_id": ver, "request_id": [str(i) for i in range(200)],
                                               "ttft_ms": ttft[ver]}))
    return s, wrong, lengths, ttft


def test_unbound_badcases_do_not_blame_engine_modules():
    s, wrong, lengths, ttft = _unbound_store(True)
    try:
        res = run_all(s, Cohort("math"))
    finally:
        s.close()
    c = res["conclusion"].to_dict()
    assert res["cohort"].bound == 0
    assert c["modules"] == [] and c["suggestions"] == []
    assert "The evidence points to" not in c["narrative"]
    # the TTFT regression is reported, as a finding independent of the badcases
    assert "Independently of these badcases" in c["narrative"]
    assert fmt_num(ttft["1.0"].mean()) in c["narrative"] and fmt_num(ttft["2.0"].mean()) in c["narrative"]
    ind = [e for e in c["evidence"] if e["independent"]]
    assert ind and all(e["kind"] == "version_regression" and e["module"] is None for e in ind)


def test_case_level_difference_is_read_as_such():
    from scipy import stats

    from explorer.core.analysis.fmt import fmt_pct
    s, wrong, lengths, _ = _unbound_store(False)
    try:
        res = run_all(s, Cohort("math"))
    finally:
        s.close()
    nar = res["conclusion"].to_dict()["narrative"]
    b, k = lengths[wrong].astype(float), lengths[~wrong].astype(float)
    assert stats.mannwhitneyu(b, k).pvalue < 1e-6
    assert "No metric separates" not in nar
    assert "differ in answer length, a case-level signal" in nar
    assert fmt_pct((b.mean() - k.mean()) / k.mean() * 100) in nar and "truncation" in nar
    assert "no engine evidence" in nar and "no trace" in nar
