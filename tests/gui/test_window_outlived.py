"""A Session outlives a window it served (tests share one; the app could open another): a job
ending, a message or an activated request afterwards must not reach the deleted window's
widgets (it raised 'Internal C++ object already deleted' from a lambda's connection)."""
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication


def test_session_signals_after_the_window_is_deleted(session, qtbot, tmp_path):
    from explorer.widgets.mainwindow import MainWindow

    w = MainWindow(session, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    w.stop_workers(1000)
    w.deleteLater()
    qtbot.waitUntil(lambda: not _alive(w), timeout=5000)
    done = []
    session.runner.submit("outlived", lambda ctx: 42, done.append)
    qtbot.waitUntil(lambda: done == [42] and session.runner.pending() == 0, timeout=20000)
    session.message.emit("after the window")
    session.requestActivated.emit("run", "req")
    session.publish({"inputs": []})
    session.cohortChanged.emit()  # the Clusters and Replay panels follow the cohort
    QApplication.processEvents()  # pytest-qt fails the test on an exception raised in a slot


def _alive(widget) -> bool:
    from shiboken6 import isValid
    QApplication.sendPostedEvents(None, 0)  # carry out deleteLater without a test event loop
    return isValid(widget)
