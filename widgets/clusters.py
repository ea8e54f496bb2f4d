"""Cluster list: badcase clusters (name, badcases, share of all badcases, bound to a trace),
sortable; choosing one sets the cohort of every panel; rename from the context menu."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView,
                               QInputDialog, QLabel, QMenu, QTableView, QVBoxLayout)

from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.escape import qt_plain_tip
from explorer.widgets.base import Panel
from explorer.widgets.painters.common import common_prefix_len, count, is_missing, ratio, share
from explorer.widgets.tablemodel import KEY_ROLE, RowsModel, sortable
from explorer.core.i18n import _

ALL = "\x00all"  # row key of "every badcase"


def _bound(bound, bad) -> str:
    """'369 (100%)': badcases bound to a trace request and their share."""
    if is_missing(bound):
        return count(bound)
    return (f"{count(bound)} ({share(int(bound) / int(bad))})" if not is_missing(bad) and int(bad)
            else count(bound))


def _num(v) -> float:
    """A count or share as a float to sort by, -1 when missing."""
    t = type(v)
    if t is float:
        return v if v == v else -1.0
    return float(v) if t is int else (-1.0 if is_missing(v) else float(v))


def _format_row(c: dict, cut: int, texts: tuple[str, str, str, str]) -> tuple[list[str], str]:
    """Display strings and tooltip of one cluster (or of the "every badcase" row)."""
    every, every_tip, bound_tip, cats_tip = texts
    bad = c.get("badcases")
    if c["name"] == ALL:
        return [every, by_spec(bad, ','), "100%", _bound(c["bound"], bad)], every_tip
    name = str(c.get("name"))
    cats = c.get("categories") or []
    tip = name + "\n" + bound_tip.format(bound=ratio(c.get("bound"), bad)) + (
        "\n" + cats_tip.format(categories=", ".join(map(str, cats))) if cats else "")
    return [("…" + name[cut:]) if cut else name, count(bad),
            share(c.get("share")), _bound(c.get("bound"), bad)], tip


class ClustersPanel(Panel):
    topic = bus.SECTION["clusters"]

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.model = RowsModel([_("Cluster"), _("Bad"), _("Share"),
                                _("Bound")], self)
        self.view = QTableView()
        self.proxy = sortable(self.model, self)  # the model itself (it sorts its rows)
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        # a shared prefix is already cut: what tells clusters apart comes first, keep it
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.view.setWordWrap(False)  # wrapped at "-", a name showed as its first word + "…"
        self.view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2, 3):
            self.view.horizontalHeader().setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.view.horizontalHeader().setResizeContentsPrecision(200)  # rows measured for the widths
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.view.selectionModel().currentRowChanged.connect(self._chosen)
        self.view.clicked.connect(lambda idx: self._chosen(idx, None))  # the current row too
        session.cohortChanged.connect(self._follow_cluster)  # bound: dropped with the panel
        self.control = QComboBox()
        self.control.addItem(_("correct cases, same category"), "same-category")
        self.control.addItem(_("all correct cases"), "all-correct")
        self.control.addItem(_("every case outside the cluster"), "outside-cluster")
        self.control.setItemData(2, _("The cases of the badcases' categories outside the "
                                      "cluster: correct ones and other clusters' badcases "
                                      "(a noise cluster beside one tied to the engine is "
                                      "then not compared with correct cases only)"),
                                 Qt.ItemDataRole.ToolTipRole)
        self.control.currentIndexChanged.connect(
            lambda _i: session.set_control(self.control.currentData()))
        row = QHBoxLayout()
        row.addWidget(QLabel(_("Control:")))
        row.addWidget(self.control, 1)
        # one eval or every one pooled (as `report --eval`): MMLU-Pro 8B and 70B apart
        self.evals = QComboBox()
        self.evals.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.evals.setMinimumContentsLength(12)
        self.evals.setToolTip(_("Analyse the cases of one eval (one model) only, or of "
                                "every loaded eval pooled"))
        self.evals.currentIndexChanged.connect(
            lambda _i: None if self._filling else session.set_eval(self.evals.currentData()))
        self._filling = False
        self.eval_label = QLabel(_("Eval:"))
        erow = QHBoxLayout()
        erow.addWidget(self.eval_label)
        erow.addWidget(self.evals, 1)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(erow)
        lay.addLayout(row)
        lay.addWidget(self.view)
        self._painting = False

    def on_results(self, update: bus.Update) -> None:
        if bus.EVALS in update:
            self.show_evals(update[bus.EVALS] or [])
        super().on_results(update)

    def show_evals(self, evals: list[dict]) -> None:
        """The eval picker: every eval pooled, then each eval by its model (shown when there
        are two or more)."""
        self._filling = True
        try:
            self.evals.clear()
            self.evals.addItem(_("every eval ({n})").format(n=str(len(evals))), None)
            for e in evals:
                model = (e.get("model") or "").rsplit("/", 1)[-1]
                text = f"{model} · {e['eval_id']}" if model and model not in e["eval_id"] else e["eval_id"]
                self.evals.addItem(f"{text} ({by_spec(e['cases'], ',')})", e["eval_id"])
                self.evals.setItemData(self.evals.count() - 1, qt_plain_tip(e["eval_id"]),
                                       Qt.ItemDataRole.ToolTipRole)  # a name, never markup
            self.evals.setCurrentIndex(max(self.evals.findData(self.session.eval_id), 0))
        finally:
            self._filling = False
        for w in (self.evals, self.eval_label):
            w.setVisible(len(evals) > 1)

    def paint(self, clusters) -> str | None:
        if not clusters:
            return _("No badcase cluster: load an eval with wrong answers (the cluster is "
                     "taken from the file, else from the category).")
        fields = ("badcases", "share", "bound")
        tot_bad, tot_bound = (int(sum(max(_num(c.get(f)), 0.0) for c in clusters)) for f in fields[::2])
        every = {"name": ALL, "badcases": tot_bad, "bound": tot_bound}
        cut = common_prefix_len([str(c.get("name")) for c in clusters])
        texts = (_("(all badcases)"), _("Every badcase against the control group"),
                 _("bound to a trace request: {bound}"), _("categories: {categories}"))

        def column(k: int) -> list:  # sort values of column k, computed when sorted by it
            if k == 0:
                return [""] + [str(c.get("name")) for c in clusters]
            return [(float("inf"), 2.0, float("inf"))[k - 1]] + [_num(c.get(fields[k - 1])) for c in clusters]
        self._painting = True
        try:  # rows are formatted when shown (100,000 clusters: only the visible ones)
            self.model.set_rows([every, *clusters], column, [ALL] + [c.get("name") for c in clusters],
                                formatter=lambda c: _format_row(c, cut, texts),
                                order=(1, Qt.SortOrder.DescendingOrder))
            header = self.view.horizontalHeader()
            was = header.blockSignals(True)  # the model is sorted already: no second sort
            header.setSortIndicator(1, Qt.SortOrder.DescendingOrder)
            header.blockSignals(was)
            self.select(self.session.cluster)
        finally:
            self._painting = False
        return None

    def _follow_cluster(self) -> None:
        self.select(self.session.cluster)

    def select(self, name) -> None:
        """Highlight the row of cluster `name` (None = all badcases) without re-running."""
        want = ALL if name is None else name
        sm = self.view.selectionModel()
        if sm.currentIndex().isValid() and sm.currentIndex().data(KEY_ROLE) == want \
                and sm.isRowSelected(sm.currentIndex().row()):
            return
        r = self.model.row_of(want)
        if r >= 0:
            was, self._painting = self._painting, True
            try:
                sm.setCurrentIndex(self.model.index(r, 0),
                                   QItemSelectionModel.SelectionFlag.ClearAndSelect
                                   | QItemSelectionModel.SelectionFlag.Rows)
            finally:
                self._painting = was
            self.view.scrollTo(self.model.index(r, 0))
            return
        sm.clear()  # the cohort's cluster is not listed: highlight nothing rather than a wrong row

    def _chosen(self, current, _previous) -> None:
        if self._painting or not current.isValid():
            return
        key = current.data(KEY_ROLE)
        self.session.set_cluster(None if key == ALL else key)  # no-op for the cohort's own row

    def _menu(self, pos) -> None:
        idx = self.view.indexAt(pos)
        key = idx.data(KEY_ROLE) if idx.isValid() else None
        if key in (None, ALL):
            return
        menu = QMenu(self)
        act = menu.addAction(_("Rename cluster…"))
        if menu.exec(self.view.viewport().mapToGlobal(pos)) is act:
            new, ok = QInputDialog.getText(self, _("Rename cluster"),
                                           _("New name for “{cluster}”:").format(
                                                   cluster=str(key)), text=str(key))
            if ok and new.strip():
                self.session.rename_cluster(str(key), new.strip())

    def copy_text(self) -> str:
        """TSV of the list with every cluster's full name (the list may shorten shared prefixes)."""
        rows = [[r[0] if k == ALL else str(k)] + list(r[1:]) for r, k in zip(self.model.rows, self.model.keys)]
        from explorer.core.escape import tsv  # formula prefixes, tabs, line breaks neutralised
        return tsv([self.model.headers] + rows)
