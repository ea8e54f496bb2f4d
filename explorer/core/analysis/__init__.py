"""The Qt-free analysis core: pure functions (store, cohort, params) -> frozen results whose
to_dict() is a section of the report JSON (../shared/DESIGN.md "Report JSON").

    from explorer.core.analysis import Cohort, cohort_frame
    from explorer.core.sections import run_all
    results = run_all(store, Cohort("sign errors"))        # {section: result | SectionError}
    Cohort("sign errors", eval_id="mmlu_pro:Meta-Llama-3_1-8B-Instruct")   # one eval only
    doc = {name: r.to_dict() for name, r in results.items()}

The sections, their order and how each is computed are declared once, in explorer/core/sections.py
(SECTIONS, above this package: it also names the report-only sections built from the replay and
the run overview); its run_all runs the cohort's analyses: cohort (summarize_cohort), comparison
(compare_metrics), tree (fit_tree), heatmap (compute_heatmap), versions (compare_versions), sla
(sla_attainment), conclusion (conclude, from the others).
"""
from __future__ import annotations

from ..errors import Cancelled
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
           "load_knowledge_base", "SectionError", "Cancelled",
           "ENGINE_METRICS", "CASE_METRICS", "CONTROLS", "DEFAULT_THRESHOLDS"]
