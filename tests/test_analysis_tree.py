"""Decision tree: planted interaction found, node counts recomputed from the raw arrays,
node -> predicate selects exactly the node's cases."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort, cohort_frame
from explorer.core.analysis.tree import fit_tree, tree_node_predicate
from explorer.core.errors import NoData
from explorer.core.selection import select_cases

RNG = np.random.default_rng(5)
N = 400
HIT = RNG.random(N)
PRE = RNG.integers(0, 6, N).astype(float)
TPOT = RNG.normal(30, 4, N)
RISK = (HIT <= 0.35) & (PRE > 2)
BAD = np.where(RISK, RNG.random(N) < 0.9, RNG.random(N) < 0.08)
HIT_NA = HIT.copy()
HIT_NA[:7] = np.nan  # 7 cases miss the hit rate: dropped


@pytest.fixture(scope="module")
def loaded():
    from explorer.core.store import Store
    s = Store()
    s.add_run("r")
    ids = [f"q{i}" for i in range(N)]
    s.append("requests", pd.DataFrame({"run_id": "r", "request_id": ids, "kv_cache_hit_rate": HIT_NA,
                                       "num_preemptions": PRE, "tpot_ms": TPOT}))
    s.append("cases", pd.DataFrame({"case_id": [f"e:{i:03d}" for i in range(N)], "category": "m",
                                    "correct": ~BAD, "cluster": np.where(BAD, "c", None)}))
    # 10 cases stay unbound: not in the tree
    s.append("case_links", pd.DataFrame({"case_id": [f"e:{i:03d}" for i in range(N - 10)],
                                         "run_id": "r", "request_id": ids[: N - 10], "level": 1}))
    yield s
    s.close()


@pytest.fixture(scope="module")
def tree(loaded):
    return fit_tree(loaded, Cohort("c"), {"min_samples_leaf": 10})


def test_planted_interaction_is_the_riskiest_path(tree):
    d = tree.to_dict()
    used = np.isfinite(HIT_NA[: N - 10])
    assert d["n"] == used.sum() and d["dropped_rows"] == 7
    assert d["baseline_error_rate"] == pytest.approx(BAD[: N - 10][used].mean())
    assert d["nodes"][0]["feature"] in ("kv_cache_hit_rate", "num_preemptions")
    s = d["sentence"]
    assert "KV-cache hit rate ≤" in s and "preemptions > 2" in s and "baseline" in s
    leaf = d["nodes"][d["riskiest_path"][-1]]
    assert leaf["is_leaf"] and leaf["error_rate"] > 0.8
    assert f"(n={leaf['n']})" in s and f"{leaf['error_rate']:.0%}" in s


def test_every_node_count_recomputed_from_raw(tree, loaded):
    hit, pre, tpot = HIT_NA[: N - 10], PRE[: N - 10], TPOT[: N - 10]
    cols = {"kv_cache_hit_rate": hit, "num_preemptions": pre, "tpot_ms": tpot}
    bad = BAD[: N - 10]
    used = np.isfinite(hit)
    nodes = {n["id"]: n for n in tree.to_dict()["nodes"]}
    for nid, node in nodes.items():
        mask = used.copy()
        k = nid
        while nodes[k]["parent"] is not None:
            par = nodes[nodes[k]["parent"]]
            x = cols[par["feature"]]
            mask &= (x <= par["threshold"]) if nodes[k]["side"] == "le" else (x > par["threshold"])
            k = par["id"]
        assert node["n"] == mask.sum()
        assert node["error_rate"] == pytest.approx(bad[mask].mean())
        # node -> predicate -> the same cases, inside the cohort
        pred = tree_node_predicate(tree, nid)
        inside = set(cohort_frame(loaded, Cohort("c")).case_id)
        got = set(select_cases(loaded, pred)) & inside
        assert len(got) == node["n"]


def test_no_bound_case_is_no_data(store):
    store.append("cases", pd.DataFrame({"case_id": ["a", "b"], "correct": [False, True],
                                        "category": "x", "cluster": ["c", None]}))
    with pytest.raises(NoData, match="bound"):
        fit_tree(store, Cohort("c"))


def test_sentence_numbers_are_plain_with_units():
    from explorer.core.analysis.tree import plain_number
    assert plain_number(3070.4, False, "ms") == "3,070 ms"  # not "3.07e+03"
    assert plain_number(18.34, False, "ms/token") == "18.3 ms/token"
    assert plain_number(2.5, True) == "2"  # integer feature: x <= 2.5 is x <= 2
    assert plain_number(0.3521) == "0.352"


def test_node_conditions_and_the_risk_sentence_write_thresholds_alike():
    """QA saw "e2e_ms <= 6.4e+03" in a node and "6,399 ms" in the sentence."""
    from explorer.core.analysis.tree import _condition, plain_number
    assert _condition("e2e_ms", "le", 6399.4, False) == "e2e_ms <= 6,399"
    assert plain_number(6399.4, False, "ms") == "6,399 ms"
    assert _condition("kv_cache_hit_rate", "gt", 0.3521, False) == "kv_cache_hit_rate > 0.352"
    assert _condition("num_preemptions", "gt", 2.5, True) == "num_preemptions > 2"
