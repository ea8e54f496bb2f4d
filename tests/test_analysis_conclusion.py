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
