"""The Qt-free analysis core: pure functions (store, cohort, params) -> frozen results whose
to_dict() is a section of the report JSON (../shared/DESIGN.md "Report JSON").

    from explorer.core.analysis import Cohort, cohort_frame, run_all
    results = run_all(store, Cohort("sign errors"))        # {section: result | SectionError}
    Cohort("sign errors", eval_id="mmlu_pro:Meta-Llama-3_1-8B-Instruct")   # one eval only
    doc = {name: r.to_dict() for name, r in results.items()}

The sections, their order and how each is computed are declared once, in
analysis/pipeline.py (SECTIONS); run_all runs the cohort's analyses: cohort (summarize_cohort),
comparison (compare_metrics), tree (fit_tree), heatmap (compute_heatmap), versions
(compare_versions), sla (sla_attainment), conclusion (conclude, from the others).
"""
from __future__ import annotations

from typing import Callable

from ..errors import Cancelled
from .cohort import (CASE_METRICS, CONTROLS, ENGINE_METRICS, Cohort, cluster_table, cohort_frame,
                     default_cluster, summarize_cohort)
from .compare import compare_metrics
from .conclusion import conclude, load_knowledge_base
from .heatmap import compute_heatmap, heatmap_cell_predicate
from . import pipeline
from .results import SectionError
from .sla import DEFAULT_THRESHOLDS, sla_attainment
from .tree import fit_tree, tree_node_predicate
from .versions import compare_versions

__all__ = ["Cohort", "cohort_frame", "summarize_cohort", "cluster_table", "default_cluster",
           "compare_metrics", "fit_tree", "tree_node_predicate", "compute_heatmap",
           "heatmap_cell_predicate", "compare_versions", "sla_attainment", "conclude",
           "load_knowledge_base", "run_all", "SECTIONS", "SectionError", "Cancelled",
           "ENGINE_METRICS", "CASE_METRICS", "CONTROLS", "DEFAULT_THRESHOLDS"]

SECTIONS = pipeline.keys("cohort")


def run_all(store, cohort: Cohort, params: dict | None = None,
            progress: Callable[[int, int, str], None] | None = None,
            cancelled: Callable[[], bool] | None = None, *, frame=None) -> dict:
    """The cohort's analyses (pipeline.SECTIONS of group "cohort"): {section: result |
    SectionError}, in SECTIONS order. A section without data becomes
    SectionError(kind="no_data", reason=...) and an unexpected failure SectionError(kind="error"),
    so one section never sinks the others.

    params: {section: that section's params dict} (e.g. {"tree": {"max_depth": 4},
    "sla": {"thresholds": {...}}}), plus "sections": an iterable restricting which sections run
    (conclusion always uses whatever ran). progress(done, total, section) is called before each
    section; cancelled() is checked between sections and raises errors.Cancelled. frame: the
    cohort's cohort_frame when the caller already has it (saves one query)."""
    params = params or {}
    wanted = set(params.get("sections", SECTIONS))
    return pipeline.run(store, cohort, params, keys=[s for s in SECTIONS if s in wanted],
                        progress=progress, cancelled=cancelled,
                        **({"frame": frame} if frame is not None else {}))
