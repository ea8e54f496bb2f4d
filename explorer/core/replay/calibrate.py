"""Calibrate the replay on the observed run before any what-if: the replay at the observed
settings must reproduce the observed TTFT and TPOT, or say by how much it does not.

1. The step-time model (model.DEFAULT_TIMING: decode part step_base_ms + step_per_decode_seq_ms
   x decodes, prefill part step_per_prefill_token_ms x tokens + step_prefill_base_ms) starts from
   timing.fit_timing's per-request regressions where the trace supports them (batch sizes,
   prefill times), else from the SGLang-calibrated default; `timing_reasons` says why a part was
   not fitted from the trace's own rows.
2. Two scale factors, one per part (decode a, prefill b), are then fitted with
   scipy.optimize.least_squares so that the replay's mean TTFT and mean TPOT over the requests
   the trace timed equal the observed means: residuals log(replayed / observed), a replay per
   evaluation (the replay is a step function of the factors, so finite differences take
   steps of 5 % in log scale). A part without an observed target keeps its factor 1. Where the
   trace lacks batch sizes the decode factor also absorbs load the trace does not show (other
   clients, other replicas): the fitted step time is then "this engine under that load", which
   is what a what-if at the same load needs, and the report says so.
3. calibration error = replayed / observed - 1, of the means (fitted) and of the 90th
   percentiles (not fitted: an honest check of the shape), before (step 1 alone) and after.
   `CalibrationResult.warning` says it prominently when a mean error stays above 25 %.

Requests the replay cannot take are counted with their reason (`dropped_requests`): errored ones
(no prompt length: e.g. cancelled by the client before they were sent), rows without arrival time.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .replicas import replica_candidates, simulate_replicas
from .model import DEFAULT_TIMING, EngineConfig, TraceRequest
from .timing import MIN_ROWS
from ..i18n import N_, _

DEFAULT_START = N_("default (SGLang bench_one_batch)")  # where the step time starts

#: mean calibration error above which the replay's answers are flagged (issue 20)
WARN_ERROR = 0.25
#: mean errors within this need no fitting
TOLERANCE = 0.01
#: the fit stops once every mean error is within this
STOP_ERROR = 0.005
#: bounds of the fitted scale factors (x the starting step time)
SCALE_BOUNDS = (1e-2, 1e3)
METRICS = ("ttft_ms", "tpot_ms")
_DECODE = ("step_base_ms", "step_per_decode_seq_ms")
_PREFILL = ("step_per_prefill_token_ms", "step_prefill_base_ms")


@dataclass(frozen=True)
class CalibrationResult:
    """params: step-time constants for EngineConfig(**params); scales: {"decode", "prefill"}
    factors applied on top of the starting point; before / after: {metric: {observed, replayed,
    error, p90_observed, p90_replayed, p90_error, n}} (error = replayed / observed - 1);
    start: how the starting step time was obtained; reasons: why parts were not fitted from the
    trace's rows; dropped: {reason: count}; n_traced: requests replayed; warning: the sentence to
    show prominently when a mean error stays above WARN_ERROR (None otherwise)."""
    params: dict
    scales: dict
    before: dict
    after: dict
    start: str
    reasons: tuple[str, ...] = ()
    dropped: dict = field(default_factory=dict)
    n_traced: int = 0
    evaluations: int = 0
    warning: str | None = None
    replicas: int = 1
    tried_replicas: tuple[int, ...] = (1,)
    routing: str = "round-robin"

    def to_dict(self) -> dict:
        """The `calibration` object of `replay --json` and of the report's `replay` section:
        {ttft_ms: {observed, replayed, error, ...}, tpot_ms: {...}} after calibration, plus
        before, step_time, scales, params, reasons, dropped, warning."""
        out = {m: dict(v) for m, v in self.after.items()}
        out.update({"before": {m: dict(v) for m, v in self.before.items()},
                    "step_time": self.step_time(), "scales": dict(self.scales),
                    "params": dict(self.params), "reasons": list(self.reasons),
                    "dropped": dict(self.dropped), "requests": self.n_traced,
                    "replicas": self.replicas, "tried_replicas": list(self.tried_replicas),
                    "routing": self.routing,
                    "warning": self.warning})
        return out

    def step_time(self) -> str:
        """One line: where the step time comes from."""
        fitted = [m.split("_")[0].upper() for m in METRICS if m in self.after]
        if fitted and self.after is self.before and self.scales == {"decode": 1.0, "prefill": 1.0} \
                and any(abs(v["error"]) > TOLERANCE for v in self.after.values()):
            return _("{start}; not calibrated (asked for the default step time)").format(
                start=_(self.start))
        if not fitted:
            return _("{start}; not calibrated: {why}").format(
                start=_(self.start), why="; ".join(self.reasons or (_("no observed latencies"),)))
        if self.scales == {"decode": 1.0, "prefill": 1.0} and self.replicas == 1:
            return _("{start}; reproduces the observed mean {fitted} within {tol:.0%} "
                     "unscaled").format(start=_(self.start), fitted=_(" and ").join(fitted),
                                        tol=TOLERANCE)
        rep = ({"round-robin": _("; arrivals spread round-robin over {n} engine replicas"),
                "connection": _("; arrivals spread per keep-alive connection over {n} engine "
                                "replicas")}.get(self.routing,
                                                 _("; arrivals spread at random over {n} engine "
                                                   "replicas")).format(n=self.replicas)
               if self.replicas > 1 else "")
        return _("{start}, scaled to reproduce the observed mean {fitted} (decode x{decode:.3g}, "
                 "prefill x{prefill:.3g})").format(
                     start=_(self.start), fitted=_(" and ").join(fitted),
                     decode=self.scales["decode"], prefill=self.scales["prefill"]) + rep


def dropped_requests(store, run_id: str) -> dict:
    """{reason: count} of the run's requests the replay leaves out: those without an arrival
    time or a prompt length (requests_from_store's filter), errored ones by their error type."""
    df = store.df("SELECT arrival_s IS NULL AS no_arrival, prompt_tokens IS NULL AS no_prompt, "
                  "error, finish_reason FROM requests WHERE run_id = ? AND "
                  "(arrival_s IS NULL OR prompt_tokens IS NULL)", [run_id])
    out: dict = {}
    for no_arr, no_prompt, err, fin in df.itertuples(index=False):
        if isinstance(err, str) and err:
            kind = err.split(":")[0].strip()[:60] or "error"
            why = f"errored ({kind}): no prompt length recorded"
        elif no_arr:
            why = "no arrival time"
        else:
            why = "no prompt length"
        out[why] = out.get(why, 0) + 1
    return out


def timing_reasons(requests: pd.DataFrame) -> list[str]:
    """Why timing.fit_timing could not fit a part of the step time from the trace's own rows."""
    def col(c):
        return (pd.to_numeric(requests[c], errors="coerce") if c in requests
                else pd.Series(np.nan, index=requests.index))
    out = []
    tpot, batch = col("tpot_ms"), col("batch_size")
    if batch.notna().sum() == 0:
        out.append(_("decode: the trace records no batch sizes"))
    elif (tpot.notna() & batch.notna()).sum() < MIN_ROWS:
        out.append(_("decode: fewer than {MIN_ROWS} requests with both TPOT and batch size").format(MIN_ROWS=MIN_ROWS))
    elif batch.dropna().std() == 0:
        out.append(_("decode: the batch size never varies"))
    prompt = col("prompt_tokens")
    timed = col("prefill_ms").notna() | col("ttft_ms").notna()
    if timed.sum() < MIN_ROWS:
        out.append(_("prefill: fewer than {MIN_ROWS} requests with a prefill time or TTFT").format(MIN_ROWS=MIN_ROWS))
    elif prompt[timed].nunique() < 2:
        p = prompt[timed].dropna()
        out.append(_("prefill: every timed prompt has the same length")
                   + (_(" ({iloc:,} tokens)").format(iloc=int(p.iloc[0])) if len(p) else "")
                   + _(": the cost per prompt token cannot be told from the fixed cost"))
    elif col("prefill_ms").notna().sum() == 0 and col("queue_ms").notna().sum() == 0:
        out.append(_("prefill: only TTFT is recorded (queueing and prefill together)"))
    return out


def _stats(rep: pd.Series, obs: pd.Series) -> dict:
    ok = rep.notna() & obs.notna()
    r, o = rep[ok].to_numpy(float), obs[ok].to_numpy(float)
    if not len(r) or o.mean() <= 0:
        return {}
    m_r, m_o = float(r.mean()), float(o.mean())
    p_r, p_o = float(np.quantile(r, 0.9)), float(np.quantile(o, 0.9))
    return {"observed": m_o, "replayed": m_r, "error": m_r / m_o - 1.0,
            "p90_observed": p_o, "p90_replayed": p_r,
            "p90_error": (p_r / p_o - 1.0) if p_o > 0 else None, "n": int(len(r))}


def compare_latencies(replayed: pd.DataFrame, observed: pd.DataFrame) -> dict:
    """{metric: stats} over the requests both frames timed (joined on request_id)."""
    j = observed.set_index("request_id")
    r = replayed.set_index("request_id").reindex(j.index)
    out = {}
    for m in METRICS:
        if m in j and m in r:
            s = _stats(pd.to_numeric(r[m], errors="coerce"), pd.to_numeric(j[m], errors="coerce"))
            if s:
                out[m] = s
    return out


def _with_scales(params: dict, a: float, b: float) -> dict:
    p = dict(params)
    for k in _DECODE:
        p[k] = params[k] * a
    for k in _PREFILL:
        p[k] = params[k] * b
    return p


def _fit_scales(trace, observed, config, params, targets, replicas, max_evaluations, cancelled,
                n_eval, routing="round-robin"):
    """Least-squares fit of the free factors for one replica count: (scales, after, ssr)."""
    from scipy.optimize import least_squares

    free = [k for k, m in (("decode", "tpot_ms"), ("prefill", "ttft_ms")) if m in targets]
    cache: dict = {}

    def scales_of(x):
        out = {"decode": 1.0, "prefill": 1.0}
        for k, v in zip(free, x):
            out[k] = float(np.exp(v))
        return out

    def stats(x):
        key = tuple(np.round(x, 12))
        if key not in cache:
            sc = scales_of(x)
            n_eval[0] += 1
            rq = simulate_replicas(trace, replace(config, **_with_scales(params, sc["decode"],
                                                                         sc["prefill"])),
                                   replicas, cancelled=cancelled, routing=routing).requests
            cache[key] = compare_latencies(rq, observed)
        return cache[key]

    def resid(x, stop=True):
        st = stats(x)
        r = np.array([np.log(max(st[m]["replayed"], 1e-9) / st[m]["observed"])
                      if m in st else 10.0 for m in targets])
        if stop and np.all(np.abs(r) < STOP_ERROR):
            raise _Close(np.array(x, dtype=float))
        return r

    # a start: each factor from its own ratio (TPOT ~ decode step; TTFT ~ prefill + queue)
    r0 = resid(np.zeros(len(free)), stop=False)
    x0 = np.array([-r0[targets.index("tpot_ms" if k == "decode" else "ttft_ms")] for k in free])
    lo, hi = np.log(SCALE_BOUNDS[0]), np.log(SCALE_BOUNDS[1])
    x0 = np.clip(x0, lo + 1e-6, hi - 1e-6)
    cands = [np.zeros(len(free))]
    try:
        cands.append(x0)
        resid(x0)
        sol = least_squares(resid, x0, bounds=(lo, hi), diff_step=0.05,
                            max_nfev=max_evaluations, xtol=1e-3, ftol=1e-4)
        cands.append(sol.x)
    except _Close as close:      # every mean within STOP_ERROR: good enough, stop early
        cands.append(close.args[0])
    best = min(cands, key=lambda x: float(np.sum(resid(x, stop=False) ** 2)))
    return scales_of(best), stats(best), float(np.sum(resid(best, stop=False) ** 2))


class _Close(Exception):
    """Raised inside the least-squares loop when the fit is close enough (args[0]: x)."""


def calibrate(trace: Sequence[TraceRequest], observed: pd.DataFrame, config: EngineConfig,
              start_params: dict | None = None, start: str = DEFAULT_START,
              reasons: Sequence[str] = (), dropped: dict | None = None, max_evaluations: int = 40,
              cancelled: Callable[[], bool] | None = None,
              replicas: Sequence[int] = (1,), fit: bool = True,
              fixed_replicas: int | None = None, routing: str = "round-robin") -> CalibrationResult:
    """Fit the decode and prefill scale factors so that replaying `trace` with `config` (the
    observed settings) reproduces the mean TTFT and TPOT of `observed` (columns request_id,
    ttft_ms, tpot_ms; any may be NaN). replicas: replica counts to try (the arrival model,
    replicas.simulate_replicas) when one engine leaves an error above 5 %: the one with the
    smallest squared log error wins, the fewest replicas unless more halve it. Returns
    CalibrationResult (before == after and no scaling when the trace times nothing, or with
    fit=False: the errors of the starting step time, measured and not corrected).
    fixed_replicas: the deployment's replica count when known (e.g. the 8 pods of a benchmark's
    manifest): no count is searched; routing: replicas.ROUTINGS, how arrivals reach them."""
    params = dict(start_params or {k: getattr(config, k) for k in DEFAULT_TIMING})
    n_eval = [1]
    k0 = int(fixed_replicas or 1)
    before = compare_latencies(simulate_replicas(trace, replace(config, **params), k0,
                                                 cancelled=cancelled, routing=routing).requests,
                               observed)
    targets = [m for m in METRICS if m in before]
    common = dict(start=start, dropped=dict(dropped or {}), n_traced=len(trace), routing=routing)
    if not targets:
        return CalibrationResult(params=params, scales={"decode": 1.0, "prefill": 1.0},
                                 before=before, after=before,
                                 reasons=tuple(reasons) + (_("the trace records no TTFT or TPOT"),),
                                 evaluations=n_eval[0], replicas=k0, tried_replicas=(k0,),
                                 **common)
    if not fit or all(abs(before[m]["error"]) <= TOLERANCE for m in targets):
        # already reproduces the observed means (e.g. a run the same engine model produced)
        return CalibrationResult(params=params, scales={"decode": 1.0, "prefill": 1.0},
                                 before=before, after=before, reasons=tuple(reasons),
                                 evaluations=n_eval[0], replicas=k0, tried_replicas=(k0,),
                                 **common)
    fits = []
    ks = [k0] if fixed_replicas else sorted(set(replicas) | {1})
    for k in ks:   # the evaluation budget is shared by the replica counts tried
        sc, after, ssr = _fit_scales(trace, observed, config, params, targets, k,
                                     max(8, max_evaluations // len(ks)), cancelled, n_eval,
                                     routing)
        fits.append((k, sc, after, ssr))
        if k == 1 and all(abs(after[m]["error"]) <= 0.05 for m in targets):
            break
    best = fits[0]
    for f in fits[1:]:
        if f[3] < 0.5 * best[3]:
            best = f
    k, sc, after, _err = best
    bad = [f"{m.split('_')[0].upper()} {after[m]['error']:+.0%}" for m in targets
           if m in after and abs(after[m]["error"]) > WARN_ERROR]
    warning = None
    if bad:
        warning = _("Calibration error above {limit:.0%} ({errors}): the replay does not "
                    "reproduce the observed run; its what-if answers may mislead.").format(
                        limit=WARN_ERROR, errors=", ".join(bad))
    return CalibrationResult(params=_with_scales(params, sc["decode"], sc["prefill"]), scales=sc,
                             before=before, after=after, reasons=tuple(reasons),
                             evaluations=n_eval[0], warning=warning, replicas=k,
                             tried_replicas=tuple(f[0] for f in fits), **common)


def calibration_inputs(store, run_id: str, trace: Sequence[TraceRequest] | None = None) -> dict | None:
    """Keyword arguments of calibrate() besides trace and config, read from an observed run of
    the store (on the store's thread): observed latencies of the trace's requests, fit_timing's
    start where the rows support it, why the rest could not be fitted, the dropped requests,
    the replica counts to try (when the run records no batch sizes). None when the run records
    no TTFT and no TPOT."""
    from ..errors import NoData
    from .io import requests_from_store
    from .timing import fit_timing

    if trace is None:
        trace = requests_from_store(store, run_id)
    rows = store.df("SELECT request_id, arrival_s, prompt_tokens, completion_tokens, "
                    "cached_prompt_tokens, ttft_ms, tpot_ms, batch_size, prefill_ms, queue_ms "
                    "FROM requests WHERE run_id = ?", [run_id])
    if rows["ttft_ms"].notna().sum() == 0 and rows["tpot_ms"].notna().sum() == 0:
        return None
    start, start_params = DEFAULT_START, None
    try:
        fit = fit_timing(rows)
        start_params = fit.params
        start = _("fitted to the trace's rows ({fitted})").format(fitted=', '.join(fit.fitted))
    except NoData:
        pass
    ids = {t.request_id for t in trace}
    obs = rows[rows["request_id"].astype(str).isin(ids)][["request_id", "ttft_ms", "tpot_ms"]].copy()
    obs["request_id"] = obs["request_id"].astype(str)
    # without batch sizes the trace cannot show how many other requests shared the engine: the
    # arrival model (replicas) is fitted too
    no_batch = rows["batch_size"].notna().sum() == 0
    return {"observed": obs.reset_index(drop=True), "start_params": start_params, "start": start,
            "reasons": timing_reasons(rows), "dropped": dropped_requests(store, run_id),
            "replicas": tuple(replica_candidates(trace)) if no_batch else (1,)}


def calibrate_run(store, run_id: str, config: EngineConfig,
                  cancelled: Callable[[], bool] | None = None,
                  trace: Sequence[TraceRequest] | None = None,
                  max_evaluations: int = 40, fit: bool = True, fixed_replicas: int | None = None,
                  routing: str = "round-robin") -> CalibrationResult:
    """calibrate() on an observed run of the store (calibration_inputs): its arrival trace
    (requests_from_store, or `trace` when given, e.g. a time window of it)."""
    from .io import requests_from_store

    if trace is None:
        trace = requests_from_store(store, run_id)
    kw = calibration_inputs(store, run_id, trace)
    if kw is not None and not fit:   # the default step time, as asked: its errors measured only
        kw.update(start_params=None, start=DEFAULT_START)
    if kw is None:
        kw = {"observed": pd.DataFrame({"request_id": [t.request_id for t in trace],
                                        "ttft_ms": np.nan, "tpot_ms": np.nan}),
              "dropped": dropped_requests(store, run_id)}
    return calibrate(trace, config=config, cancelled=cancelled, max_evaluations=max_evaluations,
                     fit=fit, fixed_replicas=fixed_replicas, routing=routing, **kw)
