"""The Session's selection (a mixin of explorer.session.Session): the predicate, its history
(Back / Forward), the views that make one (tree node, heatmap cell, picked cases, a brushed
range) and the selection's worker job, whose payload (cases, selected requests, the selection's
analysis) goes out on the results bus. Split from session.py along this seam: it reads the
session's store, cohort and objects and publishes, nothing else."""
from __future__ import annotations

import pandas as pd

from explorer.core import analysis, bus
from explorer.core.i18n import _
from explorer.core.names import plural
from explorer.core.selection import InSet, Range, select_requests
from explorer.core.windowdata import fetch_cases, fetch_requests, select_payload
from explorer.workers import JobContext


class Selecting:
    """Session's selection methods (the Session holds the state they read and write)."""

    # -- selection --------------------------------------------------------------------------
    def set_selection(self, predicate, label: str = "", record: bool = True,
                      requests: bool = False, source: tuple | None = None) -> None:
        """Select the cohort's cases matching `predicate` (explorer.core.selection; evaluated
        inside the current cohort), or None to clear. requests=True also counts the requests
        the predicate selects in the whole store (a heatmap cell) and publishes the first
        REQUEST_LIMIT of them as "selected_requests". source: the view that made it, e.g.
        ("heatmap", ix, iy). Recorded in the Back/Forward history unless record=False."""
        if record:
            del self.history[self.hist_index + 1:]
            self.history.append((predicate, label, requests, source))
            self.hist_index = len(self.history) - 1
        self.selection, self.selection_label = predicate, label
        self.selection_source = source if predicate is not None else None
        self.selected_cases, self.selected_requests = None, None
        self.selectionChanged.emit()
        if predicate is None:
            self.runner.cancel("selection")
            self.selectedCasesChanged.emit(None)
            frame = self.results.view(bus.FRAME)
            ids = frame["case_id"].tolist() if isinstance(frame, pd.DataFrame) else []
            self.runner.submit("cases", lambda ctx: {"cases": fetch_cases(self.store, ids),
                                                     "selected_requests": None, "selection": None},
                               self._publish, self._failed, label=_("Listing cases"))
            return
        cohort = analysis.Cohort(cluster=self.cluster, control=self.control, selection=predicate)
        frame, objects, whole = self.results.view(bus.FRAME), dict(self.objects), self.cohort()
        params = {k: dict(v) for k, v in self.params.items()}

        def job(ctx: JobContext):
            ids = frozenset(analysis.cohort_frame(self.store, cohort)["case_id"])
            ctx.check()
            nreq, reqs = None, None
            if requests:
                keys = select_requests(self.store, predicate)
                nreq, reqs = len(keys), fetch_requests(self.store, keys)
            cases = fetch_cases(self.store, sorted(ids))
            ctx.check()
            return ids, nreq, cases, reqs, select_payload(self.store, whole, frame, ids, objects, params)
        self.runner.submit("selection", job, self._selected, self._failed,
                           label=_("Selecting"))

    def _selected(self, result) -> None:
        ids, nreq, cases, reqs, selection = result
        self.selected_cases, self.selected_requests = ids, nreq
        self.selectedCasesChanged.emit(ids)
        self._publish({"selected_requests": reqs, "cases": cases, "selection": selection})

    def open_request(self, run_id, request_id) -> None:
        """Open one request in the Timeline panel (emits requestActivated); the main window
        raises the Timeline dock. A missing id (a case not bound to a request) says so in the
        status bar instead."""
        if run_id is None or request_id is None or pd.isna(run_id) or pd.isna(request_id):
            self.message.emit(_("This case is not bound to a trace request: no timeline to open."))
            return
        self.requestActivated.emit(str(run_id), str(request_id))

    def clear_selection(self, record: bool = True) -> None:
        if self.selection is not None:
            self.set_selection(None, "", record=record)

    def can_back(self) -> bool:
        return self.hist_index > 0

    def can_forward(self) -> bool:
        return self.hist_index < len(self.history) - 1

    def back(self) -> None:
        if self.can_back():
            self.hist_index -= 1
            pred, label, requests, source = self.history[self.hist_index]
            self.set_selection(pred, label, record=False, requests=requests, source=source)

    def forward(self) -> None:
        if self.can_forward():
            self.hist_index += 1
            pred, label, requests, source = self.history[self.hist_index]
            self.set_selection(pred, label, record=False, requests=requests, source=source)

    def select_tree_node(self, node_id: int) -> None:
        """Select the cases of one decision-tree node (analysis.tree_node_predicate)."""
        tree = self.objects.get("tree")
        if tree is None:
            return
        from explorer.core.analysis.tree import node_condition
        self.set_selection(analysis.tree_node_predicate(tree, node_id),
                           _("Decision tree: {condition}").format(
                                   condition=node_condition(tree, node_id)),
                           source=("tree", node_id))

    def select_cases(self, case_ids, view: str = "Cases") -> None:
        """Select a set of cases (rows picked in the Cases table) by their ids."""
        ids = tuple(sorted({str(c) for c in case_ids}))
        if not ids:
            return
        self.set_selection(InSet("case_id", ids),
                           _("{view}: {cases} picked").format(
                                   view=view, cases=plural(len(ids), "case")),
                           source=("cases", len(ids)))

    def select_range(self, metric: str, lo: float | None, hi: float | None, text: str = "") -> None:
        """Select the cohort's cases whose `metric` lies in [lo, hi) (a range brushed on the
        Distributions panel, `text` its readable form, e.g. "TPOT 12 ms to 20 ms")."""
        self.set_selection(Range(metric, lo, hi),
                           _("Distributions: {range}").format(
                                   range=text or f"{metric} {lo} to {hi}"),
                           source=("range", metric, lo, hi))

    def select_heatmap_cell(self, ix: int, iy: int) -> None:
        """Select the requests of one heatmap cell (analysis.heatmap_cell_predicate)."""
        hm = self.objects.get("heatmap")
        if hm is None:
            return
        from explorer.core.analysis.heatmap import cell_condition
        self.set_selection(analysis.heatmap_cell_predicate(hm, ix, iy),
                           _("Heatmap: {cell}").format(cell=cell_condition(hm, ix, iy)),
                           requests=True, source=("heatmap", ix, iy))
