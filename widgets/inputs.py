"""Inputs panel: every file or folder loaded, its format, rows loaded, rows skipped and why, and
the error of a file that could not be read; under each file its runs, with an editable label
and engine version (kept with the session; the version's source is in the tooltip)."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QLabel, QLineEdit, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.escape import qt_plain_tip
from explorer.widgets import palette
from explorer.widgets.base import Panel
from explorer.core.names import distinct_names
from explorer.widgets.painters.common import common_prefix_len, is_missing
from explorer.core.i18n import _, ngettext


def _n(v) -> int:
    return 0 if is_missing(v) else int(v)


MAX_RUN_EDITORS = 40  # per file: a sweep or a folder of CSVs can hold hundreds of runs
# in all: an editor is a widget in the tree, and 5,000 of them (a folder of 5,000 one-row
# CSVs, one run each) took ~85 s of the UI thread to build; the runs past this are one plain
# row each, edited in the Runs panel
MAX_RUN_EDITORS_TOTAL = 200


class InputsPanel(Panel):
    topic = bus.SECTION["inputs"]
    runs: dict = {}

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([_("File"), _("Format"), _("Rows"),
                                   _("Skipped"), _("Status")])
        self.tree.setRootIsDecorated(True)
        self.tree.setAlternatingRowColors(True)
        # the shown names put what tells siblings apart first (_short_names): cut at the end
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        hh = self.tree.header()
        hh.setStretchLastSection(False)
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setMinimumSectionSize(36)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tree)

    def on_results(self, update: bus.Update) -> None:
        if (runs := bus.SECTION["runs"]) in update:
            self.runs = {r["run_id"]: r for r in update.ok(runs) or []
                         if isinstance(r, dict) and "run_id" in r}
            if self.topic not in update and self.value is not None:
                self.show_result(self.value)
        super().on_results(update)

    def _run_editor(self, parent: QTreeWidgetItem, run: dict) -> None:
        """A child row: 'run', the label and the engine version as line edits."""
        it = QTreeWidgetItem([""])
        parent.addChild(it)
        it.setFirstColumnSpanned(True)
        w = QWidget()
        row = QHBoxLayout(w)
        row.setContentsMargins(0, 0, 0, 0)
        label = QLineEdit(run.get("label") or "")
        label.setPlaceholderText(_("label"))
        version = QLineEdit(run.get("engine_version") or "")
        version.setPlaceholderText(_("engine version"))
        version.setMaximumWidth(140)
        src = run.get("version_source") or _("no version in the file or its path")
        version.setToolTip(qt_plain_tip(_("Engine version (from: {source})").format(source=src)))
        label.setToolTip(qt_plain_tip(run["run_id"]))
        row.addWidget(QLabel(_("run")))
        row.addWidget(label, 1)
        row.addWidget(QLabel(_("version")))
        row.addWidget(version)
        rid = run["run_id"]
        label.editingFinished.connect(lambda e=label, r=run: self._edit(r, "label", e.text()))
        version.editingFinished.connect(
            lambda e=version, r=run: self._edit(r, "engine_version", e.text()))
        label.setObjectName(f"run-label:{rid}")
        version.setObjectName(f"run-version:{rid}")
        self.tree.setItemWidget(it, 0, w)

    def _run_row(self, parent: QTreeWidgetItem, run: dict) -> None:
        """A child row without editors (past MAX_RUN_EDITORS_TOTAL): the run's label and
        version as text; the Runs panel edits them."""
        it = QTreeWidgetItem([_("run {run}, version {version} (edit in the Runs panel)").format(
                run=run.get("label") or run["run_id"], version=run.get("engine_version") or "–")])
        it.setToolTip(0, qt_plain_tip(run["run_id"]))
        parent.addChild(it)

    def _edit(self, run: dict, field: str, text: str) -> None:
        if (run.get(field) or "") != text.strip():
            run[field] = text.strip()
            self.session.set_run(run["run_id"], **{field: text})

    def paint(self, reports) -> str | None:
        self.tree.clear()
        if not reports:
            return _("No input loaded yet. Drop eval results (lm-eval samples, MMLU-Pro "
                     "outputs, HELM runs, CSV/JSONL) and traces (vLLM/SGLang bench, AIPerf, "
                     "LLMPerf, OTLP, aibrix CSV) here, or use File > Open files… (Ctrl+O).")
        bad = QBrush(QColor(palette.BAD))
        shown = _short_names([str(r.path) for r in reports])
        editors = 0
        for r in reports:
            name = shown[str(r.path)]
            loaded, skipped = _n(r.rows_loaded), _n(r.rows_skipped)
            ignored = getattr(r, "skipped_file", None)
            if ignored:  # in a dropped folder, neither a trace nor an eval: listed, not loaded
                it = QTreeWidgetItem([name, "–", "–", "–", _("ignored")])
                it.setToolTip(0, qt_plain_tip(f"{r.path}\n{ignored}"))
                it.setToolTip(4, qt_plain_tip(ignored))
                for c in range(5):
                    it.setForeground(c, QBrush(QColor(palette.MUTED)))
                it.addChild(QTreeWidgetItem([_("ignored: {reason}").format(reason=ignored)]))
                self.tree.addTopLevelItem(it)
                continue
            status = _("error") if r.error else (ngettext("ok, {n} skipped", "ok, {n} skipped", skipped).format(
                    n=skipped)
                                                       if skipped else _("ok"))
            it = QTreeWidgetItem([name, r.format or "?", by_spec(loaded, ','), by_spec(skipped, ','), status])
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
                ch = QTreeWidgetItem([_("skipped: {reason}").format(reason=reason)])
                ch.setToolTip(0, qt_plain_tip(reason))
                it.addChild(ch)
            if r.columns:
                cols = QTreeWidgetItem([_("columns: {columns}").format(
                        columns="; ".join(f"{k} → {v}" for k, v in list(r.columns.items())[:12]))])
                it.addChild(cols)
            self.tree.addTopLevelItem(it)
            for rid in list(r.run_ids or [])[:MAX_RUN_EDITORS]:
                if rid in self.runs and editors < MAX_RUN_EDITORS_TOTAL:
                    editors += 1
                    self._run_editor(it, self.runs[rid])
                elif rid in self.runs:
                    self._run_row(it, self.runs[rid])
            if r.error:
                it.setExpanded(True)
                err.setFirstColumnSpanned(True)
        for c in range(1, 5):
            self.tree.resizeColumnToContents(c)
        # the Status column says "ok, N skipped" too: without skips the name gets the room
        self.tree.setColumnHidden(3, not any(_n(r.rows_skipped) for r in reports))
        return None

    def copy_text(self) -> str:
        lines = ["file\tformat\trows\tskipped\terror"]
        for r in self.value or []:
            ignored = getattr(r, "skipped_file", None)   # why a file was not loaded, as shown
            why = r.error or (f"ignored: {ignored}" if ignored else "")
            lines.append(f"{r.path}\t{r.format}\t{r.rows_loaded}\t{r.rows_skipped}\t{why}")
            lines += [f"\t\t\t\tskipped: {reason}" for reason in getattr(r, "skipped_reasons", ()) or ()]
        return "\n".join(lines)


def _short_names(paths: list[str]) -> dict[str, str]:
    """path -> the name the panel shows: the fewest trailing path parts that keep it distinct
    from every other input (explorer.core.names: two releases' naive_output_1.csv keep their
    folders), then without the prefix the file names of one folder share
    ("Meta-Llama-3_1-8B-…" and "Meta-Llama-3_1-70B-…" show as "…8B-…" and "…70B-…"; the full
    path is in the tooltip)."""
    tails = distinct_names(paths)
    by_dir: dict[str, list[str]] = {}
    for p in paths:
        by_dir.setdefault(os.path.dirname(p.rstrip("/")), []).append(p)
    out = {}
    for group in by_dir.values():
        names = [os.path.basename(p.rstrip("/")) or p for p in group]
        cut = common_prefix_len(sorted(set(names)), seps="-_ ")  # "0.1.csv" stays whole
        for p, n in zip(group, names):
            folder = tails[p][: len(tails[p]) - len(n)]  # "v0.2.1/" when the folder tells it apart
            out[p] = folder + (("…" + n[cut:]) if cut else n)
    return out
