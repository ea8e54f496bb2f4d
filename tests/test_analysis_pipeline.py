"""core.sections (the section registry and its runner): its cache reuses exactly the sections whose inputs did not change, two
threads give the results one thread gives, partial results arrive in order, a cancel stops it,
and a failing section becomes a SectionError without sinking the others."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.core import sections
from explorer.core.analysis import Cohort, SectionError
from explorer.core.errors import Cancelled, NoData


@pytest.fixture
def two_clusters(store):
    """400 requests of two engine versions, each bound to one case; badcases in two clusters,
    cluster "k" with fewer KV-cache hits."""
    rng = np.random.default_rng(3)
    n = 400
    ids = [f"q{i}" for i in range(n)]
    for v in ("1", "2"):
        store.add_run(f"r{v}", engine="vllm", engine_version=v, benchmark="b", format="test")
    run = np.where(np.arange(n) < n // 2, "r1", "r2")
    bad = rng.random(n) < 0.3
    k = bad & (rng.random(n) < 0.5)
    store.append("requests", pd.DataFrame({
        "run_id": run, "request_id": ids, "arrival_s": np.arange(n) * 0.5,
        "kv_cache_hit_rate": np.clip(np.where(k, 0.3, 0.7) + rng.normal(0, .1, n), 0, 1),
        "tpot_ms": rng.gamma(4, 4, n), "ttft_ms": rng.gamma(3, 60, n),
        "num_preemptions": rng.poisson(0.5, n), "batch_size": rng.integers(1, 64, n).astype(float)}))
    store.add_eval("e", benchmark="b")
    store.append("cases", pd.DataFrame({
        "case_id": ids, "eval_id": "e", "category": "math", "correct": ~bad,
        "cluster": np.where(k, "k", np.where(bad, "other", None))}))
    store.append("case_links", pd.DataFrame({"case_id": ids, "run_id": run, "request_id": ids,
                                             "level": 1, "score": 1.0}))
    return store


WINDOW = sections.keys("cohort", "store")


def test_the_cache_reuses_what_does_not_depend_on_the_cluster(two_clusters, monkeypatch):
    calls: list[str] = []
    for name in ("compare_versions", "sla_attainment", "compute_heatmap"):
        real = getattr(sections, name)
        monkeypatch.setattr(sections, name, lambda *a, _f=real, _n=name, **k: (
            calls.append(_n), _f(*a, **k))[1])
    cache: dict = {}
    first = sections.run(two_clusters, Cohort("k"), {}, keys=WINDOW, cache=cache)
    assert sorted(calls) == ["compare_versions", "compute_heatmap", "sla_attainment"]
    calls.clear()
    again = sections.run(two_clusters, Cohort("other"), {}, keys=WINDOW, cache=cache)
    # same eval, same runs: versions, SLA and heatmap come from the cache, the rest is new
    assert calls == []
    assert again["versions"] is first["versions"] and again["sla"] is first["sla"]
    assert again["cohort"].to_dict()["cluster"] == "other"
    # other SLA thresholds are another SLA result, the versions stay
    sections.run(two_clusters, Cohort("other"), {"sla": {"thresholds": {"ttft_ms": 100}}},
                 keys=WINDOW, cache=cache)
    assert calls == ["sla_attainment"]


def test_two_threads_give_what_one_gives_in_the_same_order(two_clusters):
    seen: list[str] = []
    one = sections.run(two_clusters, Cohort("k"), {}, keys=WINDOW)
    two = sections.run(two_clusters, Cohort("k"), {}, keys=WINDOW, threads=2,
                       on_result=lambda key, r: seen.append(key))
    assert seen == list(WINDOW) == list(two)
    for key in WINDOW:
        assert two[key].to_dict() == one[key].to_dict(), key
    assert isinstance(one["comparison"].to_dict(), list) and one["tree"].to_dict()["nodes"]


def test_cancel_stops_before_the_next_section(two_clusters):
    done: list[str] = []
    with pytest.raises(Cancelled):
        sections.run(two_clusters, Cohort("k"), {}, keys=WINDOW,
                     on_result=lambda key, r: done.append(key),
                     cancelled=lambda: len(done) >= 2)
    assert done == list(WINDOW[:2])


def test_a_failing_section_says_why_and_the_others_run(two_clusters, monkeypatch):
    def broken(*a, **k):
        raise ZeroDivisionError("boom")

    def empty(*a, **k):
        raise NoData("nothing to compare")

    def stop(*a, **k):
        raise Cancelled("stop")
    monkeypatch.setattr(sections, "compute_heatmap", broken)
    monkeypatch.setattr(sections, "sla_attainment", empty)
    out = sections.run(two_clusters, Cohort("k"), {}, keys=WINDOW)
    assert out["heatmap"] == SectionError("heatmap", "ZeroDivisionError: boom", "error")
    assert out["sla"] == SectionError("sla", "nothing to compare", "no_data")
    assert not isinstance(out["conclusion"], SectionError)
    monkeypatch.setattr(sections, "compare_versions", stop)
    with pytest.raises(Cancelled):
        sections.run(two_clusters, Cohort("k"), {}, keys=WINDOW)


def test_keys_may_be_a_one_shot_iterator(two_clusters):
    out = sections.run(two_clusters, Cohort("k"), {}, keys=iter(WINDOW))
    assert list(out) == list(WINDOW)


def test_a_report_drawing_nothing_fetches_only_the_columns_its_sections_read(two_clusters):
    """json / md reports (whole_frame=False) build the frame from the columns the sections
    declare they read (sections.frame_columns), and the document is the one the whole frame
    gives: a section reading an undeclared column would fail and differ."""
    from explorer.core.analysis.cohort import FRAME_COLUMNS
    from explorer.core.report import build_report
    from tests.report_timings import without_timings

    cohort = Cohort("k")
    whole = build_report(two_clusters, cohort, whatif=False, cached=False)
    narrow = build_report(two_clusters, cohort, whatif=False, cached=False, whole_frame=False)
    assert list(whole.frame.columns) == list(FRAME_COLUMNS)
    assert {"tenant", "arrival_s", "prefill_ms", "cluster"}.isdisjoint(narrow.frame.columns)
    pd.testing.assert_frame_equal(narrow.frame, whole.frame[list(narrow.frame.columns)])
    assert without_timings(narrow.doc) == without_timings(whole.doc)
    # the sections that read the frame have results (not errors that happen to agree)
    assert narrow.doc["comparison"] and narrow.doc["tree"]["nodes"]
    assert narrow.doc["strata"]["by"] == "engine_version"
    assert narrow.doc["cohort"]["badcases"] == int((whole.frame["cluster"] == "k").sum())
    assert "request_id" in narrow.doc["timeline"]


def test_a_whatif_or_an_unknown_metric_asks_for_the_whole_frame():
    keys = sections.keys()
    assert sections.frame_columns({"whatif": False}, keys) is not None
    assert sections.frame_columns({"whatif": None}, keys) is None        # computed: any column
    assert sections.frame_columns({"whatif": False,
                                   "comparison": {"metrics": ["nope"]}}, keys) is None
