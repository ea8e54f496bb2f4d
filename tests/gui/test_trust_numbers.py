"""Issue 33, Deliver 1: every number a panel shows equals an independent computation. One
harness: a scenario (the cohort, a cluster change, a selection of each kind) is set up in the
window over the synthetic store; then each panel's reader (READERS) takes what the panel shows
(cells, labels, sentences with numbers) and compares it with pandas / scipy recomputed from the
store's raw requests and cases (`Truth`), never from the window's own results. The comparison
table is read again after a sort by each column (its cells must follow their rows)."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from scipy import stats

from tests.gui.conftest import on_screen, painted

METRICS = ("kv_cache_hit_rate", "num_preemptions", "tpot_ms", "ttft_ms", "queue_ms", "e2e_ms",
           "batch_size")
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


def shown(text: str) -> tuple[float, float]:
    """The first number of a cell and half a unit of its last digit (the rounding shown)."""
    m = NUMBER.search(text.replace("−", "-"))
    assert m, f"no number in {text!r}"
    s = m.group(0).replace(",", "")
    dec = len(s.split(".")[1]) if "." in s else 0
    return float(s), 0.5 * 10 ** -dec + 1e-12


def close(text: str, value: float, scale: float = 1.0, slack: float = 0.0) -> bool:
    """The cell reads `value` (times scale, e.g. 100 for a percentage) as rounded (plus
    `slack`, a Monte Carlo error)."""
    if text.strip().startswith("<"):
        return value * scale < shown(text)[0] + slack
    v, tol = shown(text)
    return abs(v - value * scale) <= tol * 1.0001 + slack


@dataclass
class Truth:
    """The cohort and selection recomputed from the raw requests and cases."""
    cases: pd.DataFrame        # every case joined to its request
    cluster: str
    picked: set | None         # selected case ids (None: no selection)

    @property
    def bad(self) -> pd.Series:
        return (self.cases["cluster"] == self.cluster) & ~self.cases["correct"]

    @property
    def cohort(self) -> pd.Series:
        cats = set(self.cases.loc[self.bad, "category"])
        return self.bad | (self.cases["correct"] & self.cases["category"].isin(cats))

    @property
    def sel(self) -> pd.Series:
        return self.cases["case_id"].isin(self.picked or ())


def _truth(req, cases, cluster, picked) -> Truth:
    return Truth(cases.merge(req, on="request_id", how="left"), cluster, picked)


# -- what each panel shows, read and checked ---------------------------------------------------
def read_header(window, t: Truth) -> list[str]:
    items = {k: v for k, v, _ in window.panels["header"].items}
    nb, allbad = int(t.bad.sum()), int((~t.cases["correct"]).sum())
    out = []
    if not items["Badcases"].startswith(f"{nb:,} ") or \
            not close(items["Badcases"].split("(")[1], nb / allbad, 100):
        out.append(f"header badcases {items['Badcases']!r}: {nb} of {allbad}")
    nctl = int((t.cohort & ~t.bad).sum())
    if not items["Control"].startswith(f"{nctl:,} "):
        out.append(f"header control {items['Control']!r}: {nctl}")
    if t.picked is not None:
        n = int((t.sel & t.cohort).sum())
        if f"{n:,} case" not in items.get("Selected", ""):
            out.append(f"header selected {items.get('Selected')!r}: {n}")
    return out


def read_clusters(window, t: Truth) -> list[str]:
    m = window.panels["clusters"].model
    bad = t.cases[~t.cases["correct"]]
    want = bad.groupby("cluster").size()
    out = []
    for row in m.rows[1:]:
        name, n, share = row[0].lstrip("…"), row[1], row[2]
        full = next(c for c in want.index if c.endswith(name))
        if int(n.replace(",", "")) != want[full] or not close(share, want[full] / len(bad), 100):
            out.append(f"cluster {name}: {n} {share} against {want[full]} of {len(bad)}")
    return out


def _group_figures(a: pd.Series, b: pd.Series) -> dict:
    """Means, diff % and the Mann-Whitney p (a group under 20 values: the permutation p of
    the rank sum, scipy.stats.permutation_test, as compare.py documents; its Monte Carlo
    error is the `p_tol`)."""
    a, b = a.dropna().to_numpy(float), b.dropna().to_numpy(float)
    p_tol = 0.0
    if min(len(a), len(b)) >= 20:
        p = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
    else:
        ranks = stats.rankdata(np.concatenate([a, b]))
        res = stats.permutation_test((ranks[:len(a)], ranks[len(a):]),
                                     lambda x, y, axis: x.sum(axis=axis), vectorized=True,
                                     permutation_type="independent", n_resamples=9999,
                                     alternative="two-sided", random_state=0)
        # two seeded Monte Carlo p's of 9,999 resamples each (twice the smaller one-sided p):
        # their difference within 3 standard errors
        q = min(res.pvalue / 2, 0.5)
        p, p_tol = res.pvalue, 3 * 2 * np.sqrt(2 * q * (1 - q) / 9999)
    return {"bad_mean": a.mean(), "control_mean": b.mean(),
            "diff_pct": 100 * (a.mean() - b.mean()) / abs(b.mean()), "p_value": p,
            "p_tol": p_tol, "n": (len(a), len(b))}


def read_comparison(window, t: Truth) -> list[str]:
    from explorer.core.names import label
    panel = window.panels["comparison"]
    inside = t.cases[t.cohort]
    if t.picked is None:
        g1, g2 = inside[t.bad[t.cohort]], inside[~t.bad[t.cohort]]
    else:
        s = t.sel[t.cohort]
        g1, g2 = inside[s], inside[~s]
    out = []
    model = panel.view.model()
    figures = {m: _group_figures(g1[m], g2[m]) for m in METRICS}
    seen = {model.index(r, 0).data(Qt.ItemDataRole.UserRole + 1) for r in range(model.rowCount())}
    if not set(METRICS) <= seen:   # every metric of the store is shown, and so read
        out.append(f"comparison lacks {sorted(set(METRICS) - seen)}")
    for col in range(model.columnCount()):   # the cells follow their rows in every sort
        panel.view.sortByColumn(col, Qt.SortOrder.AscendingOrder)
        for r in range(model.rowCount()):
            cells = [model.index(r, c).data() for c in range(model.columnCount())]
            metric = model.index(r, 0).data(Qt.ItemDataRole.UserRole + 1)
            if metric not in METRICS:
                continue
            if label(metric) not in cells[0]:
                out.append(f"sort {col} row {r}: {cells[0]!r} is not {metric}")
                continue
            f = figures[metric]
            for c, key in ((1, "bad_mean"), (2, "control_mean"), (3, "diff_pct"), (4, "p_value")):
                slack = f["p_tol"] if key == "p_value" else 0.0
                if not close(cells[c], f[key], slack=slack):
                    out.append(f"sort {col} {metric} {key}: {cells[c]!r} against {f[key]:.6g}")
            if cells[8].replace(",", "") != f"{f['n'][0]} / {f['n'][1]}":
                out.append(f"sort {col} {metric} n: {cells[8]!r} against {f['n']}")
    return out


def read_cases(window, t: Truth) -> list[str]:
    n = int((t.sel & t.cohort).sum()) if t.picked is not None else int(t.cohort.sum())
    got = window.panels["cases"].model.rowCount()
    return [] if got == n else [f"cases table {got} rows against {n}"]


def read_versions(window, t: Truth) -> list[str]:
    if t.picked is None:
        return []
    text = window.panels["versions"].selection_text()
    ver = {"run0": "0.5.2", "run1": "0.6.1"}
    by = t.cases[t.sel & t.cohort].groupby(t.cases["run_id"].map(ver)).size()
    return [f"versions {v}: {n} not in {text!r}" for v, n in by.items()
            if f"{v}: {n:,} case" not in text]


def read_sla(window, t: Truth) -> list[str]:
    if t.picked is None:
        return []
    text = window.panels["sla"].selection_text()
    sel = t.cases[t.sel & t.cohort]
    share = ((sel["ttft_ms"] <= 500) & (sel["tpot_ms"] <= 50)).mean()
    m = re.search(r"(\d+(?:\.\d+)?)%", text)
    return [] if m and close(m.group(0), share, 100) else [f"SLA {text!r} against {share:.3%}"]


def read_conclusion(window, t: Truth) -> list[str]:
    if t.picked is None:
        return []
    sel = window.session.data["selection"]
    if not sel or not sel.get("conclusion"):
        return []
    text = window.panels["conclusion"].text.toPlainText()
    n = int((t.sel & t.cohort).sum())
    nb = int((t.sel & t.bad).sum())
    want = (f"The selection holds {n:,} case{'s' if n != 1 else ''}, {nb:,} of the cohort's "
            f"{int(t.bad.sum()):,} badcases.")
    return [] if want in text else [f"conclusion lacks {want!r}: {text[:300]!r}"]


READERS = {"header": read_header, "clusters": read_clusters, "comparison": read_comparison,
           "cases": read_cases, "versions": read_versions, "sla": read_sla,
           "conclusion": read_conclusion}


# -- scenarios ---------------------------------------------------------------------------------
def _wait_selection(s, qtbot, act):
    with qtbot.waitSignal(s.resultsChanged, timeout=60000,
                          check_params_cb=lambda u: isinstance(u.names().get("selection"), dict)):
        act()
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)


def _tree_members(t: Truth, tree: dict, node_id: int) -> set:
    nodes = {n["id"]: n for n in tree["nodes"]}
    inside = t.cohort & t.cases[list(tree["features"])].notna().all(axis=1)
    k = node_id
    while nodes[k]["parent"] is not None:
        par = nodes[nodes[k]["parent"]]
        v = t.cases[par["feature"]]
        inside &= (v <= par["threshold"]) if nodes[k]["side"] == "le" else (v > par["threshold"])
        k = par["id"]
    return set(t.cases.loc[inside, "case_id"])


def scenario(name: str, window, qtbot, req, cases) -> Truth:
    s = window.session
    if name == "cluster":
        other = [c for c in cases["cluster"].dropna().unique() if c != s.cluster][0]
        with qtbot.waitSignal(s.runner.idle, timeout=60000):
            s.set_cluster(other)
        qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.data.get("comparison") is not None,
                        timeout=60000)
    t = _truth(req, cases, s.cluster, None)
    if name == "tree":
        tree = s.data["tree"]
        node = max((n for n in tree["nodes"] if n["parent"] is not None),
                   key=lambda n: n["error_rate"] or 0)
        _wait_selection(s, qtbot, lambda: s.select_tree_node(node["id"]))
        t.picked = _tree_members(t, tree, node["id"])
        assert t.picked == set(s.selected_cases)   # the membership, recomputed
    elif name == "heatmap":
        on_screen(window, qtbot, "heatmap")
        cc = {(c[0], c[1]): c[2] for c in s.data["heatmap"]["case_cells"]}
        _wait_selection(s, qtbot, lambda: s.select_heatmap_cell(*max(cc, key=cc.get)))
        t.picked = set(s.selected_cases)   # its membership: test_gui_selection_everywhere
    elif name == "cases":
        ids = list(t.cases.loc[t.cohort, "case_id"][::7])
        _wait_selection(s, qtbot, lambda: s.select_cases(ids))
        t.picked = set(ids)
    elif name == "range":
        v = t.cases.loc[t.cohort, "ttft_ms"]
        lo, hi = float(v.quantile(0.6)), float(v.quantile(0.9))
        _wait_selection(s, qtbot, lambda: s.select_range("ttft_ms", lo, hi))
        inside = t.cohort & (t.cases["ttft_ms"] >= lo) & (t.cases["ttft_ms"] < hi)
        t.picked = set(t.cases.loc[inside, "case_id"])
        assert t.picked == set(s.selected_cases)
    return t


@pytest.mark.parametrize("name", ["cohort", "cluster", "tree", "heatmap", "cases", "range"])
def test_every_number_shown_is_recomputed(loaded, qtbot, name):
    window, req, cases = loaded
    t = scenario(name, window, qtbot, req, cases)
    painted(window)
    wrong = [w for key, read in READERS.items() for w in read(window, t)]
    assert not wrong, "\n".join(wrong[:30])
