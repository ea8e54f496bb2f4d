"""The replay of an SLA violation period under other engine settings (issue 31, step 4 of the
checklist's what-if): "had the cache been bigger / max-num-seqs been another, would this period
have met the SLA?".

Through the replay's public entry points only (explorer.core.replay: requests_from_store,
EngineConfig; its calibration calibrate.calibrate_run and replicas.simulate_replicas, the
functions the replay's own report section and validation call):
1. The period's run and its requests arriving from WARMUP_S before the period's start to its
   end (the cache and the queue warm, as the replay's badcase what-if does).
2. The observed settings: those the run records (runs.config, replay.badcases.SETTINGS), else
   `observed` given by the caller; a scenario that changes a setting the run does not record
   has no observed value to start from: NoData.
3. The replay's calibration on that trace (calibrate_run): the step time fitted so the replay at
   the observed settings reproduces the observed mean TTFT and TPOT; its errors (mean and P90,
   replayed / observed - 1) and its warning travel with the answer.
4. Two replays with that step time: at the observed settings (base) and under the scenario. The
   requests arriving in the period are judged as analysis.sla_windows judges a window (the P95
   of each thresholded metric within its bound, the error rate within the budget, on the same
   window grid: the run's first arrival + k window_s), and per request (met / judged). An
   observed error (e.g. HTTP 500) stays an error in both replays: no engine setting in the
   replay would have prevented it; a request the replay rejects is an error too.
5. The verdict: `met` when the scenario's per-request attainment in the period reaches the
   target (params target, 0.82 by default), `not_met` below it, and `uncertain` when the replay
   cannot tell: the replay's calibration warning is raised, a calibrated mean error stays above
   calibrate.WARN_ERROR, or the base replay's attainment misses the observed one by more than
   the scenario's distance from the target (the model's own error at the observed settings is
   then larger than the margin the claim rests on), or, where the run belongs to a ladder of
   runs, the replay's out-of-sample error there (replay.validate.error_status) is above
   WARN_ERROR. That validation (or "not validated" and why) is `calibration.validation`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd

from ..errors import NoData
from ..sqlutil import quote_ident
from explorer.core.i18n import N_, _

WARMUP_S = 600.0
VERDICTS = {"met": N_("would have met the target"), "not_met": N_("would still miss the target"),
            "uncertain": N_("the replay's calibration is too poor to say")}


def _errored(s: pd.Series) -> np.ndarray:
    return np.array([isinstance(e, str) and e.strip() != "" for e in s], dtype=bool)


def judge_period(req: pd.DataFrame, t0: float, start_s: float, end_s: float, p: dict) -> dict:
    """The requests of `req` (arrival_s, the thresholded metrics, error) arriving in [start_s,
    end_s), per window of the grid t0 + k window_s (sla_windows' rule: n >= min_requests, P95 by
    numpy's linear interpolation within the bound, error rate within the budget) and per
    request: {windows, windows_met, n, n_judged, n_met, attainment, p95: {metric: [per window]}}."""
    w, thr = p["window_s"], p["thresholds"]
    a = pd.to_numeric(req["arrival_s"], errors="coerce").to_numpy(float)
    sel = (a >= start_s) & (a < end_s)
    r = req[sel]
    err = _errored(r["error"]) if "error" in r else np.zeros(len(r), bool)
    vals = {m: pd.to_numeric(r[m], errors="coerce").to_numpy(float) for m in thr}
    have = np.logical_and.reduce([np.isfinite(v) for v in vals.values()])
    ok = np.logical_and.reduce([np.nan_to_num(v, nan=np.inf) <= t for (m, t), v
                                in zip(thr.items(), vals.values())])
    met, judged = ~err & ok & have, err | have
    k = np.floor((a[sel] - t0) / w).astype(np.int64)
    wins, p95 = [], {m: [] for m in thr}
    for kk in np.unique(k):
        i = k == kk
        n, e = int(i.sum()), err[i]
        good, known = bool(e.mean() <= p["error_budget"]), True
        for m, t in thr.items():
            v = vals[m][i]
            v = v[np.isfinite(v)]
            q = float(np.percentile(v, p["percentile"])) if len(v) else None
            p95[m].append(q)
            good &= q is None or q <= t
            known &= q is not None or bool(e.all())
        wins.append(good if n >= p["min_requests"] and known else None)
    nj = int(judged.sum())
    return {"windows": len(wins), "windows_met": sum(1 for x in wins if x is True),
            "windows_judged": sum(1 for x in wins if x is not None), "n": int(sel.sum()),
            "n_judged": nj, "n_met": int(met.sum()),
            "attainment": float(met.sum() / nj) if nj else None, "p95": p95}


@dataclass(frozen=True)
class PeriodReplay:
    """to_dict(): {run_id, period, setting, observed, base, scenario, calibration, verdict,
    reasons, sentence} (module doc)."""
    run_id: str
    period: dict
    setting: dict
    observed: dict
    base: dict
    scenario: dict
    calibration: dict
    verdict: str
    reasons: tuple
    target: float

    def to_dict(self) -> dict:
        return {"status": "ok", "run_id": self.run_id, "period": dict(self.period),
                "setting": dict(self.setting), "observed": dict(self.observed),
                "base": dict(self.base), "scenario": dict(self.scenario),
                "calibration": dict(self.calibration), "verdict": self.verdict,
                "reasons": list(self.reasons), "target": self.target, "sentence": self.sentence()}

    def sentence(self) -> str:
        from .. import fmt
        return _("Replaying violation period {run} {start}-{end} ({n:,} requests) under {setting}: "
                 "attainment {scn} against the target {target} (observed {obs}, replayed at the "
                 "observed settings {base}); {windows_met} of {windows} windows would meet the "
                 "SLA. Verdict: {verdict}.").format(
            run=self.run_id, start=_clock(self.period["start_s"]), end=_clock(self.period["end_s"]),
            n=self.observed["n"], setting=self.setting["label"],
            scn=fmt.share(self.scenario["attainment"]), target=fmt.share(self.target),
            obs=fmt.share(self.observed["attainment"]), base=fmt.share(self.base["attainment"]),
            windows_met=self.scenario["windows_met"], windows=self.scenario["windows_judged"],
            verdict=_(VERDICTS[self.verdict]))


def _clock(t: float) -> str:
    from ..analysis.sla_report import clock
    return clock(t)


def verdict(observed: float | None, base: float | None, scenario: float | None, target: float,
            calibration: dict) -> tuple[str, list[str]]:
    """Step 5 of the module doc: (met | not_met | uncertain, the reasons for uncertain)."""
    from .calibrate import WARN_ERROR
    reasons = []
    val = calibration.get("validation") or {}
    if val.get("kind") == "validated" and (val.get("median_error") or 0) > WARN_ERROR:
        reasons.append(_("out of sample the replay errs by {e:.0%} (median, {n} settings)").format(
            e=val["median_error"], n=val.get("settings")))
    if calibration.get("warning"):
        reasons.append(_("the replay's calibration warns: {w}").format(w=calibration["warning"]))
    for m in ("ttft_ms", "tpot_ms"):
        e = (calibration.get(m) or {}).get("error")
        if e is not None and abs(e) > WARN_ERROR and not calibration.get("warning"):
            reasons.append(_("calibrated mean {m} error {e:+.0%}").format(m=m, e=e))
    if scenario is None or observed is None or base is None:
        reasons.append(_("no request of the period could be judged"))
    elif abs(base - observed) >= abs(scenario - target):
        reasons.append(_("at the observed settings the replay's attainment ({base:.1%}) misses the "
                         "observed one ({obs:.1%}) by more than the scenario's distance from the "
                         "target ({d:.1%})").format(base=base, obs=observed, d=abs(scenario - target)))
    if reasons:
        return "uncertain", reasons
    return ("met" if scenario >= target else "not_met"), []


def replay_period(store, windows, period: dict, scenario: dict, observed: dict | None = None,
                  warmup_s: float = WARMUP_S, max_evaluations: int = 24,
                  cancelled: Callable[[], bool] | None = None) -> PeriodReplay:
    """The module doc's steps on one violation period (a dict of sla_windows' periods: run_id,
    start_s, end_s) of `windows` (SlaWindows). scenario: EngineConfig fields to change, e.g.
    {"num_gpu_blocks": 4 * observed} or {"max_num_seqs": 512}. Raises NoData (no settings to
    start from, no request in the period), ValueError (impossible settings), Cancelled."""
    from . import EngineConfig, requests_from_store
    from .badcases import SETTINGS, _label, observed_settings
    from .calibrate import calibrate_run
    from .replicas import simulate_replicas

    run_id = str(period["run_id"])
    p = windows.params
    settings = {**(observed or {}), **observed_settings(store, run_id)}
    missing = [k for k in scenario if k not in settings]
    if missing:
        raise NoData(_("run {run} does not record {what}, so there is no observed setting to "
                       "replay against").format(run=run_id, what=", ".join(missing)))
    base_cfg = EngineConfig(**{k: v for k, v in settings.items() if k in SETTINGS})
    base_cfg.validate()
    scn_cfg = replace(base_cfg, **scenario)
    scn_cfg.validate()
    lo, hi = float(period["start_s"]), float(period["end_s"])
    trace = [t for t in requests_from_store(store, run_id) if lo - warmup_s <= t.arrival_s < hi]
    if not any(lo <= t.arrival_s for t in trace):
        raise NoData(_("no request of period {run} {start} has an arrival time and a prompt "
                       "length to replay").format(run=run_id, start=_clock(lo)))
    obs = store.df("SELECT request_id, arrival_s, error, "
                   + ", ".join(quote_ident(m) for m in p["thresholds"])
                   + " FROM requests WHERE run_id = ? AND arrival_s >= ? AND arrival_s < ?",
                   [run_id, lo - warmup_s, hi])
    obs["request_id"] = obs["request_id"].astype(str)
    t0 = min(w["start_s"] for w in windows.windows if w["run_id"] == period["run_id"])
    cal = calibrate_run(store, run_id, base_cfg, cancelled=cancelled, trace=trace,
                        max_evaluations=max_evaluations)
    caldict = cal.to_dict()
    errs = obs.set_index("request_id")["error"]

    def run(cfg) -> tuple[dict, dict]:
        res = simulate_replicas(trace, replace(cfg, **cal.params), cal.replicas, cancelled=cancelled)
        rq = res.requests.copy()
        rq["request_id"] = rq["request_id"].astype(str)
        prior = errs.reindex(rq["request_id"]).to_numpy(object)
        failed = np.array([isinstance(e, str) and e.strip() != "" for e in prior], dtype=bool)
        rq["error"] = np.where(failed, prior, rq["error"].to_numpy(object))
        for m in p["thresholds"]:  # a request that failed has no latency, as observed
            if m in rq:
                rq.loc[failed, m] = np.nan
        return judge_period(rq, t0, lo, hi, p), res.summary

    from .validate import error_status
    validation = error_status(store, run_id, base_cfg, cancelled=cancelled)
    caldict["validation"] = validation
    base, bsum = run(base_cfg)
    scn, ssum = run(scn_cfg)
    seen = judge_period(obs, t0, lo, hi, p)
    for d, s in ((base, bsum), (scn, ssum)):
        d.update(hit_rate=s.get("hit_rate"), preemptions=s.get("preemptions"))
    v, reasons = verdict(seen["attainment"], base["attainment"], scn["attainment"], p["target"], caldict)
    return PeriodReplay(run_id=run_id, period={"start_s": lo, "end_s": hi, "warmup_s": warmup_s,
                                               "requests_replayed": len(trace)},
                        setting={"observed": {k: getattr(base_cfg, k) for k in SETTINGS},
                                 "scenario": {k: getattr(scn_cfg, k) for k in SETTINGS},
                                 "label": _label(scn_cfg, base_cfg)},
                        observed=seen, base=base, scenario=scn, calibration=caldict, verdict=v,
                        reasons=tuple(reasons), target=float(p["target"]))


def default_scenario(store, run_id: str, trace_has_prefixes: bool) -> dict | None:
    """The scenario the report replays when none is asked: DEFAULT_FACTOR x the recorded KV
    blocks when the run records them and its trace has prefix hash ids (else a bigger cache
    changes nothing the replay can see), else twice the recorded max-num-seqs; None when the
    run records neither."""
    from .badcases import observed_settings
    from .section import DEFAULT_FACTOR
    s = observed_settings(store, run_id)
    if s.get("num_gpu_blocks") and trace_has_prefixes:
        return {"num_gpu_blocks": int(s["num_gpu_blocks"]) * DEFAULT_FACTOR}
    if s.get("max_num_seqs"):
        return {"max_num_seqs": int(s["max_num_seqs"]) * 2}
    return None


#: wall seconds the report's period replay may take (calibration and both replays)
BUDGET_S = 60.0
#: periods longer than this many requests (with the warm-up) are not replayed in a report
MAX_REQUESTS = 50_000


def report_replay(store, windows, scenario: dict | None = None,
                  cancelled: Callable[[], bool] | None = None) -> dict:
    """The diagnosis's `replay`: replay_period on the violation period (not isolated) with the
    lowest attainment, under `scenario` or default_scenario; {status: no_data, reason} when the
    trace does not allow it (no settings recorded, too many requests, the budget spent)."""
    import time

    from ..errors import Cancelled, TraceExplorerError
    per = [p for p in windows.periods if not p["isolated"]]
    if not per:
        return {"status": "no_data", "reason": _("no violation period")}
    if getattr(store, "remote", False):  # as the replay section (sections._replay)
        return {"status": "no_data", "reason": _("the replay simulates the period's requests "
                                                 "locally; with a warehouse source it is not computed")}
    worst = min(per, key=lambda p: (p["attainment"] if p["attainment"] is not None else 2.0))
    run_id, lo, hi = str(worst["run_id"]), float(worst["start_s"]), float(worst["end_s"])
    n, hashed = store.con.execute(
        "SELECT count(*), count(json_extract(extra, '$.hash_ids')) FROM requests "
        "WHERE run_id = ? AND arrival_s >= ? AND arrival_s < ?", [run_id, lo - WARMUP_S, hi]).fetchone()
    if n > MAX_REQUESTS:
        return {"status": "no_data", "reason": _("the period holds {n:,} requests with its warm-up, "
                                                 "more than the report replays ({m:,})").format(n=n, m=MAX_REQUESTS)}
    scn = scenario or default_scenario(store, run_id, bool(hashed))
    if not scn:
        return {"status": "no_data", "reason": _("run {run} records neither its KV-cache size nor "
                                                 "its max-num-seqs: nothing to replay against").format(run=run_id)}
    deadline = time.monotonic() + BUDGET_S
    spent = [False]

    def stop() -> bool:
        if cancelled is not None and cancelled():
            return True
        spent[0] = time.monotonic() > deadline
        return spent[0]
    try:
        return replay_period(store, windows, worst, scn, cancelled=stop).to_dict()
    except Cancelled:
        if not spent[0]:
            raise
        return {"status": "no_data", "reason": _("the replay did not finish within {s:g} s").format(s=BUDGET_S)}
    except (TraceExplorerError, ValueError) as e:
        return {"status": "no_data", "reason": str(e)}


def diagnose_with_replay(store, params: dict | None = None, whatif: bool = True,
                         cancelled=None):
    """analysis.sla_diagnosis.diagnose, then the replay of the worst violation period
    (report_replay; params["replay"]: a scenario dict, or False to leave it out) in
    diagnosis["replay"]. Here, above the analyses, because the replay is the layer above them."""
    from ..analysis.sla_diagnosis import diagnose
    d = diagnose(store, params, whatif=whatif, cancelled=cancelled)
    if not d.diagnosis.get("windows_in_periods"):
        return d
    scenario = (params or {}).get("replay")
    d.diagnosis["replay"] = {"status": "no_data", "reason": _("not requested")} \
        if scenario is False else report_replay(store, d.windows, scenario, cancelled)
    return d
