"""Request timeline core on small hand-built stores: events -> phases, preempted gaps, the
derived timeline from a requests row alone, ITL flags against the run's p99, neighbours, and the
compare / report picks. Expected values are computed here with numpy, independently of the
module's SQL."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from explorer.core import timeline as tl
from explorer.core.errors import NoData

RUN = "run-1"


def _req(**kw):
    base = {"run_id": RUN}
    base.update(kw)
    return base


@pytest.fixture
def preempted_store(store):
    """One request with two preemptions and per-token gaps; 30 other requests for the p99."""
    a = 100.0
    store.append("requests", pd.DataFrame([_req(request_id="r", arrival_s=a, queue_ms=50.0,
                                                ttft_ms=120.0, e2e_ms=1000.0, num_preemptions=2)]))
    ev = [("arrived", 0), ("queued", 0), ("scheduled", 50), ("first_token", 120),
          ("preempted", 300), ("resumed", 450), ("preempted", 700), ("resumed", 760),
          ("finished", 1000)]
    store.append("request_events", pd.DataFrame(
        {"run_id": RUN, "request_id": "r", "ts_s": [a + t / 1000 for _, t in ev],
         "kind": [k for k, _ in ev], "detail": None}))
    rng = np.random.default_rng(1)
    gaps = {"r": np.r_[np.full(10, 10.0), 160.0, np.full(5, 10.0)]}
    for i in range(30):
        gaps[f"o{i}"] = rng.gamma(4, 3, 20)
    store.append("token_latencies", pd.DataFrame(
        [{"run_id": RUN, "request_id": rid, "token_index": j + 1, "itl_ms": v}
         for rid, g in gaps.items() for j, v in enumerate(g)]))
    return store, gaps


def test_events_give_phases_cut_by_preemptions(preempted_store):
    store, _ = preempted_store
    t = tl.request_timeline(store, RUN, "r")
    assert t.source == "events" and t.arrival_s == pytest.approx(100.0)
    spans = [(p.kind, round(p.start_ms, 6), round(p.end_ms, 6)) for p in t.phases]
    assert spans == [("queued", 0, 50), ("prefill", 50, 120), ("decode", 120, 300),
                     ("preempted", 300, 450), ("decode", 450, 700), ("preempted", 700, 760),
                     ("decode", 760, 1000)]
    assert [(round(p.start_ms, 6), round(p.end_ms, 6)) for p in t.preemptions] == [(300, 450), (700, 760)]
    assert t.end_ms == pytest.approx(1000.0)
    assert [e.kind for e in t.events][:3] == ["arrived", "queued", "scheduled"]
    assert not any(e.derived for e in t.events)
    # decode time excludes the preempted 150 + 60 ms
    assert sum(p.duration_ms for p in t.phases if p.kind == "decode") == pytest.approx(880 - 210)


def test_itl_times_and_gaps_above_run_p99(preempted_store):
    store, gaps = preempted_store
    t = tl.request_timeline(store, RUN, "r")
    p99 = np.percentile(np.concatenate(list(gaps.values())), 99)
    assert t.run_p99_itl_ms == pytest.approx(p99)
    assert t.itl.itl_ms == pytest.approx(tuple(gaps["r"]))
    assert t.itl.t_ms == pytest.approx(tuple(120.0 + np.cumsum(gaps["r"])))
    assert t.itl.above_p99 == tuple(bool(x) for x in gaps["r"] > p99)
    assert t.gaps_above_p99 == 1 and t.itl.token_index[t.itl.above_p99.index(True)] == 11
    d = json.loads(json.dumps(t.to_dict()))
    assert d["source"] == "events" and len(d["itl"]["itl_ms"]) == 16
    assert d["preemptions"][0]["start_ms"] == pytest.approx(300)


def test_derived_from_requests_row_alone(store):
    store.append("requests", pd.DataFrame([
        _req(request_id="a", arrival_s=5.0, queue_ms=40.0, prefill_ms=60.0, decode_ms=900.0,
             num_preemptions=1),
        _req(request_id="b", arrival_s=6.0, ttft_ms=250.0, e2e_ms=2250.0),
        _req(request_id="c", ttft_ms=80.0, tpot_ms=20.0, completion_tokens=11)]))
    a = tl.request_timeline(store, RUN, "a")
    assert a.source == "derived" and any("derived from the requests row" in n for n in a.notes)
    assert [(p.kind, p.start_ms, p.end_ms) for p in a.phases] == [
        ("queued", 0, 40), ("prefill", 40, 100), ("decode", 100, 1000)]
    assert all(e.derived for e in a.events)
    assert "1 preemption recorded; its time is unknown (no request_events)" in a.notes and a.preemptions == ()
    b = tl.request_timeline(store, RUN, "b")
    assert [(p.kind, p.start_ms, p.end_ms) for p in b.phases] == [
        ("prefill", 0, 250), ("decode", 250, 2250)]
    assert "queueing not separable" in b.phases[0].note
    c = tl.request_timeline(store, RUN, "c")  # no e2e, no arrival: TPOT x (n - 1)
    assert c.end_ms == pytest.approx(80 + 20 * 10)
    assert any("no arrival_s" in n for n in c.notes)
    assert tl.neighbours(store, RUN, "c").empty


def test_events_missing_some_times_are_filled_from_the_row(store):
    store.append("requests", pd.DataFrame([_req(request_id="r", arrival_s=10.0, queue_ms=30.0,
                                                ttft_ms=90.0, e2e_ms=400.0)]))
    store.append("request_events", pd.DataFrame(
        {"run_id": RUN, "request_id": "r", "ts_s": [10.0, 10.4], "kind": ["arrived", "finished"],
         "detail": None}))
    t = tl.request_timeline(store, RUN, "r")
    assert t.source == "events"
    assert [(p.kind, round(p.start_ms, 6), round(p.end_ms, 6)) for p in t.phases] == [
        ("queued", 0, 30), ("prefill", 30, 90), ("decode", 90, 400)]
    assert {e.kind for e in t.events if e.derived} == {"scheduled", "first_token"}


def test_unknown_request_raises_nodata(store):
    with pytest.raises(NoData, match="not in run"):
        tl.request_timeline(store, RUN, "nope")
    with pytest.raises(NoData):
        tl.neighbours(store, RUN, "nope")


def test_neighbours_match_a_brute_force_overlap(store):
    rng = np.random.default_rng(7)
    n = 400
    arr = np.sort(rng.uniform(0, 300, n))
    e2e = rng.gamma(2, 4000, n)
    ids = [f"q{i:03d}" for i in range(n)]
    store.append("requests", pd.DataFrame({"run_id": RUN, "request_id": ids, "arrival_s": arr,
                                           "e2e_ms": e2e}))
    store.append("requests", pd.DataFrame([{"run_id": "other", "request_id": "x",
                                            "arrival_s": 150.0, "e2e_ms": 1000.0}]))
    # bind three neighbours to cases: one wrong, two correct (one request with both)
    store.append("cases", pd.DataFrame({"case_id": ["e:1", "e:2", "e:3"],
                                        "correct": [False, True, True]}))
    k = 200
    end_k = arr[k] + e2e[k] / 1000
    inside = [i for i in range(n) if i != k and arr[i] <= end_k + 30 and arr[i] + e2e[i] / 1000 >= arr[k] - 30]
    store.append("case_links", pd.DataFrame({"case_id": ["e:1", "e:2", "e:3"], "run_id": RUN,
                                             "request_id": [ids[inside[0]], ids[inside[1]], ids[inside[1]]],
                                             "level": 1, "score": 1.0}))
    nb = tl.neighbours(store, RUN, ids[k], window_s=30)
    assert list(nb.columns) == tl.NEIGHBOUR_COLUMNS
    assert list(nb["request_id"]) == [ids[i] for i in inside]
    assert nb["start_s"].to_numpy() == pytest.approx(arr[inside] - arr[k])
    assert nb["end_s"].to_numpy() == pytest.approx(arr[inside] + e2e[inside] / 1000 - arr[k])
    assert nb["is_badcase"].iloc[0] is True or nb["is_badcase"].iloc[0] == True  # noqa: E712
    assert nb["is_badcase"].iloc[1] == False  # noqa: E712
    assert nb["is_badcase"].iloc[2:].isna().all()
    win = inside + [k]
    s, e = arr[win], arr[win] + e2e[win] / 1000
    expect = [int(((s <= arr[i]) & (e >= arr[i])).sum()) for i in inside]
    assert list(nb["concurrency"]) == expect


def test_typical_control_and_worst_badcase(store):
    store.append("requests", pd.DataFrame({"run_id": RUN, "request_id": ["c1", "c2", "c3", "c4"],
                                           "tpot_ms": [10.0, 30.0, 20.0, 50.0]}))
    frame = pd.DataFrame({
        "case_id": ["b1", "b2", "b3", "b4", "k1", "k2", "k3", "k4", "k5"],
        "grp": ["bad"] * 4 + ["control"] * 5,
        "run_id": [RUN, RUN, None, RUN, RUN, RUN, RUN, RUN, None],
        "request_id": ["x1", "x2", None, "x4", "c1", "c2", "c3", "c4", None],
        "tpot_ms": [90.0, 40.0, None, 500.0, 10.0, None, 20.0, 50.0, None],  # c2's from the store
        "completion_tokens": [50, 20, None, 2, 9, 9, 9, 9, None],
        "num_preemptions": [0, 3, None, 3, 0, 0, 0, 0, None],
        "e2e_ms": [100.0, 90.0, None, 80.0, 1, 1, 1, 1, None]})
    med = np.median([10.0, 30.0, 20.0, 50.0])  # 25 -> c2 (30) and c3 (20) tie; c2 < c3
    assert med == 25.0
    assert tl.typical_control_request(store, frame) == (RUN, "c2")
    # most preemptions first (x2, x4); x4's TPOT over 2 tokens does not count -> x2
    assert tl.worst_badcase(frame) == (RUN, "x2")
    assert tl.worst_badcase(frame.assign(num_preemptions=0)) == (RUN, "x1")
    with pytest.raises(NoData):
        tl.worst_badcase(frame[frame["grp"] == "control"])
    with pytest.raises(NoData):
        tl.typical_control_request(store, frame[frame["grp"] == "bad"])


def test_indexes_only_on_big_tables_and_lookups_still_agree(preempted_store):
    store, _ = preempted_store
    before = tl.request_timeline(store, RUN, "r")
    assert tl.ensure_indexes(store) == []  # small tables stay unindexed
    assert sorted(tl.ensure_indexes(store, min_rows=1)) == ["request_events", "requests",
                                                            "token_latencies"]
    assert store.df("SELECT count(*) AS n FROM duckdb_indexes()")["n"][0] == 3
    assert tl.request_timeline(store, RUN, "r") == before
