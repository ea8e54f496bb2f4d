"""Case table: the cohort's cases (or the selected ones): prompt, prediction, correct, cluster,
bound request and association level; double-clicking a case opens its bound request in the
Timeline panel (Session.open_request). The model formats only the rows on screen and sorts with
pandas, so thousands of cases repaint in a few milliseconds."""
from __future__ import annotations

import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QTableView, QVBoxLayout)

from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.names import plural
from explorer.widgets import palette
from explorer.widgets.base import Panel
from explorer.core.i18n import N_, _, pgettext

# marked for extraction (N_), translated where shown
HEADERS = [N_("Prompt"), N_("Prediction"),
           N_("Correct"), N_("Cluster"),
           N_("Category"), N_("Model"),
           N_("Bound request"), N_("Level")]
COLUMNS = ["prompt", "prediction", "correct", "cluster", "category", "model", "request_id", "level"]
LEVELS = {1: N_("1 exact id"), 2: N_("2 fuzzy"),
          3: N_("3 weak")}


def _na(v) -> bool:
    """None, NaN, pd.NA or NaT."""
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _short(v, n=160) -> str:
    s = "" if _na(v) else " ".join(str(v).split())
    return s if len(s) <= n else s[: n - 1] + "…"


class CasesModel(QAbstractTableModel):
    """Read-only model over the session's "cases" DataFrame (explorer.session.fetch_cases)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.df = pd.DataFrame(columns=["case_id"] + COLUMNS)
        self._bad = QBrush(QColor(palette.BAD))
        self.tr_not_bound = _("not bound")

    def set_frame(self, df: pd.DataFrame) -> None:
        self.beginResetModel()
        df = df.reset_index(drop=True).copy()
        for c in COLUMNS:
            if c not in df:
                df[c] = None
        self.df = df
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.df)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return _(HEADERS[section])
        return None

    def _correct(self, row: int):
        v = self.df.at[row, "correct"]
        return None if _na(v) else bool(v)

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r, col = index.row(), COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            v = self.df.at[r, col]
            if col == "correct":
                c = self._correct(r)
                return "✓" if c is True else ("✗" if c is False else "–")
            if col == "level":
                return "–" if _na(v) else _(LEVELS[int(v)]) if int(v) in LEVELS else str(v)
            if col == "request_id" and _na(v):
                amb = self.df.at[r, "ambiguous"] if "ambiguous" in self.df else None
                return _short(amb, 60) if not _na(amb) else self.tr_not_bound
            if col == "model" and not _na(v):   # "meta-llama/Llama-3.1-8B" -> its last part
                return _short(str(v).rsplit("/", 1)[-1], 40)
            return _short(v, 40 if col in ("cluster", "category") else 160)
        if role == Qt.ItemDataRole.ForegroundRole and self._correct(r) is False:
            return self._bad
        if role == Qt.ItemDataRole.ToolTipRole:
            d = self.df.iloc[r]
            amb = d.get("ambiguous")
            extra = "" if _na(amb) else f"\n\nNot bound, {amb}"
            from explorer.core.escape import qt_plain_tip  # a case id is never markup
            return qt_plain_tip(f"{d['case_id']}\n\n{_short(d['prompt'], 600)}\n\n→ "
                                f"{_short(d['prediction'], 300)}{extra}")
        return None

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        col = COLUMNS[column]
        if self.df.empty:
            return
        key = self.df[col]
        if col == "correct":  # vectorised: a per-row lambda cost 0.15 s of the UI thread a paint
            key = key.astype("boolean")
        elif col == "level":
            key = pd.to_numeric(key, errors="coerce")
        else:
            key = key.astype("string").replace("", pd.NA)
        self.layoutAboutToBeChanged.emit()
        idx = key.sort_values(ascending=order == Qt.SortOrder.AscendingOrder, kind="stable",
                              na_position="last").index  # missing last either way
        self.df = self.df.loc[idx].reset_index(drop=True)
        self.layoutChanged.emit()


class CasesPanel(Panel):
    topic = bus.CASES

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.model = CasesModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSortingEnabled(True)
        self.view.setWordWrap(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.view.verticalHeader().hide()
        hh = self.view.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setStretchLastSection(False)
        for c, w in ((1, 300), (2, 64), (3, 170), (4, 150), (5, 170), (6, 170), (7, 90)):
            self.view.setColumnWidth(c, w)
        self.view.doubleClicked.connect(self.open_row)
        self.view.setToolTip(_("Double-click a case to open its bound request in the Timeline; "
                               "pick rows and press “Select in every view” to compare them"))
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.pick = QPushButton(_("Select in every view"))
        self.pick.setToolTip(_("Make the picked cases the selection: every view shows them "
                               "against the rest of the cohort"))
        self.pick.setEnabled(False)
        self.pick.clicked.connect(self.select_picked)
        self.view.selectionModel().selectionChanged.connect(
            lambda *_: self.pick.setEnabled(self.view.selectionModel().hasSelection()))

        self.caption = QLabel()
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setObjectName("muted")
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()  # the caption and the button share a line: rows keep the height
        row.setContentsMargins(0, 0, 4, 0)
        row.addWidget(self.caption, 1)
        row.addWidget(self.pick)
        lay.addLayout(row)
        lay.addWidget(self.view, 1)

    def paint(self, df) -> str | None:
        if not isinstance(df, pd.DataFrame) or df.empty:
            s = self.session
            if s.selection is not None:
                if s.selected_cases is not None and s.selected_requests:
                    n = s.selected_requests
                    return _("{requests} selected ({selection}): none is bound to a case of this cohort, so "
                             "no case is listed. The requests are listed under the heatmap; "
                             "double-click one to open its timeline. Esc clears the selection.").format(
                                     requests=f"{by_spec(n, ',')} request" + ("s" if n != 1 else ""),
                                     selection=s.selection_label)
                return _("The selection ({selection}) holds no case of this cohort. Esc clears it.").format(
                        selection=s.selection_label)
            return _("No case in the cohort: load an eval with badcases and choose a cluster.")
        self.model.set_frame(df)
        self.view.sortByColumn(2, Qt.SortOrder.AscendingOrder)  # badcases first
        s, n = self.session, len(df)
        if s.selection is not None:
            ids = getattr(s, "selected_cases", None)
            total = len(ids) if ids is not None else n
            text = (_("{cases} selected: {selection} (Esc clears, Alt+Left goes back)").format(
                    cases=plural(total, "case"), selection=s.selection_label))
        else:  # the counts of the whole cohort (its frame), not of the listed rows
            frame = s.results.view(bus.FRAME) if hasattr(s, "results") else None
            if isinstance(frame, pd.DataFrame) and "badcase" in frame:
                total, bad = len(frame), int((frame["badcase"] == 1).sum())
            else:
                total = n
                bad = int(df["correct"].eq(False).fillna(False).sum()) if "correct" in df else 0
            text = (_("{cases} in the cohort: {badcases}, {control} control").format(
                    cases=plural(total, "case"), badcases=plural(bad, "badcase"),
                    control=by_spec(total - bad, ',')))
        if n < total:
            text += _(" (the first {n} listed)").format(n=by_spec(n, ','))
        self.caption.setText(text)
        return None

    def picked_ids(self) -> list[str]:
        """case_id of the rows picked in the table."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [str(self.model.df.at[r, "case_id"]) for r in rows]

    def select_picked(self) -> None:
        ids = self.picked_ids()
        if ids:
            self.session.select_cases(ids, pgettext("panel", "Cases"))  # the panel's name, not a count

    def open_row(self, index) -> None:
        """Open the bound request of the case on `index`'s row in the Timeline panel."""
        if not index.isValid():
            return
        df = self.model.df
        r = index.row()
        self.session.open_request(df.at[r, "run_id"], df.at[r, "request_id"])

    def copy_text(self) -> str:
        df = self.model.df
        from explorer.core.escape import tsv  # formula prefixes, tabs, line breaks neutralised
        return tsv([["case_id"] + COLUMNS] + [[_short(v, 10000) for v in row] for row in
                                              df[["case_id"] + COLUMNS].itertuples(index=False)])
