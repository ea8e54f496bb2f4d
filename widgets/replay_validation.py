"""The Replay panel's out-of-sample validation (issue 34): the choice of mode (fit on low,
predict high / leave one out / both, explorer.core.replay.loo.MODE_CHOICES) and, per mode run,
a heading naming the mode and its verdict over a table of the held-out errors
(explorer.core.viewstate.replay.held_out_rows: observed and replayed means, the error of the
mean and of the P90 at each held-out setting). Paints only: the validation itself is the
panel's ValidateJob, run in the session's worker.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from explorer.core.fmt import by_spec
from explorer.core.viewstate.replay import held_out_rows
from explorer.core.i18n import _

# above this median |error| of mean TTFT or TPOT the panel warns (the 25 % bar)
WARN_ABOVE = 0.25


def _num(v, unit: str) -> str:
    if v is None:
        return "–"
    return f"{by_spec(v, ',.1f')} {unit}" if abs(v) >= 10 else f"{by_spec(v, '.3f')} {unit}"


def _pct(v) -> str:
    return "–" if v is None else f"{by_spec(0.0 if abs(v) < 0.05 else v, '+.1f')}%"


class ValidationView(QWidget):
    """mode_box (the mode choice, for the panel's row of controls) and the tables of the last
    validation, one per mode run (tables / headings: {mode: widget})."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mode_box = QComboBox()
        for text, mode in ((_("fit on low, predict high"), "low-high"),
                           (_("leave one out"), "loo"), (_("both"), "both")):
            self.mode_box.addItem(text, mode)
        self.mode_box.setToolTip(_(
            "What Validate runs: fit on the ladder's lowest setting and predict each higher one, "
            "or hold each setting out in turn and predict it from the other settings' fits, "
            "or both"))
        self.tables: dict[str, QTableWidget] = {}
        self.headings: dict[str, QLabel] = {}
        self.row = QHBoxLayout(self)   # one column per mode, side by side
        self.row.setContentsMargins(0, 0, 0, 0)

    def mode_name(self, mode: str) -> str:
        return {"low-high": _("fit on low, predict high"),
                "loo": _("leave one out")}.get(mode, mode)

    def clear(self) -> None:
        while self.row.count():
            w = self.row.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        self.tables.clear()
        self.headings.clear()

    def show_validation(self, v: dict) -> tuple[str, str | None]:
        """Fill one heading and table per mode of a ValidateJob result; return (the answer
        line, the warning or None)."""
        self.clear()
        lines, worst = [], 0.0
        for one in v.get("validations") or []:
            mode = one["mode"]
            col = QWidget()
            lay = QVBoxLayout(col)
            lay.setContentsMargins(0, 0, 0, 0)
            head = QLabel()
            head.setWordWrap(True)
            head.setStyleSheet("font-weight: 600;")
            lay.addWidget(head)
            self.headings[mode] = head
            if one["kind"] != "validated":
                head.setText(_("Held-out errors, {mode}: not validated ({reason})").format(
                        mode=self.mode_name(mode), reason=one.get("reason", "")))
                lay.addStretch(1)
                self.row.addWidget(col, 1)
                continue
            head.setText(_("Held-out errors, {mode}: {errors}").format(
                    mode=self.mode_name(mode), errors=one["text"]))
            table = self._table(held_out_rows(one))
            lay.addWidget(table, 1)
            self.tables[mode] = table
            self.row.addWidget(col, 1)
            med = one["median_abs_error"]
            worst = max(worst, med["ttft_ms"] or 0, med["tpot_ms"] or 0)
            lines.append(self._sentence(one))
        warn = (_("Out-of-sample error above 25%: read the replay's absolute latencies "
                  "at other settings with that error in mind.")
                if worst > WARN_ABOVE else None)
        return "\n".join(lines), warn

    def _sentence(self, one: dict) -> str:
        med = one["median_abs_error"]
        t, p = (f"{by_spec(100 * (med[m] or 0), '.1f')}%" for m in ("ttft_ms", "tpot_ms"))
        if one["mode"] == "loo":
            return (_("{mode}: each of {n} settings predicted from the other settings' fits; "
                      "median |error| of mean TTFT {ttft}, of mean TPOT {tpot}.").format(
                              mode=one["text"], n=str(len(one["held_out"])), ttft=t, tpot=p))
        return (_("{mode}: fitted at {setting} = {value}, {n} higher settings predicted; median |error| of "
                  "mean TTFT {ttft}, of mean TPOT {tpot}.").format(
                          mode=one["text"], setting=one["setting_key"],
                          value=by_spec(one['fit']['setting'], 'g'),
                          n=str(len(one["held_out"])), ttft=t, tpot=p))

    def _table(self, rows: list[dict]) -> QTableWidget:
        table = QTableWidget(len(rows), 5)
        table.setHorizontalHeaderLabels([_("held-out setting"), _("observed"),
                                         _("replay"), _("error of mean"),
                                         _("error of P90")])
        table.verticalHeader().hide()
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for i, r in enumerate(rows):
            name = _("throughput") if r["metric"] == "throughput" else r["name"]
            label = r["label"].replace(r["name"], name, 1)
            cells = (label, _num(r["observed"], r["unit"]), _num(r["replay"], r["unit"]),
                     _pct(r["diff_pct"]), _pct(r["p90_pct"]))
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(i, j, item)
        return table

    def copy_text(self) -> str:
        """Each mode's heading and its table as TSV."""
        from explorer.core.escape import tsv
        out = []
        for mode, head in self.headings.items():
            out.append(head.text())
            t = self.tables.get(mode)
            if t is not None:
                out += [tsv([[t.item(i, j).text() if t.item(i, j) else ""
                              for j in range(t.columnCount())]]) for i in range(t.rowCount())]
        return "\n".join(out)
