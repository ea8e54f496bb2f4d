"""Runs as first-class data: who ran what (label, engine, version and where the version came
from), the aggregates the result file published (`run_metrics`), the same aggregates
recomputed by the product from the request rows with the benchmarks' own definitions, and
loud flags (a run in which no request succeeded).

Recomputation follows calculate_metrics of vllm/benchmarks/serve.py and
sglang/bench_serving.py over the successful requests (error IS NULL): TTFT with a request
that streamed nothing counted as 0 ms (the benchmarks' initial value; the store keeps NULL),
TPOT = (e2e - ttft) / (output_len - 1) for output_len > 1 (the requests' tpot_ms), ITL over
every chunk gap pooled (token_latencies), E2E over the requests' e2e_ms, token counts over
the successful requests' prompt / completion tokens (AIPerf's input / output_sequence_length,
LLMPerf's number_input / output_tokens); mean, median, std (population, numpy's default),
total and pNN (numpy's linear interpolation); throughputs divide by the published duration. See explorer/core/formats/_results.py for the vocabulary.
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from .i18n import N_, _, ngettext

RATE_METRICS = {"request_throughput": "completed", "output_throughput": "completion_tokens",
                "input_throughput": "prompt_tokens", "total_token_throughput": "all_tokens"}


def _f(x: Any) -> float | None:
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def published(store, run_ids: list[str] | None = None) -> pd.DataFrame:
    """run_metrics rows (run_id, metric, stat, value, unit) of some runs (None = all)."""
    return store.query("runs_published", {"run_ids": None if run_ids is None else list(run_ids)})


def _stat(values: np.ndarray, stat: str) -> float | None:
    if stat == "mean":
        return float(np.mean(values))
    if stat == "median":
        return float(np.median(values))
    if stat in ("std", "std_sample"):  # population (numpy's default) / sample (ddof 1)
        return float(np.std(values, ddof=1 if stat == "std_sample" else 0))
    if stat == "total":
        return float(values.sum())
    if stat in ("min", "max"):
        return float(values.min() if stat == "min" else values.max())
    m = re.fullmatch(r"p(\d+(?:\.\d+)?)", stat)
    return float(np.percentile(values, float(m.group(1)))) if m else None


def recompute(store, run_id: str, wanted: pd.DataFrame) -> list[dict[str, Any]]:
    """For each published (metric, stat) of `wanted` (run_metrics rows of this run) that the
    run's request rows can give: {metric, stat, unit, published, recomputed, diff_pct}, or
    recomputed None with a `note` saying why (E2E when some successful requests have no
    latency in the file).
    [] when the run has no request rows (aggregates-only results)."""
    req = store.query("runs_request_values", {"run_id": run_id})
    n_all = store.scalar("SELECT count(*) FROM requests WHERE run_id = ?", [run_id])
    if not n_all:
        return []
    itl = None
    pops = {"ttft_ms": req["ttft_ms"].astype("float64").fillna(0.0).to_numpy(),
            "tpot_ms": req["tpot_ms"].dropna().astype("float64").to_numpy(),
            "e2e_ms": req["e2e_ms"].dropna().astype("float64").to_numpy(),
            **{c: req[c].dropna().astype("float64").to_numpy()  # AIPerf's, LLMPerf's token stats
               for c in ("prompt_tokens", "completion_tokens")}}
    no_e2e = int(req["e2e_ms"].isna().sum())  # the benchmark measured them; the file has no value
    sums = {"completed": float(len(req)),
            "prompt_tokens": float(req["prompt_tokens"].dropna().sum()),
            "completion_tokens": float(req["completion_tokens"].dropna().sum())}
    sums["all_tokens"] = sums["prompt_tokens"] + sums["completion_tokens"]
    counts = {"completed": float(len(req)), "failed": float(n_all - len(req)), "total": float(n_all)}
    pub = {(r.metric, r.stat): r.value for r in wanted.itertuples(index=False)}
    duration = _f(pub.get(("duration_s", "value")))
    out = []
    for r in wanted.itertuples(index=False):
        value = None
        if r.metric == "itl_ms":
            if itl is None:
                itl = store.query("runs_itls", {"run_id": run_id})["itl_ms"].to_numpy(float)
            if len(itl):
                value = _stat(itl, r.stat)
        elif r.metric == "e2e_ms" and no_e2e:
            out.append({"metric": r.metric, "stat": r.stat, "unit": r.unit,
                        "published": _f(r.value), "recomputed": None, "diff_pct": None,
                        "note": ngettext(
                            "not recomputed: the file has no latency for {n} successful request "
                            "that streamed nothing",
                            "not recomputed: the file has no latency for {n} successful requests "
                            "that streamed nothing", no_e2e).format(n=no_e2e)})
            continue
        elif r.metric in pops:
            if len(pops[r.metric]):
                value = _stat(pops[r.metric], r.stat)
        elif r.metric == "requests":
            value = counts.get(r.stat)
        elif r.metric in RATE_METRICS and r.stat == "value" and duration:
            value = sums[RATE_METRICS[r.metric]] / duration
        if value is None:
            continue
        p = _f(r.value)
        out.append({"metric": r.metric, "stat": r.stat, "unit": r.unit, "published": p,
                    "recomputed": value,
                    "diff_pct": (value - p) / abs(p) * 100 if p else None})
    return out


def overview(store, run_ids: list[str] | None = None) -> list[dict[str, Any]]:
    """One dict per run: run_id, label, engine, engine_version, version_source, model,
    benchmark, format, source_path, simulated, n_requests, completed, failed, no_success,
    flags (sentences for the user), published [{metric, stat, value, unit}], recomputed
    (see recompute), recomputed_all (every statistic its requests give: TTFT / TPOT / ITL / E2E
    mean, median, p90, p99, throughputs, goodput), workload (its description) and
    workload_user (the user's workload name, '' when none)."""
    runs = store.query("runs_overview")
    if run_ids is not None:
        runs = runs[runs["run_id"].isin(list(run_ids))]
    pub = published(store, None if run_ids is None else list(run_ids))
    by_run = {k: g for k, g in pub.groupby("run_id", sort=False)}
    from .analysis.runcompare.pairs import recomputed as recompute_every
    from .analysis.runcompare.workload import describe, parse_config, run_workload
    every = recompute_every(store) if len(runs) else {}
    configs = dict(store.df("SELECT run_id, config FROM runs").itertuples(index=False))
    out = []
    for r in runs.to_dict("records"):
        p = by_run.get(r["run_id"], pub.iloc[0:0])
        pd_ = {(m, s): v for m, s, v in zip(p["metric"], p["stat"], p["value"])}
        n = int(r["n_requests"])
        completed = _f(pd_.get(("requests", "completed")))
        failed = _f(pd_.get(("requests", "failed")))
        if completed is None and n:
            completed, failed = float(r["n_ok"]), float(r["n_failed"])
        no_success = completed == 0 and (failed or n or not p.empty)
        flags = []
        if no_success:
            flags.append(_("no successful request: 0 completed, {failed} failed; its latencies "
                           "(printed as 0) are not measurements").format(failed=int(failed or 0)))
        if n and r["engine"] in ("vllm", "sglang"):
            silent = store.scalar("SELECT count(*) FROM requests WHERE run_id = ? AND error IS"
                                  " NULL AND ttft_ms IS NULL", [r["run_id"]])
            if silent:
                flags.append(ngettext(
                    "{n} successful request streamed no token: the benchmark counts its TTFT as "
                    "0 ms, the product leaves it empty",
                    "{n} successful requests streamed no token: the benchmark counts their TTFT "
                    "as 0 ms, the product leaves it empty", silent).format(n=silent))
        out.append({
            **{k: (None if isinstance(v, float) and math.isnan(v) else v)
               for k, v in r.items() if k not in ("n_ok", "n_failed")},
            "n_requests": n, "completed": completed, "failed": failed,
            "no_success": bool(no_success), "flags": flags,
            "published": [{"metric": m, "stat": s, "value": _f(v), "unit": u}
                          for m, s, v, u in zip(p["metric"], p["stat"], p["value"], p["unit"])],
            "recomputed": recompute(store, r["run_id"], p) if n and not p.empty else [],
            # every statistic the requests give, published or not (runcompare.pairs.recomputed)
            "recomputed_all": every.get(r["run_id"], []),
            "workload": describe(run_workload({**r, "config": configs.get(r["run_id"])})),
            "workload_user": parse_config(configs.get(r["run_id"])).get("workload") or "",
        })
    return out


USER_SOURCE = N_("user")  # version_source of a version the user set (translated when set)


def set_run(store, run_id: str, *, engine_version: str | None = None,
            label: str | None = None, source: str | None = None, engine: str | None = None,
            workload: str | None = None) -> None:
    """The user's engine version, label, engine and / or workload name for one run (None
    leaves a field as it is; '' clears the version or the workload). Kept in the runs table,
    so a saved session keeps it; runs given one workload name are one workload
    (analysis.runcompare.workload)."""
    if engine is not None:
        store.execute("UPDATE runs SET engine = ? WHERE run_id = ?",
                      [engine.strip() or None, run_id])
    if workload is not None:
        from .analysis.runcompare.workload import set_workload
        set_workload(store, run_id, workload)
    if engine_version is not None:
        v = engine_version.strip() or None
        store.execute("UPDATE runs SET engine_version = ?, version_source = ? WHERE run_id = ?",
                      [v, (source or _(USER_SOURCE)) if v else None, run_id])
    if label is not None:
        store.execute("UPDATE runs SET label = ? WHERE run_id = ?", [label.strip() or None, run_id])


def parse_version_override(text: str) -> tuple[str, str]:
    """'PATH=VERSION' -> (PATH, VERSION). Raises ValueError naming the argument."""
    path, sep, version = str(text).rpartition("=")
    if not sep or not path.strip() or not version.strip():
        raise ValueError(_("--engine-version needs PATH=VERSION (e.g. runs/a.json=0.9.2), "
                           "not {text!r}").format(text=text))
    return path.strip(), version.strip()


def apply_version_overrides(store, overrides: list[tuple[str, str]]) -> list[str]:
    """Set the engine version of every run loaded from PATH (a file, or any file under a
    folder) for each (PATH, VERSION), the later pairs winning; version_source becomes
    "user: --engine-version PATH=VERSION". Returns one message per PATH that matched no run
    (the caller shows them)."""
    from pathlib import Path
    runs = store.df("SELECT run_id, source_path FROM runs")
    resolved = [(r, Path(p).resolve()) for r, p in zip(runs["run_id"], runs["source_path"])
                if isinstance(p, str)]
    problems = []
    for path, version in overrides:
        target = Path(path).resolve()
        hit = [r for r, p in resolved if p == target or target in p.parents]
        if not hit:
            problems.append(f"--engine-version {path}={version}: "
                            + _("no loaded run comes from {path}").format(path=path))
        for run_id in hit:
            set_run(store, run_id, engine_version=version,
                    source=_("user: {flag}").format(flag=f"--engine-version {path}={version}"))
    return problems
