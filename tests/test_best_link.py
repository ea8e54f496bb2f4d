"""One definition of a case's best link (queries/case_best_link.sql, the store's view
case_best_link): the case view, the case table (session.fetch_cases), the timeline's case
request and the view agree, and a tie never pairs one link's run_id with another's request_id."""
import pandas as pd

from explorer import session
from explorer.core import timeline as tl
from explorer.core.sqlutil import load_query

# case c1: two level-2 links whose scores tie exactly, listed so that the per-column minima
# (run r1 of one link, request q1 of the other) are no link at all;
# case c2: the lower score listed first, on the same level as the higher one;
# case c3: a level-1 link listed after a level-3 link with a higher score.
LINKS = pd.DataFrame({
    "case_id":    ["c1", "c1", "c2", "c2", "c3", "c3"],
    "run_id":     ["r2", "r1", "r1", "r2", "r1", "r2"],
    "request_id": ["q1", "q9", "q3", "q4", "q5", "q6"],
    "level":      [2, 2, 2, 2, 3, 1],
    "score":      [0.7, 0.7, 0.4, 0.9, 1.0, 0.2],
})


def _expected() -> dict[str, tuple[str, str, int]]:
    """By hand: lowest level, highest score, then the smallest (run_id, request_id)."""
    s = LINKS.assign(neg=-LINKS["score"]).sort_values(["case_id", "level", "neg", "run_id",
                                                       "request_id"])
    first = s.groupby("case_id").head(1)
    return {r.case_id: (r.run_id, r.request_id, r.level) for r in first.itertuples()}


def _store(store):
    for run in ("r1", "r2"):
        store.add_run(run, format="test")
    reqs = LINKS[["run_id", "request_id"]].assign(ttft_ms=range(len(LINKS)))
    store.append("requests", reqs)
    store.append("cases", pd.DataFrame({"case_id": ["c1", "c2", "c3"], "correct": [False] * 3,
                                        "category": ["a"] * 3, "cluster": ["k"] * 3}))
    store.append("case_links", LINKS)
    return store


def test_every_reader_takes_the_same_whole_link(store):
    _store(store)
    want = _expected()
    assert want == {"c1": ("r1", "q9", 2), "c2": ("r2", "q4", 2), "c3": ("r2", "q6", 1)}
    view = store.df("SELECT case_id, run_id, request_id, level FROM case_best_link")
    assert {r.case_id: (r.run_id, r.request_id, r.level) for r in view.itertuples()} == want
    cv = store.df(load_query("analysis_case_view"))
    assert {r.case_id: (r.run_id, r.request_id, r.level) for r in cv.itertuples()} == want
    table = session.fetch_cases(store, ["c1", "c2", "c3"])
    assert {r.case_id: (r.run_id, r.request_id, r.level) for r in table.itertuples()} == want
    # a few of the cases: only their rows, each with its own best link
    part = session.fetch_cases(store, ["c3", "c1"])
    assert {r.case_id: (r.run_id, r.request_id, r.level) for r in part.itertuples()} == {
        "c1": want["c1"], "c3": want["c3"]}
    for cid, (run, req, _) in want.items():
        assert tl.case_request(store, cid) == (run, req)
    # every pair read is a real link (no mix of two links' columns)
    pairs = set(zip(LINKS["run_id"], LINKS["request_id"]))
    assert {(r.run_id, r.request_id) for r in table.itertuples()} <= pairs
    # the case view's engine metric is the bound request's own
    ttft = dict(zip(zip(LINKS["run_id"], LINKS["request_id"]), range(len(LINKS))))
    for r in cv.itertuples():
        assert r.ttft_ms == ttft[(r.run_id, r.request_id)]


def test_view_survives_save_and_reopen(store, tmp_path):
    from explorer.core.store import Store
    _store(store)
    store.save_as(tmp_path / "s.duckdb")
    again = Store.open(tmp_path / "s.duckdb")
    try:
        got = again.df("SELECT case_id, run_id, request_id FROM case_best_link ORDER BY 1")
        assert [tuple(r) for r in got.itertuples(index=False)] == [
            (c, v[0], v[1]) for c, v in sorted(_expected().items())]
    finally:
        again.close()
