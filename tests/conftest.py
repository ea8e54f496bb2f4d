"""Shared fixtures. Real public data is read in place from ../shared/data/real (never copied)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# the window's log and its SIGTERM recovery file live under XDG_STATE_HOME: a test session never
# reads or leaves one in the user's own (a recovery file there would be reopened by a window test)
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="trace-explorer-test-state-")
os.environ.setdefault("MPLCONFIGDIR", str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "mpl"))

ROOT = Path(__file__).resolve().parent.parent
# TRACE_EXPLORER_REAL_DATA points elsewhere (e.g. at a missing folder, to check the skips).
REAL = Path(os.environ.get("TRACE_EXPLORER_REAL_DATA") or ROOT.parent / "shared" / "data" / "real")


@pytest.fixture(scope="session")
def real() -> Path:
    """The folder of real public files (../shared/data/real, see the README's Data section);
    the tests that need it skip, saying so, on a clone without it."""
    if not REAL.is_dir():
        pytest.skip(f"real test data not found at {REAL} (the public files the README's Data "
                    "section lists; CI lays ../shared beside the clone)")
    return REAL


def pytest_collection_modifyitems(config, items):
    """`make test` runs the suite on every core (pytest-xdist, -n auto --dist loadgroup): the
    tests that use the Spark Connect server (spark_url, one per test process) share one worker,
    so one server (a JVM of ~1 GB) starts, not one per core."""
    for item in items:
        if "spark_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))


@pytest.fixture(scope="session", autouse=True)
def _clipboard_emptied_before_exit():
    """Copy puts a Python-made QMimeData on the clipboard. pytest-qt's QApplication lives until
    the process exits, so Qt's own exit handlers would delete that object after Python has
    finalised (a segfault in shiboken, exit code 139). Empty the clipboard while Python runs.
    The app itself is unaffected: its QApplication dies inside run_app."""
    yield
    import sys
    gui = sys.modules.get("PySide6.QtGui")
    if gui is not None and gui.QGuiApplication.instance() is not None:
        gui.QGuiApplication.clipboard().clear()


@pytest.fixture(scope="session", autouse=True)
def _report_json_checked_against_the_schema():
    """Every report.json written during the tests (CLI, write_report, the window's export)
    is validated against resources/report.schema.json: the one place the contract is checked."""
    from explorer.core import report

    from tests.report_schema import checking_writer
    original = report.WRITERS["json"]
    report.WRITERS["json"] = checking_writer(original)
    yield
    report.WRITERS["json"] = original


@pytest.fixture
def store():
    """A fresh in-memory store."""
    from explorer.core.store import Store
    s = Store()
    yield s
    s.close()


@pytest.fixture
def session(qapp):
    """A window-less Session (the panels' tests outside tests/gui, which has its own)."""
    from explorer.session import Session
    s = Session()
    yield s
    for r in s.runners():
        r.wait(20000)
    s.store.close()


@pytest.fixture(scope="session")
def spark_url():
    """sc:// URL of a real Spark Connect server for the warehouse tests: TE_SPARK_URL when set,
    else a local one started from the pyspark package (one per test session, stopped after).
    Skips, saying why, when the spark extra or Java is missing."""
    url = os.environ.get("TE_SPARK_URL")
    if url:
        yield url
        return
    pytest.importorskip("pyspark", reason="the spark extra is not installed (pip install '.[spark]')")
    from explorer.core.warehouse.local import LocalSpark, java_missing
    why = java_missing()
    if why:
        pytest.skip(why)
    server = LocalSpark().start()
    try:
        yield server.url
    finally:
        server.stop()
