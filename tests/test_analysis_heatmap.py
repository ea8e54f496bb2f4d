"""Heatmap: window entropy / means and cell values recomputed with numpy; cells -> requests."""
import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort
from explorer.core.analysis.heatmap import compute_heatmap, heatmap_cell_predicate
from explorer.core.errors import NoData
from explorer.core.selection import select_requests

RNG = np.random.default_rng(2)
N = 600
RUN = np.where(np.arange(N) < 400, "a", "b")
ARR = np.r_[RNG.uniform(0, 200, 400), RNG.uniform(0, 100, 200)]
BS = RNG.integers(1, 9, N) + RNG.random(N) * 0.3
TPOT = 10 + BS * 3 + RNG.normal(0, 1, N)
QUEUE = RNG.exponential(50, N)
QUEUE[::17] = np.nan


@pytest.fixture(scope="module")
def loaded():
    from explorer.core.store import Store
    s = Store()
    for r in ("a", "b"):
        s.add_run(r)
    s.append("requests", pd.DataFrame({"run_id": RUN, "request_id": [f"q{i}" for i in range(N)],
                                       "arrival_s": ARR, "batch_size": BS, "tpot_ms": TPOT,
                                       "queue_ms": QUEUE}))
    yield s
    s.close()


def _windows(ws=10.0):
    df = pd.DataFrame({"run": RUN, "w": np.floor(ARR / ws).astype(int), "b": np.round(BS),
                       "tpot": TPOT, "queue": QUEUE})
    out = []
    for (run, w), g in df.groupby(["run", "w"]):
        p = g["b"].value_counts(normalize=True).to_numpy()
        out.append((run, w, -(p * np.log2(p)).sum(), g["tpot"].mean(), g["queue"].mean()))
    return pd.DataFrame(out, columns=["run", "w", "H", "tpot", "queue"])


def test_window_heatmap_matches_numpy(loaded):
    res = compute_heatmap(loaded, Cohort(), {"bins_x": 5, "bins_y": 4})
    d = res.to_dict()
    win = _windows()
    assert d["x_metric"] == "tpot_ms" and d["y_metric"] == "batch_size_entropy"
    assert d["n_items"] == len(win)
    xe = np.linspace(win.tpot.min(), win.tpot.max(), 6)
    ye = np.linspace(win.H.min(), win.H.max(), 5)
    assert d["x_edges"] == pytest.approx(list(xe)) and d["y_edges"] == pytest.approx(list(ye))
    ix = np.clip(np.floor((win.tpot - xe[0]) / (xe[1] - xe[0])), 0, 4).astype(int)
    iy = np.clip(np.floor((win.H - ye[0]) / (ye[1] - ye[0])), 0, 3).astype(int)
    for j in range(4):
        for i in range(5):
            sel = win[(ix == i) & (iy == j)]
            assert d["counts"][j][i] == len(sel)
            if sel.queue.notna().any():
                assert d["values"][j][i] == pytest.approx(sel.queue.mean())
            else:
                assert d["values"][j][i] is None


def test_cell_predicate_selects_its_windows_requests(loaded):
    res = compute_heatmap(loaded, Cohort(), {"bins_x": 5, "bins_y": 4})
    for (ix, iy), wins in list(res.cell_windows.items())[:6]:
        got = select_requests(loaded, heatmap_cell_predicate(res, ix, iy))
        w = set(wins)
        want = sum(1 for r, a in zip(RUN, ARR) if (r, int(np.floor(a / 10))) in w)
        assert len(got) == want
    empty = [(i, j) for j in range(4) for i in range(5) if res.counts[j][i] == 0]
    if empty:
        assert len(select_requests(loaded, heatmap_cell_predicate(res, *empty[0]))) == 0


def test_request_level_any_three_metrics(loaded):
    res = compute_heatmap(loaded, Cohort(), {"level": "request", "x_metric": "batch_size",
                                             "y_metric": "tpot_ms", "value_metric": "queue_ms",
                                             "bins_x": 3, "bins_y": 3})
    xe = np.linspace(BS.min(), BS.max(), 4)
    ye = np.linspace(TPOT.min(), TPOT.max(), 4)
    ix = np.clip(np.floor((BS - xe[0]) / (xe[1] - xe[0])), 0, 2).astype(int)
    iy = np.clip(np.floor((TPOT - ye[0]) / (ye[1] - ye[0])), 0, 2).astype(int)
    for j in range(3):
        for i in range(3):
            m = (ix == i) & (iy == j)
            assert res.counts[j][i] == m.sum()
            q = QUEUE[m]
            if np.isfinite(q).any():
                assert res.values[j][i] == pytest.approx(np.nanmean(q))
            got = select_requests(loaded, heatmap_cell_predicate(res, i, j))
            assert len(got) == m.sum()


def test_no_batch_size_is_no_data(store):
    store.append("requests", pd.DataFrame({"run_id": "r", "request_id": ["1", "2"],
                                           "arrival_s": [1.0, 2.0], "tpot_ms": [3.0, 4.0]}))
    with pytest.raises(NoData, match="batch_size_entropy"):
        compute_heatmap(store, Cohort())
    with pytest.raises(ValueError):
        compute_heatmap(store, Cohort(), {"x_metric": "nope"})
