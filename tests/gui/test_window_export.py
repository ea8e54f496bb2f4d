"""File > Export Report from the window: the report.json its child process writes (where the
test session's schema hook on report.WRITERS does not reach) holds the report contract,
resources/report.schema.json, with the What-if panel's scenario in it."""
from __future__ import annotations

import json

from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox

from tests import report_schema
from tests.gui.conftest import on_screen


def test_file_export_writes_a_report_json_that_holds_the_schema(loaded, qtbot, tmp_path,
                                                                monkeypatch):
    window, _req, _cases = loaded
    out = tmp_path / "exported"
    out.mkdir()
    opened, failed = [], []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: str(out)))
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(opened.append))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a: failed.append(a[-1])))
    # json and md only: the pictures would take the child most of a minute
    monkeypatch.setattr("explorer.core.report.available_formats", lambda: ["json", "md"])
    s = window.session
    panel = on_screen(window, qtbot, "whatif")   # the user ran a scenario there
    qtbot.waitUntil(lambda: panel.report_result() is not None, timeout=120000)
    scenario = window.whatif_scenario()
    assert scenario["whatif"] and scenario["whatif_result"]   # it goes with the export
    window.export_action.trigger()
    qtbot.waitUntil(lambda: bool(opened or failed), timeout=180000)
    assert failed == [] and s.errors == []
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert doc["cohort"]["cluster"] == s.cluster
    assert doc["whatif"]["estimate"] == scenario["whatif_result"]["estimate"]
    report_schema.check(doc)
