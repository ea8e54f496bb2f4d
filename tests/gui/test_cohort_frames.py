"""The window keeps every visited cohort's results but only as many cohort frames as fit
session.FRAME_BUDGET (bytes, pandas memory_usage(deep=True)), the least recently shown dropped
first: a revisit of a cohort whose frame was dropped rebuilds the frame alone and shows the same
results, selections included, as its first visit."""
from __future__ import annotations

import numpy as np
import pandas as pd

import explorer.session as session_mod
from explorer.core.analysis import Cohort, cohort_frame

CLUSTERS = ["计算错误", "format error", "单位换算"]


def _visit(s, qtbot, name):
    s.set_cluster(name)
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.cluster == name
                    and isinstance(s.data.get("frame"), pd.DataFrame), timeout=60000)


def _kept_bytes(s) -> int:
    return sum(int(f.memory_usage(deep=True).sum()) for f, _n in s._frames.values())


def _expected_ids(cases: pd.DataFrame, name: str) -> tuple[set, set]:
    """(badcases, control) of cluster `name` with the same-category control, from the cases."""
    bad = cases[~cases["correct"] & (cases["cluster"] == name)]
    ctl = cases[cases["correct"] & cases["category"].isin(set(bad["category"]))]
    return set(bad["case_id"]), set(ctl["case_id"])


def _in_range(cases, req, ids, lo, hi) -> frozenset:
    """The cases of `ids` whose bound request's tpot_ms lies in [lo, hi) (every case is bound)."""
    m = cases[cases["case_id"].isin(ids)].merge(req, on="request_id")
    return frozenset(m.loc[(m["tpot_ms"] >= lo) & (m["tpot_ms"] < hi), "case_id"])


def _select_node(s, qtbot) -> frozenset:
    """Click the tree's first child node: the cases it selects (a non-empty subset of the
    cohort's, those of its leaf's rows in the frame)."""
    node = next(nd for nd in s.data["tree"]["nodes"] if nd["parent"] is not None)
    with qtbot.waitSignal(s.selectedCasesChanged, timeout=60000):
        s.select_tree_node(node["id"])
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    assert len(s.selected_cases) == node["n"]
    assert s.selected_cases <= set(s.data["frame"]["case_id"])
    return s.selected_cases


def test_a_revisit_after_its_frame_was_dropped_shows_the_same_results(loaded, qtbot, monkeypatch):
    window, req, cases = loaded
    s = window.session
    sizes = {n: int(cohort_frame(s.store, Cohort(n)).memory_usage(deep=True).sum())
             for n in CLUSTERS}
    small = sorted(sizes.values())
    assert max(small) < small[0] + small[1]
    budget = max(small)  # each frame fits, no two do
    monkeypatch.setattr(session_mod, "FRAME_BUDGET", budget)
    s._forget()  # the frame cache, as a load makes it, under this budget
    calls = []
    real_analyse = session_mod.analyse
    monkeypatch.setattr(session_mod, "analyse", lambda *a, **k: calls.append(1) or real_analyse(*a, **k))

    first = {}
    order = [n for n in CLUSTERS if n != s.cluster] + [s.cluster]  # the loaded one again last
    assert sorted(order) == sorted(CLUSTERS)
    for n in order:
        _visit(s, qtbot, n)
        assert len(s._frames) == 1 and _kept_bytes(s) <= budget
        bad, ctl = _expected_ids(cases, n)
        f = s.data["frame"]
        assert set(f.loc[f["grp"] == "bad", "case_id"]) == bad
        assert set(f.loc[f["grp"] == "control", "case_id"]) == ctl
        lo, hi = np.quantile(f["tpot_ms"], [0.25, 0.75])
        with qtbot.waitSignal(s.selectedCasesChanged, timeout=60000):
            s.select_range("tpot_ms", float(lo), float(hi))
        qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
        assert s.selected_cases == _in_range(cases, req, bad | ctl, lo, hi)
        first[n] = {"frame": f.copy(), "comparison": s.data["comparison"], "tree": s.data["tree"],
                    "cohort": s.data["cohort"], "selected": s.selected_cases,
                    "selection": s.data["selection"]}
        first[n]["node"] = _select_node(s, qtbot)
        first[n]["cases"] = s.data["cases"].copy()
    assert len(calls) == len(CLUSTERS)  # every cohort analysed once (the loaded one forgotten)

    for n in order[:-1]:  # frames dropped: each revisit rebuilds its frame, not its analyses
        calls.clear()
        assert (n,) not in [k[1:2] for k in s._frames.keys()]
        _visit(s, qtbot, n)
        assert calls == []
        assert len(s._frames) == 1 and _kept_bytes(s) <= budget
        pd.testing.assert_frame_equal(s.data["frame"], first[n]["frame"])
        for k in ("comparison", "tree", "cohort"):
            assert s.data[k] == first[n][k], k
        # linked views: the same brushed range selects the same cases, analysed the same way
        lo, hi = np.quantile(s.data["frame"]["tpot_ms"], [0.25, 0.75])
        with qtbot.waitSignal(s.selectedCasesChanged, timeout=60000):
            s.select_range("tpot_ms", float(lo), float(hi))
        qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
        assert s.selected_cases == first[n]["selected"]
        assert s.data["selection"] == first[n]["selection"]
        # a tree node selects the cases it selected in the first visit; the case table lists them
        assert _select_node(s, qtbot) == first[n]["node"]
        pd.testing.assert_frame_equal(s.data["cases"], first[n]["cases"])


def test_frames_within_the_budget_are_kept_and_shown_at_once(loaded, qtbot):
    window, req, cases = loaded
    s = window.session
    for n in CLUSTERS:
        if n != s.cluster:
            _visit(s, qtbot, n)
    assert {k[1] for k in s._frames.keys()} == set(CLUSTERS)
    assert _kept_bytes(s) == sum(nb for _f, nb in s._frames.values()) <= session_mod.FRAME_BUDGET
    kept = {k[1]: f for k, (f, _n) in s._frames.items()}
    other = next(n for n in CLUSTERS if n != s.cluster)
    s.set_cluster(other)  # a kept frame: published at once, no job
    assert s.data["frame"] is kept[other]
