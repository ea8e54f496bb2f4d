"""The demo workload's preempted requests show their preemptions on the timeline, and the
compare / report picks work on a real cohort frame (engineer A's analysis.cohort_frame).

Expected preempted gaps are rebuilt here from the raw request_events rows with pandas (each
'preempted' paired with the next 'resumed' of the same request), not through the timeline
module. Needs engineer W's explorer.demo; skips with the reason while it is missing."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.core import timeline as tl
from explorer.core.store import Store


@pytest.fixture(scope="module")
def demo():
    from explorer.demo import load_demo
    s = Store()
    reps = load_demo(s)
    assert [r.error for r in reps if r.error] == []
    yield s
    s.close()


def test_demo_preempted_requests_show_their_preemptions(demo):
    ev = demo.df("SELECT e.run_id, e.request_id, e.ts_s, e.kind, r.arrival_s FROM request_events e"
                 " JOIN requests r USING (run_id, request_id)"
                 " WHERE e.kind IN ('preempted', 'resumed') ORDER BY e.run_id, e.request_id, e.ts_s")
    assert len(ev), "the demo emits no preemptions"
    groups = list(ev.groupby(["run_id", "request_id"], sort=True))
    rng = np.random.default_rng(0)
    for i in rng.choice(len(groups), size=min(25, len(groups)), replace=False):
        (run, rid), g = groups[i]
        pre = ((g.loc[g.kind == "preempted", "ts_s"] - g.arrival_s.iloc[0]) * 1000).to_numpy()
        res = ((g.loc[g.kind == "resumed", "ts_s"] - g.arrival_s.iloc[0]) * 1000).to_numpy()
        t = tl.request_timeline(demo, run, rid)
        assert t.source == "events"
        got = np.array([(p.start_ms, p.end_ms) for p in t.preemptions])
        assert got[:, 0] == pytest.approx(pre, abs=1e-6)
        assert got[:, 1] == pytest.approx(res[:len(pre)], abs=1e-6)
        assert [p.kind for p in t.phases].count("preempted") == len(pre)
        # the engine's own count agrees with the markers
        assert t.metrics["num_preemptions"] == len(pre)
        # no phase overlaps another, and they cover arrival .. finish without holes
        spans = sorted((p.start_ms, p.end_ms) for p in t.phases)
        assert all(a[1] == pytest.approx(b[0]) for a, b in zip(spans, spans[1:]))
        assert spans[-1][1] == pytest.approx(t.end_ms)


def test_demo_worst_badcase_and_typical_control(demo):
    from explorer.core import analysis
    cluster = analysis.default_cluster(demo)
    frame = analysis.cohort_frame(demo, analysis.Cohort(cluster=cluster, control="same-category",
                                                        selection=None))
    bad = frame[(frame.grp == "bad") & frame.request_id.notna()]
    ctl = frame[(frame.grp == "control") & frame.request_id.notna() & frame.tpot_ms.notna()]
    run, rid = tl.worst_badcase(frame)
    w = bad[(bad.run_id == run) & (bad.request_id == rid)].iloc[0]
    assert w.num_preemptions == bad.num_preemptions.max()  # the most preempted badcase
    peers = bad[(bad.num_preemptions == w.num_preemptions) & (bad.completion_tokens >= 8)]
    if len(peers):
        assert w.tpot_ms == pytest.approx(peers.tpot_ms.max())
    c_run, c_rid = tl.typical_control_request(demo, frame)
    med = np.median(ctl.drop_duplicates(["run_id", "request_id"]).tpot_ms)
    best = (ctl.tpot_ms - med).abs().min()
    assert abs(float(ctl.loc[ctl.request_id == c_rid, "tpot_ms"].iloc[0]) - med) == pytest.approx(best)
    for r, q in ((run, rid), (c_run, c_rid)):
        t = tl.request_timeline(demo, r, q)
        assert t.end_ms is not None and t.phases
    nb = tl.neighbours(demo, run, rid)
    assert len(nb) > 0 and nb["is_badcase"].notna().any()
