"""The Qt-free analysis core: pure functions (store, cohort, params) -> frozen results whose
to_dict() is a section of the report JSON (../shared/DESIGN.md "Report JSON").

    from explorer.core.analysis import Cohort, cohort_frame, run_all
    results = run_all(store, Cohort("sign errors"))        # {section: result | SectionError}
    Cohort("sign errors", eval_id="mmlu_pro:Meta-Llama-3_1-8B-Instruct")   # one eval only
    doc = {name: r.to_dict() for name, r in results.items()}

Sections, in order: cohort (summarize_cohort), comparison (compare_metrics), tree (fit_tree),
heatmap (compute_heatmap), versions (compare_versions), sla (sla_attainment), conclusion
(conclude, from the others). The what-if section is engineer C's (analysis.whatif.run_whatif).
"""
from __future__ import annotations

from typing import Callable

from ..errors import Cancelled, NoData, TraceExplorerError
from .cohort import (CASE_METRICS, CONTROLS, ENGINE_METRICS, Cohort, cluster_table, cohort_frame,
                     default_cluster, summarize_cohort)
from .compare import compare_metrics
from .conclusion import conclude, load_knowledge_base
from .heatmap import compute_heatmap, heatmap_cell_predicate
from .results import SectionError
from .sla import DEFAULT_THRESHOLDS, sla_attainment
from .tree import fit_tree, tree_node_predicate
from .versions import compare_versions

__all__ = ["Cohort", "cohort_frame", "summarize_cohort", "cluster_table", "default_cluster",
           "compare_metrics", "fit_tree", "tree_node_predicate", "compute_heatmap",
           "heatmap_cell_predicate", "compare_versions", "sla_attainment", "conclude",
           "load_knowledge_base", "run_all", "SECTIONS", "SectionError", "Cancelled",
           "ENGINE_METRICS", "CASE_METRICS", "CONTROLS", "DEFAULT_THRESHOLDS"]

SECTIONS = ("cohort", "comparison", "tree", "heatmap", "versions", "sla", "conclusion")


def run_all(store, cohort: Cohort, params: dict | None = None,
            progress: Callable[[int, int, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None, *, frame=None) -> dict:
    """Every analysis section for one cohort: {section: result | SectionError}, in SECTIONS
    order. A section without data becomes SectionError(kind="no_data", reason=...) and an
    unexpected failure SectionError(kind="error"), so one section never sinks the others.

    params: {section: that section's params dict} (e.g. {"tree": {"max_depth": 4},
    "sla": {"thresholds": {...}}}), plus "sections": an iterable restricting which sections run
    (conclusion always uses whatever ran). progress(done, total, section) is called before each
    section; cancelled() is checked between sections and raises Cancelled. frame: the cohort's
    cohort_frame when the caller already has it (saves one query)."""
    params = params or {}
    wanted = [s for s in SECTIONS if s in set(params.get("sections", SECTIONS))]
    out: dict = {}
    frame_error: SectionError | None = None

    def get_frame():
        nonlocal frame, frame_error
        if frame is None and frame_error is None:
            try:
                frame = cohort_frame(store, cohort)
            except TraceExplorerError as e:
                frame_error = SectionError("cohort", str(e), "no_data")
        return frame

    steps = {
        "cohort": lambda: summarize_cohort(store, cohort, frame=get_frame()),
        "comparison": lambda: compare_metrics(store, cohort, params.get("comparison"),
                                              frame=_needs_cases(store, get_frame())),
        "tree": lambda: fit_tree(store, cohort, params.get("tree"),
                                 frame=_needs_cases(store, get_frame())),
        "heatmap": lambda: compute_heatmap(store, cohort, params.get("heatmap"), frame=get_frame()),
        "versions": lambda: compare_versions(store, cohort, params.get("versions")),
        "sla": lambda: sla_attainment(store, cohort, params.get("sla")),
        "conclusion": lambda: conclude(out, params.get("conclusion")),
    }
    for i, name in enumerate(wanted):
        if cancelled is not None and cancelled():
            raise Cancelled("analysis cancelled")
        if progress is not None:
            progress(i, len(wanted), name)
        try:
            out[name] = steps[name]()
        except NoData as e:
            out[name] = SectionError(name, str(e), "no_data")
        except (ValueError, KeyError, TraceExplorerError) as e:
            out[name] = SectionError(name, str(e), "error")
        except Exception as e:  # one broken section must not sink the report
            out[name] = SectionError(name, f"{type(e).__name__}: {e}", "error")
    if progress is not None:
        progress(len(wanted), len(wanted), "done")
    return out


def _needs_cases(store, frame):
    if frame is None or len(frame) == 0:
        n = store.con.execute("SELECT count(*) FROM cases").fetchall()[0][0]
        raise NoData("no eval cases are loaded: a cohort needs eval results (which answers were "
                     "wrong)" if n == 0 else "the cohort is empty")
    return frame
