"""Out-of-sample checks of the replay (issue 34): fit the step time on one run (the source),
replay another run's arrivals (the target) with those constants, compare with the target's
observations. Nothing of the target is fitted, so the error is out of sample.

* fit(source_store, source_run, config, replicas=, routing=) -> Fit: calibrate.calibrate_run on
  the source (the replica count fixed when the deployment's is known), plus what the source
  cannot identify (`unidentified`) and the alternative step times that reproduce the source as
  well as the fitted one (`alternatives`, see below).
* predict(fit, target_store, target_run) -> dict: per metric (ttft_ms, tpot_ms, e2e_ms) the
  stats of calibrate._stats (observed, replayed, error = replayed / observed - 1, p90_*) and
  `interval` [low, high] of the replayed mean over the alternatives and over the routing
  seeds one by one, plus
  `throughput` (completion tokens / (last finish - first arrival), tokens/s).
* validate_ladder(store, config, ...) -> dict: fit on the lowest setting of a ladder of runs
  (aibrix's request rates), predict every higher one, median |error| per metric.

Unidentified parameters widen the interval instead of giving a confident answer. A source whose
timed prompts all have one length cannot tell the per-token prefill cost from the fixed one; a
source without varying batch sizes cannot tell the per-sequence decode cost from the step's base;
a source that never had more requests in flight than the largest replica count tried (and no
replica count given) cannot tell how many engines served it. For each, alternatives keep the source's lone-request times and move the
share (PREFILL_FIXED_SHARES, DECODE_SEQ_SHARES) or the replica count (REPLICA_CHOICES); the target
is replayed under each and the spread of its predicted means is the interval. A deployment whose
files leave a fact open adds its alternatives too (deployment_unknowns): the manifest's other
GPUs (their KV read and KV capacity, deployments.with_kv_read) and, behind a Kubernetes Service,
kube-proxy's IPVS mode ("connection-rr") beside the iptables point.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import pandas as pd

from .calibrate import calibrate_run
from .io import requests_from_store
from .model import EngineConfig
from .replicas import simulate_replicas
from ..i18n import _

METRICS = ("ttft_ms", "tpot_ms", "e2e_ms")
#: share of a lone request's prefill time taken by the per-step launch cost, when the source
#: cannot tell it (all prompts of one length): none, and a quarter
PREFILL_FIXED_SHARES = (0.0, 0.25)
#: share of a decode step taken by the per-sequence cost at the source's batch, when the source
#: cannot tell it (no varying batch sizes): a long-context engine reads each sequence's KV
#: cache every step (Llama-3.1-8B, 21k tokens: ~2.7 GB a sequence, ~1.4 ms on an A100's
#: ~2 TB/s, ~10 % of a 14 ms step), so 10 % and 30 % are tried
DECODE_SEQ_SHARES = (0.10, 0.30)
#: replica counts tried when the source cannot tell how many engines served it
REPLICA_CHOICES = (1, 2, 4, 8)
#: routing seeds pooled for random routing
SEEDS = 3


@dataclass(frozen=True)
class Fit:
    """A calibration on a source run and what it leaves open.

    calibration: calibrate.CalibrationResult; config: the EngineConfig with the fitted step time;
    replicas / routing: the arrival model; unidentified: [{param, reason}];
    alternatives: [(name, EngineConfig, replicas)] reproducing the source's lone-request times."""
    source_run: str
    calibration: object
    config: EngineConfig
    replicas: int
    routing: str
    unidentified: tuple = ()
    alternatives: tuple = ()
    seeds: int = 1
    source_rows: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"source_run": self.source_run, "replicas": self.replicas, "routing": self.routing,
                "seeds": self.seeds, "calibration": self.calibration.to_dict(),
                "unidentified": [dict(u) for u in self.unidentified],
                "alternatives": [a[0] for a in self.alternatives], **self.extra}


def _max_overlap(rows: pd.DataFrame) -> int:
    """Most requests in flight at once (arrival to arrival + E2E) in observed rows."""
    a = pd.to_numeric(rows["arrival_s"], errors="coerce")
    e = a + pd.to_numeric(rows["e2e_ms"], errors="coerce") / 1000.0
    ok = a.notna() & e.notna()
    ev = sorted([(t, 1) for t in a[ok]] + [(t, -1) for t in e[ok]], key=lambda x: (x[0], x[1]))
    cur = best = 0
    for _t, d in ev:
        cur += d
        best = max(best, cur)
    return best


def identifiability(rows: pd.DataFrame, replicas_given: bool) -> list[dict]:
    """[{param, reason}] of what the source's rows cannot identify (see the module doc)."""
    out = []
    timed = rows["ttft_ms"].notna()
    prompts = pd.to_numeric(rows.loc[timed, "prompt_tokens"], errors="coerce").dropna()
    if timed.any() and prompts.nunique() < 2:
        out.append({"param": "prefill_split", "reason": _(
            "every timed prompt has the same length ({n:,} tokens): the per-token prefill cost "
            "cannot be told from the fixed one").format(n=int(prompts.iloc[0]) if len(prompts) else 0)})
    batch = pd.to_numeric(rows["batch_size"], errors="coerce").dropna()
    if rows["tpot_ms"].notna().any() and (batch.nunique() < 2):
        out.append({"param": "decode_split", "reason": _(
            "the source records no varying batch size: the per-sequence decode cost cannot be "
            "told from the step's base")})
    m = _max_overlap(rows)
    if not replicas_given and m < max(REPLICA_CHOICES):
        out.append({"param": "replicas", "reason": _(
            "at most {m} requests of the source were in flight at once: how many engines served "
            "it cannot be told beyond that (give the deployment's replica count)").format(m=m)})
    return out


def deployment_unknowns(dep: dict | None, routing: str) -> list[dict]:
    """[{param, reason}] of what the deployment's published files leave open: the GPU when its
    manifest allows several (deployments.KNOWN gpus), the kube-proxy mode behind per-connection
    routing (iptables: a random pod per connection; IPVS: round-robin)."""
    out = []
    gpus = (dep or {}).get("gpus") or ()
    if len(gpus) > 1:
        out.append({"param": "gpu", "reason": _(
            "the deployment's manifest allows {gpus}: the KV read per decode step is replayed "
            "for each").format(gpus=", ".join(g[0] for g in gpus))})
    if routing == "connection":
        out.append({"param": "kube_proxy_mode", "reason": _(
            "which kube-proxy mode the cluster ran is not published: a new connection goes to "
            "a random pod (iptables) or to the next one in turn (IPVS); both are replayed")})
    return out


def _alternatives(cfg: EngineConfig, unidentified: list[dict], prompt: float, batch: float,
                  replicas: int, dep: dict | None = None) -> list:
    """Alternative (name, EngineConfig, replicas[, routing]) keeping a lone request's prefill
    time (prompt tokens in ceil(prompt / budget) chunks, one step without chunked prefill) and
    the decode step at the source's
    mean batch (its KV read counted at the mean prompt as context)."""
    out = []
    params = {p["param"] for p in unidentified}
    if "prefill_split" in params and prompt > 0:
        n = max(1, math.ceil(prompt / cfg.max_num_batched_tokens)) if cfg.chunked_prefill else 1
        x = n * cfg.step_prefill_base_ms + cfg.step_per_prefill_token_ms * prompt
        for s in PREFILL_FIXED_SHARES:
            out.append((f"prefill fixed share {s:.0%}",
                        replace(cfg, step_prefill_base_ms=s * x / n,
                                step_per_prefill_token_ms=(1 - s) * x / prompt), replicas))
    ctx = max(0.0, prompt if prompt == prompt else 0.0)
    kv = cfg.step_per_kv_token_ms
    if "decode_split" in params:
        b = max(1.0, batch)
        x = cfg.step_base_ms + (cfg.step_per_decode_seq_ms + kv * ctx) * b
        for s in DECODE_SEQ_SHARES:
            out.append((f"decode per-sequence share {s:.0%}",
                        replace(cfg, step_base_ms=(1 - s) * x,
                                step_per_decode_seq_ms=s * x / b, step_per_kv_token_ms=0.0),
                        replicas))
    if "gpu" in params and kv > 0:
        from .deployments import kv_blocks
        from .model import kv_read_ms_per_token
        for gpu in dep["gpus"][1:]:
            kv2 = kv_read_ms_per_token(dep["kv_bytes_per_token"], gpu[1])
            alt = replace(cfg, step_per_kv_token_ms=kv2,
                          step_base_ms=max(0.0, cfg.step_base_ms + (kv - kv2) * ctx))
            if cfg.num_gpu_blocks is not None and cfg.num_gpu_blocks == kv_blocks(
                    dep, dep["gpus"][0], cfg.block_size):   # the capacity came from the GPU too
                alt = replace(alt, num_gpu_blocks=kv_blocks(dep, gpu, cfg.block_size))
            out.append((f"GPU {gpu[0]}", alt, replicas))
    if "kube_proxy_mode" in params:
        out.append(("kube-proxy IPVS (round-robin per connection)", cfg, replicas,
                    "connection-rr"))
    if "replicas" in params:
        out.extend((f"{k} replicas", cfg, k) for k in REPLICA_CHOICES if k != replicas)
    return out


def _observed(store, run_id: str) -> pd.DataFrame:
    obs = store.df("SELECT request_id, arrival_s, prompt_tokens, completion_tokens, ttft_ms, "
                   "tpot_ms, e2e_ms, batch_size FROM requests WHERE run_id = ?", [run_id])
    obs["request_id"] = obs["request_id"].astype(str)
    return obs


def fit(source_store, source_run: str, config: EngineConfig, *, replicas: int | None = None,
        routing: str | None = None, seeds: int | None = None, max_evaluations: int = 40,
        cancelled: Callable[[], bool] | None = None) -> Fit:
    """Calibrate on the source run (see the module doc). replicas: the deployment's replica
    count when known (fixed, not searched; None: deployments.deployment_of's published count
    when the run's benchmark has one, else fitted and, where the source cannot show it, left
    open as an interval); routing: replicas.ROUTINGS (None: the deployment's, else
    round-robin); seeds: routing seeds pooled (default SEEDS for random and connection
    routing, 1 for round-robin). extra["replicas_source"]: "given", "deployment" or "fitted"."""
    from .deployments import deployment_of, with_kv_read
    dep = deployment_of(source_store, source_run) if replicas is None or routing is None else None
    src = "given" if replicas is not None else ("deployment" if dep else "fitted")
    if replicas is None and dep:
        replicas = dep["replicas"]
    routing = routing or (dep or {}).get("routing") or "round-robin"
    if dep is None and replicas is not None and routing is not None:
        dep = deployment_of(source_store, source_run)   # its model and GPUs still apply
    config = with_kv_read(dep, config)
    cal = calibrate_run(source_store, source_run, config, cancelled=cancelled,
                        max_evaluations=max_evaluations, fixed_replicas=replicas, routing=routing)
    cfg = replace(config, **cal.params)
    rows = _observed(source_store, source_run)
    unid = identifiability(rows, replicas is not None)
    unid += deployment_unknowns(dep, routing)
    prompt = float(pd.to_numeric(rows["prompt_tokens"], errors="coerce").mean())
    # the source's mean batch as replayed (the trace does not record it)
    rq = simulate_replicas(requests_from_store(source_store, source_run), cfg, cal.replicas,
                           routing=routing, cancelled=cancelled).requests
    batch = float(pd.to_numeric(rq["batch_size"], errors="coerce").mean())
    batch = batch if batch == batch else 1.0
    alts = _alternatives(cfg, unid, prompt, batch, cal.replicas, dep)
    n_seeds = seeds if seeds is not None else (1 if routing == "round-robin" else SEEDS)
    extra = {"replicas_source": src}
    if dep and src == "deployment":
        extra["deployment"] = {k: dep[k] for k in ("source", "router")}
    return Fit(source_run=source_run, calibration=cal, config=cfg, replicas=cal.replicas,
               routing=routing, unidentified=tuple(unid), alternatives=tuple(alts),
               seeds=int(n_seeds), source_rows=len(rows), extra=extra)


def _throughput(df: pd.DataFrame) -> float | None:
    """Completion tokens / (last finish - first arrival), tokens per second."""
    a = pd.to_numeric(df["arrival_s"], errors="coerce")
    end = a + pd.to_numeric(df["e2e_ms"], errors="coerce") / 1000.0
    span = float(end.max() - a.min()) if a.notna().any() else 0.0
    tok = pd.to_numeric(df["completion_tokens"], errors="coerce").sum()
    return float(tok / span) if span > 0 else None


def replay_target(trace, cfg: EngineConfig, replicas: int, routing: str, seeds: int,
                  cancelled=None) -> list[pd.DataFrame]:
    """The replayed request frames of a target, one per routing seed."""
    return [simulate_replicas(trace, cfg, replicas, routing=routing, seed=s,
                              cancelled=cancelled).requests for s in range(max(1, seeds))]


def _pooled(frames: list[pd.DataFrame], obs: pd.DataFrame) -> dict:
    """Stats of the seeds' frames pooled against the observed rows, as calibrate._stats
    (observed mean and P90 over the target's timed requests, replayed over the pool of their
    replays; the requests both timed)."""
    j = obs.set_index("request_id")
    reps = [f.set_index("request_id").reindex(j.index) for f in frames]
    out = {}
    for m in METRICS:
        o = pd.to_numeric(j[m], errors="coerce")
        rs = [pd.to_numeric(x[m], errors="coerce") for x in reps]
        ok = o.notna()
        for r in rs:
            ok &= r.notna()
        if not ok.any() or o[ok].mean() <= 0:
            continue
        ov = o[ok].to_numpy(float)
        rv = np.concatenate([r[ok].to_numpy(float) for r in rs])
        m_o, m_r = float(ov.mean()), float(rv.mean())
        p_o, p_r = float(np.quantile(ov, 0.9)), float(np.quantile(rv, 0.9))
        out[m] = {"observed": m_o, "replayed": m_r, "error": m_r / m_o - 1.0,
                  "p90_observed": p_o, "p90_replayed": p_r,
                  "p90_error": (p_r / p_o - 1.0) if p_o > 0 else None, "n": int(ok.sum())}
    t_obs = _throughput(obs)
    t_rep = [t for t in (_throughput(f) for f in frames) if t]
    if t_obs and t_rep:
        t = float(np.mean(t_rep))
        out["throughput"] = {"observed": t_obs, "replayed": t, "error": t / t_obs - 1.0}
    return out


def predict(f: Fit, target_store, target_run: str, cancelled=None) -> dict:
    """The fit's prediction of the target run against its observations (module doc)."""
    trace = requests_from_store(target_store, target_run)
    obs = _observed(target_store, target_run)
    obs = obs[obs["request_id"].isin({t.request_id for t in trace})]
    out: dict = {"label": "out-of-sample", "source_run": f.source_run, "target_run": target_run,
                 "requests": len(trace)}
    frames = replay_target(trace, f.config, f.replicas, f.routing, f.seeds, cancelled)
    out.update(_pooled(frames, obs))
    spread: dict = {m: [] for m in (*METRICS, "throughput")}
    # each routing seed on its own too: which engine got which request is not known either
    for part in [out] + ([_pooled([x], obs) for x in frames] if len(frames) > 1 else []):
        for m in spread:
            if m in part:
                spread[m].append(part[m]["replayed"])
    for a in f.alternatives:
        cfg, k = a[1], a[2]
        rt = a[3] if len(a) > 3 else f.routing
        alt = _pooled(replay_target(trace, cfg, k, rt, 1 if rt == "connection-rr" else f.seeds,
                                    cancelled), obs)
        for m in spread:
            if m in alt:
                spread[m].append(alt[m]["replayed"])
    for m, v in spread.items():
        if m in out and v:
            out[m]["interval"] = [float(min(v)), float(max(v))]
            lo, hi = out[m]["interval"]
            out[m]["within_interval"] = bool(lo <= out[m]["observed"] <= hi)
    return out


# ladders --------------------------------------------------------------------------------------
#: run config keys that name the setting a ladder varies, first found wins
SETTING_KEYS = ("request_rate_qps", "request_rate", "max_concurrency", "concurrency",
                "max_num_seqs")


def ladders(store) -> dict:
    """{group: {"key": setting key, "runs": [(value, run_id)] ascending}} of the store's runs
    with a numeric setting in their config; group = config's "config" (aibrix's configuration
    name) or the run's format, with the engine version when runs record one."""
    import json
    df = store.df("SELECT run_id, format, engine_version, config FROM runs WHERE simulated IS NOT TRUE")
    out: dict = {}
    for rid, fmt, ver, cfg in df.itertuples(index=False):
        try:
            c = json.loads(cfg) if isinstance(cfg, str) and cfg else {}
        except ValueError:
            c = {}
        key = next((k for k in SETTING_KEYS if isinstance(c.get(k), (int, float))), None)
        if key is None:
            continue
        g = str(c.get("config") or fmt) + (f" {ver}" if ver else "")
        d = out.setdefault(g, {"key": key, "runs": []})
        if d["key"] == key:
            d["runs"].append((float(c[key]), str(rid)))
    for d in out.values():
        d["runs"].sort()
    return out


def _median(results: list[dict], metric: str, stat: str = "error") -> float | None:
    e = [abs(r[metric][stat]) for r in results if metric in r and r[metric].get(stat) is not None]
    return float(np.median(e)) if e else None


def _ladder(store, group: str | None, min_runs: int) -> tuple[str, dict]:
    """(group, ladders()[group]); group None: the one with the most runs. Raises NoData when it
    has fewer than min_runs runs."""
    from ..errors import NoData
    all_l = ladders(store)
    if group is None:
        cand = sorted(all_l.items(), key=lambda kv: -len(kv[1]["runs"]))
        group = cand[0][0] if cand else None
    lad = all_l.get(group) if group is not None else None
    if not lad or len(lad["runs"]) < min_runs:
        raise NoData(_("no ladder of runs that vary one setting ({keys}) with at least {n} "
                       "runs{which}").format(keys=", ".join(SETTING_KEYS), n=min_runs,
                                              which=f" ({group})" if group else ""))
    return group, lad


def validate_ladder(store, config: EngineConfig, group: str | None = None, *,
                    replicas: int | None = None, routing: str | None = None,
                    seeds: int | None = None, min_held_out: int = 1,
                    progress: Callable[[int, int], None] | None = None,
                    cancelled: Callable[[], bool] | None = None) -> dict:
    """Fit on the lowest setting of a ladder, predict each higher one (fit-on-low, predict-high).
    group: which ladder (default: the first with the most runs). Returns {group, setting_key,
    fit: Fit.to_dict() plus the source's setting, held_out: [{setting, run_id, ttft_ms: {...},
    ...}], median_abs_error: {ttft_ms, tpot_ms, e2e_ms, p90_ttft_ms, p90_tpot_ms, p90_e2e_ms,
    throughput}, label} (label's median error: the larger of mean TTFT's and mean TPOT's
    median |error|). Raises NoData when no ladder has min_held_out + 1 runs."""
    group, lad = _ladder(store, group, min_held_out + 1)
    (v0, src), rest = lad["runs"][0], lad["runs"][1:]
    f = fit(store, src, config, replicas=replicas, routing=routing, seeds=seeds,
            cancelled=cancelled)
    held = []
    for i, (v, rid) in enumerate(rest):
        if progress is not None:
            progress(i, len(rest))
        held.append({"setting": v, **predict(f, store, rid, cancelled=cancelled)})
    if progress is not None:
        progress(len(rest), len(rest))
    med = {m: _median(held, m) for m in (*METRICS, "throughput")}
    med.update({f"p90_{m}": _median(held, m, "p90_error") for m in METRICS})
    # the worse of the two medians: pooling TTFT and TPOT would hide a bad one behind a good one
    worst = [x for x in (med["ttft_ms"], med["tpot_ms"]) if x is not None]
    label = (_("validated at {n} settings, median error {x:.0%}").format(
        n=len(held), x=max(worst)) if worst else _("not validated"))
    return {"group": group, "setting_key": lad["key"],
            "fit": {**f.to_dict(), "setting": v0}, "held_out": held,
            "median_abs_error": med, "label": label}


def median_abs_error(results: list[dict], metric: str) -> float | None:
    """Median |error| of a metric's mean over held-out results (None when none has it)."""
    return _median(results, metric)


def ladder_of(store, run_id: str) -> str | None:
    """The ladder (ladders()' group) the run belongs to, None when none."""
    return next((g for g, d in ladders(store).items()
                 if any(r == run_id for _v, r in d["runs"])), None)


def error_status(store, run_id: str, config: EngineConfig, *, replicas: int | None = None,
                 routing: str | None = None,
                 cancelled: Callable[[], bool] | None = None) -> dict:
    """Which error applies to a replay of `run_id` under settings other than the observed ones
    (issue 34, Deliver 3): {kind: "validated", text: "validated at N settings, median error X%",
    settings, median_error, group} when the run belongs to a ladder of the store (validate_ladder
    of that ladder), else {kind: "not validated", text, reason}. At the observed settings the
    calibration's errors are in-sample (in_sample())."""
    from ..errors import Cancelled, NoData
    group = ladder_of(store, run_id)
    if group is None:
        return {"kind": "not validated", "text": _("not validated"),
                "reason": _("no ladder of runs of this configuration (request rates, "
                            "concurrencies) to predict out of sample")}
    try:
        v = validate_ladder(store, config, group, replicas=replicas, routing=routing,
                            cancelled=cancelled)
    except (NoData, Cancelled) as e:
        if isinstance(e, Cancelled) and (cancelled is None or not getattr(cancelled, "spent", False)):
            raise
        return {"kind": "not validated", "text": _("not validated"), "reason": str(e)}
    worst = [x for x in (v["median_abs_error"]["ttft_ms"], v["median_abs_error"]["tpot_ms"])
             if x is not None]
    return {"kind": "validated", "text": v["label"], "settings": len(v["held_out"]),
            "median_error": max(worst) if worst else None, "group": group,
            "median_abs_error": v["median_abs_error"]}


def in_sample() -> dict:
    """The label of a calibration's errors at the settings it was fitted on."""
    return {"kind": "in-sample", "text": _("in-sample: fitted at these settings")}
