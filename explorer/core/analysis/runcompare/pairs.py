"""Runs compared as A/B, like with like (DESIGN "Comparing runs": `runs`, `workloads`, `pairs`).

A run's value of a metric is recomputed from its successful requests where it has them
(queries/compare_run_stats.sql; TTFT / TPOT / E2E as vLLM's and SGLang's bench serving define them
over the successful requests: mean, median and pNN with numpy's linear interpolation; a
request that streamed no token has no TTFT and is left out), else the published aggregate
(`run_metrics`); both are given. Throughputs divide by the published duration, else by the span
from the first arrival to the last finish; goodput counts the requests within the SLO (vLLM's
`--goodput ttft:500 tpot:50`, DESIGN's SLA defaults).

Runs of one workload, engine, engine version and setting are repeats of one configuration
(a `variant`); a pair compares two variants. Default pairs: within each workload, the variants
that differ in exactly one of engine, engine version and setting (a workload of two variants
pairs them whatever differs); `baseline` pairs its variant with every other one (those of
another workload too, marked same_workload false); `runs` restricts the comparison to those
runs. Per metric: a and b (the mean of each side's runs), diff_pct, the interval and p of the
difference from the requests (stats.diff_interval), `beyond_noise` from the run-to-run spread
(stats.beyond_noise: None when each side has one run) and `regression`: only within one
workload, only beyond noise, in the metric's bad direction and by at least min_change_pct;
None when the spread is unknown, False across workloads (the workloads differ: the product
says how, in `workload_differs`).
"""
from __future__ import annotations

import json
import math
import zlib
from itertools import combinations
from typing import Any

import numpy as np

from explorer.core.i18n import _

from . import stats as st
from . import workload as wl

LATENCIES = ("ttft_ms", "tpot_ms", "e2e_ms")
STATS = ("mean", "median", "p90", "p99")
RATES = ("request_throughput", "output_throughput", "request_goodput")
BETTER = {"ttft_ms": "lower", "tpot_ms": "lower", "e2e_ms": "lower", "itl_ms": "lower",
          "request_throughput": "higher", "output_throughput": "higher",
          "request_goodput": "higher"}
DEFAULTS = {"alpha": 0.05, "min_change_pct": 5.0, "ttft_slo_ms": 500.0, "tpot_slo_ms": 50.0,
            "sample_max": 5000, "max_pairs": 400}


def _f(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def run_table(store, params: dict) -> tuple[list[dict], dict]:
    """([run dicts with workload, setting, values {(metric, stat): value}, published {...}],
    {run_id: stats row}) for every run."""
    runs = store.df("SELECT run_id, label, engine, engine_version, version_source, model, "
                    "benchmark, format, source_path, config FROM runs ORDER BY source_path, run_id")
    ids = runs["run_id"].tolist()
    rows = {r["run_id"]: r for r in store.query(
        "compare_run_stats", {"run_ids": ids, "ttft_slo_ms": params["ttft_slo_ms"],
                              "tpot_slo_ms": params["tpot_slo_ms"]}).to_dict("records")}
    if store.count("token_latencies"):
        for r in store.query("compare_run_itl", {"run_ids": ids}).to_dict("records"):
            rows.get(r["run_id"], {}).update(r)
    pub: dict[str, dict] = {}
    for r in store.query("runs_published", {"run_ids": ids}).itertuples(index=False):
        pub.setdefault(r.run_id, {})[(r.metric, r.stat)] = _f(r.value)
    out = []
    for r in runs.to_dict("records"):
        s = rows.get(r["run_id"])
        lengths = None if s is None else {"input_len": _f(s["input_len"]),
                                          "output_len": _f(s["output_len"])}
        w = wl.run_workload(r, lengths)
        p = pub.get(r["run_id"], {})
        out.append({**{k: r[k] for k in ("run_id", "label", "engine", "engine_version",
                                          "version_source", "model", "benchmark", "format",
                                          "source_path")},
                    "config": wl.parse_config(r["config"]), "workload": w,
                    "setting": wl.setting(r), "published": p,
                    "values": _values(s, p), "n_requests": 0 if s is None else int(s["n"])})
    return out, rows


def _values(s: dict | None, pub: dict) -> dict:
    """{(metric, stat): value}: recomputed from the requests where there are some, else the
    published aggregate."""
    vals = {k: v for k, v in pub.items() if k[0] in BETTER and v is not None}
    if s is None or not s["n"]:
        return vals
    for m in LATENCIES + ("itl_ms",):
        for stat in STATS:
            v = _f(s.get(f"{m}_{stat}"))
            if v is not None:
                vals[(m, stat)] = v
    duration = pub.get(("duration_s", "value")) or _f(s.get("span_s"))
    if duration and duration > 0:
        vals[("request_throughput", "value")] = s["n"] / duration
        if _f(s.get("completion_tokens_sum")) is not None:
            vals[("output_throughput", "value")] = float(s["completion_tokens_sum"]) / duration
        if _f(s.get("ttft_ms_mean")) is not None:
            vals[("request_goodput", "value")] = float(s["n_good"]) / duration
    return vals


def recomputed(store, params: dict | None = None) -> dict[str, list[dict]]:
    """{run_id: [{metric, stat, value}]}: every run's TTFT, TPOT, ITL and E2E (mean, median,
    p90, p99), request and output throughput and goodput recomputed from its requests (the
    Runs tab shows them beside what was published); runs without requests are left out."""
    p = {**DEFAULTS, **(params or {})}
    runs, rows = run_table(store, p)
    out = {}
    for r in runs:
        s = rows.get(r["run_id"])
        if s is None or not s["n"]:
            continue
        dur = {k: v for k, v in r["published"].items() if k == ("duration_s", "value")}
        out[r["run_id"]] = [{"metric": m, "stat": st_, "value": v}
                            for (m, st_), v in _values(s, dur).items()]
    return out


def variants(runs: list[dict], groups: dict[str, str]) -> dict[tuple, list[dict]]:
    """{(workload id, engine, engine_version, setting json): [runs]} in run order."""
    out: dict[tuple, list[dict]] = {}
    for r in runs:
        key = (groups[r["run_id"]], r["engine"], r["engine_version"],
               json.dumps(r["setting"], sort_keys=True, default=str))
        out.setdefault(key, []).append(r)
    return out


def _vname(key: tuple, members: list[dict]) -> str:
    """A variant's name: its run's label (with the engine version, which labels often lack),
    or its engine, version and setting with the number of runs."""
    if len(members) == 1:
        r = members[0]
        name = r["label"] or r["run_id"]
        v = r["engine_version"]
        return f"{name} ({v})" if v and str(v) not in name else name
    setting = json.loads(key[3])
    parts = [x for x in (key[1], key[2]) if x] + [f"{k}={v}" for k, v in setting.items()]
    return " ".join(parts) + f" ({len(members)} runs)"


def choose_pairs(vs: dict[tuple, list[dict]], baseline: str | None = None) -> list[tuple]:
    """Pairs of variant keys (a, b), see the module doc."""
    keys = list(vs)
    if baseline is not None:
        base = next(k for k, m in vs.items() if any(r["run_id"] == baseline for r in m))
        same = [k for k in keys if k != base and k[0] == base[0]]
        other = [k for k in keys if k[0] != base[0]]
        return [(base, k) for k in same + other]
    from ..versions import version_key
    out = []
    by_w: dict[str, list[tuple]] = {}
    for k in keys:
        by_w.setdefault(k[0], []).append(k)
    for ks in by_w.values():
        if len(ks) == 2:
            out.append(tuple(ks))
            continue
        for a, b in combinations(ks, 2):
            if sum(x != y for x, y in zip(a[1:], b[1:])) == 1:
                if a[2] != b[2] and version_key(a[2] or "") > version_key(b[2] or ""):
                    a, b = b, a  # old version first
                out.append((a, b))
    return out


def _samples(store, key: tuple, members: list[dict], sample_max: int, cache: dict) -> tuple:
    """({metric: the variant's pooled request values}, {metric: {q: bootstrap replicates}}),
    kept in `cache` per variant (a variant is in many pairs)."""
    if key in cache:
        return cache[key]
    out: dict[str, list] = {m: [] for m in LATENCIES}
    for r in members:
        if not r["n_requests"]:
            continue
        df = store.query("compare_run_sample", {"run_id": r["run_id"], "max_rows": sample_max})
        for m in LATENCIES:
            out[m].append(df[m].dropna().to_numpy(float))
    values = {m: np.concatenate(v) if v else np.array([]) for m, v in out.items()}
    seed = zlib.crc32(repr(key).encode())
    qs = tuple(st._q(s) for s in STATS if st._q(s) is not None)
    reps = {m: st.replicates(v, qs, seed + i) if len(v) >= 2 else {}
            for i, (m, v) in enumerate(values.items())}
    cache[key] = (values, reps)
    return cache[key]


def compare_pair(store, ka: tuple, kb: tuple, vs: dict, wdesc: dict, params: dict,
                 cache: dict) -> dict:
    """One entry of `pairs` (without items)."""
    A, B = vs[ka], vs[kb]
    same = ka[0] == kb[0]
    wa, wb = A[0]["workload"], B[0]["workload"]
    diffs = [] if same else wl.differences(wa, wb)
    sa = sb = None
    metrics = []
    keys = [k for k in _metric_order() if any(k in r["values"] for r in A)
            and any(k in r["values"] for r in B)]
    for m, stat in keys:
        va = [r["values"].get((m, stat)) for r in A]
        vb = [r["values"].get((m, stat)) for r in B]
        a = st.spread(va)["mean"]
        b = st.spread(vb)["mean"]
        e = {"metric": m, "stat": stat, "a": a, "b": b,
             "a_published": _mean([r["published"].get((m, stat)) for r in A]),
             "b_published": _mean([r["published"].get((m, stat)) for r in B]),
             "diff_pct": (b - a) / abs(a) * 100 if a else None,
             "ci_low": None, "ci_high": None, "p_value": None, "method": None}
        if m in LATENCIES and stat in STATS:
            if sa is None:
                sa = _samples(store, ka, A, params["sample_max"], cache)
                sb = _samples(store, kb, B, params["sample_max"], cache)
            q = st._q(stat)
            reps = None if q is None else (sa[1][m].get(q), sb[1][m].get(q))
            if reps is not None and any(x is None for x in reps):
                reps = None
            e.update(st.diff_interval(sa[0][m], sb[0][m], stat, params["alpha"], reps=reps))
        noise, how = (st.beyond_noise(va, vb, params["alpha"]) if same else (None, "workload"))
        e["beyond_noise"], e["noise"] = noise, how
        e["spread_a"], e["spread_b"] = st.spread(va), st.spread(vb)
        e["change"] = _change(e)
        e["better"] = BETTER.get(m)
        bad = e["diff_pct"] is not None and (
            (e["better"] == "lower" and e["diff_pct"] > 0)
            or (e["better"] == "higher" and e["diff_pct"] < 0))
        big = e["diff_pct"] is not None and abs(e["diff_pct"]) >= params["min_change_pct"]
        e["regression"] = (False if not same else None if noise is None
                           else bool(noise and bad and big))
        metrics.append(e)
    n_a, n_b = len(A), len(B)
    notes = []
    if not same:
        notes.append(_("the workloads differ ({how}): nothing is flagged between these runs")
                     .format(how=wl.describe_differences(diffs)))
    conf = wl.confounders(wa, wb) if same else []
    if conf:
        notes.append(_("the runs answered with different lengths ({how}): throughput and E2E "
                       "differ with them").format(how=wl.describe_differences(conf)))
    if same and n_a < 2 and n_b < 2:
        notes.append(_("one run per side: the run-to-run spread is unknown, so no change is "
                       "called beyond noise (repeat a configuration to measure it)"))
    return {"a": _vname(ka, A), "b": _vname(kb, B), "runs_a": [r["run_id"] for r in A],
            "runs_b": [r["run_id"] for r in B], "same_workload": same,
            "workload_a": wdesc[ka[0]], "workload_b": wdesc[kb[0]],
            "workload_differs": diffs, "differs_in": _differs_in(ka, kb),
            "metrics": metrics, "notes": notes, "items": None}


def _differs_in(ka: tuple, kb: tuple) -> list[str]:
    return [name for name, x, y in zip(("workload", "engine", "engine_version", "setting"),
                                       ka, kb) if x != y]


def _change(e: dict) -> str | None:
    """"higher" / "lower" when the requests' interval of the difference excludes 0."""
    lo, hi = e.get("ci_low"), e.get("ci_high")
    if lo is None or hi is None:
        return None
    return "higher" if lo > 0 else "lower" if hi < 0 else "none"


def _mean(values) -> float | None:
    v = [x for x in values if x is not None]
    return float(np.mean(v)) if v else None


def _metric_order() -> list[tuple[str, str]]:
    return ([(m, s) for m in LATENCIES for s in STATS] + [("itl_ms", s) for s in STATS]
            + [(m, "value") for m in RATES])
