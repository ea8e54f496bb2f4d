"""The Qt-free analysis core: pure functions (store, cohort, params) -> frozen results whose
to_dict() is a section of the report JSON (../shared/DESIGN.md "Report JSON").

    from explorer.core.analysis import Cohort, cohort_frame, run_all
"""
from __future__ import annotations

from .cohort import Cohort, cohort_frame, summarize_cohort, cluster_table, default_cluster
from .results import SectionError

__all__ = ["Cohort", "cohort_frame", "summarize_cohort", "cluster_table", "default_cluster",
           "SectionError"]
