"""Runs: every loaded run with its label, engine, engine version (and where the version came
from), workload, success counts and the headline aggregates its result file published; a run in
which no request succeeded is drawn in the warning colour with its flag. Label, engine, version
and workload are editable (kept with the session). Below: the selected run's published
aggregates beside the product's recomputation from the request rows, then every statistic its
requests give that the file did not publish (TTFT / TPOT / ITL / E2E mean, median, P90, P99,
throughput, goodput), and the run-level version changes. The table exports to CSV and Parquet."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout)

from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.escape import qt_plain_tip
from explorer.core.report_runs import OVERVIEW, SHOWN, fmt_published
from explorer.widgets import palette
from explorer.widgets.base import Panel
from explorer.core.i18n import _, ngettext

# the report's overview numbers (report_runs.OVERVIEW), counts aside: one meaning, one place
HEADLINE = tuple((m, s) for m, s, _ in OVERVIEW if m != "requests")
HEADLINE_TITLES = {"Mean TTFT (ms)": "Mean TTFT", "Median TTFT (ms)": "Median TTFT",
                   "P99 TTFT (ms)": "P99 TTFT", "Mean TPOT (ms)": "Mean TPOT",
                   "Mean ITL (ms)": "Mean ITL", "Mean E2E (ms)": "Mean E2E",
                   "Output (tok/s)": "Output tok/s"}
EDITABLE = {0: "label", 1: "engine", 2: "engine_version", 3: "workload"}
WORKLOAD_COL, FLAGS_COL = 3, 6
# px: long labels and flags are elided at the end (the full text is in the tooltip)
RUN_COLUMN_MAX, FLAGS_COLUMN_MAX = 340, 220


def _item(text: str, editable: bool = False) -> QTableWidgetItem:
    it = QTableWidgetItem(text)
    flags = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
    it.setFlags(flags | Qt.ItemFlag.ItemIsEditable if editable else flags)
    return it

RUN_VERSIONS = bus.SECTION["run_versions"]  # the note under the table


class RunsPanel(Panel):
    topic = bus.SECTION["runs"]

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self._painting = False
        self.runs: list[dict] = []
        self.table = QTableWidget()
        titles = {"Mean TTFT": _("Mean TTFT"), "Median TTFT": _("Median TTFT"),
                  "P99 TTFT": _("P99 TTFT"), "Mean TPOT": _("Mean TPOT"),
                  "Mean ITL": _("Mean ITL"), "Mean E2E": _("Mean E2E"),
                  "Output tok/s": _("Output tok/s")}
        heads = [_("Run"), _("Engine"), _("Version"), _("Workload"),
                 _("Completed"), _("Failed"), _("Flags")]
        heads += [titles[HEADLINE_TITLES[t]] for m, s, t in OVERVIEW if m != "requests"]
        heads += [_("Version from"), _("File")]
        self.table.setColumnCount(len(heads))
        self.table.setHorizontalHeaderLabels(heads)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)  # else a wrapped label is cut at its end, not elided
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemChanged.connect(self._edited)
        self.table.itemSelectionChanged.connect(self._show_detail)
        self.detail = QTableWidget()
        self.detail.setColumnCount(3)
        self.detail.setHorizontalHeaderLabels([_("Published"), _("Value"),
                                               _("Recomputed from the requests")])
        self.detail.verticalHeader().hide()
        self.detail.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.detail.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.detail.horizontalHeader().setStretchLastSection(True)
        self.note = QLabel()
        self.note.setObjectName("muted")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        self.export_button = QPushButton(_("Export table…"))
        self.export_button.setToolTip(_("Write every run with its published and "
                                        "recomputed statistics to CSV or Parquet"))
        self.export_button.clicked.connect(self._export)
        foot = QHBoxLayout()
        foot.addWidget(self.note, 1)
        foot.addWidget(self.export_button)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split, 1)
        lay.addLayout(foot)

    def on_results(self, update: bus.Update) -> None:
        super().on_results(update)
        if RUN_VERSIONS in update and self.runs:
            self._show_note(update.view(RUN_VERSIONS))

    def paint(self, runs) -> str | None:
        self.runs = list(runs or [])
        if not self.runs:
            return _("No run loaded yet: drop benchmark results (vLLM / SGLang result "
                     "JSON, printed result blocks, sweep folders) or traces here.")
        self._painting = True
        try:
            self.table.setRowCount(len(self.runs))
            bad = QBrush(QColor(palette.BAD))
            for i, r in enumerate(self.runs):
                pub = {(p["metric"], p["stat"]): p for p in r.get("published") or []}
                flags = r.get("flags") or []
                cells = [r.get("label") or r["run_id"], r.get("engine") or "",
                         r.get("engine_version") or "",
                         r.get("workload_user") or r.get("workload") or "",
                         _count(r.get("completed")), _count(r.get("failed")),
                         "; ".join(f.split(":")[0] for f in flags)]
                cells += [fmt_published(pub[k]["value"], pub[k]["unit"]) if k in pub else ""
                          for k in HEADLINE]
                cells += [r.get("version_source") or "", r.get("source_path") or ""]
                last = len(cells) - 1  # version source, then file: long, in tooltips too
                tips = {0: cells[0], WORKLOAD_COL: cells[WORKLOAD_COL], FLAGS_COL: "\n".join(flags),
                        last - 1: cells[-2], last: cells[-1]}
                for c, text in enumerate(cells):
                    it = _item(str(text), editable=c in EDITABLE)
                    if tips.get(c):
                        it.setToolTip(qt_plain_tip(str(tips[c])))
                    if r.get("no_success"):
                        it.setForeground(bad)
                        f = QFont(it.font())
                        f.setBold(True)
                        it.setFont(f)
                    self.table.setItem(i, c, it)
        finally:
            self._painting = False
        for col, most in ((0, RUN_COLUMN_MAX), (WORKLOAD_COL, RUN_COLUMN_MAX),
                          (FLAGS_COL, FLAGS_COLUMN_MAX)):  # run name, workload, flags
            if self.table.columnWidth(col) > most:
                self.table.horizontalHeader().setSectionResizeMode(
                    col, QHeaderView.ResizeMode.Interactive)
                self.table.setColumnWidth(col, most)
        if self.table.currentRow() < 0 or self.table.currentRow() >= len(self.runs):
            self.table.selectRow(0)
        self._show_detail()
        self._show_note(self.session.results.view(RUN_VERSIONS))
        return None

    def _edited(self, item: QTableWidgetItem) -> None:
        if self._painting or item.column() not in EDITABLE or item.row() >= len(self.runs):
            return
        run = self.runs[item.row()]
        field = EDITABLE[item.column()]
        shown = (run.get("workload_user") or run.get("workload") or "" if field == "workload"
                 else run.get(field) or "")
        if shown == item.text().strip():
            return
        self.session.set_run(run["run_id"], **{field: item.text()})

    def _show_detail(self) -> None:
        """The selected run's published statistics beside the product's recomputation, then
        every statistic its requests give that the file did not publish."""
        row = self.table.currentRow()
        r = self.runs[row] if 0 <= row < len(self.runs) else None
        order = {k: i for i, k in enumerate(SHOWN)}
        pub = sorted((r or {}).get("published") or [],
                     key=lambda p: order.get((p["metric"], p["stat"]), len(order)))
        rec = {(x["metric"], x["stat"]): x for x in (r or {}).get("recomputed") or []}
        every = {(x["metric"], x["stat"]): x["value"]
                 for x in (r or {}).get("recomputed_all") or []}
        from explorer.core.report_compare import metric_name
        rows = []
        for p in pub:
            key = (p["metric"], p["stat"])
            c = rec.get(key)
            again = (c.get("note") or fmt_published(c["recomputed"], p["unit"])) if c else (
                fmt_published(every[key], None) if key in every else "")
            rows.append((key, fmt_published(p["value"], p["unit"]), again))
        done = {k for k, *_ in rows}
        rows += [(k, "", fmt_published(v, None)) for k, v in every.items() if k not in done]
        self.detail.setRowCount(len(rows))
        for i, (key, published, again) in enumerate(rows):
            name = metric_name({"metric": key[0], "stat": key[1]})
            for j, text in enumerate((name, published, again)):
                self.detail.setItem(i, j, _item(text))

    def export_to(self, path: str) -> str:
        """Write the runs (published and recomputed statistics) to a .csv or .parquet file."""
        from explorer.core.tables import export_frame, runs_frame
        return str(export_frame(runs_frame(self.runs), path))

    def _export(self) -> None:
        from PySide6.QtWidgets import QFileDialog, QMessageBox
        path, _f = QFileDialog.getSaveFileName(self, _("Export the runs table"), "runs.csv",
                                               _("CSV (*.csv);;Parquet (*.parquet)"))
        if not path:
            return
        try:
            self.export_to(path)
        except (OSError, ValueError, ImportError) as e:
            QMessageBox.warning(self, _("Export the runs table"), str(e))

    def _show_note(self, rv) -> None:
        if not isinstance(rv, dict) or not rv.get("changes"):
            self.note.setText(_("Double-click a run's name, engine, version or workload to "
                                "edit it (kept with the session; runs given one workload "
                                "name are compared with each other)."))
            return
        regs = [c for c in rv["changes"] if c.get("regression")]
        parts = [f"{c['metric']} {c['stat']} {c['from_version']} → {c['to_version']}: "
                 f"{by_spec(c['change_pct'], '+.1f')} %" for c in regs[:4] if c.get("change_pct") is not None]
        text = ngettext("Run level (published aggregates, not tested): {n} regression",
                        "Run level (published aggregates, not tested): {n} regressions",
                        len(regs)).format(n=len(regs))
        self.note.setText(text + (": " + "; ".join(parts) if parts else "."))

    def copy_text(self) -> str:
        rows = ["\t".join(self.table.horizontalHeaderItem(c).text()
                          for c in range(self.table.columnCount()))]
        for i in range(self.table.rowCount()):
            rows.append("\t".join((self.table.item(i, c).text() if self.table.item(i, c) else "")
                                  for c in range(self.table.columnCount())))
        return "\n".join(rows)


def _count(v) -> str:
    return "" if v is None or v != v else by_spec(int(v), ',')
