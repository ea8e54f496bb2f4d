"""SLA attainment over time (DESIGN "SLA diagnosis", report JSON `sla.windows`).

Per run, the requests are cut into windows of `window_s` seconds (default 60) on their arrival
clock, from the run's first arrival: window k holds the arrivals in [t0 + k w, t0 + (k + 1) w).
A window is judged the way the seed's checklist writes the SLA: it meets the SLA when the P95
(numpy's default linear interpolation, quantile_cont in DuckDB) of every thresholded metric over
its requests with a value is within the threshold, and its error rate (requests whose error is
not empty / all its requests) is within the error budget (default 0.5 %). A window with fewer
than `min_requests` requests is not judged (met = None). Beside it, the per-request attainment
of analysis.sla (met / judged). Violation periods: the runs of consecutive failing windows of
one run; a run shorter than `min_period_windows` (default 2) is an isolated failing window,
listed (isolated = True) but left out of the diagnosis, where one unlucky minute (two errors
among 200 requests break a 0.5 % budget) would dilute what the periods share. Change points: ruptures' PELT (Killick et al. 2012, l2 cost) on each run's
per-window per-request attainment, penalty 2 sigma^2 log n with sigma from the median absolute
difference of successive windows (a robust noise scale), for the runs where a level shift
describes the series better than isolated failing windows. PELT runs as ruptures' KernelCPD
with the linear kernel (its C implementation of PELT; the linear kernel's cost is the l2 cost,
so the breakpoints are Pelt(model="l2")'s): Pelt's Python cost calls took 160 s for the 3,334
windows of a 10M-request run, the C one 0.06 s. Aggregated in DuckDB.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import NoData
from ..schema import REQUEST_METRICS
from ..sqlutil import quote_ident
from .results import num
from .sla import DEFAULT_THRESHOLDS
from explorer.core.i18n import _

DEFAULTS = {"window_s": 60.0, "error_budget": 0.005, "percentile": 95.0, "min_requests": 5,
            "target": 0.82, "min_period_windows": 2}
MAX_WINDOW_S = 86400.0 * 7
ERRORED = "(error IS NOT NULL AND trim(error) <> '')"
# each run's first arrival (t0s: run_id, t0), joined to the requests: a window function
# (min(arrival_s) OVER (PARTITION BY run_id)) holds every row of its columns until it is done
# (+1.7 GB at 10M requests); the join's build side is one row per run
T0_CTE = ("t0s AS (SELECT run_id, min(arrival_s) AS t0 FROM requests "
          "WHERE arrival_s IS NOT NULL AND isfinite(arrival_s) GROUP BY run_id)")


def window_params(p: dict | None) -> dict:
    """The windows' params (DEFAULTS updated by `p`, the `sla` section's params), validated:
    window_s in (0, 7 days], error_budget and target in [0, 1], percentile in (0, 100],
    min_requests >= 1, thresholds {request metric: number}. Raises ValueError naming the bad one."""
    p = dict(p or {})
    out = {**DEFAULTS, **{k: p[k] for k in DEFAULTS if p.get(k) is not None}}
    try:
        w = float(out["window_s"])
    except (TypeError, ValueError):
        raise ValueError(f"SLA window must be a number of seconds, not {out['window_s']!r}") from None
    if not (0 < w <= MAX_WINDOW_S) or not math.isfinite(w):
        raise ValueError(f"SLA window must be more than 0 s and at most 7 days, not {w:g} s")
    out["window_s"] = w
    for k, lo, hi in (("error_budget", 0, 1), ("target", 0, 1), ("percentile", 1e-9, 100)):
        try:
            v = float(out[k])
        except (TypeError, ValueError):
            raise ValueError(f"SLA {k} must be a number, not {out[k]!r}") from None
        if not lo <= v <= hi:
            raise ValueError(f"SLA {k} must be within [{lo}, {hi}], not {v:g}")
        out[k] = v
    for k in ("min_requests", "min_period_windows"):
        try:
            out[k] = int(out[k])
        except (TypeError, ValueError):
            raise ValueError(f"SLA {k} must be a whole number, not {out[k]!r}") from None
        if out[k] < 1:
            raise ValueError(f"SLA {k} must be at least 1, not {out[k]}")
    thr = dict(p.get("thresholds") or DEFAULT_THRESHOLDS)
    for m, t in thr.items():
        if m not in REQUEST_METRICS:
            raise ValueError(f"unknown SLA metric {m!r}; choose from {', '.join(REQUEST_METRICS)}")
        try:
            thr[m] = float(t)
        except (TypeError, ValueError):
            raise ValueError(f"SLA threshold for {m} must be a number, not {t!r}") from None
    out["thresholds"] = dict(sorted(thr.items()))
    return out


def window_frame(store, p: dict) -> pd.DataFrame:
    """One row per (run, window): run_id, k, start_s, end_s, n, n_errors, n_judged, n_met and
    p95_<metric> per threshold (DuckDB). p: window_params(...)."""
    thr = p["thresholds"]
    q = p["percentile"] / 100.0
    met = " AND ".join(f"{quote_ident(m)} <= {float(t)!r}" for m, t in thr.items())
    present = " AND ".join(f"{quote_ident(m)} IS NOT NULL" for m in thr)
    p95 = ", ".join(f"quantile_cont({quote_ident(m)}, {q!r}) AS {quote_ident('p95_' + m)}"
                    for m in thr)
    sql = f"""
        WITH {T0_CTE}, r AS (
            SELECT run_id, arrival_s, {', '.join(quote_ident(m) for m in thr)}, {ERRORED} AS errored, t0
            FROM requests JOIN t0s USING (run_id) WHERE arrival_s IS NOT NULL AND isfinite(arrival_s)
        ), k AS (SELECT *, floor((arrival_s - t0) / $w)::BIGINT AS k FROM r)
        SELECT run_id, k, any_value(t0) + k * $w AS start_s, any_value(t0) + (k + 1) * $w AS end_s,
               count(*) AS n, count(*) FILTER (WHERE errored) AS n_errors,
               count(*) FILTER (WHERE errored OR ({present})) AS n_judged,
               count(*) FILTER (WHERE NOT errored AND {met}) AS n_met,
               {p95}
        FROM k GROUP BY run_id, k ORDER BY run_id, k"""
    return store.con.execute(sql, {"w": p["window_s"]}).df()


def judge(df: pd.DataFrame, p: dict) -> pd.DataFrame:
    """Adds error_rate, attainment (n_met / n_judged), met (True / False / None: too few
    requests or no value of a thresholded metric) and `failed` (which bounds broke)."""
    df = df.copy()
    df["error_rate"] = df["n_errors"] / df["n"]
    df["attainment"] = np.where(df["n_judged"] > 0, df["n_met"] / df["n_judged"].where(
        df["n_judged"] > 0, 1), np.nan)
    ok = df["error_rate"] <= p["error_budget"]
    fails = [np.where(~ok, "error_rate", "")]
    known = pd.Series(True, index=df.index)
    for m, t in p["thresholds"].items():
        col = df[f"p95_{m}"]
        known &= col.notna() | (df["n_errors"] == df["n"])
        fails.append(np.where(col > t, m, ""))
        ok &= ~(col > t)
    df["failed"] = [",".join(x for x in parts if x) for parts in zip(*fails)]
    judged = (df["n"] >= p["min_requests"]) & known
    df["met"] = pd.array([bool(o) if j else None for o, j in zip(ok, judged)], dtype="object")
    return df


def periods(df: pd.DataFrame, min_windows: int = 1) -> list[dict]:
    """The violation periods: runs of consecutive (k, k + 1, ...) failing windows of one run
    (an unjudged or met window, or a gap without arrivals, ends a run)."""
    out = []
    # one pass over the rows in run order (a stable sort: each run's windows keep theirs), not
    # a groupby: 5,000 one-window runs took 4 s through per-group itertuples
    cur, run_id = None, object()
    for row in df.sort_values("run_id", kind="stable").itertuples(index=False):
        if row.run_id != run_id:
            if cur is not None:
                out.append(cur)
            cur, run_id = None, row.run_id
        if row.met is False and cur is not None and row.k == cur["_k"] + 1:
            cur.update(end_s=float(row.end_s), _k=row.k, windows=cur["windows"] + 1,
                       n=cur["n"] + int(row.n), n_met=cur["n_met"] + int(row.n_met),
                       n_judged=cur["n_judged"] + int(row.n_judged))
            continue
        if cur is not None:
            out.append(cur)
            cur = None
        if row.met is False:
            cur = {"run_id": run_id, "start_s": float(row.start_s), "end_s": float(row.end_s),
                   "_k": row.k, "windows": 1, "n": int(row.n), "n_met": int(row.n_met),
                   "n_judged": int(row.n_judged)}
    if cur is not None:
        out.append(cur)
    for v in out:
        v.pop("_k")
        v["isolated"] = v["windows"] < min_windows
        v["attainment"] = v["n_met"] / v["n_judged"] if v["n_judged"] else None
    return out


def change_points(df: pd.DataFrame, min_windows: int = 6) -> list[dict]:
    """Level shifts of each run's per-window attainment (ruptures PELT, l2 cost, as KernelCPD's
    linear kernel; see the module doc): [{run_id, at_s, before, after}] (the mean attainment of the segments either side).
    Runs with fewer than `min_windows` judged windows or no variation get none."""
    import ruptures as rpt

    out = []
    for run_id, g in df[df["attainment"].notna()].groupby("run_id", sort=True):
        y = g["attainment"].to_numpy(dtype=float)
        if len(y) < min_windows or np.ptp(y) == 0:
            continue
        sigma = 1.4826 * np.median(np.abs(np.diff(y))) / math.sqrt(2)
        sigma = max(sigma, 0.02)  # attainment moves by 1 request in 50 at least
        bkps = rpt.KernelCPD(kernel="linear", min_size=2, jump=1).fit(y).predict(
            pen=2 * sigma ** 2 * math.log(len(y)))
        starts = g["start_s"].to_numpy(dtype=float)
        edges = [0] + list(bkps)
        for i, b in enumerate(bkps[:-1]):
            out.append({"run_id": run_id, "at_s": float(starts[b]),
                        "before": float(y[edges[i]:b].mean()), "after": float(y[b:edges[i + 2]].mean())})
    return out


@dataclass(frozen=True)
class SlaWindows:
    """windows: [{run_id, start_s, end_s, n, met, attainment, error_rate, p95_<metric>, failed}];
    periods: the violation periods; change_points; params: what it was judged with."""
    windows: tuple
    periods: tuple
    change_points: tuple
    params: dict

    def to_dict(self) -> dict:
        return {"windows": [dict(w) for w in self.windows], "periods": [dict(p) for p in self.periods],
                "change_points": [dict(c) for c in self.change_points], "params": dict(self.params)}

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.windows))


def sla_windows(store, params: dict | None = None) -> SlaWindows:
    """Attainment per window, the violation periods and the change points (module doc).
    params: the `sla` section's (thresholds, window_s, error_budget, percentile, min_requests,
    target, min_period_windows). Raises ValueError for a bad param, NoData when no request has an arrival time."""
    p = window_params(params)
    df = window_frame(store, p)
    if df.empty:
        raise NoData(_("no request has an arrival time, so there is no SLA over time"))
    df = judge(df, p)
    rows = []
    for r in df.to_dict("records"):
        row = {"run_id": r["run_id"], "k": int(r["k"]), "start_s": float(r["start_s"]), "end_s": float(r["end_s"]),
               "n": int(r["n"]), "met": r["met"], "attainment": num(r["attainment"]),
               "n_met": int(r["n_met"]), "n_judged": int(r["n_judged"]),
               "error_rate": num(r["error_rate"]), "failed": r["failed"] or None}
        for m in p["thresholds"]:
            row[f"p95_{m}"] = num(r[f"p95_{m}"])
        rows.append(row)
    return SlaWindows(windows=tuple(rows), periods=tuple(periods(df, p["min_period_windows"])),
                      change_points=tuple(change_points(df)), params=p)
