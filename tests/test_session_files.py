"""Session files: saved atomically to the chosen path (a kill during the save leaves the
previous file intact), refused targets say why and name the user's path, opening validates the
file and names it in every error."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.core.errors import SessionError
from explorer.core.store import Store

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parent.parent


def _store(n: int) -> Store:
    s = Store()
    s.add_run("r", engine="vllm")
    s.execute("INSERT INTO requests (run_id, request_id, ttft_ms) "
              "SELECT 'r', 'q' || i, i FROM range(?) t(i)", [n])
    return s


def _rows(path: Path) -> int:
    s = Store.open(path)
    try:
        return s.count("requests")
    finally:
        s.close()


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".wal"))
                  or ".tmp." in p.name)


def test_save_replaces_atomically_and_leaves_no_temp(tmp_path):
    target = tmp_path / "s.duckdb"
    _store(3).save_as(target)
    _store(5).save_as(target)
    assert _rows(target) == 5 and _temps(tmp_path) == []


@pytest.mark.parametrize("kind", ["folder", "read-only", "missing folder", "fifo"])
def test_refused_targets_name_the_users_path(tmp_path, kind):
    s = _store(2)
    if kind == "folder":
        target = tmp_path / "X.duckdb"
        target.mkdir()
        why = "is a folder"
    elif kind == "read-only":
        target = tmp_path / "ro.duckdb"
        _store(1).save_as(target)
        os.chmod(target, 0o444)
        why = "read-only"
    elif kind == "missing folder":
        target = tmp_path / "nowhere" / "s.duckdb"
        why = "does not exist"
    else:
        target = tmp_path / "pipe.duckdb"
        os.mkfifo(target)
        why = "not a regular file"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(SessionError) as e:
        s.save_as(target)
    assert str(e.value).startswith(str(target)) and why in str(e.value)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written, no temp
    if kind == "read-only":
        assert _rows(target) == 1  # not overwritten


def test_a_symlinked_target_writes_the_links_target(tmp_path):
    real = tmp_path / "real" / "s.duckdb"
    real.parent.mkdir()
    _store(1).save_as(real)
    link = tmp_path / "link.duckdb"
    link.symlink_to(real)
    _store(4).save_as(link)
    assert link.is_symlink() and _rows(real) == 4 and _temps(real.parent) == []


def test_a_failed_save_removes_its_temp_and_names_the_users_path(tmp_path, monkeypatch):
    target = tmp_path / "s.duckdb"
    _store(1).save_as(target)
    s = _store(2)

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(SessionError) as e:
        s.save_as(target)
    assert str(e.value) == f"{target}: cannot be saved: No space left on device"
    monkeypatch.undo()
    assert _rows(target) == 1 and _temps(tmp_path) == []


SAVER = """
import os, sys, threading
from explorer.core.store import Store
s = Store()
s.add_run("r")
s.execute("INSERT INTO requests (run_id, request_id) SELECT 'r', 'q' || i FROM range(9) t(i)")
real = os.fsync
def stall(fd):
    print("saving", flush=True)
    threading.Event().wait()   # killed here, between writing the temp file and the rename
os.fsync = stall
s.save_as(sys.argv[1])
"""


def test_a_kill_during_the_save_leaves_the_previous_file_intact(tmp_path):
    target = tmp_path / "s.duckdb"
    _store(3).save_as(target)
    before = target.read_bytes()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", SAVER, str(target)], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline().strip() == "saving"
    assert _temps(tmp_path), "the save writes a temporary file beside the target"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert target.read_bytes() == before and _rows(target) == 3
    # the dead process's temp file is swept by the next save or open of that session
    Store.open(target).close()
    assert _temps(tmp_path) == []


def test_opening_validates_and_names_the_file(tmp_path):
    good = tmp_path / "good.duckdb"
    s = _store(2)
    s.set_setting("association.tolerances", {"window_s": "five"})
    s.save_as(good)
    with pytest.raises(SessionError) as e:
        Store.open(good)
    assert str(e.value).startswith(str(good)) and "association.tolerances" in str(e.value)

    foreign = tmp_path / "foreign.duckdb"
    import duckdb
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE requests (run_id INTEGER[], x INTEGER)")
    con.execute("INSERT INTO requests VALUES ([1, 2], 3)")
    con.execute("CREATE TABLE cases (a INTEGER)")
    con.close()
    with pytest.raises(SessionError) as e:
        Store.open(foreign)
    assert str(e.value).startswith(str(foreign)) and "not a Trace Explorer session" in str(e.value)

    text = tmp_path / "notes.duckdb"
    text.write_text("hello")
    with pytest.raises(SessionError) as e:
        Store.open(text)
    assert str(e.value).startswith(str(text))
    with pytest.raises(SessionError) as e:
        Store.open(tmp_path)
    assert str(e.value).startswith(str(tmp_path))


def test_malformed_settings_are_refused_and_the_current_store_kept(tmp_path):
    """A settings table holding text that is not JSON (written by another program) is
    refused naming the file; the store already loaded is untouched."""
    import duckdb
    p = tmp_path / "s.duckdb"
    con = duckdb.connect(str(p))
    con.execute("CREATE TABLE requests (run_id VARCHAR, request_id VARCHAR)")
    con.execute("CREATE TABLE cases (case_id VARCHAR)")
    con.execute("CREATE TABLE settings (key VARCHAR, value VARCHAR)")
    con.execute("INSERT INTO settings VALUES ('chosen_cluster', '{not json')")
    con.close()
    current = _store(3)
    with pytest.raises(SessionError) as e:
        Store.open(p)
    assert str(e.value).startswith(str(p)) and "settings" in str(e.value)
    assert current.count("requests") == 3
