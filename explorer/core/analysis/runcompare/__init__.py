"""Runs compared: A/B like with like, item by item, against run-to-run noise (DESIGN "Comparing
runs"; the `compare` command and the report's `compare` section).

    from explorer.core.analysis.runcompare import compare_runs
    result = compare_runs(store, {"baseline": RUN, "runs": [RUN, ...]})   # compare.json

workload.py says what a run was asked to do, pairs.py compares two configurations' runs,
items.py two sets of answers to the same eval items, sweeps.py runs that differ in one setting,
stats.py the statistics.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from explorer.core.errors import NoData
from explorer.core.i18n import _, ngettext

from . import items as it
from . import pairs as pr
from . import workload as wl
from .sweeps import find_sweeps


@dataclass(frozen=True)
class RunComparison:
    """The pipeline's frozen result of compare_runs: to_dict() is compare.json."""
    doc: dict

    def to_dict(self) -> dict:
        return self.doc


def compare_runs(store, params: dict | None = None) -> dict:
    """compare.json: {runs, workloads, pairs, unmatched, sweeps, params}. params: baseline (a
    run id), runs (run ids to keep), and pairs.DEFAULTS. Raises NoData when there are neither
    two runs nor two evals sharing items; ValueError naming an unknown run."""
    p = {**pr.DEFAULTS, **(params or {})}
    n_runs = store.count("runs")
    if n_runs < 2 and (store.scalar("SELECT count(DISTINCT eval_id) FROM cases") or 0) < 2:
        # before any query over the requests: one run of 10M requests costs seconds
        raise NoData(_("nothing to compare: fewer than two runs and fewer than two evals "
                       "are loaded"))
    runs, _rows = pr.run_table(store, p)
    known = {r["run_id"] for r in runs}
    want = list(p.get("runs") or [])
    for rid in want + ([p["baseline"]] if p.get("baseline") else []):
        if rid not in known:
            raise ValueError(_("no loaded run is called {run!r}; runs: {runs}").format(
                run=rid, runs=", ".join(sorted(known)[:20]) or "-"))
    if want:
        runs = [r for r in runs if r["run_id"] in set(want) | {p.get("baseline")}]
    groups = wl.group({r["run_id"]: r["workload"] for r in runs})
    for r in runs:
        r["workload_id"] = groups[r["run_id"]]
    wdesc = {}
    for r in runs:
        wdesc.setdefault(r["workload_id"], wl.describe(r["workload"]))
    vs = pr.variants(runs, groups)
    if len(want) == 2 and not p.get("baseline") and len(vs) == 2:
        chosen = [tuple(vs)]
    else:
        chosen = pr.choose_pairs(vs, p.get("baseline"))
    chosen = chosen[: p["max_pairs"]]
    frame = it.item_frame(store)
    cache: dict = {}
    pairs = []
    for ka, kb in chosen:
        pair = pr.compare_pair(store, ka, kb, vs, wdesc, p, cache)
        pair["kind"] = "runs"
        pair["items"] = it.run_items(frame, pair["runs_a"], pair["runs_b"], p["alpha"])
        pairs.append(pair)
    # version A/Bs first (the question asked most), then engines, then settings
    order = {"engine_version": 0, "engine": 1, "setting": 2}
    pairs.sort(key=lambda q: (not q["same_workload"],
                              min([order.get(d, 3) for d in q["differs_in"]] or [3])))
    if not want and not p.get("baseline"):
        pairs += it.eval_pairs(frame, p["alpha"])
    if not pairs:
        raise NoData(_("nothing to compare: {n} runs in {w} workloads, no two configurations "
                       "of one workload and no two evals answering the same items (--runs A,B "
                       "compares two runs of different workloads, and says how they differ)")
                     .format(n=len(runs), w=len(wdesc)))
    return {
        "runs": [{"run_id": r["run_id"], "label": r["label"], "engine": r["engine"],
                  "engine_version": r["engine_version"], "version_source": r["version_source"],
                  "workload": {k: v for k, v in r["workload"].items()},
                  "workload_id": r["workload_id"], "setting": r["setting"],
                  "config": r["config"], "n_requests": r["n_requests"]} for r in runs],
        "workloads": [{"id": w, "description": d,
                       "runs": [r["run_id"] for r in runs if r["workload_id"] == w]}
                      for w, d in wdesc.items()],
        "pairs": pairs,
        "unmatched": unmatched(vs),
        "sweeps": find_sweeps(runs),
        "params": {k: p[k] for k in ("alpha", "min_change_pct", "ttft_slo_ms", "tpot_slo_ms")},
    }


def unmatched(vs: dict) -> list[dict]:
    """Configurations (engine and setting) run on only some of the engine versions loaded for
    that engine, over every workload, when some other configuration of that engine was run on
    several versions (else every version changed its settings too, and the pairs say so):
    [{runs, engine, setting, versions, missing, workloads, sentence}]. A setting is named by
    the keys whose values differ between the engine's settings."""
    versions: dict = {}
    conf: dict = {}
    for (w, engine, version, setting), members in vs.items():
        versions.setdefault(engine, set()).add(version)
        c = conf.setdefault((engine, setting), {"versions": set(), "runs": [], "w": set()})
        c["versions"].add(version)
        c["runs"] += [r["run_id"] for r in members]
        c["w"].add(w)
    out = []
    for engine in versions:
        mine = {s: c for (e, s), c in conf.items() if e == engine}
        if len(versions[engine]) < 2 or not any(len(c["versions"]) > 1 for c in mine.values()):
            continue
        settings = [wl.parse_config(s) for s in mine]
        keys = sorted({k for d in settings for k in d
                       if len({json.dumps(x.get(k), default=str) for x in settings}) > 1})
        for setting, c in mine.items():
            missing = sorted(str(v) for v in versions[engine] - c["versions"])
            if not missing:
                continue
            have = sorted(str(v) for v in c["versions"])
            d = wl.parse_config(setting)
            name = " ".join(f"{k}={d.get(k)}" for k in keys if k in d) or c["runs"][0]
            n = len(c["runs"])
            out.append({"runs": c["runs"], "engine": engine, "setting": d, "versions": have,
                        "missing": missing, "workloads": sorted(c["w"]),
                        "sentence": ngettext(
                            "{name} was run on {have} only (not on {missing}; {n} run): "
                            "nothing to compare it with across versions",
                            "{name} was run on {have} only (not on {missing}; {n} runs): "
                            "nothing to compare it with across versions", n).format(
                                name=name, have=", ".join(have), missing=", ".join(missing),
                                n=n)})
    return out
