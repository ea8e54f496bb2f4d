"""Frozen, JSON-serialisable results of the analyses.

Each result's to_dict() gives exactly one section of the report JSON (../shared/DESIGN.md
"Report JSON"), plus extra keys. Numbers are plain Python floats / ints; a statistic that cannot
be computed is None (JSON null) with a `reason`, never NaN or inf. Painters (GUI, reports) read
these dicts only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def num(x: Any) -> float | None:
    """A finite float, or None for None / NaN / inf / pd.NA."""
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _finite(x: Any) -> Any:
    """x with every float that is not finite replaced by None (dicts and lists walked)."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, float):
        return num(x)
    return x


@dataclass(frozen=True)
class SectionError:
    """A section that could not be computed: `kind` is "no_data" (nothing to analyse, the
    reason says why in user words), "error" (an unexpected failure) or "cancelled"."""
    section: str
    reason: str
    kind: str = "no_data"

    def to_dict(self) -> dict:
        return {"status": self.kind, "reason": self.reason}


# ---- cohort ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class CohortSummary:
    """DESIGN `cohort`: the cluster's badcases, how many are bound to a request, the control.

    category: the single category of the badcases, a list when several, None when unknown.
    share_of_badcases: cluster badcases / every badcase in the store (0..1).
    binding_rate: bound / badcases (0..1); link_levels: bound cases (both groups) per level
    ("1" exact id, "2" multi-condition fuzzy, "3" single-condition weak).
    bound_versions: the engine releases that served the bound badcases, [{benchmark,
    engine_version, badcases}] per (runs.benchmark, runs.engine_version) of the bound request's
    run (None when the run does not name it), most badcases first.
    ambiguous_badcases / ambiguous_control: the cohort's cases left unbound because several
    requests fit equally well (association.ambiguous_detail); ambiguous: the badcases' entries
    [{case_id, reason, candidates, requests}], at most 50."""
    cluster: str | None
    category: Any
    badcases: int
    share_of_badcases: float | None
    bound: int
    binding_rate: float | None
    control: str
    control_cases: int
    control_bound: int
    link_levels: dict
    selection: dict | None = None
    note: str | None = None
    bound_versions: tuple = ()
    ambiguous_badcases: int = 0
    ambiguous_control: int = 0
    ambiguous: tuple = ()

    def to_dict(self) -> dict:
        return {
            "cluster": self.cluster, "category": self.category, "badcases": self.badcases,
            "share_of_badcases": num(self.share_of_badcases), "bound": self.bound,
            "binding_rate": num(self.binding_rate), "control": self.control,
            "control_cases": self.control_cases, "control_bound": self.control_bound,
            "link_levels": dict(self.link_levels), "selection": self.selection, "note": self.note,
            "bound_versions": [dict(v) for v in self.bound_versions],
            "ambiguous_badcases": self.ambiguous_badcases,
            "ambiguous_control": self.ambiguous_control,
            "ambiguous": [dict(a) for a in self.ambiguous],
        }


# ---- comparison -----------------------------------------------------------------------------
@dataclass(frozen=True)
class MetricRow:
    """One row of the metric table. kind "numeric": means, diff % ((bad - control) / |control|
    x 100), Mann-Whitney U p (two-sided), BH-adjusted p, Cohen's d (bad minus control over the
    pooled SD), Hedges' g (d with the small-sample correction), the rank-biserial correlation
    of the Mann-Whitney test with DeLong's interval, Welch CI (ci_level, 0.95) of the mean
    difference (bad - control), None when undefined.
    kind "categorical": bad_mean / control_mean are shares (0..1) of requests with the signal,
    p from Fisher's exact test, odds_ratio instead of cohens_d.
    reason: why a statistic is None ("too few values", "zero variance", ...)."""
    metric: str
    kind: str
    unit: str
    bad_mean: float | None
    control_mean: float | None
    diff_pct: float | None
    p_value: float | None
    p_adjusted: float | None
    cohens_d: float | None
    n_bad: int
    n_control: int
    ci_low: float | None = None
    ci_high: float | None = None
    odds_ratio: float | None = None
    test: str | None = None
    reason: str | None = None
    hedges_g: float | None = None
    rank_biserial: float | None = None
    rank_biserial_ci_low: float | None = None
    rank_biserial_ci_high: float | None = None
    # at equal workload (analysis/workload.py): the difference, its test and effect size
    adjusted_diff: float | None = None
    adjusted_diff_pct: float | None = None
    adjusted_p_value: float | None = None
    adjusted_p_adjusted: float | None = None
    adjusted_d: float | None = None
    adjusted_n_bad: int | None = None
    adjusted_n_control: int | None = None
    adjusted_test: str | None = None

    def to_dict(self) -> dict:
        return {"metric": self.metric, "kind": self.kind, "unit": self.unit,
                "bad_mean": num(self.bad_mean), "control_mean": num(self.control_mean),
                "diff_pct": num(self.diff_pct), "p_value": num(self.p_value),
                "p_adjusted": num(self.p_adjusted), "cohens_d": num(self.cohens_d),
                "n_bad": self.n_bad, "n_control": self.n_control,
                "ci_low": num(self.ci_low), "ci_high": num(self.ci_high),
                "odds_ratio": num(self.odds_ratio), "test": self.test, "reason": self.reason,
                "hedges_g": num(self.hedges_g), "rank_biserial": num(self.rank_biserial),
                "rank_biserial_ci_low": num(self.rank_biserial_ci_low),
                "rank_biserial_ci_high": num(self.rank_biserial_ci_high),
                "adjusted_diff": num(self.adjusted_diff),
                "adjusted_diff_pct": num(self.adjusted_diff_pct),
                "adjusted_p_value": num(self.adjusted_p_value),
                "adjusted_p_adjusted": num(self.adjusted_p_adjusted),
                "adjusted_d": num(self.adjusted_d), "adjusted_n_bad": self.adjusted_n_bad,
                "adjusted_n_control": self.adjusted_n_control,
                "adjusted_test": self.adjusted_test}


@dataclass(frozen=True)
class Comparison:
    """DESIGN `comparison`: to_dict() is the list of rows (numeric then categorical)."""
    rows: tuple
    alpha: float = 0.05
    strata: dict | None = None   # strata.stratify: the pooled strata (report JSON "strata")
    adjusted_for: tuple = ()     # workload.covariates: what the adjusted_* fields hold equal

    def to_dict(self) -> list:
        return [r.to_dict() for r in self.rows]

    def row(self, metric: str) -> MetricRow | None:
        return next((r for r in self.rows if r.metric == metric), None)


# ---- tree -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TreeNode:
    """One node. feature / threshold: this node's own split (None for a leaf); side: "le" or
    "gt", which branch of the PARENT's split the node is (None for the root); error_rate: share
    of badcases among the node's n cases; condition: the parent's test as text."""
    id: int
    parent: int | None
    feature: str | None
    threshold: float | None
    side: str | None
    n: int
    n_bad: int
    error_rate: float | None
    is_leaf: bool
    depth: int
    condition: str | None

    def to_dict(self) -> dict:
        return {"id": self.id, "parent": self.parent, "feature": self.feature,
                "threshold": num(self.threshold), "side": self.side, "n": self.n,
                "n_bad": self.n_bad, "error_rate": num(self.error_rate),
                "is_leaf": self.is_leaf, "depth": self.depth, "condition": self.condition}


@dataclass(frozen=True)
class TreeResult:
    """DESIGN `tree`. riskiest_path: node ids root -> riskiest leaf (highest error rate);
    sentence: that path read aloud with its error rate, n and the baseline."""
    max_depth: int
    min_samples_leaf: int
    baseline_error_rate: float | None
    nodes: tuple
    features: tuple
    n: int
    dropped_rows: int
    riskiest_path: tuple
    sentence: str
    nan_policy: str
    holdout: dict | None = None

    def to_dict(self) -> dict:
        return {"holdout": _finite(self.holdout), "max_depth": self.max_depth, "min_samples_leaf": self.min_samples_leaf,
                "baseline_error_rate": num(self.baseline_error_rate),
                "nodes": [n.to_dict() for n in self.nodes], "features": list(self.features),
                "n": self.n, "dropped_rows": self.dropped_rows,
                "riskiest_path": list(self.riskiest_path), "sentence": self.sentence,
                "nan_policy": self.nan_policy}

    def node(self, node_id: int) -> TreeNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"the tree has no node {node_id}")


# ---- heatmap --------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeatmapResult:
    """DESIGN `heatmap`: values[y][x] = mean value_metric of the cell (None when empty),
    counts[y][x] = windows (level "window") or requests (level "request") in the cell.
    Edges are ascending; the last bin of each axis includes its upper edge.
    cell_windows (not serialised): (ix, iy) -> tuple of (run_id, window_index) for level
    "window", used by heatmap_cell_predicate."""
    x_metric: str
    y_metric: str
    value_metric: str
    x_edges: tuple
    y_edges: tuple
    values: tuple
    counts: tuple
    level: str
    window_s: float | None
    n_items: int
    runs: tuple
    cell_windows: dict = field(default_factory=dict, compare=False, repr=False)
    periods: tuple = ()  # the SLA violation periods it is restricted to ({run_id, start_s, end_s})

    def to_dict(self) -> dict:
        return {"x_metric": self.x_metric, "y_metric": self.y_metric, "periods": [dict(p) for p in self.periods],
                "value_metric": self.value_metric, "x_edges": [num(e) for e in self.x_edges],
                "y_edges": [num(e) for e in self.y_edges],
                "values": [[num(v) for v in row] for row in self.values],
                "counts": [list(row) for row in self.counts], "level": self.level,
                "window_s": self.window_s, "n_items": self.n_items, "runs": list(self.runs)}


# ---- versions -------------------------------------------------------------------------------
@dataclass(frozen=True)
class VersionsResult:
    """DESIGN `versions`: values = [{benchmark, engine_version, metric, value (mean), n}],
    changes = [{benchmark, metric, from_version, to_version, from_value, to_value, change_pct,
    p_value, direction, regression, reason}], accuracy = [{benchmark, engine_version, accuracy,
    n_cases}] (cases bound to the version's requests); versions: every version, oldest first;
    pooled: True when benchmarks were pooled (no benchmark ran on two versions);
    accuracy_by_category: the same as accuracy, per case category (key "category");
    single_version: [{benchmark, engine_version}] benchmarks seen in one version only (not
    compared); summary: one row per (metric, from_version, to_version) over the benchmarks
    (versions.summarize_changes); notes: sentences on what the changes cannot say (workload
    differs between releases, one run per version). changes are sorted regressions first, then by adjusted p.
    to_dict(): "changes" holds the first max_changes of them (what a chart or a table can show;
    None = all), "all_changes" every one and "changes_total" their number."""
    values: tuple
    changes: tuple
    accuracy: tuple
    versions: tuple
    alpha: float
    min_change_pct: float
    pooled: bool = False
    accuracy_by_category: tuple = ()
    single_version: tuple = ()
    summary: tuple = ()
    max_changes: int | None = None
    notes: tuple = ()

    def to_dict(self) -> dict:
        top = self.changes if self.max_changes is None else self.changes[:self.max_changes]
        return {"values": [dict(v) for v in self.values], "changes": [dict(c) for c in top],
                "all_changes": [dict(c) for c in self.changes],
                "changes_total": len(self.changes),
                "accuracy": [dict(a) for a in self.accuracy], "versions": list(self.versions),
                "alpha": self.alpha, "min_change_pct": self.min_change_pct, "pooled": self.pooled,
                "accuracy_by_category": [dict(a) for a in self.accuracy_by_category],
                "single_version": [dict(a) for a in self.single_version],
                "summary": [dict(a) for a in self.summary], "notes": list(self.notes)}


# ---- SLA ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SlaResult:
    """DESIGN `sla`: thresholds {metric: max value}; attainment {share, n, n_met, n_unjudged,
    goodput_rps, goodput_tps}; by {run|version|category|tenant: [{key, ...same fields}]}."""
    thresholds: dict
    attainment: dict
    by: dict

    def to_dict(self) -> dict:
        return {"thresholds": dict(self.thresholds), "attainment": dict(self.attainment),
                "by": {k: [dict(r) for r in v] for k, v in self.by.items()}}


# ---- conclusion -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Suggestion:
    """One suggestion of the knowledge base: priority (1 = try first), text, engine flags to
    try, the module it addresses and the rule that produced it."""
    priority: int
    text: str
    flags: tuple
    module: str
    rule: str

    def to_dict(self) -> dict:
        return {"priority": self.priority, "text": self.text, "flags": list(self.flags),
                "module": self.module, "rule": self.rule}


@dataclass(frozen=True)
class Conclusion:
    """DESIGN `conclusion`: modules (engine modules the evidence points to, strongest first),
    narrative (sentences citing the numbers), suggestions (at most three, priority 1, strongest
    evidence first; each engine flag once), more_suggestions (the rest, shown behind "more"),
    evidence (one entry per fired rule: rule, module, weight, text, p_adjusted in the family),
    tests (how many tests the conclusion's Benjamini-Hochberg family held)."""
    modules: tuple
    narrative: str
    suggestions: tuple
    evidence: tuple
    more_suggestions: tuple = ()
    tests: int = 0

    def to_dict(self) -> dict:
        return {"modules": list(self.modules), "narrative": self.narrative,
                "suggestions": [s.to_dict() for s in self.suggestions],
                "more_suggestions": [s.to_dict() for s in self.more_suggestions],
                "evidence": [_finite(dict(e)) for e in self.evidence], "tests": self.tests}
