"""GUI fixtures: a QApplication set up like the app's (font, style), a Session, a MainWindow
with throw-away QSettings."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings


@pytest.fixture(scope="session")
def qapp_args():
    return ["trace-explorer-tests"]


@pytest.fixture
def app(qapp):
    from explorer.app import make_app
    return make_app()


@pytest.fixture
def session(app):
    from explorer.session import Session
    s = Session()
    yield s
    s.cancel()
    s.runner.wait(20000)
    s.store.close()


@pytest.fixture
def window(session, qtbot, tmp_path):
    from widgets.mainwindow import MainWindow
    w = MainWindow(session, QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    session.cancel()
    session.runner.wait(20000)
