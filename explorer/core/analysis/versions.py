"""Engine versions compared on the same benchmark (DESIGN `versions`).

Runs are grouped by (benchmark, engine_version) (queries/analysis_versions.sql); only the
benchmarks run on at least two versions are compared (the others are listed in
`single_version`); when no benchmark is run on two versions, every benchmark is pooled per
version instead. Versions are
ordered by their numeric parts ("v0.2.1" < "v0.3.0" < "0.10.0"). For each pair of consecutive
versions and each metric: change_pct = (new - old) / |old| x 100, a two-sided Mann-Whitney U p
between the two versions' requests (on a deterministic hash sample of at most `sample_max`
requests per version, queries/analysis_versions_sample.sql, so that 1M requests stay fast);
with at least two runs on each version, Welch's t over the runs' means instead (run level:
requests of one run are not independent draws of the release; `test` names the test used),
with one run per version a note that run-to-run variance is unknown;
p_adjusted (Benjamini-Hochberg over every change tested) and `regression` = p_adjusted < alpha,
|change_pct| >= min_change_pct and the change goes the bad way (the `better` direction of the
metric in resources/knowledge_base.toml), never for a workload metric (WORKLOAD_METRICS: prompt /
completion tokens, request rate), whose difference is reported as `workload_differs`, a
confounder (`notes`). Accuracy per version, overall and per eval category:
the cases bound to the version's requests (queries/analysis_versions_accuracy.sql).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..errors import NoData
from .results import VersionsResult, num
from explorer.core.i18n import _

METRICS = ("kv_cache_hit_rate", "num_preemptions", "tpot_ms", "batch_size", "ttft_ms",
           "queue_ms", "e2e_ms", "prompt_tokens", "completion_tokens")
# What the releases were asked to do, not how they did it: a difference between releases means
# the workload differs (a confounder of every other difference), never a regression.
WORKLOAD_METRICS = frozenset({"prompt_tokens", "completion_tokens", "request_rate"})
DEFAULTS = {"metrics": METRICS, "alpha": 0.05, "min_change_pct": 5.0, "sample_max": 20000,
            "max_changes": 12}


def version_key(v: str) -> tuple:
    """Sort key of a version string: numeric parts as numbers ("0.10" after "0.9"), a leading
    "v" ignored ("v0.2.1" == "0.2.1")."""
    v = re.sub(r"^[vV](?=\d)", "", str(v))
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t.lower())
                 for t in re.findall(r"\d+|[A-Za-z]+", str(v))) or ((2, 0, str(v)),)


def compare_versions(store, cohort=None, params: dict | None = None) -> VersionsResult:
    """Per-version metric values, changes between consecutive versions with Mann-Whitney p and
    the regression flag, and accuracy per version (see the module doc).

    Only benchmarks run on at least two versions are compared (their values and changes are
    listed); the others are named in `single_version` ([{benchmark, engine_version}]) so that a
    folder of many one-release configurations stays readable. Changes are sorted regressions
    first, then by adjusted p, then by |change %|; `summary` gives one row per (metric,
    from_version, to_version) over the benchmarks compared.

    params: metrics, alpha (0.05), min_change_pct (5.0), sample_max (20000), max_changes (12:
    the report's "changes" list keeps the most significant ones, "all_changes" every one;
    None = no cap), kb (a loaded
    knowledge base; default resources/knowledge_base.toml). `cohort`: only its eval_id is used
    (versions compare whole runs; with an eval_id, the runs bound to that eval's cases and the
    accuracy of its cases). Raises NoData when no run names an engine version."""
    from .conclusion import load_knowledge_base

    p = {**DEFAULTS, **(params or {})}
    kb = p.get("kb") or load_knowledge_base()
    eval_id = getattr(cohort, "eval_id", None)
    by_bench = True
    agg = store.query("analysis_versions", {"by_benchmark": True, "eval_id": eval_id})
    if agg.empty:
        if eval_id is not None:
            raise NoData(_("no run bound to a case of eval {eval_id!r} names an engine version, "
                         "so there is nothing to compare across versions").format(eval_id=eval_id))
        raise NoData(_("no loaded run with per-request rows names an engine version "
                     "(engine_version), so no request-level comparison across versions (runs "
                     "with published aggregates only are compared at run level)"))

    def multi(df):
        return df.groupby("benchmark", dropna=False)["engine_version"].nunique().max() >= 2

    if not multi(agg) and agg["engine_version"].nunique() >= 2:
        by_bench = False
        agg = store.query("analysis_versions", {"by_benchmark": False, "eval_id": eval_id})
    values, changes = [], []
    groups = {}
    for r in agg.to_dict("records"):
        groups.setdefault(r["benchmark"], []).append(r)
    for bench in groups:
        groups[bench].sort(key=lambda r: version_key(r["engine_version"]))
    order = sorted(agg["engine_version"].unique().tolist(), key=version_key)
    single = []
    if any(len(g) >= 2 for g in groups.values()):
        single = [{"benchmark": b, "engine_version": g[0]["engine_version"]}
                  for b, g in groups.items() if len(g) < 2]
        single.sort(key=lambda r: (version_key(r["engine_version"]), str(r["benchmark"])))
        groups = {b: g for b, g in groups.items() if len(g) >= 2}
    samples = (_samples(store, p, by_bench, eval_id)
                if groups and any(len(g) >= 2 for g in groups.values()) else {})
    for bench in sorted(groups, key=lambda b: (b is None, str(b))):
        rows = groups[bench]
        for r in rows:
            for m in p["metrics"]:
                if r.get(f"n_{m}"):
                    values.append({"benchmark": bench, "engine_version": r["engine_version"],
                                   "metric": m, "value": num(r[m]), "n": int(r[f"n_{m}"]),
                                   "runs": int(r["runs"])})
        for old, new in zip(rows, rows[1:]):
            changes += [_change(bench, old, new, m, kb, samples) for m in p["metrics"]
                        if old.get(f"n_{m}") and new.get(f"n_{m}")]
    _adjust(changes, p)
    changes.sort(key=change_rank)
    summary = summarize_changes(changes, p["alpha"])
    accuracy, by_cat = _accuracy(store, by_bench, eval_id, groups if single else None)
    notes = version_notes(changes, values)
    return VersionsResult(values=tuple(values), changes=tuple(changes), accuracy=tuple(accuracy),
                          versions=tuple(order), alpha=p["alpha"],
                          min_change_pct=p["min_change_pct"], pooled=not by_bench,
                          accuracy_by_category=tuple(by_cat), single_version=tuple(single),
                          summary=tuple(summary), max_changes=p["max_changes"],
                          notes=tuple(notes))


def _samples(store, p: dict, by_bench: bool, eval_id) -> dict:
    """{(benchmark, version): {metric: request values, "__runs": {metric: run means}}} of the
    hash sample (queries/analysis_versions_sample.sql) the tests read."""
    samples: dict = {}
    sample = store.query("analysis_versions_sample", {"max_n": int(p["sample_max"]),
                                                      "by_benchmark": by_bench,
                                                      "eval_id": eval_id})
    metrics = list(p["metrics"])
    # dropna=False keeps the NULL benchmark (pooled, or unknown) as its own group; a fillna
    # sentinel did not survive pandas 3's string dtype ("\0" came back as ""), so the lookup
    # by (None, version) missed and no change was ever tested without a benchmark column
    for (b, v), g in sample.groupby(["benchmark", "engine_version"], sort=False, dropna=False):
        # every metric's run means from one groupby (a groupby per metric cost as much as the
        # nine Mann-Whitney tests); the same per-column means, in run_id order
        runs = g.groupby("run_id")[metrics].mean()
        key = (None if pd.isna(b) else b, v)
        samples[key] = {m: g[m].dropna().to_numpy(dtype=float) for m in metrics}
        samples[key]["__runs"] = {m: runs[m].dropna().to_numpy(dtype=float) for m in metrics}
        samples[key]["__frame"] = g   # the workload test reads the lengths beside each metric
    return samples


def _change(bench, old: dict, new: dict, m: str, kb: dict, samples: dict) -> dict:
    """The change of metric m from version row `old` to `new` of one benchmark: values,
    change %, the Mann-Whitney p of the sampled requests (Welch over runs where each version
    has two, _run_level), or the reason there is none. p_adjusted and the flags: _adjust."""
    from scipy import stats
    a, b = num(old[m]), num(new[m])
    better = kb.get("metrics", {}).get(m, {}).get("better")
    ch = {"benchmark": bench, "metric": m, "from_version": old["engine_version"],
          "to_version": new["engine_version"], "from_value": a, "to_value": b,
          "change_pct": (b - a) / abs(a) * 100 if a else None,
          "n_from": int(old[f"n_{m}"]), "n_to": int(new[f"n_{m}"]),
          "p_value": None, "p_adjusted": None, "better": better,
          "regression": False, "reason": None, "workload": m in WORKLOAD_METRICS,
          "workload_differs": False}
    empty = np.empty(0)
    x = samples.get((bench, old["engine_version"]), {}).get(m, empty)
    y = samples.get((bench, new["engine_version"]), {}).get(m, empty)
    if len(x) < 2 or len(y) < 2:
        ch["reason"] = f"too few values (n={len(x)} and {len(y)})"
    elif np.ptp(np.concatenate([x, y])) == 0:
        ch["reason"] = "no variation (every value is equal)"
    else:
        ch["p_value"] = float(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)
        ch["test"] = "mann-whitney-u (requests)"
        if len(x) < ch["n_from"] or len(y) < ch["n_to"]:
            ch["reason"] = f"p from a hash sample of {len(x)} and {len(y)} requests"
        _run_level(ch, samples.get((bench, old["engine_version"]), {}),
                   samples.get((bench, new["engine_version"]), {}), m)
        if m not in WORKLOAD_METRICS:
            _at_equal_workload(ch, samples.get((bench, old["engine_version"]), {}),
                               samples.get((bench, new["engine_version"]), {}), m)
    if a == 0 and b != 0:
        ch["reason"] = "; ".join(filter(None, [ch["reason"], "old value is 0"]))
    return ch


def _at_equal_workload(ch: dict, old: dict, new: dict, m: str) -> None:
    """Like with like (issue 35): when the sampled requests have prompt / output lengths, the
    change of an engine metric is tested at equal workload: the release's coefficient in the OLS
    of the metric on a cubic of each standardised log length and the release (robust HC1 errors,
    workload.ols_effect); at run level Welch over the runs' means of the metric less its fit on
    the lengths. Its p is p_workload (Benjamini-Hochberg over the changes so tested:
    p_workload_adjusted), its size adjusted_change_pct (the coefficient over |old value|); a
    regression must hold there too (_adjust). p_value stays the unadjusted test's."""
    from scipy import stats

    from .workload import OWN_PART, _design, ols_effect, residualize, uncached_design
    fo, fn = old.get("__frame"), new.get("__frame")
    if fo is None or fn is None:
        return
    f = pd.concat([fo.assign(__new=False), fn.assign(__new=True)], ignore_index=True)
    lengths = [c for c in ("prompt_tokens", "completion_tokens")
               if c in f and f[c].notna().any()]
    if not lengths:
        return
    X = _design(f[lengths])
    x = pd.to_numeric(f[m], errors="coerce").to_numpy(dtype=float)
    part = OWN_PART.get(m)
    if part in f and f[part].notna().any():
        # TTFT's own part (prefill): less the scheduling delay, which the load sets, at equal
        # uncached prompt tokens (a hit-rate regression is the cache's)
        x = x - pd.to_numeric(f[part], errors="coerce").fillna(0).to_numpy(dtype=float)
        X = uncached_design(f, X)
        ch["workload_part"] = f"{m} minus {part}, at equal uncached prompt tokens"
    is_new = f["__new"].to_numpy()
    fit = ols_effect(x, X, is_new)
    if fit is None:
        return
    res = residualize(x, X)
    ok = np.isfinite(res)
    a = ch["from_value"]
    ch["p_workload"] = fit[1]
    ch["adjusted_change_pct"] = fit[0] / abs(a) * 100 if a else None
    ch["workload_test"] = ("regression-adjusted mean difference at equal prompt / output length "
                           "(HC1)")
    ch["adjusted_for"] = lengths
    if ch.get("runs_from", 0) >= 2 and ch.get("runs_to", 0) >= 2:
        runs = pd.DataFrame({"run": f["run_id"].to_numpy()[ok], "new": f["__new"].to_numpy()[ok],
                             "r": res[ok]}).groupby(["new", "run"])["r"].mean()
        t = stats.ttest_ind(runs.loc[False].to_numpy(), runs.loc[True].to_numpy(),
                            equal_var=False).pvalue
        ch["p_workload"] = float(t) if np.isfinite(t) else 1.0
        ch["workload_test"] = (f"welch-t over run means at equal prompt / output length "
                               f"({ch['runs_from']} and {ch['runs_to']} runs)")


#: Metrics set by the offered load of a run (how many requests arrived together), which differs
#: between runs of the same release: with one run per version their change is not flagged.
LOAD_METRICS = frozenset({"batch_size", "queue_ms"})


def _adjust(changes: list[dict], p: dict) -> None:
    """Benjamini-Hochberg over every change tested, then the regression and workload flags."""
    from scipy import stats
    tested = [c for c in changes if c["p_value"] is not None]
    if not tested:
        return
    adj = stats.false_discovery_control([c["p_value"] for c in tested], method="bh")
    wl = [c for c in tested if c.get("p_workload") is not None]
    if wl:
        for c, q in zip(wl, stats.false_discovery_control([c["p_workload"] for c in wl],
                                                          method="bh")):
            c["p_workload_adjusted"] = float(q)
    for c, q in zip(tested, adj):
        c["p_adjusted"] = float(q)
        c["regression"] = regression_flag(c["from_value"], c["to_value"], c["change_pct"],
                                          c["better"], c["p_adjusted"], p["alpha"],
                                          p["min_change_pct"], metric=c["metric"])
        if c["regression"] and "p_workload_adjusted" in c:
            # like with like: the change must also hold at equal prompt / output length
            a, pct = c["from_value"], c["adjusted_change_pct"]
            c["regression"] = regression_flag(
                a, a + (pct or 0) / 100 * abs(a) if pct is not None else c["to_value"], pct,
                c["better"], c["p_workload_adjusted"], p["alpha"], p["min_change_pct"],
                metric=c["metric"])
            if not c["regression"]:
                c["reason"] = "; ".join(filter(None, [
                    c["reason"], _("not at equal prompt / output length: the workload "
                                   "differs")]))
        if c["regression"] and c["metric"] in LOAD_METRICS and "runs_from" not in c:
            # one run per version: a load-set metric's change may be run-to-run noise
            c["regression"] = False
            c["reason"] = "; ".join(filter(None, [
                c["reason"], _("set by the offered load; with one run per version run-to-run "
                               "noise is unknown, so not flagged")]))
        c["workload_differs"] = bool(c["workload"] and q < p["alpha"] and (
            c["change_pct"] is None or abs(c["change_pct"]) >= p["min_change_pct"]))


def _accuracy(store, by_bench: bool, eval_id, compared: dict | None):
    """(accuracy per version, per version and category) of the cases bound to each version's
    requests; compared: only these benchmarks (None: all)."""
    acc = store.query("analysis_versions_accuracy",
                      {"by_benchmark": by_bench, "eval_id": eval_id}).to_dict("records")
    if compared is not None:
        acc = [r for r in acc if r["benchmark"] in compared]
    acc.sort(key=lambda r: (str(r["benchmark"]), version_key(r["engine_version"]),
                            str(r["category"])))
    accuracy = [{"benchmark": r["benchmark"], "engine_version": r["engine_version"],
                 "accuracy": num(r["accuracy"]), "n_cases": int(r["n_cases"])}
                for r in acc if not r["by_category"]]
    by_cat = [{"benchmark": r["benchmark"], "engine_version": r["engine_version"],
               "category": r["category"] if isinstance(r["category"], str) else None,
               "accuracy": num(r["accuracy"]), "n_cases": int(r["n_cases"])}
              for r in acc if r["by_category"]]
    return accuracy, by_cat


def regression_flag(from_value, to_value, change_pct, better, p_adjusted, alpha: float,
                    min_change_pct: float, run_level: bool = False, metric: str | None = None
                    ) -> bool:
    """The one regression rule: never for a workload metric (WORKLOAD_METRICS); the change goes
    the bad way (`better` is "higher" or "lower"),
    |change_pct| >= min_change_pct (an unknown change_pct, from a 0 old value, counts as big)
    and, per request, p_adjusted < alpha. At run level (run_versions: one published aggregate
    per version, nothing to test) the first two conditions decide."""
    if metric in WORKLOAD_METRICS:
        return False
    worse = (better == "higher" and to_value < from_value) or \
            (better == "lower" and to_value > from_value)
    big = change_pct is None or abs(change_pct) >= min_change_pct
    if run_level:
        return bool(worse and big)
    return bool(p_adjusted is not None and p_adjusted < alpha and worse and big)


def _run_level(ch: dict, old: dict, new: dict, m: str) -> None:
    """With at least two runs on each version, the change is tested at run level: Welch's t
    test of the runs' means (scipy.stats.ttest_ind, equal_var=False), which carries the
    run-to-run variance that a test over pooled requests ignores; the request-level
    Mann-Whitney p stays as p_requests."""
    from scipy import stats

    a = old.get("__runs", {}).get(m, np.empty(0))
    b = new.get("__runs", {}).get(m, np.empty(0))
    if len(a) < 2 or len(b) < 2:
        return
    p = stats.ttest_ind(a, b, equal_var=False).pvalue
    ch["p_requests"] = ch["p_value"]
    ch["runs_from"], ch["runs_to"] = int(len(a)), int(len(b))
    ch["p_value"] = float(p) if np.isfinite(p) else 1.0
    ch["test"] = f"welch-t over run means ({len(a)} and {len(b)} runs)"


def version_notes(changes, values) -> list[str]:
    """Sentences the versions section and the conclusion state beside the changes: that the
    workload differs between releases (a confounder, not a regression), and that with one run
    per version run-to-run variance is unknown."""
    from ..names import label
    from .. import fmt

    out = []
    wl = [c for c in changes if c.get("workload_differs")]
    if wl:
        parts = [f"{label(c['metric'], with_unit=False)} {fmt.pct(c['change_pct'])} "
                 f"({c['from_version']} → {c['to_version']}"
                 + (_(", benchmark {benchmark}").format(benchmark=c["benchmark"])
                    if c.get("benchmark") else "") + ")"
                 for c in wl[:3]]
        more = _(" and {n} more").format(n=len(wl) - 3) if len(wl) > 3 else ""
        out.append(_("The workload differs between the releases: {changes}{more}. The releases "
                     "served different requests, so this is not a regression but a confounder: "
                     "part of any other difference between them may come from the workload; "
                     "compare them on the same prompts before blaming the engine.").format(
                         changes="; ".join(parts), more=more))
    runs = [v.get("runs") for v in values if v.get("runs") is not None]
    if changes and runs and max(runs) <= 1:
        out.append(_("One run per version: run-to-run variance is unknown, so a change between "
                     "versions may be the difference between two runs of the same release; the "
                     "p-values treat the requests of a run as independent. Several runs per "
                     "version would allow a test at run level."))
    return out


def change_rank(c: dict) -> tuple:
    """Sort key of a change: regressions first, then by adjusted p (untested last), then by
    the size of the change (largest first), then benchmark and metric for a stable order."""
    q = c.get("p_adjusted")
    return (not c.get("regression"), q is None, q if q is not None else 1.0,
            -abs(c.get("change_pct") or 0.0), str(c.get("benchmark")), c["metric"])


def summarize_changes(changes, alpha: float = 0.05) -> list[dict]:
    """One row per (metric, from_version, to_version) over the benchmarks compared:
    {metric, from_version, to_version, benchmarks (changes), significant (p_adjusted < alpha),
    regressions, median_change_pct, min_change_pct, max_change_pct, min_p_adjusted}; rows
    with a regression first, then by the number of regressions and the smallest adjusted p."""
    by: dict = {}
    for c in changes:
        by.setdefault((c["metric"], c["from_version"], c["to_version"]), []).append(c)
    out = []
    for (m, a, b), cs in by.items():
        pct = [c["change_pct"] for c in cs if c["change_pct"] is not None]
        qs = [c["p_adjusted"] for c in cs if c["p_adjusted"] is not None]
        out.append({"metric": m, "from_version": a, "to_version": b, "benchmarks": len(cs),
                    "significant": sum(q < alpha for q in qs),
                    "regressions": sum(bool(c["regression"]) for c in cs),
                    "median_change_pct": num(np.median(pct)) if pct else None,
                    "min_change_pct": num(min(pct)) if pct else None,
                    "max_change_pct": num(max(pct)) if pct else None,
                    "min_p_adjusted": num(min(qs)) if qs else None})
    out.sort(key=lambda r: (-r["regressions"], r["min_p_adjusted"] if r["min_p_adjusted"]
                            is not None else 2.0, version_key(r["from_version"]), r["metric"]))
    return out
