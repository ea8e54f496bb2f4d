"""The Qt-free logic of `trace-explorer inspect`: load files into one store and describe each.

inspect_paths(paths) -> InspectResult; InspectResult.to_dict() is the `--json` document
{"files": [{"path", "format", "kind", "runs", "rows_loaded", "rows_skipped", "skipped_reasons",
"columns", "metrics": {metric: {"n", "mean", "p50", "p90", "p99"}}, "run_details": [per run:
label, engine, engine_version, version_source (the rule or the user's override), flags such as
"no successful request", published aggregates and their recomputation: explorer.core.runs
.overview], "error", ["evals"]}], "ignored": [{"path", "reason"}], ["warnings"]}: "ignored" lists the files found in a folder that are not
traces or evals (binary, empty, aggregate summaries, tables without a request column); they are
not failures.
Metrics are over the requests of the file's runs that carry no error (engine_stats columns for
stat files); percentiles are linear-interpolated (numpy's default). Input files are only read.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from . import errlog
from .store import LoadReport, Store


@dataclass(frozen=True)
class InspectResult:
    """One entry per input file, in the order given (a folder expands to its files)."""
    files: tuple[dict[str, Any], ...]
    prepare_error: str | None = None
    ignored: tuple[dict[str, str], ...] = ()  # {"path", "reason"} per file passed over
    warnings: tuple[str, ...] = ()  # e.g. an --engine-version PATH that matched no run

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [f for f in self.files if f.get("error")]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"files": list(self.files),
                             "ignored": [dict(x) for x in self.ignored]}
        if self.prepare_error:
            d["prepare_error"] = self.prepare_error
        if self.warnings:
            d["warnings"] = list(self.warnings)
        return d


def _clean(x):
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def metrics_for(store: Store, run_ids: list[str]) -> dict[str, dict[str, float | int | None]]:
    """{metric: {n, mean, p50, p90, p99}} over the error-free requests of `run_ids` plus the
    engine_stats columns of those runs; metrics with no value are left out."""
    out: dict[str, dict] = {}
    if not run_ids:
        return out
    for q in ("inspect_metrics", "inspect_engine_stats"):
        df = store.query(q, {"run_ids": list(run_ids)})
        for r in df.itertuples(index=False):
            if r.n and r.metric not in out:
                out[r.metric] = {"n": int(r.n), "mean": _clean(r.mean), "p50": _clean(r.p50),
                                 "p90": _clean(r.p90), "p99": _clean(r.p99)}
    order = ["ttft_ms", "tpot_ms", "e2e_ms", "queue_ms", "prefill_ms", "decode_ms",
             "kv_cache_hit_rate", "num_preemptions", "batch_size", "prompt_tokens",
             "completion_tokens", "cached_prompt_tokens"]
    return dict(sorted(out.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order
                                                    else len(order), kv[0])))


def evals_for(store: Store, eval_ids: list[str]) -> list[dict[str, Any]]:
    """[{eval_id, model, cases, correct, clusters: [{name, badcases, bound}]}] for eval_ids."""
    if not eval_ids:
        return []
    df = store.query("inspect_evals", {"eval_ids": list(eval_ids)})
    out: dict[str, dict] = {}
    for r in df.itertuples(index=False):
        e = out.setdefault(r.eval_id, {"eval_id": r.eval_id,
                                       "model": None if r.model is None or r.model != r.model else r.model,
                                       "cases": int(r.cases), "correct": int(r.correct),
                                       "clusters": []})
        if r.badcases:
            e["clusters"].append({"name": None if r.cluster != r.cluster else r.cluster,
                                  "badcases": int(r.badcases), "bound": int(r.bound)})
    return list(out.values())


def _prepare(store: Store) -> str | None:
    """Bind the cases to requests (explorer.core.pipeline.prepare); the error text if it fails
    (the inspection itself still stands)."""
    from . import pipeline
    try:
        pipeline.prepare(store)
    except Exception as e:  # a failing association must not hide the load reports
        return (f"binding cases to requests failed: {errlog.describe(e)} "
                f"({errlog.record(e, 'binding cases to requests')})")
    return None


def _load_all(store: Store, paths: Iterable[str | Path]) -> list[LoadReport]:
    from .formats import claims_folder
    reports = []
    for raw in paths:
        p = Path(raw)
        try:
            if p.is_dir() and not claims_folder(p):
                got = store.load_paths([p])
                reports += got
                # nothing recognised (a folder already loaded is a duplicate: it has a sha256)
                if all(r.skipped_file and r.sha256 is None for r in got):
                    reports.append(_failed(store, p, "no trace or eval file found in this folder"))
            else:
                reports.append(store.load_file(p))
        except Exception as e:  # a bug in one loader: report it against the file, go on
            reports.append(_failed(store, p, f"internal error while reading: "
                                             f"{errlog.describe(e)} "
                                             f"({errlog.record(e, f'inspecting {p}')})"))
    return reports


def _failed(store: Store, p: Path, msg: str) -> LoadReport:
    r = LoadReport(path=str(p), error=f"{p}: {msg}")
    return r


def inspect_paths(paths: Iterable[str | Path], store: Store | None = None,
                  version_overrides: list[tuple[str, str]] | None = None) -> InspectResult:
    """Load every path into `store` (a fresh in-memory one by default), apply the user's
    (PATH, VERSION) engine versions, bind cases to requests when the pipeline exists, and
    describe each input. Never raises for a bad file: its entry carries "error" naming the
    file (and line / field where known)."""
    from .runs import apply_version_overrides, overview
    store = store or Store()
    reports = _load_all(store, paths)
    warnings = apply_version_overrides(store, list(version_overrides or []))
    details = {r["run_id"]: r for r in overview(store)}
    prep = _prepare(store) if any(r.eval_ids for r in reports) else None
    files, ignored = [], []
    for r in reports:
        if r.skipped_file:
            ignored.append({"path": r.path, "reason": r.skipped_file})
            continue
        entry: dict[str, Any] = {
            "path": r.path, "format": r.format, "kind": r.kind, "runs": list(r.run_ids),
            "rows_loaded": r.rows_loaded, "rows_skipped": r.rows_skipped,
            "skipped_reasons": list(r.skipped_reasons), "columns": dict(r.columns),
            "metrics": metrics_for(store, r.run_ids) if not r.error else {},
            "run_details": [details[x] for x in r.run_ids if x in details],
            "error": r.error,
        }
        if r.kind == "eval" and not r.error:
            entry["evals"] = evals_for(store, r.eval_ids)
        files.append(entry)
    return InspectResult(tuple(files), prep, tuple(ignored), tuple(warnings))
