"""Inputs panel: every file or folder loaded, its format, rows loaded, rows skipped and why, and
the error of a file that could not be read."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from explorer.core.escape import qt_plain_tip
from widgets import palette
from widgets.base import Panel
from widgets.painters.common import common_prefix_len, is_missing


def _n(v) -> int:
    return 0 if is_missing(v) else int(v)


class InputsPanel(Panel):
    key = "inputs"
    title = "Inputs"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([self.tr("File"), self.tr("Format"), self.tr("Rows"),
                                   self.tr("Skipped"), self.tr("Status")])
        self.tree.setRootIsDecorated(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        hh = self.tree.header()
        hh.setStretchLastSection(False)
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setMinimumSectionSize(36)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tree)

    def paint(self, reports) -> str | None:
        self.tree.clear()
        if not reports:
            return self.tr("No input loaded yet. Drop eval results (lm-eval samples, MMLU-Pro "
                           "outputs, HELM runs, CSV/JSONL) and traces (vLLM/SGLang bench, AIPerf, "
                           "LLMPerf, OTLP, aibrix CSV) here, or use File > Open files… (Ctrl+O).")
        bad = QBrush(QColor(palette.BAD))
        shown = _short_names([str(r.path) for r in reports])
        for r in reports:
            name = shown[str(r.path)]
            loaded, skipped = _n(r.rows_loaded), _n(r.rows_skipped)
            ignored = getattr(r, "skipped_file", None)
            if ignored:  # in a dropped folder, neither a trace nor an eval: listed, not loaded
                it = QTreeWidgetItem([name, "–", "–", "–", self.tr("ignored")])
                it.setToolTip(0, qt_plain_tip(f"{r.path}\n{ignored}"))
                it.setToolTip(4, qt_plain_tip(ignored))
                for c in range(5):
                    it.setForeground(c, QBrush(QColor(palette.MUTED)))
                it.addChild(QTreeWidgetItem([self.tr("ignored: %1").replace("%1", ignored)]))
                self.tree.addTopLevelItem(it)
                continue
            status = self.tr("error") if r.error else (self.tr("ok, %n skipped", "", skipped)
                                                       if skipped else self.tr("ok"))
            it = QTreeWidgetItem([name, r.format or "?", f"{loaded:,}", f"{skipped:,}", status])
            it.setToolTip(0, qt_plain_tip(f"{r.path}\nsha256 {r.sha256 or '–'}\nkind {r.kind or '–'}"))
            if r.error:
                for c in range(5):
                    it.setForeground(c, bad)
                err = QTreeWidgetItem([r.error])
                err.setForeground(0, bad)
                err.setToolTip(0, qt_plain_tip(r.error))
                it.addChild(err)
                it.setFirstColumnSpanned(False)
            for reason in r.skipped_reasons:
                ch = QTreeWidgetItem([self.tr("skipped: %1").replace("%1", reason)])
                ch.setToolTip(0, qt_plain_tip(reason))
                it.addChild(ch)
            if r.columns:
                cols = QTreeWidgetItem([self.tr("columns: %1").replace(
                    "%1", "; ".join(f"{k} → {v}" for k, v in list(r.columns.items())[:12]))])
                it.addChild(cols)
            self.tree.addTopLevelItem(it)
            if r.error:
                it.setExpanded(True)
                err.setFirstColumnSpanned(True)
        for c in range(1, 5):
            self.tree.resizeColumnToContents(c)
        return None

    def copy_text(self) -> str:
        lines = ["file\tformat\trows\tskipped\terror"]
        for r in self.value or []:
            lines.append(f"{r.path}\t{r.format}\t{r.rows_loaded}\t{r.rows_skipped}\t{r.error or ''}")
        return "\n".join(lines)


def _short_names(paths: list[str]) -> dict[str, str]:
    """path -> the file name the panel shows: the base name, without the prefix it shares with
    the other files of its folder ("Meta-Llama-3_1-8B-…" and "Meta-Llama-3_1-70B-…" show as
    "…8B-…" and "…70B-…"; the full path is in the tooltip)."""
    by_dir: dict[str, list[str]] = {}
    for p in paths:
        by_dir.setdefault(os.path.dirname(p.rstrip("/")), []).append(p)
    out = {}
    for group in by_dir.values():
        names = [os.path.basename(p.rstrip("/")) or p for p in group]
        cut = common_prefix_len(sorted(set(names)), seps="-_ ")  # "0.1.csv" stays whole
        for p, n in zip(group, names):
            out[p] = ("…" + n[cut:]) if cut else n
    return out
