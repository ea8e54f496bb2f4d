"""The TPOT x batch-entropy x delay heatmap restricted to SLA violation periods (heatmap param
`periods`), recomputed with pandas / numpy / scipy.stats.entropy from the generated frames."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer.core.analysis import Cohort
from explorer.core.analysis.heatmap import compute_heatmap, heatmap_cell_predicate
from explorer.core.analysis.sla_windows import sla_windows
from explorer.core.errors import NoData
from explorer.core.selection import select_requests
from explorer.core.store import Store
from explorer.demo import sla_collapse as sc


@pytest.fixture(scope="module")
def demo():
    s = Store()
    sc.load(s, 0, True)
    per = [p for p in sla_windows(s).periods if not p["isolated"]]
    yield s, per
    s.close()


def _by_hand(req, per, w=10.0, nb=8):
    a = req["arrival_s"]
    keep = np.zeros(len(req), bool)
    for p in per:
        keep |= (a >= p["start_s"]).to_numpy() & (a < p["end_s"]).to_numpy()
    r = req[keep].copy()
    r["w"] = np.floor(r["arrival_s"] / w).astype(int)
    g = r.groupby("w")
    win = pd.DataFrame({"tpot": g["tpot_ms"].mean(), "queue": g["queue_ms"].mean(),
                        "ent": g["batch_size"].apply(lambda b: stats.entropy(
                            b.dropna().round().value_counts().to_numpy(), base=2))})
    xe = np.linspace(win["tpot"].min(), win["tpot"].max(), nb + 1)
    ye = np.linspace(win["ent"].min(), win["ent"].max(), nb + 1)
    ix = np.clip(np.searchsorted(xe, win["tpot"], "right") - 1, 0, nb - 1)
    iy = np.clip(np.searchsorted(ye, win["ent"], "right") - 1, 0, nb - 1)
    counts = np.zeros((nb, nb), int)
    np.add.at(counts, (iy, ix), 1)
    return win, xe, ye, counts, ix, iy, int(keep.sum())


def test_restricted_to_the_period_matches_pandas(demo):
    s, per = demo
    req, _ = sc.synthesize(0, True)
    req["run_id"] = "sla-demo"
    hm = compute_heatmap(s, Cohort(), {"periods": per})
    win, xe, ye, counts, ix, iy, n_req = _by_hand(req, per)
    # the 8-minute period starts 0.26 s past a 10-s edge: 47 whole windows and 2 cut ones
    assert hm.n_items == len(win) == 49
    np.testing.assert_allclose(hm.x_edges, xe, rtol=1e-9)
    np.testing.assert_allclose(hm.y_edges, ye, rtol=1e-9)
    np.testing.assert_array_equal(np.array(hm.counts), counts)
    for j in range(8):
        for i in range(8):
            sel = (iy == j) & (ix == i)
            want = win["queue"][sel].mean() if sel.any() else None
            assert (hm.values[j][i] is None) == (want is None)
            if want is not None:
                assert hm.values[j][i] == pytest.approx(want, rel=1e-9)
    assert hm.to_dict()["periods"][0]["start_s"] == per[0]["start_s"]
    # every cell selects requests inside the period only, and the cells together all of them
    total = 0
    for (i, j) in {(int(a), int(b)) for a, b in zip(ix, iy)}:
        keys = select_requests(s, heatmap_cell_predicate(hm, i, j))
        got = req.set_index("request_id").loc[keys["request_id"].astype(str), "arrival_s"]
        assert ((got >= per[0]["start_s"]) & (got < per[0]["end_s"])).all()
        total += len(keys)
    assert total == n_req


def test_unrestricted_differs_and_bad_periods(demo):
    s, per = demo
    assert compute_heatmap(s, Cohort()).n_items == 240
    with pytest.raises(NoData):
        compute_heatmap(s, Cohort(), {"periods": [{"run_id": "sla-demo", "start_s": 0, "end_s": 1}]})
    with pytest.raises(ValueError, match="run_id, start_s and end_s"):
        compute_heatmap(s, Cohort(), {"periods": [{"run_id": "sla-demo"}]})
    req = compute_heatmap(s, Cohort(), {"periods": per, "level": "request", "x_metric": "tpot_ms",
                                        "y_metric": "batch_size", "value_metric": "queue_ms"})
    a = sc.synthesize(0, True)[0]
    inside = a[(a["arrival_s"] >= per[0]["start_s"]) & (a["arrival_s"] < per[0]["end_s"])]
    assert req.n_items == int((inside["tpot_ms"].notna() & inside["batch_size"].notna()).sum())


def test_period_filter_translates_for_the_warehouse():
    """The restricted window query goes to the warehouse as the unrestricted one does."""
    pytest.importorskip("sqlglot")
    from explorer.core.analysis.heatmap import _restricted
    from explorer.core.sqlutil import load_query
    from explorer.core.warehouse.portable import translate
    from explorer.core.warehouse.store import reads_remote
    sql, pp = _restricted(load_query("analysis_heatmap_windows"),
                          [{"run_id": "a", "start_s": 1.0, "end_s": 2.0}])
    assert reads_remote(sql)
    text, args = translate(sql, {"window_s": 10.0, "runs": None, **pp})
    assert args["p_run_0"] == "a" and args["p_hi_0"] == 2.0 and "te_requests" in text
