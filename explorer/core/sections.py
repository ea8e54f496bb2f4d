"""The one analysis pipeline: every section of the report and of the window declared once
(SECTIONS: key, title, compute function, what it reads and what it depends on) and run by run()
with a cache, progress, partial results and cancellation.

    from explorer.core import sections
    results = sections.run(store, cohort, params)           # {key: result | SectionError}
    sections.run(store, cohort, params, keys=sections.keys("cohort", "store"), cache={},
                 on_result=lambda key, result: ..., cancelled=lambda: ..., threads=2)

Its callers only choose which sections run and where the results go:

- `run_all` (benchmarks, tests): the cohort's analyses (group "cohort");
- `explorer.core.report.build_report` (the command line `report` and File > Export Report,
  whose child process writes the same report): every section, then the document's meta;
- `explorer.session.analyse` (the window): groups "cohort" and "store", with the window's
  cache, two threads and its partial results, wired to the job's signals.

A section that raises NoData becomes SectionError(kind="no_data"), any other failure
SectionError(kind="error"), so one section never sinks the others; errors.Cancelled always
propagates. (explorer.core.pipeline.prepare is the other pipeline step: what runs after every
load, before any of this.)

It sits above the analyses, the replay and the run overview (pyproject.toml's core layers),
because the report-only sections it names are built from them (their builders live here).
"""
from __future__ import annotations

import json
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import pandas as pd

from . import errlog
from .errors import Cancelled, NoData, TraceExplorerError
from .i18n import N_, NP_, _
from .analysis import compare, tree
from .analysis.cohort import (FRAME_COLUMNS, SUMMARY_COLUMNS, Cohort, cluster_table, cohort_frame,
                              summarize_cohort)
from .analysis.compare import compare_metrics
from .analysis.conclusion import conclude
from .analysis.heatmap import compute_heatmap
from .analysis.results import SectionError
from .analysis.sla import sla_attainment
from .analysis.tree import fit_tree
from .analysis.versions import compare_versions

GROUPS = ("cohort", "store", "report")
_UNSET: Any = object()
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Section:
    """One section of the report JSON (and, for groups cohort / store, of the window).

    key: the report JSON key and the window's payload key; title: its heading in every report
    format (N_: translated where shown); compute(run) -> result (to_dict()) or a JSON-ready dict;
    group: "cohort" (an analysis of the cohort: run_all, the window, the report), "store" (of the
    whole store: the window and the report), "report" (the report document only); needs: the
    sections whose results compute reads (declared before it); depends(run) -> what the result
    depends on besides the store's content: its cache key (None: not cached); frame_only: reads
    the cohort frame and never the store's connection, so it may run on a second thread;
    panel: its short name on the window's panel that shows it (NP_("panel", ...): translated
    with pgettext("panel", ...)), "" when no panel shows it; reads(its params) -> the cohort
    frame's columns compute reads (frame_columns), None for the whole frame."""
    key: str
    title: str
    compute: Callable[["Run"], Any]
    group: str
    needs: tuple[str, ...] = ()
    depends: Callable[["Run"], tuple] | None = None
    frame_only: bool = False
    panel: str = ""
    reads: Callable[[Any], tuple[str, ...] | None] = lambda params: ()


class Run:
    """What the compute functions see: store, cohort, params ({section: its params}), the
    cancelled() callback, the results so far, and the cohort frame (built once, on first use,
    on the caller's thread; None when it cannot be built, frame_error says why)."""

    def __init__(self, store, cohort, params: dict, cancelled=None, frame=_UNSET,
                 cached_frame: bool = True):
        self.store, self.cohort, self.params, self.cancelled = store, cohort, params, cancelled
        self.results: dict[str, Any] = {}
        self.frame_error: BaseException | None = None
        self._frame, self._cached_frame, self._no_cases = frame, cached_frame, _UNSET
        self.oom_is_section_error = False  # run(oom_is_section_error=True): the window's
        self.detail: Callable[[str, int, int, str], None] | None = None  # run(detail=...)

    def progress_of(self, key: str) -> Callable[[int, int, str], None] | None:
        """Section `key`'s own progress(done, total, text), told as run's detail(key, ...)."""
        detail = self.detail
        return None if detail is None else (lambda d, n, text: detail(key, d, n, text))

    @property
    def frame(self) -> pd.DataFrame | None:
        if self._frame is _UNSET:
            try:
                self._frame = cohort_frame(self.store, self.cohort, cached=self._cached_frame)
            except TraceExplorerError as e:
                self._frame, self.frame_error = None, e
        return self._frame

    def no_cases(self) -> NoData | None:
        """Why there are no cases to compare (no eval loaded, an empty cohort), or None."""
        if self._no_cases is _UNSET:
            f = self.frame
            self._no_cases = None if f is not None and len(f) else NoData(
                "no eval cases are loaded: a cohort needs eval results (which answers were wrong)"
                if self.store.count("cases") == 0 else "the cohort is empty")
        return self._no_cases

    def cases(self) -> pd.DataFrame:
        """The frame of a cohort with cases, else raises the NoData that says why not."""
        if self.no_cases() is not None:
            raise self.no_cases()
        return self.frame

    def heatmap_params(self) -> dict:
        """The heatmap's params, its runs those of the cohort's bound requests (what its result
        depends on) unless the params name them."""
        p = dict(self.params.get("heatmap") or {})
        f = self.frame
        if p.get("runs") is None and f is not None and len(f):
            runs = sorted(f["run_id"].dropna().unique().tolist())
            if runs:
                p["runs"] = runs
        return p


def _dump(v) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _eval_and(name: str) -> Callable[[Run], tuple]:
    return lambda r: (getattr(r.cohort, "eval_id", None), _dump(r.params.get(name)))


# ---- the report-only sections' builders (report.py re-exports them) ----------------------
def inputs_section(store) -> list[dict]:
    """The `inputs` section: every file loaded, failed or ignored, with its provenance."""
    out = []
    for r in store.input_reports():
        out.append({"path": r.path, "format": r.format, "kind": r.kind, "sha256": r.sha256,
                    "rows_loaded": r.rows_loaded, "rows_skipped": r.rows_skipped,
                    "skipped_reasons": r.skipped_reasons[:5], "error": r.error,
                    "ignored": r.skipped_file})
    return out


def run_whatif_section(frame: pd.DataFrame | None, args: dict | None):
    """The what-if result (engineer C's analysis.whatif.run_whatif) or a SectionError.
    args: treatment, outcome, set_value, graph_text (+ any run_whatif keyword);
    selected_case_ids: the case_ids the scenario applies to (default: the cluster's badcases).

    The what-if is the slowest section (DoWhy import + estimator + refuters), so its result is
    remembered (whatif.memo, shared with the What-if panel) on the frame's content and the
    arguments: building the report of the same cohort again in one process (GUI export,
    several formats) pays it once."""
    from .analysis import whatif
    from .analysis.whatif.memo import remembered
    if frame is None or frame.empty or frame["request_id"].notna().sum() == 0:
        return SectionError("whatif", _("no case of the cohort is bound to a trace request, so "
                                        "there is no engine metric to intervene on"), "no_data")
    args = dict(args or {})
    callbacks = {k: args.pop(k) for k in ("progress", "cancelled") if k in args}
    ids = args.pop("selected_case_ids", None)
    if ids is not None:  # the cases the scenario applies to (the window's selection)
        args["selected"] = frame["case_id"].astype(str).isin(set(map(str, ids)))
    try:
        res = remembered(whatif.run_whatif, frame, **args, **callbacks)
    except Cancelled:
        raise
    except NoData as e:
        res = SectionError("whatif", str(e), "no_data")
    except (TraceExplorerError, ValueError, KeyError) as e:
        return SectionError("whatif", str(e), "error")
    except MemoryError:  # the whole command stops: "out of memory", non-zero exit
        raise
    except Exception as e:  # noqa: BLE001 - one section must not sink the report
        return SectionError("whatif", errlog.describe(e), "error")
    return res


def replay_report_section(store, cohort: Cohort, scenario: dict | None = None,
                          cancelled: Callable[[], bool] | None = None,
                          progress: Callable[[int, int, str], None] | None = None) -> dict:
    """The `replay` section (explorer.core.replay.section.replay_section), or why there is
    none. scenario: EngineConfig changes (default: 4x the observed KV blocks); False: not
    requested (report --no-replay)."""
    if scenario is False:
        return {"status": "no_data", "reason": _("not requested")}
    from .replay.section import replay_section
    try:
        return replay_section(store, cohort, scenario, cancelled=cancelled, progress=progress)
    except Cancelled:
        raise
    except (TraceExplorerError, ValueError, KeyError) as e:
        return {"status": "no_data", "reason": str(e)}
    except MemoryError:  # the whole command stops: "out of memory", non-zero exit
        raise
    except Exception as e:  # noqa: BLE001 - one section must not sink the report
        log.exception("replay section failed")
        return {"status": "error", "reason": errlog.describe(e)}


def worst_timeline(store, frame: pd.DataFrame | None) -> dict:
    """The timeline (explorer.core.timeline) of the cohort's worst bound badcase: the one with
    the most preemptions, then the highest TPOT; or why there is none."""
    from .timeline import request_timeline, worst_badcase
    try:
        run_id, request_id = worst_badcase(frame)
        return request_timeline(store, run_id, request_id, index=False).to_dict()
    except (NoData, ValueError, KeyError, TypeError) as e:
        return {"status": "no_data", "reason": _("no bound badcase to show ({e})").format(e=e)}
    except TraceExplorerError as e:  # a warehouse query that failed
        return {"status": "error", "reason": str(e)}


# ---- the report-only sections ---------------------------------------------------------------
def _whatif(r: Run):
    """params["whatif"]: run_whatif keyword arguments (None: its defaults), False (not
    requested), or a finished result (to_dict(), e.g. the window's) used as it is."""
    w = r.params.get("whatif")
    if w is False:
        return SectionError("whatif", _("not requested"), "no_data")
    if hasattr(w, "to_dict"):
        return w
    args = dict(w) if isinstance(w, dict) else {}
    if r.cancelled is not None:
        args.setdefault("cancelled", r.cancelled)
    return run_whatif_section(r.frame, args)


def _whatif_reads(w) -> tuple[str, ...] | None:
    """A what-if to compute reads the whole frame (its causal graph may name any column)."""
    return () if w is False or hasattr(w, "to_dict") else None


def _timeline_reads(_params) -> tuple[str, ...]:
    from .timeline import WORST_COLUMNS
    return WORST_COLUMNS


def _replay(r: Run):
    if getattr(r.store, "remote", False):
        return {"status": "no_data", "reason": "the replay simulates every request of a run "
                "locally; with a warehouse source it is not computed"}
    return replay_report_section(r.store, r.cohort, r.params.get("replay"), r.cancelled,
                                 r.progress_of("replay"))


def _sla_diagnosis(r: Run):
    from .replay.sla_period import diagnose_with_replay
    sla = r.params.get("sla")
    if r.params.get("replay") is False:  # report --no-replay: no period replay either
        sla = {**(sla or {}), "replay": False}
    return diagnose_with_replay(r.store, sla, cancelled=r.cancelled)


def _inputs(r: Run):
    return inputs_section(r.store)


def _engine(r: Run):
    from .analysis.engine import engine_stats
    return engine_stats(r.store)


def _runs(r: Run):
    from .report_runs import runs_section
    return runs_section(r.store)


def _run_versions(r: Run):
    from .report_runs import run_versions_section
    return run_versions_section(r.store)


def _compare(r: Run):
    """analysis.runcompare over the store (several runs or evals loaded), params["compare"]."""
    from .analysis.runcompare import RunComparison, compare_runs
    if getattr(r.store, "remote", False):
        raise NoData("runs are compared on the local store only")
    return RunComparison(compare_runs(r.store, r.params.get("compare")))


def _timeline(r: Run):
    return worst_timeline(r.store, r.frame)


def _strata(r: Run):
    strata = getattr(r.results.get("comparison"), "strata", None)
    return strata if strata is not None else {
        "status": "no_data", "reason": _("the cohort's cases ran on one engine version of one eval")}


# In the report JSON's order, which is also the order they run in.
SECTIONS: tuple[Section, ...] = (
    Section("cohort", N_("Cohort"), lambda r: summarize_cohort(r.store, r.cohort, frame=r.frame),
            "cohort", panel=NP_("panel", "Cohort"), reads=lambda p: SUMMARY_COLUMNS),
    Section("comparison", N_("Metric comparison (badcases vs control)"),
            lambda r: compare_metrics(r.store, r.cohort, r.params.get("comparison"),
                                      frame=r.cases()), "cohort", frame_only=True,
            panel=NP_("panel", "Metric comparison"), reads=compare.frame_columns),
    Section("tree", N_("Decision tree"),
            lambda r: fit_tree(r.store, r.cohort, r.params.get("tree"), frame=r.cases()),
            "cohort", frame_only=True, panel=NP_("panel", "Decision tree"),
            reads=tree.frame_columns),
    Section("heatmap", N_("Heatmap"),
            lambda r: compute_heatmap(r.store, r.cohort, r.heatmap_params(), frame=r.frame),
            "cohort", depends=lambda r: (_dump(r.heatmap_params()),),
            panel=NP_("panel", "Heatmap"), reads=lambda p: ("run_id",)),
    Section("versions", N_("Engine versions"),
            lambda r: compare_versions(r.store, r.cohort, r.params.get("versions")), "cohort",
            depends=_eval_and("versions"), panel=NP_("panel", "Versions")),
    Section("sla", N_("SLA attainment"),
            lambda r: sla_attainment(r.store, r.cohort, r.params.get("sla")), "cohort",
            depends=_eval_and("sla"), panel=NP_("panel", "SLA")),
    Section("sla_diagnosis", N_("SLA over time and its diagnosis"), _sla_diagnosis, "store",
            depends=lambda r: (_dump(r.params.get("sla")),), panel=NP_("panel", "SLA")),
    Section("whatif", N_("What-if"), _whatif, "report", panel=NP_("panel", "What-if"),
            reads=_whatif_reads),
    Section("conclusion", N_("Conclusion"),
            lambda r: conclude(dict(r.results), r.params.get("conclusion")), "cohort",
            needs=("cohort", "comparison", "tree", "versions"), panel=NP_("panel", "Conclusion")),
    Section("inputs", N_("Inputs"), _inputs, "report", panel=NP_("panel", "Inputs")),
    Section("engine", N_("Engine statistics"), _engine, "store", depends=lambda r: (),
            panel=NP_("panel", "Engine")),
    Section("replay", N_("Replay: the badcases under another engine setting"), _replay, "report",
            panel=NP_("panel", "Replay")),
    Section("clusters", N_("Badcase clusters"),
            lambda r: cluster_table(r.store, eval_id=getattr(r.cohort, "eval_id", None)),
            "report", panel=NP_("panel", "Clusters")),
    Section("runs", N_("Runs and their published results"), _runs, "report",
            panel=NP_("panel", "Runs")),
    Section("run_versions", N_("Engine versions at run level (published aggregates)"),
            _run_versions, "report"),
    Section("compare", N_("Runs compared"), _compare, "store",
            depends=lambda r: (_dump(r.params.get("compare")),), panel=NP_("panel", "Compare")),
    Section("timeline", N_("Timeline of the worst badcase"), _timeline, "report",
            panel=NP_("panel", "Timeline"), reads=_timeline_reads),
    Section("strata", N_("Pooled strata (per engine version or eval)"), _strata, "report",
            needs=("comparison",)),
)
BY_KEY = {s.key: s for s in SECTIONS}
# What the window and the reports show beside the sections, as (title in a report, "" when
# none; name on its panel): the cohort frame's distributions and the cases' rows.
VIEWS = {"distributions": (N_("Distributions"), NP_("panel", "Distributions")),
         "cases": ("", NP_("panel", "Cases"))}
TITLES = {s.key: s.title for s in SECTIONS} | {k: t for k, (t, _p) in VIEWS.items() if t}

# The front ends' orders of the sections above; each front end iterates one of them and looks its
# own renderer up by key (tests/test_one_section_list.py: a section, view or renderer missing from
# one of them fails there).
# The reading order of the report documents (report.md, HTML, PDF): every section and the views a
# report titles. A writer leaves out what it shows elsewhere or not at all, saying so by key
# (report_md.NOT_WRITTEN, reporting/html.ELSEWHERE).
DOCUMENT = ("clusters", "cohort", "comparison", "strata", "distributions", "tree", "heatmap", "runs",
            "versions", "run_versions", "compare", "sla", "whatif", "replay", "timeline",
            "sla_diagnosis",  # of every request (not the cohort's): after the cohort's sections
            "engine", "conclusion", "inputs")
# The window's panels as (name, area), in the order the window adds them; areas: top, left,
# centre (tabbed, the first in front), right, bottom. A panel is named for the section or view it
# shows (SHOWS: but the header); the classes are widgets/panels.py's.
WINDOW = (("header", "top"), ("clusters", "left"), ("inputs", "left"), ("comparison", "centre"),
          ("distributions", "centre"), ("tree", "centre"), ("heatmap", "centre"),
          ("versions", "centre"), ("runs", "centre"), ("compare", "centre"), ("sla", "centre"),
          ("timeline", "centre"),  # full height: axis labels fit
          ("engine", "centre"), ("whatif", "centre"), ("conclusion", "right"), ("cases", "bottom"),
          ("replay", "centre"))  # a table beside a chart: the analysis area's height
SHOWS = {"header": "cohort"}


def panel_title(key: str) -> str:
    """The short English name of the panel that shows section or view `key` (translate it
    with pgettext("panel", ...)). Raises KeyError when no panel shows it."""
    name = BY_KEY[key].panel if key in BY_KEY else VIEWS[key][1]
    if not name:
        raise KeyError(f"no panel shows section {key!r}")
    return name


def frame_columns(params: dict, keys: Iterable[str]) -> tuple[str, ...] | None:
    """The cohort-frame columns the sections `keys` read with `params` ({section: its params}),
    for cohort_frame(columns=...); None when one of them reads the whole frame (a what-if to
    compute) or names a column the frame does not have (the section says so itself)."""
    out: dict[str, None] = {}
    for k in keys:
        cols = BY_KEY[k].reads(params.get(k))
        if cols is None or not set(cols) <= set(FRAME_COLUMNS):
            return None
        out.update(dict.fromkeys(cols))
    return tuple(out)


def run_all(store, cohort: Cohort, params: dict | None = None,
            progress: Callable[[int, int, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None, *, frame=None) -> dict:
    """The cohort's analyses (the sections of group "cohort"): {section: result |
    SectionError}, in SECTIONS order. A section without data becomes
    SectionError(kind="no_data", reason=...) and an unexpected failure SectionError(kind="error"),
    so one section never sinks the others.

    params: {section: that section's params dict} (e.g. {"tree": {"max_depth": 4},
    "sla": {"thresholds": {...}}}), plus "sections": an iterable restricting which sections run
    (conclusion always uses whatever ran). progress(done, total, section) is called before each
    section; cancelled() is checked between sections and raises errors.Cancelled. frame: the
    cohort's cohort_frame when the caller already has it (saves one query)."""
    params = params or {}
    cohort_keys = keys("cohort")
    wanted = set(params.get("sections", cohort_keys))
    return run(store, cohort, params, keys=[s for s in cohort_keys if s in wanted],
               progress=progress, cancelled=cancelled,
               **({"frame": frame} if frame is not None else {}))


def keys(*groups: str) -> tuple[str, ...]:
    """The section keys of these groups (all without one), in SECTIONS order."""
    return tuple(s.key for s in SECTIONS if not groups or s.group in groups)


def compute(section: Section, r: Run, cache: dict | None = None):
    """One section's result, or the SectionError that says why not (errors.Cancelled
    propagates). With a cache, a section that declares what it depends on is looked up by
    (key, depends) first, and its result kept unless it failed unexpectedly."""
    ck = None
    if cache is not None and section.depends is not None:
        ck = (section.key, *section.depends(r))
        if ck in cache:
            return cache[ck]
    try:
        out = section.compute(r)
    except Cancelled:
        raise
    except NoData as e:
        out = SectionError(section.key, str(e), "no_data")
    except (ValueError, KeyError, TraceExplorerError) as e:
        out = SectionError(section.key, str(e), "error")
    except MemoryError as e:  # the whole command stops: "out of memory", non-zero exit;
        if not r.oom_is_section_error:  # the window: this section says so, the others stay
            raise
        out = SectionError(section.key, f"{_(section.title)}: {errlog.describe(e)}", "error")
    except Exception as e:  # noqa: BLE001 - one broken section must not sink the others
        out = SectionError(section.key, errlog.describe(e), "error")
    if ck is not None and not (isinstance(out, SectionError) and out.kind == "error"):
        cache[ck] = out
    return out


def run(store, cohort, params: dict | None = None, *, keys: Iterable[str] | None = None,
        cache: dict | None = None, progress: Callable[[int, int, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        on_result: Callable[[str, Any], None] | None = None, frame=_UNSET,
        cached_frame: bool = True, threads: int = 0, oom_is_section_error: bool = False,
        detail: Callable[[str, int, int, str], None] | None = None) -> dict:
    """Run the sections `keys` (default all) of SECTIONS for `cohort`, in SECTIONS order:
    {key: result | SectionError}. A section reads what ran before it (conclusion uses whatever
    of its needs ran).

    params: {section key: its params}. cache: a dict the caller keeps per store content (cleared
    when the store changes); sections declaring `depends` are reused from it. progress(done,
    total, key) before each section, then (total, total, "done"); cancelled() is checked before
    each section and raises errors.Cancelled; on_result(key, result) after each, in order (the
    window publishes its partial results from it). frame: the cohort frame when the caller has
    it (None: it cannot be built), else built on first use (cached_frame: from the store's case
    view, else plain SQL). threads > 0: the frame-only sections start on that many threads of
    their own as soon as the frame is there, while the caller's thread runs the rest (scipy,
    scikit-learn and DuckDB release the GIL). detail(key, done, total, text): a long section's
    progress inside it (the replay's: seconds used of its budget), between its progress calls."""
    params = params or {}
    keep = None if keys is None else set(keys)   # once: `keys` may be a one-shot iterator
    wanted = [s for s in SECTIONS if keep is None or s.key in keep]
    r = Run(store, cohort, params, cancelled, frame, cached_frame)
    r.oom_is_section_error = oom_is_section_error
    r.detail = detail
    pending: dict[str, Future] = {}
    pool = ThreadPoolExecutor(threads, thread_name_prefix="pipeline") if threads > 0 else None
    try:
        for i, sec in enumerate(wanted):
            if cancelled is not None and cancelled():
                raise Cancelled("analysis cancelled")
            if pool is not None:
                _start_frame_only(pool, pending, wanted[i:], r, cache)
            if progress is not None:
                progress(i, len(wanted), sec.key)
            res = pending.pop(sec.key).result() if sec.key in pending else compute(sec, r, cache)
            r.results[sec.key] = res
            if on_result is not None:
                on_result(sec.key, res)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    if progress is not None:
        progress(len(wanted), len(wanted), "done")
    return r.results


def _start_frame_only(pool, pending: dict, rest: list[Section], r: Run, cache) -> None:
    """Submit the frame-only sections of `rest` whose needs have run; the frame and whether
    the cohort has cases are settled first, here, on the caller's thread (the store's
    connection stays on it)."""
    for sec in rest:
        if sec.frame_only and sec.key not in pending and all(
                n in r.results or n not in {s.key for s in rest} for n in sec.needs):
            r.no_cases()
            pending[sec.key] = pool.submit(compute, sec, r, cache)
