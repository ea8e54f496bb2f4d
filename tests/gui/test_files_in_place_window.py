"""The window reopening a session whose request file was read in place (core.inplace) and has
moved since: the status bar names the file, the cases and the other requests are there."""
import shutil

from explorer.core import inplace
from explorer.core.store import Store
from tests.test_files_in_place import _data


def test_reopened_session_names_the_moved_file(session, qtbot, tmp_path):
    inplace.set_mode("always")
    try:
        files = _data(tmp_path / "d")
        s = Store()
        for f in files:
            assert s.load_file(f).error is None
    finally:
        inplace.set_mode(None)
    s.save_as(tmp_path / "s.duckdb")
    shutil.move(files[0], tmp_path / "elsewhere.parquet")
    said = []
    session.message.connect(said.append)
    with qtbot.waitSignal(session.storeChanged, timeout=60000):
        session.open_session(str(tmp_path / "s.duckdb"))
    qtbot.waitUntil(lambda: session.runner.pending() == 0, timeout=60000)
    assert any(files[0] in m and "not found" in m for m in said), said
    assert session.store.count("requests") == 3000 + 200 - 1  # the CSV's and the JSONL's
    assert session.store.count("cases") == s.count("cases")
