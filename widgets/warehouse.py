"""File > Connect to warehouse...: where the requests live (a Spark Connect URL and a table).

The URL, table and column mapping are remembered in QSettings ("warehouse/..."); a credential
in the URL (";token=...") is used for this connection only and never saved
(explorer.core.redact.redact_url). The connection itself runs in the Session's worker, with
progress and Cancel in the status bar.
"""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout
from explorer.core.i18n import _

KEYS = ("warehouse/url", "warehouse/table", "warehouse/columns")


def _redact(url: str) -> str:
    from explorer.core.redact import redact_url  # no optional package: works without the Spark extra
    return redact_url(url)


class WarehouseDialog(QDialog):
    """Asks for URL, table and an optional column mapping; values() gives them back."""

    def __init__(self, settings: QSettings, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle(_("Connect to warehouse"))
        self.url = QLineEdit(str(settings.value(KEYS[0], "spark:local")))
        self.url.setPlaceholderText(_("sc://host:15002 or spark:local"))
        self.table = QLineEdit(str(settings.value(KEYS[1], "")))
        self.table.setPlaceholderText(_("catalog.schema.requests or parquet:/path/to/requests/"))
        self.columns = QLineEdit(str(settings.value(KEYS[2], "")))
        self.columns.setPlaceholderText(_("optional: run_id=replica,ttft_ms=ttft"))
        form = QFormLayout()
        form.addRow(_("Spark Connect URL"), self.url)
        form.addRow(_("Requests table"), self.table)
        form.addRow(_("Column mapping"), self.columns)
        note = QLabel(_("The loaded eval cases stay here and are bound to the table's "
                        "requests in the warehouse; only the cohort's rows and aggregates "
                        "come back. A token in the URL (;token=…) is not saved."))
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(_("Connect"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.url.textChanged.connect(lambda _t: self._check(buttons))
        self.table.textChanged.connect(lambda _t: self._check(buttons))
        self._check(buttons)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(buttons)
        self.resize(560, self.sizeHint().height())

    def _check(self, buttons) -> None:
        ok = bool(self.url.text().strip()) and bool(self.table.text().strip())
        buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)

    def values(self) -> tuple[str, str, str]:
        return self.url.text().strip(), self.table.text().strip(), self.columns.text().strip()

    def remember(self) -> None:
        """Save URL (without credentials), table and mapping for next time."""
        url, table, columns = self.values()
        for k, v in zip(KEYS, (_redact(url), table, columns)):
            self.settings.setValue(k, v)
        self.settings.sync()
