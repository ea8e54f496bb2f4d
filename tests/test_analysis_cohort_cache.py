"""The cached cohort path (a filter over the per-store case view) returns exactly the frame of
the cohort SQL, and any change to the data the case view reads invalidates the cache."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort, cohort_frame
from explorer.core.analysis.cohort import case_view_frame, invalidate_case_view
from explorer.core.selection import And, InSet, Not, Or, Range, TreePath

RNG = np.random.default_rng(11)
N = 80
CASES = pd.DataFrame({
    "case_id": [f"e{i % 2}:{i}" for i in range(N)], "eval_id": [f"e{i % 2}" for i in range(N)],
    # NULL categories on both sides: a NULL-category badcase matches NULL-category controls
    "category": RNG.choice(np.array(["algebra", "geometry", "biology", None], dtype=object), N),
    "correct": RNG.random(N) < 0.6,
    "prompt_tokens": RNG.integers(20, 400, N), "completion_tokens": RNG.integers(5, 200, N)})
CASES["cluster"] = np.where(CASES["correct"], None,
                            np.where(CASES["category"] == "algebra", "sign errors", "other"))
BOUND = CASES.iloc[: N // 2]
REQS = pd.DataFrame({"run_id": "r1", "request_id": [f"q{i}" for i in range(len(BOUND))],
                     "kv_cache_hit_rate": RNG.random(len(BOUND)),
                     "num_preemptions": RNG.integers(0, 3, len(BOUND)),
                     # a string column that is NULL for some cohorts and not for others
                     "finish_reason": np.where(np.arange(len(BOUND)) < 5, "length", None),
                     "prompt_tokens": BOUND["prompt_tokens"].to_numpy() + 3})
LINKS = pd.DataFrame({"case_id": BOUND["case_id"], "run_id": "r1", "request_id": REQS["request_id"],
                      "level": RNG.integers(1, 4, len(BOUND)), "score": RNG.random(len(BOUND))})

COHORTS = [Cohort(cl, ctl, eval_id=ev) for cl in ("sign errors", "other", None, "no such cluster")
           for ctl in ("same-category", "all-correct") for ev in (None, "e0", "no such eval")]


@pytest.fixture
def loaded(store):
    store.add_run("r1", engine_version="1.0")
    store.append("requests", REQS)
    store.append("cases", CASES)
    store.append("case_links", LINKS)
    return store


@pytest.mark.parametrize("cohort", COHORTS, ids=repr)
def test_cached_frame_equals_sql_frame(loaded, cohort):
    want = cohort_frame(loaded, cohort, cached=False)
    got = cohort_frame(loaded, cohort)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # the cached frame is a copy: changing it does not change the next answer
    got["kv_cache_hit_rate"] = -1.0
    pd.testing.assert_frame_equal(cohort_frame(loaded, cohort), want, check_exact=True)


def test_empty_store(store):
    for c in COHORTS[:3]:
        pd.testing.assert_frame_equal(cohort_frame(store, c), cohort_frame(store, c, cached=False),
                                      check_exact=True)


def test_cache_reused_then_invalidated_by_loads_renames_and_links(loaded):
    c = Cohort("sign errors")
    view = case_view_frame(loaded)[0]
    assert case_view_frame(loaded)[0] is view  # unchanged store: no rebuild

    def check():
        pd.testing.assert_frame_equal(cohort_frame(loaded, c), cohort_frame(loaded, c, cached=False),
                                      check_exact=True)
        assert case_view_frame(loaded)[0] is not view
        return case_view_frame(loaded)[0]

    # more cases loaded
    extra = CASES.assign(case_id=CASES["case_id"] + "x", eval_id="e2")
    loaded.append("cases", extra)
    view = check()
    # more requests loaded (and bound): the count changes
    more = REQS.assign(request_id=REQS["request_id"] + "x", kv_cache_hit_rate=0.5)
    loaded.append("requests", more)
    view = check()
    loaded.execute("UPDATE case_links SET request_id = request_id || 'x'")  # re-bound in place
    view = check()
    loaded.execute("UPDATE cases SET cluster = 'renamed' WHERE cluster = 'sign errors'")
    view = check()
    assert len(cohort_frame(loaded, Cohort("renamed"))) > 0
    invalidate_case_view(loaded)
    assert case_view_frame(loaded)[0] is not view


SELECTIONS = [
    Range("kv_cache_hit_rate", 0.2, 0.7), Not(Range("kv_cache_hit_rate", None, 0.5)),
    Or(InSet("category", ("algebra",)), Range("prompt_tokens", 100, None)),
    And(InSet("finish_reason", ("length",)), Range("num_preemptions", 1, None)),
    TreePath((("kv_cache_hit_rate", "le", 0.6), ("num_preemptions", "gt", 0.5))),
    InSet("level", (1, 2)), InSet("case_id", ()), InSet("grp", ("bad",)),
    Range("score", 0.5, None),  # not a frame column: answered by the SQL path
]


@pytest.mark.parametrize("sel", SELECTIONS, ids=repr)
@pytest.mark.parametrize("cluster", ["sign errors", None])
def test_cached_selection_equals_sql(loaded, sel, cluster):
    c = Cohort(cluster, selection=sel)
    pd.testing.assert_frame_equal(cohort_frame(loaded, c), cohort_frame(loaded, c, cached=False),
                                  check_exact=True)
