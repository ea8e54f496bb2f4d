"""Engine versions compared at run level, from the aggregates result files publish
(`run_metrics`): the only comparison possible when the files hold no per-request rows
(aggregates-only `--save-result` JSON, SGLang JSONL lines, printed result blocks).

Runs are grouped by (engine, benchmark); a group with at least two engine versions is compared
version after version (ordered by versions.version_key). Per (metric, stat) published by both
versions (latencies: mean / median / p90 / p99 of TTFT, TPOT, ITL, E2E; throughputs), the value
of a version is the mean over its runs in the group; change_pct = (new - old) / |old| x 100.
No test is possible on one number per version: `tested` is False, p_value None, and the
regression flag comes from versions.regression_flag with run_level=True (the one rule of the
project: the bad direction and at least min_change_pct). The good direction of a metric is the
knowledge base's (`better`), else RUN_ONLY_BETTER for the run-level metrics the knowledge base
does not describe.
"""
from __future__ import annotations

from ..errors import NoData
from .versions import DEFAULTS, regression_flag, version_key
from explorer.core.i18n import _

STATS = ("mean", "median", "p90", "p99")
RUN_ONLY_BETTER = {"itl_ms": "lower", "request_throughput": "higher",
                   "output_throughput": "higher", "total_token_throughput": "higher",
                   "input_throughput": "higher", "request_goodput": "higher"}


def compare_run_versions(store, params: dict | None = None) -> dict:
    """{"values": [{engine, benchmark, engine_version, metric, stat, unit, value, runs}],
    "changes": [{engine, benchmark, metric, stat, unit, from_version, to_version, from_value,
    to_value, change_pct, better, tested, p_value, regression, level}], "min_change_pct"}.
    Regressions first, then by |change %|. Raises NoData when no two versions of one
    (engine, benchmark) published comparable aggregates."""
    from .conclusion import load_knowledge_base

    p = {**DEFAULTS, **(params or {})}
    kb = p.get("kb") or load_knowledge_base()
    df = store.query("runs_versions_metrics")
    if df.empty:
        raise NoData(_("no run with an engine version published aggregates"))
    values, changes = [], []
    for (engine, bench), g in df.groupby(["engine", "benchmark"], dropna=False, sort=True):
        versions = sorted(g["engine_version"].unique(), key=version_key)
        if len(versions) < 2:
            continue
        agg = g.groupby(["engine_version", "metric", "stat", "unit"], as_index=False).agg(
            value=("value", "mean"), runs=("run_id", "nunique"))
        by = {(r.engine_version, r.metric, r.stat): r for r in agg.itertuples(index=False)}
        for r in agg.itertuples(index=False):
            values.append({"engine": engine, "benchmark": bench, "engine_version": r.engine_version,
                           "metric": r.metric, "stat": r.stat, "unit": r.unit,
                           "value": float(r.value), "runs": int(r.runs)})
        keys = sorted({(m, s, u) for _, m, s, u in agg[["engine_version", "metric", "stat",
                                                        "unit"]].itertuples(index=False)})
        for old, new in zip(versions, versions[1:]):
            for m, s, u in keys:
                a, b = by.get((old, m, s)), by.get((new, m, s))
                if a is None or b is None:
                    continue
                better = kb.get("metrics", {}).get(m, {}).get("better") or RUN_ONLY_BETTER.get(m)
                pct = (b.value - a.value) / abs(a.value) * 100 if a.value else None
                changes.append({
                    "engine": engine, "benchmark": bench, "metric": m, "stat": s, "unit": u,
                    "from_version": old, "to_version": new, "from_value": float(a.value),
                    "to_value": float(b.value), "change_pct": pct, "better": better,
                    "tested": False, "p_value": None, "level": "run",
                    "regression": regression_flag(a.value, b.value, pct, better, None,
                                                  p["alpha"], p["min_change_pct"],
                                                  run_level=True, metric=m)})
    if not changes:
        raise NoData(_("no engine and benchmark has published aggregates on two engine versions"))
    changes.sort(key=lambda c: (not c["regression"], -abs(c["change_pct"] or 0.0),
                                c["metric"], c["stat"]))
    return {"values": values, "changes": changes, "min_change_pct": p["min_change_pct"]}
