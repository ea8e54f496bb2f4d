"""State of the What-if panel (Qt-free): the causal graph in use, the cohort frame, the
treatment / outcome choices that frame and graph allow, the scenario value with its range and
default, the cases the scenario applies to, the SLA-scaling row, and the run they make
(WhatIfQuery / ScaleQuery: frozen, run in a worker; DoWhy is imported there, never here).

Decisions (each made here once):
- a treatment is a graph node (not latent, not a binary outcome) or a known metric in the
  graph that has at least two distinct numeric values in the frame; an outcome is `badcase`
  (when it varies) or `sla_met` (derived from the SLA thresholds) if in the graph, or any
  treatment; the previous choice is kept when still allowed, else kv_cache_hit_rate /
  badcase, else the first;
- the value range is the treatment's observed [min, max], [0, 1] for a rate; the default
  value is the control group's mean (of every row without a `grp` column; the median of
  every row when the control group has no value);
- the scenario applies to the session's selected cases when some are in the frame, else to
  the cluster's badcases (run_whatif's default).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from explorer.core.analysis.causal_graph import KNOWN_NODES, default_graph_text, parse_graph

if TYPE_CHECKING:  # the what-if package is imported in the worker, with DoWhy
    from explorer.core.analysis.whatif.scale import ScaleDict
    from explorer.core.analysis.whatif.scenario import WhatIfSection

SCALE_METRICS = ("queue_ms", "ttft_ms", "tpot_ms", "batch_size", "prompt_tokens")
SCALE_PCT_RANGE = (-90, 200)
BINARY_OUTCOMES = ("badcase", "sla_met")
PREFERRED = ("kv_cache_hit_rate", "badcase")
DEFAULT_GRAPH_SOURCE = "resources/causal_graph.dot"

#: why a frame gives no scenario (WhatIfState.set_frame)
NO_CASES, NO_TREATMENT = "no_cases", "no_treatment"


@dataclass(frozen=True)
class WhatIfQuery:
    """One what-if run as WhatIfState made it: run_whatif keyword arguments over a frame.
    run(progress, cancelled) -> the report's `whatif` section (dict). Raises the core's
    Cancelled when cancelled."""
    frame: pd.DataFrame = field(compare=False, repr=False)
    kwargs: dict[str, Any]

    def run(self, progress: Callable[[int, int], None] | None = None,
            cancelled: Callable[[], bool] | None = None) -> WhatIfSection:
        from explorer.core.analysis import whatif
        from explorer.core.analysis.whatif.memo import remembered
        whatif.preload()  # a cohort estimated before (same frame and settings) is not refitted
        return remembered(whatif.run_whatif, self.frame, progress=progress, cancelled=cancelled,
                          **self.kwargs).to_dict()


@dataclass(frozen=True)
class ScaleQuery:
    """SLA attainment with one metric scaled by `factor` (whatif_scale) over a frame."""
    frame: pd.DataFrame = field(compare=False, repr=False)
    metric: str
    factor: float
    kwargs: dict[str, Any]

    def run(self, cancelled: Callable[[], bool] | None = None) -> ScaleDict:
        from explorer.core.analysis import whatif
        whatif.preload()
        return whatif.whatif_scale(self.frame, self.metric, self.factor, cancelled=cancelled,
                                   **self.kwargs).to_dict()


class WhatIfState:
    """The What-if panel's choices over one cohort frame; see the module doc for the rules.

    The panel fills its pickers from treatments() / outcomes(), its value box from
    value_range() / set_value, and runs query() / scale_query() in a worker; run results and a
    report's finished section come back through take_result()."""

    def __init__(self, graph_text: str | None = None) -> None:
        self._graph_text = graph_text or default_graph_text()
        self._graph = None            # parsed on first use (networkx import: ~0.1-0.2 s)
        self.frame: pd.DataFrame | None = None
        self.treatment: str | None = None
        self.outcome: str | None = None
        self.set_value: float = 0.0
        self.range: tuple[float, float] = (0.0, 1.0)
        self.selected_ids: frozenset | None = None   # the session's selected cases
        self.thresholds: dict[str, float] | None = None  # the SLA panel's, when it has them
        self.scale_metric: str = SCALE_METRICS[0]
        self.scale_pct: int = -20
        self.result: WhatIfSection | None = None   # the last finished what-if (run or report)
        self.scale: ScaleDict | None = None        # the last whatif_scale result
        self.dirty = False       # inputs changed since the last run
        self.delivered = False   # a report's finished result is shown: nothing reruns

    # -- the graph --------------------------------------------------------------------------
    @property
    def graph_text(self) -> str:
        return self._graph_text

    @property
    def graph(self):
        """The causal graph in use (the default one parsed on first use)."""
        if self._graph is None:
            self._graph = parse_graph(self._graph_text, source=DEFAULT_GRAPH_SOURCE)
        return self._graph

    def set_graph(self, text: str) -> None:
        """Use the graph `text` (DOT / GML); raises InputError (with the line) when invalid.
        The choices are derived again for it."""
        self._graph = parse_graph(text, known=self.columns())
        self._graph_text = text
        if self.frame is not None:
            self._choose(self.treatment, self.outcome)
        self.dirty = True

    def columns(self) -> list[str] | None:
        return list(self.frame.columns) if self.frame is not None else None

    def unobserved(self) -> list[str]:
        return self.graph.unobserved(self.columns() or list(KNOWN_NODES))

    # -- the frame and the choices ----------------------------------------------------------
    def set_frame(self, frame: Any) -> str | None:
        """A new cohort frame: derive the choices, range and default value. Returns None, or
        why there is no scenario to run (NO_CASES, NO_TREATMENT; the frame is then dropped)."""
        self.frame = None
        if not isinstance(frame, pd.DataFrame) or frame.empty:
            return NO_CASES
        self.frame = frame
        if not self.treatments():
            self.frame = None
            return NO_TREATMENT
        self._choose(self.treatment, self.outcome)
        self.dirty = True
        return None

    def metrics(self) -> list[str]:
        """Graph nodes and known metrics of the frame with at least two distinct values.
        Kept for the frame and graph it was derived from (a new cohort frame, or a new graph,
        derives it again): taking a frame asks for it several times (treatments, outcomes,
        the pickers), and at 1M requests each pass over the cohort's columns cost ~0.1 s of
        the UI thread."""
        if self.frame is None:
            return []
        graph = self.graph
        memo = getattr(self, "_metrics_memo", None)  # (frame, graph, metrics): held, so
        if memo is not None and memo[0] is self.frame and memo[1] is graph:  # never reused
            return list(memo[2])
        names = list(dict.fromkeys(list(graph.nodes) + sorted(KNOWN_NODES)))
        out = [c for c in names if c in self.frame.columns
               and pd.to_numeric(self.frame[c], errors="coerce").dropna().nunique() >= 2]
        self._metrics_memo = (self.frame, graph, out)
        return list(out)

    def treatments(self) -> list[str]:
        g = self.graph
        return [m for m in self.metrics() if m not in BINARY_OUTCOMES and m in g.nodes
                and m not in g.latent]

    def outcomes(self) -> list[str]:
        metrics = self.metrics()
        return [m for m in BINARY_OUTCOMES if m in self.graph.nodes
                and (m in metrics or m == "sla_met")] + self.treatments()

    def choose_treatment(self, treatment: str) -> None:
        """The user picked a treatment: its range and default value follow."""
        if treatment not in self.treatments():
            raise ValueError(f"{treatment!r} cannot be set in this cohort and graph")
        self._choose(treatment, self.outcome)
        self.dirty = True

    def choose_outcome(self, outcome: str) -> None:
        if outcome not in self.outcomes():
            raise ValueError(f"{outcome!r} is not an outcome of this cohort and graph")
        self.outcome = outcome
        self.dirty = True

    def _choose(self, treatment: str | None, outcome: str | None) -> None:
        for attr, items, cur, pref in (("treatment", self.treatments(), treatment, PREFERRED[0]),
                                       ("outcome", self.outcomes(), outcome, PREFERRED[1])):
            want = cur or pref
            setattr(self, attr, want if want in items else (items[0] if items else None))
        self._derive_range()

    def treatment_values(self) -> pd.Series:
        if self.frame is None or self.treatment not in self.frame.columns:
            return pd.Series(dtype=float)
        return pd.to_numeric(self.frame[self.treatment], errors="coerce").dropna()

    def _derive_range(self) -> None:
        vals = self.treatment_values()
        if vals.empty:
            return
        lo, hi = float(vals.min()), float(vals.max())
        if (self.treatment or "").endswith("_rate"):
            lo, hi = 0.0, 1.0
        if hi <= lo:
            hi = lo + 1.0
        self.range = (lo, hi)
        grp = self.frame["grp"] if "grp" in self.frame.columns else None
        ctl = vals[grp.loc[vals.index] == "control"] if grp is not None else vals
        self.set_value = float(ctl.mean()) if not ctl.empty else float(vals.median())

    def is_rate(self) -> bool:
        """The range spans at most 1 (a rate, a share): 3 decimals and steps of 0.01."""
        lo, hi = self.range
        return hi - lo <= 1.0

    def step(self) -> float:
        lo, hi = self.range
        return 0.01 if self.is_rate() else max(0.1, round((hi - lo) / 100, 1))

    def set_scenario_value(self, value: float) -> None:
        """The scenario value (the treatment's units), clamped to the range."""
        lo, hi = self.range
        self.set_value = min(max(float(value), lo), hi)
        self.dirty = True

    def fraction(self, value: float | None = None) -> float:
        """Where `value` (default: the scenario value) lies in the range, 0..1."""
        lo, hi = self.range
        return ((self.set_value if value is None else value) - lo) / (hi - lo)

    def value_at(self, fraction: float) -> float:
        lo, hi = self.range
        return lo + (hi - lo) * fraction

    # -- the cases the scenario applies to --------------------------------------------------
    def selected_mask(self) -> pd.Series | None:
        """Bool mask of the frame rows the scenario applies to: the selected cases, else None
        (run_whatif then takes the cluster's badcases)."""
        ids = self.selected_ids
        if self.frame is None or not ids or "case_id" not in self.frame.columns:
            return None
        return self.frame["case_id"].isin(ids)

    def applies_to(self) -> tuple[str, int] | None:
        """('selected', n) or ('cluster', n badcases) the scenario applies to; None without
        a frame."""
        if self.frame is None:
            return None
        mask = self.selected_mask()
        if mask is not None:
            return "selected", int(mask.sum())
        f = self.frame
        return "cluster", int((f["grp"] == "bad").sum()) if "grp" in f.columns else len(f)

    # -- the runs ---------------------------------------------------------------------------
    def _common(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"graph_text": self._graph_text, "selected": self.selected_mask()}
        if self.thresholds:
            kw["thresholds"] = dict(self.thresholds)   # SLA met as the SLA panel judges it
        return kw

    def query(self) -> WhatIfQuery | None:
        """The run of the current choices (None without a frame or a treatment); the inputs
        count as run from here on."""
        if self.frame is None or self.treatment is None:
            return None
        self.dirty = False
        return WhatIfQuery(self.frame, dict(self._common(), treatment=self.treatment,
                                            outcome=self.outcome, set_value=float(self.set_value)))

    def scale_query(self) -> ScaleQuery | None:
        """The SLA-scaling row's run; None when the metric is not in the frame."""
        lo, hi = SCALE_PCT_RANGE
        if not lo <= self.scale_pct <= hi:
            raise ValueError(f"change {self.scale_pct} % outside [{lo}, {hi}] %")
        if self.frame is None or self.scale_metric not in self.frame.columns:
            return None
        return ScaleQuery(self.frame, self.scale_metric, 1 + self.scale_pct / 100, self._common())

    def take_result(self, d: WhatIfSection) -> None:
        """A finished what-if (a run's or a report's): it becomes the result and the choices
        follow it (its treatment and outcome, its value, the range widened to hold it)."""
        self.result = d
        self.treatment, self.outcome = d.get("treatment"), d.get("outcome")
        sv = ((d.get("scenario") or {}).get("set") or {}).get(d.get("treatment"))
        if isinstance(sv, (int, float)):
            lo, hi = self.range
            self.range = (min(lo, sv), max(hi, sv))
            self.set_value = float(sv)

    def report_args(self) -> dict:
        """The scenario as run_whatif keyword arguments (treatment, outcome, set_value,
        graph_text, thresholds, selected_case_ids), for a report exported from the window."""
        out: dict = {"graph_text": self._graph_text}
        mask = self.selected_mask()
        if mask is not None:
            out["selected_case_ids"] = sorted(self.frame.loc[mask, "case_id"].astype(str))
        if self.treatment:
            out.update(treatment=self.treatment, set_value=float(self.set_value))
        if self.outcome:
            out["outcome"] = self.outcome
        if self.thresholds:
            out["thresholds"] = dict(self.thresholds)
        return out

    def report_result(self) -> WhatIfSection | None:
        """The finished result of exactly report_args(); None when the inputs changed since."""
        return None if self.dirty else self.result
