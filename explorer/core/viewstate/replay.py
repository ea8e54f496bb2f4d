"""State of the Replay panel (Qt-free): the runs that can be replayed and the one chosen, the
engine settings of the scenario (validated into an EngineConfig), the trace read for the chosen
run, and the work a Replay / Sweep / Predict makes. Store reads are frozen queries whose
run(store) the session's worker calls; simulations are jobs run(progress, cancelled) that need
no store (the panel's own worker runs them).

Decisions made here once: the settings' ranges and defaults (vLLM's: block 16, max-num-seqs
256, max-num-batched-tokens 8192, LRU; capacity infinite; a run that records its capacity starts
the scenario at SCENARIO_BLOCKS x its blocks), "Add as run" off, the calibration made at the
settings the run recorded (calibrate() fits the observed latencies at the observed settings,
never at the scenario's) and kept per run, so every scenario of a run shows one verdict, a capacity in GB converted to blocks
at the KV bytes per token, max-num-batched-tokens raised to max-num-seqs (as vLLM requires),
a chosen run kept across reloads while it is still offered, else the first (observed first).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence, TypedDict

from explorer.core.i18n import _
from explorer.core.replay.model import EVICTION_POLICIES, EngineConfig, blocks_for_gb

#: (minimum, maximum) of each setting the panel offers
RANGES: dict[str, tuple[float, float]] = {
    "blocks": (0, 1 << 30),              # 0 = infinite
    "gb": (0.0, 10000.0),                # 0 = not given in GB
    "bytes_per_token": (1, 1 << 24),
    "block_size": (1, 4096),
    "max_num_seqs": (1, 65536),
    "max_num_batched_tokens": (1, 1 << 22),
    "replicas": (0, 1024),               # 0 = the deployment's published count, else fitted
}
#: how arrivals reach the replicas (replicas.ROUTINGS); "" = the deployment's, else round-robin
ROUTING_CHOICES = ("", "round-robin", "random", "connection")
DEFAULT_BYTES_PER_TOKEN = 131072         # Llama-3.1-8B fp16: 2 x 32 layers x 8 KV heads x 128 x 2 B
SCENARIO_BLOCKS = 4                      # the scenario's default capacity: 4x the observed blocks
SETTINGS = ("blocks", "block_size", "eviction", "max_num_seqs", "max_num_batched_tokens")


class ReplayRun(TypedDict):
    """One run that can be replayed (the session's "replay_runs" payload): its requests with
    arrival times and prompt lengths number n."""
    run_id: str
    label: str
    n: int


def replay_runs(store) -> list[ReplayRun]:
    """The runs to offer (compare.replayable_runs: observed first), as the bus carries them."""
    from explorer.core.replay.compare import replayable_runs
    return [ReplayRun(run_id=str(r), label=str(lab), n=int(n))
            for r, lab, n in replayable_runs(store).itertuples(index=False)]


@dataclass(frozen=True)
class ReplayTrace:
    """What a replay of one run needs from the store: its requests (TraceRequest list), the
    observed figures (compare.observed_summary) and calibrate()'s inputs (None when the run
    records no latencies)."""
    run_id: str
    requests: list = field(repr=False)
    observed: dict = field(repr=False)
    calibration_inputs: dict | None = field(default=None, repr=False)
    deployment: dict | None = field(default=None, repr=False)   # deployments.deployment_of


@dataclass(frozen=True)
class TraceQuery:
    run_id: str

    def run(self, store) -> ReplayTrace:
        from explorer.core.replay import requests_from_store
        from explorer.core.replay.calibrate import calibration_inputs
        from explorer.core.replay.compare import observed_summary
        from explorer.core.replay.deployments import deployment_of
        return ReplayTrace(self.run_id, requests_from_store(store, self.run_id),
                           observed_summary(store, self.run_id),
                           calibration_inputs(store, self.run_id),
                           deployment_of(store, self.run_id))


@dataclass(frozen=True)
class SettingsQuery:
    """The settings the run records (badcases.observed_settings), {} when none."""
    run_id: str

    def run(self, store) -> dict:
        from explorer.core.replay.badcases import observed_settings
        return observed_settings(store, self.run_id)


@dataclass(frozen=True)
class CohortQuery:
    """The cohort's window, run and observed settings for a badcase prediction."""
    cohort: Any

    def run(self, store):
        from explorer.core.replay.badcases import gather_inputs
        return gather_inputs(store, self.cohort)


@dataclass(frozen=True)
class ReplayJob:
    """Calibrate the engine model on the run's observed latencies (when it has them) at the
    settings the run recorded (`observed`, default `config`; `calibration`: one made before for
    this run and settings, reused), then replay the trace under `config`; both with the run's
    published deployment's engine facts (deployments.with_kv_read, as the validation).
    run() -> (ReplayResult, CalibrationResult | None)."""
    trace: ReplayTrace
    config: EngineConfig
    observed: EngineConfig | None = None
    calibration: Any = None
    replicas: int = 0          # 0: the deployment's published count, else fitted
    routing: str = ""          # "": the deployment's, else round-robin

    def run(self, progress: Callable[[int, int, str], None] = lambda *a: None,
            cancelled: Callable[[], bool] | None = None):
        from explorer.core.replay.calibrate import calibrate
        from explorer.core.replay.deployments import with_kv_read
        from explorer.core.replay.replicas import simulate_replicas
        cal, cal_in = self.calibration, self.trace.calibration_inputs
        dep = self.trace.deployment or {}
        reps = self.replicas or dep.get("replicas")
        routing = self.routing or dep.get("routing") or "round-robin"
        # a published deployment's engine (scheduler, KV read, capacity where the settings
        # leave it infinite) as the validation takes it: what is shown is what was validated
        config = with_kv_read(dep, self.config)
        if cal is None and cal_in is not None:
            progress(0, 2, "calibration")
            cal = calibrate(self.trace.requests, config=with_kv_read(dep, self.observed or
                                                                     self.config),
                            cancelled=cancelled, fixed_replicas=reps, routing=routing, **cal_in)
            if not any(m in cal.after for m in ("ttft_ms", "tpot_ms")):
                cal = None
        cfg = config if cal is None else replace(config, **cal.params)
        progress(1, 2, "replay")
        res = simulate_replicas(self.trace.requests, cfg,
                                (reps or 1) if cal is None else cal.replicas,
                                cancelled=cancelled, record_events=True,
                                routing=routing if cal is None else cal.routing)
        return res, cal


@dataclass(frozen=True)
class SweepJob:
    """Replay the trace at each capacity (blocks). run() -> compare.sweep_capacity rows."""
    trace: ReplayTrace
    config: EngineConfig
    capacities: tuple[int | None, ...]

    def run(self, progress: Callable[[int, int], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> list[dict]:
        from explorer.core.replay.compare import sweep_capacity
        return sweep_capacity(self.trace.requests, self.config, list(self.capacities),
                              progress=progress, cancelled=cancelled)


@dataclass(frozen=True)
class PredictJob:
    """Predict the cohort's badcases under the scenario (badcases.predict; no store)."""
    inputs: Any
    scenario: dict

    def run(self, progress: Callable[[int, int], None] | None = None,
            cancelled: Callable[[], bool] | None = None):
        from explorer.core.replay.badcases import predict
        return predict(self.inputs, self.scenario, progress=progress, cancelled=cancelled)


@dataclass
class ValidateJob:
    """The out-of-sample check of a run (replay.validate) in `mode` (loo.MODE_CHOICES:
    "low-high" fits on the lowest setting of the run's ladder and predicts each higher one,
    "loo" holds each setting out in turn, "both" runs the two, through loo.validators, the
    CLI's dispatch). Reads the store: runs in the session's worker. Returns {run_id, mode,
    kind, text, validations: [one per mode run: validate_ladder's or leave_one_out's dict plus
    mode, kind "validated", text; or {mode, kind: "not validated", text, reason}]}; kind is
    "validated" when one mode is, text the validated modes' labels."""
    run_id: str
    config: EngineConfig
    replicas: int = 0          # 0: the deployment's published count, else fitted
    routing: str = ""          # "": the deployment's, else round-robin
    mode: str = "low-high"

    def run(self, store, progress: Callable[[int, int], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> dict:
        from explorer.core.errors import NoData
        from explorer.core.replay.loo import validators
        from explorer.core.replay.validate import ladder_of
        runs = validators(self.mode)
        group = ladder_of(store, self.run_id)
        out = []
        for i, (mode, fn) in enumerate(runs):
            none = {"mode": mode, "kind": "not validated", "text": _("not validated")}
            if group is None:
                out.append({**none, "reason": _("no ladder of runs of this configuration "
                                                "(request rates, concurrencies) to predict "
                                                "out of sample")})
                continue
            # each mode a share of one bar: mode i's d of n is i + d / n of len(runs)
            step = None if progress is None else (
                lambda d, n, i=i: progress(i * 1000 + (1000 * d) // max(n, 1), 1000 * len(runs)))
            try:
                v = fn(store, self.config, group, replicas=self.replicas or None,
                       routing=self.routing or None, progress=step, cancelled=cancelled)
            except NoData as e:
                out.append({**none, "reason": str(e)})
                continue
            out.append({**v, "mode": mode, "kind": "validated", "text": v["label"]})
        ok = [v for v in out if v["kind"] == "validated"]
        return {"run_id": self.run_id, "mode": self.mode, "validations": out,
                "kind": "validated" if ok else "not validated",
                "text": "; ".join(v["text"] for v in ok) if ok else _("not validated")}


def held_out_rows(v: dict) -> list[dict]:
    """The held-out errors of one mode's validation (validate_ladder's or leave_one_out's
    dict): per held-out setting and figure (mean TTFT, TPOT, E2E, throughput) {metric, name,
    setting, label ("TTFT @ request_rate_qps 0.5"), unit, observed, replay, diff_pct (100 x error), p90_pct (100 x the P90's
    error, None for throughput)}."""
    rows = []
    for h in v.get("held_out") or []:
        for m, name, unit in (("ttft_ms", "TTFT", "ms"), ("tpot_ms", "TPOT", "ms/token"),
                              ("e2e_ms", "E2E", "ms"), ("throughput", "throughput", "tok/s")):
            if m in h:
                p90 = h[m].get("p90_error")
                rows.append({"metric": m, "name": name, "setting": h["setting"], "unit": unit,
                             "label": f"{name} @ {v['setting_key']} {h['setting']:g}",
                             "observed": h[m]["observed"], "replay": h[m]["replayed"],
                             "diff_pct": 100.0 * h[m]["error"],
                             "p90_pct": None if p90 is None else 100.0 * p90})
    return rows


def section_rows(sec: dict) -> list[dict]:
    """The table of a report's `replay` section (replay.section.replay_section), one row per
    figure it holds: {metric, unit, observed, replay, diff_pct}; metric is "badcases"
    (observed -> predicted), "ttft_ms" / "tpot_ms" (calibration: observed -> replayed) or
    "hit_rate" / "preemptions" (the replay at the observed settings -> under the scenario)."""
    from explorer.core.replay.compare import change_pct
    rows = []

    def row(metric, unit, o, r):
        rows.append({"metric": metric, "unit": unit, "observed": o, "replay": r,
                     "diff_pct": change_pct(o, r)})
    if sec.get("predicted_badcases") is not None:
        row("badcases", "", int(sec["observed_badcases"]), float(sec["predicted_badcases"]))
    cal = sec.get("calibration") or {}
    for m, unit in (("ttft_ms", "ms"), ("tpot_ms", "ms/token")):
        if cal.get(m):
            row(m, unit, cal[m]["observed"], cal[m]["replayed"])
    for k in ("hit_rate", "preemptions"):
        v = (sec.get("replay") or {}).get(k)
        if v:
            row(k, "", v["observed_settings"], v["scenario"])
    return rows


class ReplayState:
    """The Replay panel's choices: the runs offered and the one chosen, the scenario's engine
    settings, the trace read for the chosen run, and the last results."""

    def __init__(self) -> None:
        self.runs: list[ReplayRun] = []
        self.run_id: str | None = None
        self.blocks = 0                    # 0 = infinite
        self.gb = 0.0                      # > 0: blocks follow from it
        self.bytes_per_token = DEFAULT_BYTES_PER_TOKEN
        self.block_size = 16
        self.eviction = EVICTION_POLICIES[0]
        self.max_num_seqs = 256
        self.max_num_batched_tokens = 8192
        self.replicas = 0                  # 0 = the deployment's published count, else fitted
        self.routing = ""                  # "" = the deployment's, else round-robin
        self.add_run = False               # a replay joins the session's runs only when asked
        self.recorded: dict = {}           # the settings the chosen run records (apply_observed)
        self.calibrations: dict = {}       # (run_id, observed EngineConfig) -> CalibrationResult
        self.trace: ReplayTrace | None = None   # read for run_id
        self.result = None                 # last ReplayResult
        self.calibration = None            # its CalibrationResult (None: no latencies)
        self.sweep: list[dict] | None = None
        self.prediction = None             # last BadcasePrediction
        self.validations: dict = {}        # run_id -> ValidateJob's result
        self.validate_mode = "low-high"    # loo.MODE_CHOICES: what Validate runs

    # -- runs -------------------------------------------------------------------------------
    def set_runs(self, runs: Sequence[ReplayRun] | None) -> bool:
        """The runs to offer; the chosen one stays while offered. True when the choice changed
        (its settings are then to be read: settings_query)."""
        self.runs = list(runs or [])
        ids = [r["run_id"] for r in self.runs]
        keep = self.run_id if self.run_id in ids else (ids[0] if ids else None)
        changed = keep != self.run_id
        if changed:
            self.choose_run(keep)
        return changed

    def choose_run(self, run_id: str | None) -> None:
        if run_id is not None and run_id not in [r["run_id"] for r in self.runs]:
            raise ValueError(f"run {run_id!r} has no requests to replay")
        if run_id != self.run_id:
            self.trace = None
        self.run_id = run_id

    # -- settings ---------------------------------------------------------------------------
    def set(self, **values) -> None:
        """Set settings by name (SETTINGS, gb, bytes_per_token, add_run), each checked against
        its range; a capacity in GB (or its bytes per token, or the block size) that changed
        sets the blocks."""
        before = (self.gb, self.bytes_per_token, self.block_size)
        for k, v in values.items():
            if k == "eviction":
                if v not in EVICTION_POLICIES:
                    raise ValueError(f"eviction {v!r} is not one of {', '.join(EVICTION_POLICIES)}")
            elif k == "routing":
                if v not in ROUTING_CHOICES:
                    raise ValueError(f"routing {v!r} is not one of {', '.join(ROUTING_CHOICES[1:])}")
            elif k == "validate_mode":
                from explorer.core.replay.loo import validators
                validators(v)   # ValueError on a mode that is not one
            elif k == "add_run":
                v = bool(v)
            elif k in RANGES:
                lo, hi = RANGES[k]
                if not lo <= v <= hi:
                    raise ValueError(f"{k} {v} outside [{lo}, {hi}]")
                v = float(v) if k == "gb" else int(v)
            else:
                raise KeyError(k)
            setattr(self, k, v)
        if (self.gb, self.bytes_per_token, self.block_size) != before and self.gb > 0:
            self.blocks = blocks_for_gb(self.gb, self.bytes_per_token, self.block_size)

    def apply_observed(self, observed: dict) -> None:
        """The settings the chosen run records (SettingsQuery), so a scenario starts there. A
        null num_gpu_blocks is an infinite cache (0); any other null setting is not recorded
        and keeps the current value. Raises ValueError (TypeError) on a value out of range or not
        a number."""
        names = {"num_gpu_blocks": "blocks", "eviction": "eviction", "max_num_seqs": "max_num_seqs",
                 "max_num_batched_tokens": "max_num_batched_tokens", "block_size": "block_size"}
        vals = {names[k]: (v or 0) if k == "num_gpu_blocks" else v
                for k, v in (observed or {}).items()
                if k in names and (v is not None or k == "num_gpu_blocks")}
        if vals.get("eviction") not in EVICTION_POLICIES:
            vals.pop("eviction", None)
        self.set(**{k: v if k == "eviction" else int(v) for k, v in vals.items()})
        self.recorded = {k: getattr(self, k) for k in SETTINGS}
        if self.blocks:   # the scenario starts at SCENARIO_BLOCKS x the observed capacity
            self.blocks = min(int(RANGES["blocks"][1]), SCENARIO_BLOCKS * self.blocks)

    def observed_config(self) -> EngineConfig:
        """The settings the run recorded (apply_observed; vLLM's defaults where it records
        none): what the observed latencies were measured at, so what calibration fits."""
        r = {**{k: getattr(ReplayState(), k) for k in SETTINGS}, **self.recorded}
        return EngineConfig(num_gpu_blocks=r["blocks"] or None, block_size=r["block_size"],
                            max_num_seqs=r["max_num_seqs"],
                            max_num_batched_tokens=max(r["max_num_batched_tokens"], r["max_num_seqs"]),
                            eviction=r["eviction"])

    def config(self) -> EngineConfig:
        """The scenario's EngineConfig; raises ValueError on settings that cannot work."""
        cfg = EngineConfig(num_gpu_blocks=self.blocks or None, block_size=self.block_size,
                           max_num_seqs=self.max_num_seqs,
                           max_num_batched_tokens=max(self.max_num_batched_tokens, self.max_num_seqs),
                           eviction=self.eviction)
        cfg.validate()
        return cfg

    def scenario(self) -> dict:
        """The settings as the scenario's changes to the observed run's (badcases.predict)."""
        cfg = self.config()
        return {"num_gpu_blocks": cfg.num_gpu_blocks, "eviction": cfg.eviction,
                "max_num_seqs": cfg.max_num_seqs,
                "max_num_batched_tokens": cfg.max_num_batched_tokens}

    def error_applies(self) -> dict:
        """Which error applies to a replay of the chosen run with the settings shown (issue 34):
        {kind, text}: "in-sample" at the settings the run recorded (the calibration's own
        errors), else the run's validation when one was made ("validated at N settings, median
        error X%"), else "not validated"."""
        from explorer.core.replay.validate import in_sample
        try:
            same = self.config() == self.observed_config()
        except ValueError:
            same = False
        if same:
            return in_sample()
        v = self.validations.get(self.run_id)
        if v is not None:
            return {"kind": v["kind"], "text": v["text"]}
        return {"kind": "not validated", "text": _("not validated")}

    def validate_job(self) -> ValidateJob:
        """The out-of-sample check of the chosen run at the settings it recorded."""
        if self.run_id is None:
            raise RuntimeError(_("no run chosen"))
        return ValidateJob(self.run_id, self.observed_config(), self.replicas, self.routing,
                           self.validate_mode)

    # -- work -------------------------------------------------------------------------------
    def settings_query(self) -> SettingsQuery | None:
        return SettingsQuery(self.run_id) if self.run_id is not None else None

    def trace_query(self) -> TraceQuery | None:
        """The store read the chosen run still needs (None when read already or no run)."""
        if self.run_id is None or (self.trace is not None and self.trace.run_id == self.run_id):
            return None
        return TraceQuery(self.run_id)

    def take_trace(self, trace: ReplayTrace) -> None:
        if trace.run_id == self.run_id:
            self.trace = trace

    def replay_job(self) -> ReplayJob:
        """The replay of the chosen run's trace under the settings (raises ValueError on
        settings that cannot work, RuntimeError before its trace is read)."""
        observed = self.observed_config()
        return ReplayJob(self._trace(), self.config(), observed,
                         self.calibrations.get((self.run_id, observed, self.replicas,
                                                self.routing)), self.replicas, self.routing)

    def keep_calibration(self, job: ReplayJob, cal) -> None:
        """Keep a job's calibration for the next scenario of the same run (one verdict)."""
        if cal is not None and job.trace.run_id == self.run_id:
            self.calibrations[(job.trace.run_id, job.observed, job.replicas, job.routing)] = cal

    def sweep_job(self, points: int = 6) -> SweepJob:
        """Six capacities (geometric, compare.default_capacities) around the one set."""
        from explorer.core.replay.compare import default_capacities
        cfg, trace = self.config(), self._trace()
        caps = default_capacities(trace.requests, cfg.block_size, points=points,
                                  include=cfg.num_gpu_blocks)
        return SweepJob(trace, cfg, tuple(caps))

    def predict_job(self, inputs) -> PredictJob:
        return PredictJob(inputs, self.scenario())

    def _trace(self) -> ReplayTrace:
        if self.trace is None or self.trace.run_id != self.run_id:
            raise RuntimeError("the chosen run's trace is not read yet (trace_query)")
        return self.trace
