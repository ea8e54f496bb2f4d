"""What is different about a selection (a tree node, a heatmap cell, a set of cases): every
section recomputed or located for the selected cases of a cohort, from the cohort frame alone.

    analyse_selection(store, cohort, frame, ids, objects, params) -> dict

Keys of the result (plain JSON, the window's "selection" payload; a report can store it):
- n, n_bad, n_control: selected cases (badcases / control cases among them);
- vs_rest: comparison (compare.py rows) of the selected cases against the rest of the cohort
  ("bad" = selected; None with `vs_rest_reason` when one side is empty);
- vs_control: the selected badcases against the cohort's control group;
- heatmap: {"cells": [[ix, iy, n_selected, n_selected_bad], ...]}: the cells of the cohort's
  heatmap that the selected cases' requests fall in (by the heatmap's own binning);
- versions: [{engine_version, n, n_bad}] selected cases per release of their request;
- sla: {thresholds, judged, met, attainment, cohort_attainment}: the SLA of the selected cases'
  requests against the same of the whole cohort (errored requests fail, unmeasured are not judged);
- conclusion: the conclusion (conclude) with the selected badcases' comparison as evidence and
  the selection's own summary as its cohort (every count a sentence quotes is the selection's),
  opened by a sentence on what the selection holds beside the cohort's figures.
Qt-free; the Session runs it in a worker.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .. import fmt
from ..errors import NoData
from ..i18n import _, join_list, language
from ..names import plural
from .cohort import _bound_versions
from .compare import compare_metrics
from .conclusion import conclude
from .sla import DEFAULT_THRESHOLDS


def case_cells(heatmap, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(ix, iy) of each frame row's request in `heatmap` (a HeatmapResult), -1 where the row
    has no request, lies outside the grid or in a window the heatmap did not bin."""
    n = len(frame)
    ix, iy = np.full(n, -1), np.full(n, -1)
    if heatmap is None or n == 0:
        return ix, iy
    xe, ye = np.asarray(heatmap.x_edges, float), np.asarray(heatmap.y_edges, float)
    if heatmap.level == "window":  # a join of (run, window) keys, vectorised (100k cases)
        cw = heatmap.cell_windows or {}
        if not cw:
            return ix, iy
        cells = pd.DataFrame([(run, int(w), a, b) for (a, b), keys in cw.items() for run, w in keys],
                             columns=["run_id", "w", "cx", "cy"])
        arr = pd.to_numeric(frame["arrival_s"], errors="coerce").to_numpy(float)
        ok = np.isfinite(arr) & frame["run_id"].notna().to_numpy()
        keys = pd.DataFrame({"run_id": frame["run_id"].astype(object).to_numpy()[ok],
                             "w": np.floor(arr[ok] / heatmap.window_s).astype(np.int64),
                             "i": np.flatnonzero(ok)})
        hit = keys.merge(cells, on=["run_id", "w"], how="inner")
        ix[hit["i"].to_numpy()] = hit["cx"].to_numpy()
        iy[hit["i"].to_numpy()] = hit["cy"].to_numpy()
        return ix, iy
    if heatmap.x_metric not in frame or heatmap.y_metric not in frame:
        return ix, iy
    x = pd.to_numeric(frame[heatmap.x_metric], errors="coerce").to_numpy(float)
    y = pd.to_numeric(frame[heatmap.y_metric], errors="coerce").to_numpy(float)
    ok = np.isfinite(x) & np.isfinite(y) & (x >= xe[0]) & (x <= xe[-1]) & (y >= ye[0]) & (y <= ye[-1])
    if heatmap.runs:
        ok &= frame["run_id"].isin(heatmap.runs).to_numpy()
    bx = np.clip(np.searchsorted(xe, x, side="right") - 1, 0, len(xe) - 2)
    by = np.clip(np.searchsorted(ye, y, side="right") - 1, 0, len(ye) - 2)
    ix[ok], iy[ok] = bx[ok], by[ok]
    return ix, iy


def cell_counts(heatmap, frame: pd.DataFrame, mask: np.ndarray | None = None) -> list[list[int]]:
    """[[ix, iy, n, n_bad], ...] of the frame rows (those in `mask`) per heatmap cell."""
    ix, iy = case_cells(heatmap, frame)
    keep = (ix >= 0) if mask is None else (ix >= 0) & mask
    bad = (frame["badcase"].to_numpy() == 1).astype(int)
    if not keep.any():
        return []
    g = pd.DataFrame({"x": ix[keep], "y": iy[keep], "b": bad[keep]}).groupby(["x", "y"])["b"].agg(["size", "sum"])
    return [[int(a), int(b), int(n), int(nb)] for (a, b), n, nb in zip(g.index, g["size"], g["sum"])]


def _sla(frame: pd.DataFrame, thresholds: dict) -> tuple[int, int]:
    """(judged, met) of the frame's bound requests under `thresholds` (sla.py's rule)."""
    bound = frame["request_id"].notna().to_numpy()
    err = frame["error"].astype("string").str.strip().fillna("").ne("").to_numpy() & bound
    ok = np.ones(len(frame), bool)
    present = np.ones(len(frame), bool)
    for m, t in thresholds.items():
        v = pd.to_numeric(frame[m], errors="coerce").to_numpy(float) if m in frame else \
            np.full(len(frame), np.nan)
        present &= np.isfinite(v)
        ok &= np.isfinite(v) & (v <= float(t))
    judged = err | (bound & present)
    return int(judged.sum()), int((judged & ~err & ok).sum())


def _compare(store, cohort, frame: pd.DataFrame, params):
    """(Comparison, None) or (None, why not)."""
    try:
        return compare_metrics(store, cohort, params, frame=frame), None
    except NoData as e:
        return None, str(e)


def analyse_selection(store, cohort, frame: pd.DataFrame, ids, objects: dict | None = None,
                      params: dict | None = None) -> dict:
    """See the module doc. frame: the cohort's frame (cohort_frame); ids: the selected case ids;
    objects: the cohort's result objects (heatmap, cohort, versions, ... for the conclusion);
    params: the session's analysis params (comparison, sla, conclusion)."""
    objects, params = objects or {}, params or {}
    sel = frame["case_id"].isin(set(ids)).to_numpy()
    bad = frame["badcase"].to_numpy() == 1
    out: dict = {"n": int(sel.sum()), "n_bad": int((sel & bad).sum()),
                 "n_control": int((sel & ~bad).sum())}
    rest = frame.assign(badcase=sel.astype(int), grp=np.where(sel, "bad", "control"))
    vs_rest, out["vs_rest_reason"] = (None, "the selection holds every case of the cohort") \
        if sel.all() else _compare(store, cohort, rest, params.get("comparison"))
    ctl = frame[(sel & bad) | ~bad]
    comp, out["vs_control_reason"] = (None, "the selection holds no badcase") \
        if not (sel & bad).any() else _compare(store, cohort, ctl, params.get("comparison"))
    out["vs_rest"] = vs_rest.to_dict() if vs_rest is not None else None
    out["vs_control"] = comp.to_dict() if comp is not None else None
    out["heatmap"] = {"cells": cell_counts(objects.get("heatmap"), frame, sel)}
    ver = frame.loc[sel].assign(engine_version=lambda f: f["engine_version"].fillna("(not bound)"))
    out["versions"] = [{"engine_version": str(v), "n": int(len(g)), "n_bad": int(g["badcase"].sum())}
                       for v, g in ver.groupby("engine_version", sort=True)]
    thr = dict((params.get("sla") or {}).get("thresholds") or DEFAULT_THRESHOLDS)
    judged, met = _sla(frame.loc[sel], thr)
    cj, cm = _sla(frame, thr)
    out["sla"] = {"thresholds": thr, "judged": judged, "met": met,
                  "attainment": met / judged if judged else None,
                  "cohort_attainment": cm / cj if cj else None}
    if comp is not None:  # the cohort's other sections stay the context of the conclusion
        res = {k: v for k, v in objects.items() if k not in ("comparison", "tree", "conclusion")}
        res["comparison"] = comp
        whole = objects.get("cohort")
        mine = _summary(store, whole, frame, sel, bad)
        if mine is not None:
            res["cohort"] = mine
        c = conclude(res, params.get("conclusion")).to_dict()
        lead = _lead(out, mine, whole)
        c["narrative"] = lead + ("" if language() == "zh_CN" else " ") + c["narrative"]
        out["conclusion"] = c
    else:
        out["conclusion"] = None
    return out


def _summary(store, whole, frame: pd.DataFrame, sel: np.ndarray, bad: np.ndarray):
    """The cohort summary (CohortSummary) of the selected badcases: their number, how many are
    bound and the releases their requests ran on, the rest as the cohort's; None without one."""
    if whole is None or not hasattr(whole, "bound_versions"):
        return None
    bound = frame["request_id"].notna().to_numpy()
    nb, n_bad = int((sel & bad & bound).sum()), int((sel & bad).sum())
    return replace(whole, badcases=n_bad, bound=nb, binding_rate=nb / n_bad if n_bad else None,
                   bound_versions=_bound_versions(store.con, frame["run_id"][sel & bad & bound]))


def _lead(out: dict, mine, whole) -> str:
    """What the selection holds, with the cohort's figures beside: "The selection holds 5 cases,
    5 of the cohort's 383 badcases; its 5 bound badcases ran on 0.5.2 (5)."."""
    cohort_bad = getattr(whole, "badcases", None)
    versions = getattr(mine, "bound_versions", ()) or ()
    ran = join_list([_("{version} ({n})").format(
        version=v.get("engine_version") or _("no named release"), n=fmt.count(v["badcases"]))
        for v in versions[:3]])
    text = _("The selection holds {cases}, {bad} of the cohort's {cohort_bad} badcases.").format(
        cases=plural(out["n"], "case"), bad=fmt.count(out["n_bad"]),
        cohort_bad=fmt.count(cohort_bad) if cohort_bad is not None else "?")
    nb = getattr(mine, "bound", 0) or 0
    if mine is not None and nb == 0:
        return text + (" " if language() != "zh_CN" else "") + \
            _("None of its badcases is bound to a trace request.")
    if ran:
        text += (" " if language() != "zh_CN" else "") + _(
            "Its {n} bound badcases ran on {versions}.").format(n=fmt.count(nb), versions=ran)
    return text
