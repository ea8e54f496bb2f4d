"""Case table: the cohort's cases (or the selected ones): prompt, prediction, correct, cluster,
bound request and association level."""
from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableView, QVBoxLayout

from widgets import palette
from widgets.base import Panel
from widgets.painters.common import is_missing
from widgets.tablemodel import RowsModel, sortable

HEADERS = ["Prompt", "Prediction", "Correct", "Cluster", "Category", "Bound request", "Level"]
def _na(v) -> bool:
    """None, NaN, pd.NA or NaT."""
    try:
        return v is None or bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


LEVELS = {1: "1 exact id", 2: "2 fuzzy", 3: "3 weak"}


def _short(v, n=160) -> str:
    s = "" if _na(v) else " ".join(str(v).split())
    return s if len(s) <= n else s[: n - 1] + "…"


class CasesPanel(Panel):
    key = "cases"
    title = "Cases"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.model = RowsModel([self.tr(h) for h in HEADERS], self)
        self.view = QTableView()
        self.view.setModel(sortable(self.model, self))
        self.view.setSortingEnabled(True)
        self.view.setWordWrap(False)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.verticalHeader().hide()
        hh = self.view.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setStretchLastSection(False)
        self.caption = QLabel()
        self.caption.setObjectName("muted")
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.caption)
        lay.addWidget(self.view, 1)

    def paint(self, df) -> str | None:
        if not isinstance(df, pd.DataFrame) or df.empty:
            if self.session.selection is not None:
                return self.tr("The selection holds no case.")
            return self.tr("No case in the cohort: load an eval with badcases and choose a cluster.")
        rows, sort, keys, colours, tips = [], [], [], [], []
        for r in df.itertuples(index=False):
            correct = getattr(r, "correct", None)
            correct = None if _na(correct) else bool(correct)
            level = getattr(r, "level", None)
            lv = None if is_missing(level) else int(level)
            req = getattr(r, "request_id", None)
            req = None if _na(req) else str(req)
            ok = "✓" if correct is True else ("✗" if correct is False else "–")
            rows.append([_short(r.prompt), _short(r.prediction), ok, _short(r.cluster, 40),
                         _short(r.category, 40), req or self.tr("not bound"),
                         LEVELS.get(lv, "–") if lv else "–"])
            sort.append([_short(r.prompt), _short(r.prediction), {"✗": 0, "✓": 1}.get(ok, 2), _short(r.cluster, 40),
                         _short(r.category, 40), req or "~", lv or 9])
            keys.append(r.case_id)
            colours.append(QColor(palette.BAD) if correct is False else None)
            tips.append(f"{r.case_id}\n\n{_short(r.prompt, 600)}\n\n→ {_short(r.prediction, 300)}")
        self.model.set_rows(rows, sort, keys, colours, tips=tips)
        self.view.sortByColumn(2, Qt.SortOrder.AscendingOrder)  # badcases first
        s = self.session
        n = len(rows)
        if s.selection is not None:
            self.caption.setText(self.tr("%1 selected case(s): %2 (Esc clears)").replace("%1", str(n))
                                 .replace("%2", s.selection_label))
        else:
            bad = int(df["correct"].eq(False).fillna(False).sum()) if "correct" in df else 0
            self.caption.setText(self.tr("%1 case(s) in the cohort: %2 badcase(s), %3 control")
                                 .replace("%1", str(n)).replace("%2", str(bad)).replace("%3", str(n - bad)))
        for c, w in ((1, 300), (2, 64), (3, 170), (4, 150), (5, 170), (6, 90)):
            self.view.setColumnWidth(c, w)
        return None

    def copy_text(self) -> str:
        return "\n".join("\t".join(r) for r in [self.model.headers] + self.model.rows)
