"""SLA diagnosis (DESIGN "SLA diagnosis"; report JSON `sla.windows` and `sla.diagnosis`).

What differed in the violation periods: each window feature of analysis.sla_features compared
between the windows of the violation periods (runs of failing windows, not the isolated ones:
analysis.sla_windows) and the met windows (one value per window: the window is the unit
the SLA is judged on, and requests of one window are not independent of each other) with the
cohort comparison's statistics (compare._numeric_row: Mann-Whitney U, a permutation p below 20
windows a group, Hedges' g, rank-biserial with DeLong's interval, Welch's interval), p-values
Benjamini-Hochberg adjusted over every feature tested (compare._adjust). A feature survives
(`survives`) with q < ALPHA, |Hedges' g| >= MIN_EFFECT["hedges_g"] in the direction that is bad
for the SLA and at least MIN_WINDOWS windows in each group. The prompt-length mix and the request
rate are the workload: when they survive the report says the workload changed, and no engine
module is named for them (the engine's differences may then follow from the load). A feature
that is itself a bound of the SLA (TPOT when TPOT is thresholded) never survives: the failing
windows have it higher by definition; its spread still may.

The six-step checklist of the seed: KV-cache hit -> TPOT fluctuation -> batching and scheduling
delay -> queueing -> tenants -> conclusion. A step points here when one of its features (a
tenant rule for the tenants step: analysis.sla_tenants) survives, rules out when its features
were tested and none survives, has no data otherwise; its module and the flags to try are the
knowledge base's (resources/knowledge_base.toml `sla_checklist`). The conclusion names the
modules of the steps that point here, and nothing when none does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import NoData
from .compare import _adjust, _numeric_row
from .evidence import ALPHA, MIN_EFFECT
from .sla_features import FEATURES, window_features
from .sla_windows import SlaWindows, sla_windows
from explorer.core.i18n import N_, _, pick

MIN_WINDOWS = 3
STEPS = ("kv_cache", "tpot", "batching", "queueing", "tenants", "conclusion")
STEP_TITLES = {"kv_cache": N_("KV-cache hit rate"), "tpot": N_("TPOT fluctuation"),
               "batching": N_("Batching and scheduling delay"), "queueing": N_("Queueing"),
               "tenants": N_("Tenants competing for the engine"), "conclusion": N_("Conclusion")}
VERDICTS = {"points_here": N_("points here"), "rules_out": N_("rules out"), "no_data": N_("no data")}


def causes(frame, bounds=()) -> list[dict]:
    """The failing windows against the met ones, per feature with data (module doc). A feature
    that is one of the SLA's bounds (`bounds`, e.g. tpot_ms) is shown but never survives: the
    failing windows have it higher by definition."""
    judged = frame[frame["met"].isin([True, False])]
    bad = (judged["met"] == False).to_numpy()  # noqa: E712 - object column
    rows, kept = [], []
    for f, (step, worse, kind) in FEATURES.items():
        col = judged[f].to_numpy(dtype=float)
        b, c = col[bad], col[~bad]
        b, c = b[np.isfinite(b)], c[np.isfinite(c)]
        if len(b) == 0 or len(c) == 0:
            continue
        rows.append(_numeric_row(f, b, c, {"ci_level": 0.95}))
        kept.append((f, step, worse, kind))
    out = []
    for r, (f, step, worse, kind) in zip(_adjust(rows), kept):
        g = r.hedges_g
        bad_dir = g is not None and (g > 0 if worse == "higher" else g < 0)
        survives = bool(r.p_adjusted is not None and r.p_adjusted < ALPHA and g is not None
                        and abs(g) >= MIN_EFFECT["hedges_g"] and bad_dir
                        and min(r.n_bad, r.n_control) >= MIN_WINDOWS and f not in bounds)
        out.append({"metric": f, "step": step, "kind": kind, "worse": worse,
                    "violated": r.bad_mean, "met": r.control_mean, "diff_pct": r.diff_pct,
                    "p_value": r.p_value, "p_adjusted": r.p_adjusted, "test": r.test,
                    "effect": g, "effect_name": "hedges_g", "rank_biserial": r.rank_biserial,
                    "n_violated": r.n_bad, "n_met": r.n_control, "survives": survives,
                    "reason": r.reason, "is_bound": f in bounds})
    return out


def checklist(cause_rows: list[dict], tenants: dict | None, kb: dict) -> tuple[list[dict], list[str]]:
    """The six steps (module doc) and the modules the conclusion names."""
    steps, modules = [], []
    cfg = kb.get("sla_checklist", {})
    for step in STEPS[:-1]:
        if step == "tenants":
            rules = (tenants or {}).get("rules") or []
            hit = [r for r in rules if r.get("survives")]
            ev = [{"rule": r["antecedent"], "lift": r["lift"], "confidence": r["confidence"],
                   "support": r["support"], "p_adjusted": r.get("p_adjusted")} for r in hit[:3]]
            verdict = "points_here" if hit else "rules_out" if rules else "no_data"
        else:
            mine = [r for r in cause_rows if r["step"] == step and r["p_value"] is not None]
            hit = [r for r in mine if r["survives"]]
            ev = [{"metric": r["metric"], "violated": r["violated"], "met": r["met"],
                   "p_adjusted": r["p_adjusted"], "effect": r["effect"]} for r in (hit or mine)]
            verdict = "points_here" if hit else "rules_out" if mine else "no_data"
        c = cfg.get(step, {})
        entry = {"step": step, "title": pick(c, "title", _(STEP_TITLES[step])), "verdict": verdict,
                 "evidence": ev, "module": c.get("module") if verdict == "points_here" else None,
                 "flags": list(c.get("flags", [])) if verdict == "points_here" else [],
                 "suggestion": pick(c, "text") if verdict == "points_here" else None}
        if entry["module"] and entry["module"] not in modules:
            modules.append(entry["module"])
        steps.append(entry)
    workload = [r["metric"] for r in cause_rows if r["kind"] == "workload" and r["survives"]]
    steps.append({"step": "conclusion", "title": _(STEP_TITLES["conclusion"]),
                  "verdict": "points_here" if modules else "rules_out" if cause_rows else "no_data",
                  "evidence": [{"modules": list(modules), "workload_changed": workload}],
                  "module": None, "flags": [], "suggestion": None})
    return steps, modules


def in_periods(frame, periods) -> list:
    """Each window's group in the diagnosis: False in a violation period (not isolated), True
    when met, None otherwise (unjudged, or an isolated failing window)."""
    out = [True if m is True else None for m in frame["met"]]
    run, start = frame["run_id"].to_numpy(), frame["start_s"].to_numpy(dtype=float)
    for p in periods:
        if p["isolated"]:
            continue
        for i in np.flatnonzero((run == p["run_id"]) & (start >= p["start_s"]) & (start < p["end_s"])):
            out[i] = False
    return out


@dataclass(frozen=True)
class SlaDiagnosis:
    """windows (sla_windows' result) and diagnosis {violations, causes, tenants, rules,
    checklist, modules, workload_changed, whatif, params}."""
    windows: SlaWindows
    diagnosis: dict

    def to_dict(self) -> dict:
        w = self.windows.to_dict()
        return {"windows": w["windows"], "diagnosis": {**self.diagnosis,
                "change_points": w["change_points"], "params": w["params"]}}


def diagnose(store, params: dict | None = None, whatif: bool = True,
             cancelled=None) -> SlaDiagnosis:
    """Windows, violation periods, the failing windows against the met ones, tenants, the
    what-if and the checklist (the replay of the worst period is added above the analyses:
    replay.sla_period.diagnose_with_replay). params: the `sla` section's (see
    sla_windows.window_params). Raises NoData when no request has an arrival time or no
    window can be judged."""
    from .conclusion import load_knowledge_base
    from .sla_tenants import tenants as tenant_rows
    from .sla_whatif import period_whatif

    w = sla_windows(store, params)
    frame = w.frame
    if not frame["met"].isin([True, False]).any():
        raise NoData(_("no SLA window can be judged (each needs {n} requests with the SLA's "
                       "metrics)").format(n=w.params["min_requests"]))
    feats = window_features(store, frame, w.params["window_s"])
    feats = feats.assign(met=in_periods(feats, w.periods))
    n_bad = int((feats["met"] == False).sum())  # noqa: E712
    rows = causes(feats, tuple(w.params["thresholds"])) if n_bad else []
    ten = tenant_rows(store, feats, w.params["window_s"], w.params["thresholds"]) if n_bad else None
    steps, modules = checklist(rows, ten, load_knowledge_base())
    wi = (period_whatif(feats) if whatif and n_bad else
          {"status": "no_data", "reason": _("no violation period") if not n_bad else _("not requested")})
    diag = {"violations": [dict(p) for p in w.periods], "causes": rows,
            "tenants": (ten or {}).get("tenants") or [], "rules": (ten or {}).get("rules") or [],
            "long_prompt_tokens": (ten or {}).get("long_prompt_tokens"),
            "checklist": steps, "modules": modules,
            "workload_changed": [r["metric"] for r in rows if r["kind"] == "workload" and r["survives"]],
            "windows_judged": int(frame["met"].isin([True, False]).sum()),
            "windows_failed": int((frame["met"] == False).sum()),  # noqa: E712
            "windows_in_periods": n_bad,
            "window_attainment": float((frame["met"][frame["met"].isin([True, False])] == True).mean()),  # noqa: E712
            "whatif": wi}
    return SlaDiagnosis(windows=w, diagnosis=diag)
