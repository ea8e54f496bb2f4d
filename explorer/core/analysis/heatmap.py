"""Heatmap (DESIGN `heatmap`): TPOT x batch-size entropy, each cell the mean scheduling delay.

Level "window" (default): the requests of each run are grouped in windows of `window_s`
seconds (10) on arrival_s (queries/analysis_heatmap_windows.sql, aggregated in DuckDB). Per
window: the Shannon entropy H = -sum p_i log2 p_i (bits) of its batch_size distribution
(batch_size rounded to whole requests; p_i = share of the window's requests with batch size
i), and the mean of every engine metric. Windows are then binned on equal-width edges between
the smallest and largest window value of x_metric and y_metric (last bin closed), and each cell
shows the mean value_metric of its windows.
Level "request": any two request metrics against a third, each request a point (binned in
DuckDB, queries/analysis_heatmap_bins.sql).
Axes may name batch_size_entropy or n_requests (window level only) or any numeric request
metric. values[y][x] is None for an empty cell.
Runs: those holding the cohort's bound requests, else every run (param `runs` overrides);
with a cohort restricted to one eval (Cohort.eval_id), only its bound runs (NoData if none).
Param `periods` ([{run_id, start_s, end_s}], e.g. SLA violation periods of
analysis.sla_windows): only the requests of those runs arriving in [start_s, end_s); the
windows are then cut from those requests (a window the period's edge cuts holds only its part).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import NoData
from ..selection import And, InSet, Or, Predicate, Range
from ..sqlutil import load_query, quote_ident
from .cohort import Cohort
from .results import HeatmapResult
from explorer.core.i18n import _, join_list

WINDOW_METRICS = ("batch_size_entropy", "n_requests", "kv_cache_hit_rate", "num_preemptions",
                  "tpot_ms", "batch_size", "ttft_ms", "queue_ms", "e2e_ms", "prefill_ms",
                  "decode_ms", "prompt_tokens", "completion_tokens")
REQUEST_AXES = ("arrival_s", "kv_cache_hit_rate", "num_preemptions", "tpot_ms", "batch_size",
                "ttft_ms", "queue_ms", "e2e_ms", "prefill_ms", "decode_ms", "prompt_tokens",
                "completion_tokens", "cached_prompt_tokens")
DEFAULTS = {"x_metric": "tpot_ms", "y_metric": "batch_size_entropy", "value_metric": "queue_ms",
            "window_s": 10.0, "bins_x": 8, "bins_y": 8, "level": "window", "runs": None,
            "periods": None}


def period_filter(periods) -> tuple[str, dict]:
    """A WHERE condition on requests selecting the arrivals in `periods` ([{run_id, start_s,
    end_s}]: run_id = r and start_s <= arrival_s < end_s for one of them), written with plain
    comparisons and parameters ($p_run_i, $p_lo_i, $p_hi_i) so the warehouse's translation
    (warehouse/portable.py) carries it as it is; ("TRUE", {}) for none. Raises ValueError for a
    period without run_id, start_s and end_s numbers."""
    if not periods:
        return "TRUE", {}
    conds, params = [], {}
    for i, q in enumerate(periods):
        try:
            params.update({f"p_run_{i}": str(q["run_id"]), f"p_lo_{i}": float(q["start_s"]),
                           f"p_hi_{i}": float(q["end_s"])})
        except (KeyError, TypeError, ValueError):
            raise ValueError("each heatmap period needs run_id, start_s and end_s") from None
        conds.append(f"(run_id = $p_run_{i} AND arrival_s >= $p_lo_{i} AND arrival_s < $p_hi_{i})")
    return "(" + " OR ".join(conds) + ")", params


def _restricted(sql: str, periods) -> tuple[str, dict]:
    """The window query with its one `FROM requests` read through period_filter."""
    cond, params = period_filter(periods)
    if not params:
        return sql, {}
    assert sql.count("FROM requests\n") == 1, "the heatmap window query reads requests once"
    return sql.replace("FROM requests\n", f"FROM (SELECT * FROM requests WHERE {cond}) AS requests\n"), params


def _edges(lo: float, hi: float, nb: int) -> np.ndarray:
    if hi <= lo:  # a single value: one bin around it
        return np.array([lo - 0.5, lo + 0.5])
    return np.linspace(lo, hi, nb + 1)


def _index(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    nb = len(edges) - 1
    return np.clip(np.floor((x - edges[0]) / (edges[1] - edges[0])), 0, nb - 1).astype(int)


def _cohort_runs(store, cohort: Cohort, frame: pd.DataFrame | None) -> list[str] | None:
    if frame is not None:
        runs = sorted(frame["run_id"].dropna().unique().tolist())
    else:
        from .cohort import cohort_sql
        sql, params = cohort_sql(cohort)
        runs = [r[0] for r in store.con.execute(
            f"SELECT DISTINCT run_id FROM ({sql}) WHERE run_id IS NOT NULL ORDER BY 1",
            params).fetchall()]
    return runs or None


def compute_heatmap(store, cohort: Cohort, params: dict | None = None,
                    frame: pd.DataFrame | None = None) -> HeatmapResult:
    """Binned heatmap (see the module doc). params: x_metric ("tpot_ms"), y_metric
    ("batch_size_entropy"), value_metric ("queue_ms"), window_s (10), bins_x (8), bins_y (8),
    level ("window" | "request"), runs (list of run_id or None).
    Raises ValueError for an unknown metric or level, NoData when no window / request has both
    axes."""
    p = {**DEFAULTS, **(params or {})}
    period_filter(p["periods"])  # validated before any query
    # periods name their runs: they, not the cohort's runs, decide which requests are drawn
    runs = None if p["periods"] else p["runs"] if p["runs"] is not None else _cohort_runs(store, cohort, frame)
    if runs is None and not p["periods"] and getattr(cohort, "eval_id", None) is not None:
        raise NoData(_("no case of eval {eval_id!r} in this cohort is bound to a trace "
                     "request, so there is no run to draw").format(eval_id=cohort.eval_id))
    xm, ym, vm = p["x_metric"], p["y_metric"], p["value_metric"]
    if p["level"] == "window":
        for m in (xm, ym, vm):
            if m not in WINDOW_METRICS:
                raise ValueError(f"unknown window metric {m!r}; choose from {', '.join(WINDOW_METRICS)}")
        if not p["window_s"] or p["window_s"] <= 0:
            raise ValueError("window_s must be > 0 seconds")
        return _window_heatmap(store, p, runs)
    if p["level"] == "request":
        for m in (xm, ym, vm):
            if m not in REQUEST_AXES:
                raise ValueError(f"unknown request metric {m!r}; choose from {', '.join(REQUEST_AXES)}")
        return _request_heatmap(store, p, runs)
    raise ValueError(f"level must be 'window' or 'request', not {p['level']!r}")


def _window_heatmap(store, p: dict, runs) -> HeatmapResult:
    xm, ym, vm = p["x_metric"], p["y_metric"], p["value_metric"]
    # only the three metrics drawn: DuckDB then leaves the other window means (and, when no
    # axis is batch_size_entropy, the entropy) uncomputed
    cols = ", ".join(quote_ident(m) for m in dict.fromkeys((xm, ym, vm)))
    sql, pp = _restricted(load_query("analysis_heatmap_windows"), p["periods"])
    w = store.con.execute(f"SELECT run_id, w, {cols} FROM (\n{sql}\n) AS win ORDER BY run_id, w",
                          {"window_s": float(p["window_s"]), "runs": runs, **pp}).df()
    if w.empty and p["periods"]:
        raise NoData(_("no request arrives in the selected periods"))
    if w.empty:
        raise NoData(_("no request has an arrival time (arrival_s), so there are no time windows"))
    x = w[xm].to_numpy(dtype=float)
    y = w[ym].to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        missing = [m for m, a in ((xm, x), (ym, y)) if not np.isfinite(a).any()]
        cols = [("batch_size" if m == "batch_size_entropy" else m) for m in missing]
        if cols:
            raise NoData(_("the traces do not record {x}, so no "
                         "time window has {x2}").format(x=_(" or ").join(dict.fromkeys(cols)),
                                                        x2=join_list(missing)))
        raise NoData(_("no time window has both {xm} and {ym}").format(xm=xm, ym=ym))
    w, x, y = w[ok], x[ok], y[ok]
    v = w[vm].to_numpy(dtype=float)
    xe = _edges(x.min(), x.max(), int(p["bins_x"]))
    ye = _edges(y.min(), y.max(), int(p["bins_y"]))
    ix, iy = _index(x, xe), _index(y, ye)
    nx, ny = len(xe) - 1, len(ye) - 1
    sums = np.zeros((ny, nx))
    nv = np.zeros((ny, nx), dtype=int)
    counts = np.zeros((ny, nx), dtype=int)
    np.add.at(counts, (iy, ix), 1)
    fv = np.isfinite(v)
    np.add.at(sums, (iy[fv], ix[fv]), v[fv])
    np.add.at(nv, (iy[fv], ix[fv]), 1)
    values = tuple(tuple(float(sums[j, i] / nv[j, i]) if nv[j, i] else None for i in range(nx))
                   for j in range(ny))
    cells: dict = {}
    for run, win, a, b in zip(w["run_id"], w["w"], ix, iy):
        cells.setdefault((int(a), int(b)), []).append((run, int(win)))
    return HeatmapResult(x_metric=xm, y_metric=ym, value_metric=vm, x_edges=tuple(map(float, xe)),
                         y_edges=tuple(map(float, ye)), values=values,
                         counts=tuple(tuple(int(c) for c in row) for row in counts),
                         level="window", window_s=float(p["window_s"]), n_items=int(len(w)),
                         runs=tuple(sorted(set(w["run_id"]))),
                         cell_windows={k: tuple(v) for k, v in cells.items()},
                         periods=tuple(dict(x) for x in p["periods"] or ()))


def _request_heatmap(store, p: dict, runs) -> HeatmapResult:
    xm, ym, vm = p["x_metric"], p["y_metric"], p["value_metric"]
    qx, qy, qv = quote_ident(xm), quote_ident(ym), quote_ident(vm)
    cond, pp = period_filter(p["periods"])
    pts = (f"WITH pts AS (SELECT CAST({qx} AS DOUBLE) AS x, CAST({qy} AS DOUBLE) AS y, "
           f"CAST({qv} AS DOUBLE) AS v FROM requests "
           "WHERE ($runs IS NULL OR list_contains($runs, run_id)) AND " + cond + ")\n")
    lo = store.con.execute(pts + "SELECT min(x), max(x), min(y), max(y), count(*) FROM pts "
                           "WHERE x IS NOT NULL AND y IS NOT NULL AND isfinite(x) AND isfinite(y)",
                           {"runs": runs, **pp}).fetchall()[0]
    if not lo[4]:
        raise NoData(_("no request has both {xm} and {ym}").format(xm=xm, ym=ym))
    xe = _edges(lo[0], lo[1], int(p["bins_x"]))
    ye = _edges(lo[2], lo[3], int(p["bins_y"]))
    cells = store.con.execute(pts + load_query("analysis_heatmap_bins"), {
        "runs": runs, **pp, "x0": float(xe[0]), "dx": float(xe[1] - xe[0]), "nx": len(xe) - 1,
        "y0": float(ye[0]), "dy": float(ye[1] - ye[0]), "ny": len(ye) - 1}).fetchall()
    nx, ny = len(xe) - 1, len(ye) - 1
    values = [[None] * nx for _ in range(ny)]
    counts = [[0] * nx for _ in range(ny)]
    for ix, iy, n, val in cells:
        counts[iy][ix] = int(n)
        values[iy][ix] = None if val is None else float(val)
    return HeatmapResult(x_metric=xm, y_metric=ym, value_metric=vm, x_edges=tuple(map(float, xe)),
                         y_edges=tuple(map(float, ye)), values=tuple(map(tuple, values)),
                         counts=tuple(map(tuple, counts)), level="request", window_s=None,
                         n_items=int(lo[4]), runs=tuple(runs or ()),
                         periods=tuple(dict(x) for x in p["periods"] or ()))


def heatmap_cell_predicate(result: HeatmapResult, ix: int, iy: int) -> Predicate:
    """The requests of cell (ix, iy), for select_requests (or, through the bound requests,
    select_cases). Window level: the cell's windows as run_id + arrival_s ranges (adjacent
    windows merged); request level: the x / y ranges (last bin closed), within the runs.
    An empty cell selects nothing. Raises IndexError outside the grid."""
    nx, ny = len(result.x_edges) - 1, len(result.y_edges) - 1
    if not (0 <= ix < nx and 0 <= iy < ny):
        raise IndexError(f"cell ({ix}, {iy}) is outside the {nx} x {ny} grid")
    if result.level == "request":
        parts = [Range(result.x_metric, result.x_edges[ix], result.x_edges[ix + 1],
                       closed_hi=ix == nx - 1),
                 Range(result.y_metric, result.y_edges[iy], result.y_edges[iy + 1],
                       closed_hi=iy == ny - 1)]
        if result.runs:
            parts.insert(0, InSet("run_id", tuple(result.runs)))
        return And(*parts)
    ws = result.window_s
    by_run: dict[str, list[int]] = {}
    for run, win in result.cell_windows.get((ix, iy), ()):
        by_run.setdefault(run, []).append(win)
    parts = []
    for run in sorted(by_run):
        wins = sorted(by_run[run])
        start = prev = wins[0]
        for k in wins[1:] + [None]:
            if k is not None and k == prev + 1:
                prev = k
                continue
            parts.append(And(InSet("run_id", (run,)), Range("arrival_s", start * ws, (prev + 1) * ws)))
            if k is not None:
                start = prev = k
    if result.periods:  # within the periods the heatmap was restricted to
        return And(Or(*parts), Or(*(And(InSet("run_id", (str(q["run_id"]),)),
                                        Range("arrival_s", float(q["start_s"]), float(q["end_s"])))
                                    for q in result.periods)))
    return Or(*parts)


def cell_condition(result: HeatmapResult, ix: int, iy: int) -> str:
    """A cell named by its bins: "TPOT 12.1 to 18.3 ms and batch-size entropy 0.5 to 1 bits"
    (window level: "windows with ..."). Raises IndexError outside the grid."""
    from ..schema import REQUEST_METRICS
    from .tree import metric_name, plain_number
    nx, ny = len(result.x_edges) - 1, len(result.y_edges) - 1
    if not (0 <= ix < nx and 0 <= iy < ny):
        raise IndexError(f"cell ({ix}, {iy}) is outside the {nx} x {ny} grid")

    def bin_text(metric: str, edges, i: int) -> str:
        unit = REQUEST_METRICS.get(metric, "bits" if metric == "batch_size_entropy" else "")
        name = _("batch-size entropy") if metric == "batch_size_entropy" else metric_name(metric)
        return _("{name} {lo} to {hi}").format(name=name, lo=plain_number(float(edges[i])),
                                               hi=plain_number(float(edges[i + 1]), unit=unit))
    text = bin_text(result.x_metric, result.x_edges, ix) + _(" and ") + \
        bin_text(result.y_metric, result.y_edges, iy)
    return text if result.level == "request" else _("windows with {cond}").format(cond=text)
