"""Bounded memory (explorer.core.memory): every store has DuckDB's memory_limit and a spill
directory; a query past the limit that cannot spill is a clear message and the store stays
usable; the limit is shown in report meta and inspect and set by --memory-limit / env."""
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from explorer.core import errlog, memory
from explorer.core.store import Store


def _bytes(setting: str) -> float:
    num, unit = setting.split()
    return float(num) * {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]


def test_default_limit_is_the_share_of_the_ram_and_spills(monkeypatch, tmp_path):
    monkeypatch.delenv(memory.ENV_LIMIT, raising=False)
    monkeypatch.setenv(memory.ENV_SPILL, str(tmp_path / "spill"))
    s = Store()
    got = memory.settings(s.con)
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert abs(_bytes(got["memory_limit"]) - memory.DEFAULT_SHARE * ram) < 0.01 * ram
    assert got["spill_directory"] == str(tmp_path / "spill")
    s.close()


def test_env_and_option_set_the_limit(monkeypatch):
    monkeypatch.setenv(memory.ENV_LIMIT, "300MB")
    s = Store()
    assert _bytes(memory.settings(s.con)["memory_limit"]) == pytest.approx(300e6, rel=0.01)
    memory.set_limit("1GiB")
    try:
        t = Store()
        assert _bytes(memory.settings(t.con)["memory_limit"]) == 2**30
    finally:
        memory.set_limit(None)
    with pytest.raises(ValueError, match="expected a size"):
        memory.set_limit("lots")
    with pytest.raises(ValueError, match="share must lie"):
        memory.parse_limit("150%")


def test_out_of_memory_is_a_clear_message_and_the_store_stays_usable(monkeypatch):
    monkeypatch.setenv(memory.ENV_LIMIT, "20MB")
    s = Store()
    s.con.execute("CREATE TABLE t AS SELECT range AS i FROM range(100000)")
    with pytest.raises(duckdb.OutOfMemoryException) as e:  # a list cannot spill
        s.con.execute("SELECT list(i::VARCHAR || repeat('x', 100)) FROM range(5000000) r(i)").fetchall()
    err = memory.out_of_memory(e.value, s.con)
    assert isinstance(err, memory.OutOfMemory)
    assert "out of memory" in str(err) and "19.0 MiB" in str(err) and "--memory-limit" in str(err)
    assert errlog.describe(e.value) == str(memory.out_of_memory(e.value))  # sections say it so
    assert memory.out_of_memory(ValueError("x")) is None
    # the same connection answers the next query
    assert s.con.execute("SELECT count(*), sum(i) FROM t").fetchall()[0] == (100000, 4999950000)
    s.close()


def test_limit_in_report_meta_and_inspect(tmp_path):
    root = Path(__file__).parents[1]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop(memory.ENV_LIMIT, None)
    r = subprocess.run([sys.executable, "-m", "explorer", "report", "--demo", "--no-whatif",
                        "--no-replay", "--format", "json", "--memory-limit", "700MB",
                        "--out", str(tmp_path / "o")], cwd=root, capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "o" / "report.json").read_text())["meta"]["engine"]
    assert _bytes(meta["memory_limit"]) == pytest.approx(700e6, rel=0.01)
    assert meta["spill_directory"]
    r = subprocess.run([sys.executable, "-m", "explorer", "report", "--demo", "--memory-limit",
                        "lots", "--out", str(tmp_path / "p")], cwd=root, capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 2 and "expected a size" in r.stderr and "Traceback" not in r.stderr
