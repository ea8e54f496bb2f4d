"""The window reopening a session whose request file was read in place (core.inplace) and has
moved since: the status bar names the file, the cases and the other requests are there."""
import os
import shutil

from explorer.core import inplace
from explorer.core.store import Store
from tests.test_files_in_place import _data


def _saved_then_moved(tmp_path):
    """The three files loaded (the Parquet and CSV read in place), saved as s.duckdb, then the
    Parquet file moved: (the store, its files, where the Parquet file is now)."""
    inplace.set_mode("always")
    try:
        files = _data(tmp_path / "d")
        s = Store()
        for f in files:
            assert s.load_file(f).error is None
    finally:
        inplace.set_mode(None)
    s.save_as(tmp_path / "s.duckdb")
    moved = tmp_path / "elsewhere.parquet"
    shutil.move(files[0], moved)
    return s, files, moved


def test_reopened_session_names_the_moved_file(session, qtbot, tmp_path):
    s, files, _moved = _saved_then_moved(tmp_path)
    said = []
    session.message.connect(said.append)
    with qtbot.waitSignal(session.storeChanged, timeout=60000):
        session.open_session(str(tmp_path / "s.duckdb"))
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    assert any(files[0] in m and "not found" in m and "File > Locate a moved file" in m
               for m in said), said
    assert session.store.count("requests") == 3000 + 200 - 1  # the CSV's and the JSONL's
    assert session.store.count("cases") == s.count("cases")


def _choose(monkeypatch, path):
    """File > Locate a moved file's file dialog answers `path` (recorded: the dialog asked)."""
    from PySide6.QtWidgets import QFileDialog
    asked = []

    def answer(parent, caption, folder, pattern):
        asked.append((caption, folder, pattern))
        return str(path), ""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(answer))
    return asked


def test_a_moved_file_is_located_again_from_the_window(window, qtbot, tmp_path, monkeypatch):
    _s, files, moved = _saved_then_moved(tmp_path)
    session = window.session
    assert not window.locate_action.isEnabled()  # nothing detached in an empty session
    with qtbot.waitSignal(session.storeChanged, timeout=60000):
        session.open_session(str(tmp_path / "s.duckdb"))
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    assert session.data["detached_files"] == [files[0]] and window.locate_action.isEnabled()
    without = session.store.count("requests")
    assert without == 3000 + 200 - 1  # the CSV's (read in place) and the JSONL's
    # another file (its SHA-256 differs) is refused in one status-bar line; nothing changes
    other = tmp_path / "other.parquet"
    other.write_bytes(b"PAR1 not the same")
    said = []
    session.message.connect(said.append)
    _choose(monkeypatch, other)
    window.locate_action.trigger()
    qtbot.waitUntil(lambda: any("SHA-256 differs" in m for m in said), timeout=60000)
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    assert session.data["detached_files"] == [files[0]] and session.store.count("requests") == without
    # the moved file itself: re-attached, its 2,999 requests back, the action off again
    asked = _choose(monkeypatch, moved)
    with qtbot.waitSignal(session.storeChanged, timeout=60000):
        window.locate_action.trigger()
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    assert "trace_a.parquet" in asked[0][0] and asked[0][2].startswith("The same file (*.parquet)")
    assert session.data["detached_files"] == [] and not window.locate_action.isEnabled()
    assert session.store.count("requests") == without + 2999
    assert not [m for m in said if m.startswith("Error") and "SHA-256" not in m]


def test_save_with_data_from_the_window_opens_without_the_files(window, qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog
    inplace.set_mode("always")
    try:
        files = _data(tmp_path / "d")
        with qtbot.waitSignal(window.session.storeChanged, timeout=60000):
            window.session.load_paths(files)
        qtbot.waitUntil(lambda: window.session.runner.pending() == 0, timeout=60000)
    finally:
        inplace.set_mode(None)
    total = window.session.store.count("requests")
    out = tmp_path / "portable.duckdb"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
    action = next(a for a in window.menuBar().actions()[0].menu().actions()
                  if a.text() == "Save Session with &Data…")
    action.trigger()
    qtbot.waitUntil(lambda: out.exists() and window.session.runner.pending() == 0, timeout=60000)
    for f in files:
        if f.endswith((".parquet", ".csv")):
            os.unlink(f)
    got = Store.open(out)
    assert got.detached == [] and got.count("requests") == total == 2999 + (3000 + 200 - 1)
