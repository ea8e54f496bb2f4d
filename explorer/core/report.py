"""The report document, assembled from the analysis results (no Qt), and its JSON / Markdown.

    build = build_report(store, cohort)            # ReportBuild(doc, results, frame)
    write_report(store, cohort, "out", ["json", "md"])

doc keys: the sections of core/sections.py (SECTIONS: the DESIGN.md "Report JSON" sections
cohort, comparison, tree, heatmap, versions, sla, whatif, conclusion, inputs, engine, replay,
plus clusters, runs, run_versions, timeline, strata), computed there, and meta (generated_at,
app_version, cohort parameters, simulated, demo_note, scope, engine), added here. A section that
could not be computed is {"status": "no_data" | "error", "reason": "..."}: the report always has
every key.

Formats: json and md are written here. Other formats (png, svg, html, pdf) come from a renderer
plug-in that registers itself when imported (register_renderer: explorer.reporting does, the
command line and the window import it): `render(doc, out_dir, formats, frame=None, cases=None,
...) -> list[Path]` and the formats it writes. This module never imports it (the core imports
nothing above it, pyproject.toml's import-linter contract); without it those formats raise
FormatUnavailable.
"""
from __future__ import annotations

import json
import math
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from .analysis import Cohort, SectionError, cohort_frame
from . import sections
from .sections import (  # noqa: F401 - the report-only builders, importable here as before
    inputs_section, replay_report_section, run_whatif_section, worst_timeline)
from .atomic import write_text
from .names import DEMO_NOTE, distinct_names
from .errors import ReportIncomplete, TraceExplorerError
from .i18n import _
from .report_md import (  # noqa: F401 - the Markdown writers, importable here as before
    MD_MAX_CHANGES, MD_MAX_INPUTS, MD_TIMELINE_PHASES, SECTIONS_MD, SLA_GROUPS, _bench_list,
    _count, _md_clusters, _md_cohort, _md_compare, _md_comparison, _md_conclusion,
    _md_engine, _md_heatmap, _md_input_rows, _md_inputs, _md_replay, _md_run_versions,
    _md_runs, _md_sla, _md_sla_diagnosis, _md_strata, _md_sweep, _md_timeline,
    _md_tree, _md_versions, _md_whatif, _missing, _name, _p,
    folder_files, grouped_files, input_groups, listed_inputs, loaded_inputs, render_markdown,
    scope_lines)

log = logging.getLogger(__name__)

REPORT_KEYS = sections.keys()  # the report JSON's sections, in order (meta follows)
OWN_FORMATS = ("json", "md")
KNOWN_FORMATS = ("json", "md", "html", "pdf", "png", "svg")


class FormatUnavailable(TraceExplorerError):
    """A report format whose writer is not part of this build (message names the format)."""


@dataclass
class ReportBuild:
    """doc: the report dict (JSON-ready); results: section -> result | SectionError;
    frame: the cohort frame (None when it could not be built)."""
    doc: dict
    results: dict = field(default_factory=dict)
    frame: pd.DataFrame | None = None


# ---- building -------------------------------------------------------------------------------
def _simulated(store) -> bool:
    rows = store.con.execute(
        "SELECT (SELECT count(*) FROM runs WHERE simulated) + "
        "(SELECT count(*) FROM evals WHERE simulated)").fetchall()
    return bool(rows[0][0])


def _app_version() -> str:
    try:
        from explorer import __version__
        return str(__version__)
    except Exception:  # noqa: BLE001
        return "dev"




def build_report(store, cohort: Cohort, params: dict | None = None,
                 whatif: Any = None,
                 progress: Callable[[int, int, str], None] | None = None,
                 cancelled: Callable[[], bool] | None = None, *,
                 cached: bool = True, whole_frame: bool = True,
                 detail: Callable[[str, int, int, str], None] | None = None) -> ReportBuild:
    """Run every analysis for `cohort` and assemble the report document (see the module doc).

    Every section is core.sections' (SECTIONS, in the JSON's order); this adds the meta.
    params: {section: its params} as run_all takes them ("sections" restricts the cohort's
    analyses; the other sections always run); whatif: keyword arguments for run_whatif (None =
    its defaults, False = skip the section, which then says so), or an already computed what-if
    result (anything with to_dict(), e.g. the GUI's WhatIfResult) used as is. progress(done,
    total, section) is called before each section, then with "done". Raises errors.Cancelled
    when cancelled. cached=False: the cohort's rows come straight from SQL instead of the
    cached view of every case (one-off reports: no frame of every case is built). The sections
    that read only the cohort's frame (comparison, tree) run on one thread of their own beside
    the SQL ones, as in the window (numpy / scikit-learn and DuckDB release the GIL).
    whole_frame=False: the frame (ReportBuild.frame) holds only the columns the sections read
    (sections.frame_columns; every column when a what-if is computed), for a caller that draws
    nothing from it (json / md). detail(section, done, total, text): progress inside a long
    section (sections.run's)."""
    params = dict(params or {})
    cohort_keys = sections.keys("cohort")
    wanted = set(params.get("sections", cohort_keys))
    params["whatif"] = whatif
    keys = [k for k in REPORT_KEYS if k not in cohort_keys or k in wanted]
    columns = None if whole_frame else sections.frame_columns(params, keys)
    try:
        frame = cohort_frame(store, cohort, cached=cached,
                             columns=None if columns is None else columns + ("run_id",))  # _scope
    except TraceExplorerError:
        frame = None
    results = sections.run(store, cohort, params, cancelled=cancelled, progress=progress,
                           frame=frame, keys=keys, threads=1, detail=detail)
    doc: dict[str, Any] = {k: _section_value(results, k) for k in REPORT_KEYS}
    from .analysis.sla_report import lift_into_sla
    lift_into_sla(doc)  # DESIGN: sla.windows / sla.diagnosis
    remote = getattr(store, "remote", False)
    sim = _simulated(store)
    note = None
    if sim:
        note = _(DEMO_NOTE)
    doc["meta"] = {"generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   "app_version": _app_version(), "cohort": cohort.to_dict(),
                   "simulated": sim, "demo_note": note,
                   # the cohort's sections (not the whole store's engine statistics)
                   "sections_without_data": [k for k, v in results.items()
                                             if isinstance(v, SectionError)
                                             and sections.BY_KEY[k].group != "store"],
                   "scope": _scope(store, cohort, doc.get("inputs") or [], frame),
                   "engine": store.engine_meta() if remote else _duckdb_meta(store)}
    doc, bad = finite_doc(doc)
    if bad:  # never invalid JSON: each value that is not a number is null, with its reason
        doc["meta"]["not_finite"] = bad
    return ReportBuild(doc=doc, results=results, frame=frame)


def _section_value(results: dict, key: str):
    """A section's JSON: its result's to_dict(), the dict it is, or 'not computed'."""
    if key not in results:
        return {"status": "no_data", "reason": "not computed"}
    r = results[key]
    return r.to_dict() if hasattr(r, "to_dict") else r


def _duckdb_meta(store) -> dict:
    """meta.engine for the embedded DuckDB: every request is local (nothing is fetched)."""
    try:
        n = int(store.con.execute("SELECT count(*) FROM requests").fetchall()[0][0])
    except Exception:  # noqa: BLE001 - a store without the table
        n = None
    from .memory import settings
    try:
        mem = settings(store.con)  # memory_limit, spill_directory (explorer.core.memory)
    except Exception:  # noqa: BLE001 - a store look-alike without DuckDB's settings
        mem = {}
    return {"kind": "duckdb", "url": None, "table": "requests", "rows_scanned": n,
            "rows_fetched": None, "seconds": None, **mem}


def finite_doc(x: Any, path: str = "") -> tuple[Any, list[dict]]:
    """x with every float that is not finite (NaN, inf) replaced by None, and where each was:
    [{path, value, reason}] ("whatif.refutations[2].new_effect")."""
    bad: list[dict] = []

    def walk(v, at):
        if isinstance(v, dict):
            return {k: walk(w, f"{at}.{k}" if at else str(k)) for k, w in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(w, f"{at}[{i}]") for i, w in enumerate(v)]
        if isinstance(v, float) and not math.isfinite(v):
            bad.append({"path": at, "value": str(v),
                        "reason": "the statistic is not a finite number (undefined for this "
                                  "data); written as null"})
            return None
        return v
    return walk(x, path), bad


def _scope(store, cohort: Cohort, inputs: list, frame: pd.DataFrame | None = None) -> dict:
    """What the report is about, for every format's first lines: the evals analysed (id,
    model, benchmark), the models and engine versions of the runs, the input files by their
    distinct short names; cohort_runs: the runs that served the cohort's cases."""
    con = store.con
    try:
        evals = [{"eval_id": e, "model": m, "benchmark": b} for e, m, b in con.execute(
            "SELECT eval_id, any_value(model), any_value(benchmark) FROM cases "
            "WHERE eval_id IS NOT NULL AND ($e IS NULL OR eval_id = $e) GROUP BY eval_id ORDER BY eval_id",
            {"e": cohort.eval_id}).fetchall()]
        runs = con.execute("SELECT DISTINCT model, engine, engine_version FROM runs "
                           "ORDER BY engine_version NULLS LAST, model NULLS LAST").fetchall()
    except Exception:  # noqa: BLE001 - a store without these tables still reports
        evals, runs = [], []
    paths = [str(f.get("path")) for f in inputs if f.get("path")]
    short = distinct_names(paths)
    # no case at all (a trace without an eval): no cohort to keep runs for, every run is shown
    runs_used = sorted(frame["run_id"].dropna().astype(str).unique().tolist()) \
        if isinstance(frame, pd.DataFrame) and "run_id" in frame and len(frame) else None
    return {"evals": evals, "cohort_runs": runs_used,
            "models": sorted({m for m, _, _ in runs if m} | {e["model"] for e in evals if e["model"]}),
            "engine_versions": sorted({v for _, _, v in runs if v}),
            "inputs": [short[p] for p in paths]}






# ---- writing --------------------------------------------------------------------------------
# The renderer plug-in (render, formats) once registered; why it could not be, if it failed.
_RENDERERS: list[tuple[Callable[..., Any], frozenset[str]]] = []
_RENDERER_ERRORS: dict[str, str] = {}


def register_renderer(render: Callable[..., Any], formats) -> None:
    """Make `render` (see the module docstring) write `formats` beyond json / md."""
    _RENDERERS.insert(0, (render, frozenset(formats) - set(OWN_FORMATS)))


def renderer_failed(name: str, error: BaseException) -> None:
    """Record that the renderer plug-in `name` failed to import (check_formats says why)."""
    _RENDERER_ERRORS[name] = f"{type(error).__name__}: {error}"


def _renderer():
    """The registered renderer and the formats it adds, or (None, empty set)."""
    return _RENDERERS[0] if _RENDERERS else (None, set())


def available_formats() -> list[str]:
    """Formats this build can write: json, md, and those of the renderer plug-in if present."""
    _, extra = _renderer()
    return [f for f in KNOWN_FORMATS if f in set(OWN_FORMATS) | extra]


def check_formats(formats: Sequence[str]) -> list[str]:
    """Normalise and check a list of formats. Raises ValueError for an unknown one and
    FormatUnavailable ("format png not available ...") for one this build cannot write."""
    out = []
    for f in formats:
        f = f.strip().lower()
        if not f:
            continue
        if f not in KNOWN_FORMATS:
            raise ValueError(f"unknown report format {f!r}; known: {', '.join(KNOWN_FORMATS)}")
        out.append(f)
    if not out:
        raise ValueError("no report format given")
    if set(out) <= set(OWN_FORMATS):  # json / md: no need to import the (Qt) renderer
        return list(dict.fromkeys(out))
    have = set(available_formats())
    missing = [f for f in out if f not in have]
    if missing:
        why = "; ".join(f"{n} failed to import ({e})" for n, e in _RENDERER_ERRORS.items())
        raise FormatUnavailable(f"format {', '.join(missing)} not available"
                                f"{': ' + why if why else ''} (this build writes "
                                f"{', '.join(sorted(have))})")
    return list(dict.fromkeys(out))


def _badcase_texts(store, cohort: Cohort, limit: int = 200) -> pd.DataFrame:
    """The cohort's badcases with their text and their bound request (run_id, request_id,
    level of the strongest link), for the HTML / PDF listing; attrs["total"] is how many
    badcases the cohort has (the listing holds the first `limit`)."""
    try:
        from .analysis.cohort import cohort_sql
        sql, params = cohort_sql(cohort)
        df = store.con.execute(
            f"SELECT k.case_id, k.category, k.cluster, c.prompt, c.prediction, c.reference, "
            f"k.run_id, k.request_id, k.level, count(*) OVER () AS total "
            f"FROM ({sql}) k JOIN cases c ON c.case_id = k.case_id WHERE k.badcase = 1 "
            f"ORDER BY k.case_id LIMIT {int(limit)}", params).df()
    except Exception:  # noqa: BLE001 - a listing is optional
        return pd.DataFrame()
    df.attrs["total"] = int(df["total"].iloc[0]) if len(df) else 0
    return df.drop(columns="total")


def write_report(store, cohort: Cohort, out_dir: str | Path,
                 formats: Sequence[str] = OWN_FORMATS, params: dict | None = None,
                 whatif: dict | bool | None = None,
                 progress: Callable[[int, int, str], None] | None = None,
                 cancelled: Callable[[], bool] | None = None, *,
                 cached: bool = True,
                 detail: Callable[[str, int, int, str], None] | None = None) -> list[Path]:
    """Build the report and write it in each format to out_dir (created): report.json,
    report.md, and the renderer plug-in's files. Returns the paths written.
    Raises ValueError / FormatUnavailable (checked before any work), OSError when out_dir
    cannot be written."""
    formats = check_formats(formats)
    build = build_report(store, cohort, params, whatif, progress, cancelled, cached=cached,
                         whole_frame=any(f not in WRITERS for f in formats), detail=detail)
    return write_build(build, out_dir, formats, store=store, cohort=cohort)


def write_build(build: ReportBuild, out_dir: str | Path, formats: Sequence[str], store=None,
                cohort: Cohort | None = None) -> list[Path]:
    """Write an already built report in the given formats (see write_report). Raises
    ReportIncomplete, its `written` listing every file written, when the renderer could not
    draw some picture."""
    formats = check_formats(formats)
    from .atomic import Bundle
    with Bundle(out_dir) as bundle:  # every file staged, moved into place once all are whole
        stage = bundle.stage
        for f in formats:
            if f in WRITERS:
                WRITERS[f](build.doc, stage)
        extra = [f for f in formats if f not in WRITERS]
        if extra:
            render, _r = _renderer()
            cases = (_badcase_texts(store, cohort) if store is not None and cohort is not None
                     else None)
            timeline = build.doc.get("timeline") or {}
            shown = ((timeline["run_id"], timeline["request_id"]) if "request_id" in timeline
                     else None)
            try:
                render(build.doc, stage, extra, frame=build.frame, cases=cases,
                       timeline=shown, store=store)
            except ReportIncomplete as e:  # what was drawn is kept, named in the output folder
                failed = [(n, bundle.unstaged(why)) for n, why in e.failed]
                raise ReportIncomplete(bundle.out, failed, bundle.commit(), e.log) from None
        return bundle.commit()


def write_bundle(store, cohort: Cohort, out_dir: str | Path,
                 formats: Sequence[str] | None = None, **kw) -> list[Path]:
    """The app's File > Export Report: every available format (or `formats`)."""
    return write_report(store, cohort, out_dir, formats or available_formats(), **kw)


def _write_json(doc: dict, out: Path) -> Path:
    path = out / "report.json"
    write_text(path, json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False,
                                default=str))
    return path


def _write_md(doc: dict, out: Path) -> Path:
    path = out / "report.md"
    write_text(path, render_markdown(doc))
    return path


# format -> writer(doc, out_dir) -> Path; add a format here (or in a renderer plug-in)
WRITERS: dict[str, Callable[[dict, Path], Path]] = {"json": _write_json, "md": _write_md}
