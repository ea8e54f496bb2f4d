"""A session saved while connected to a warehouse keeps the warehouse (URL without its token,
table, column mapping) and reconnects when it is reopened; a malformed entry is refused when the
file is opened, naming the key. The reconnection against a real Spark Connect server is in
tests/gui/test_warehouse_window.py."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from explorer.core.errors import SessionError
from explorer.core.store import Store
from explorer.core.store_file import WAREHOUSE_SETTING

pytestmark = pytest.mark.timeout(120)


def _warehouse_session(tmp_path):
    """A local store (one eval case) saved through a WarehouseStore whose source is a stand-in:
    saving reads only its url, table and columns."""
    pytest.importorskip("sqlglot", reason="the spark extra is not installed")
    from explorer.core.warehouse.store import WarehouseStore
    local = Store()
    local.execute("INSERT INTO evals (eval_id) VALUES ('e')")
    src = SimpleNamespace(url="sc://spark.example:15002;token=s3cr3t;user_id=ana",
                          table="prod.requests", columns={"run_id": "replica", "ttft_ms": "ttft"})
    path = tmp_path / "wh.duckdb"
    WarehouseStore(local, src).save_as(path)
    local.close()
    return path


def test_the_saved_session_keeps_the_warehouse_without_its_token(tmp_path):
    path = _warehouse_session(tmp_path)
    assert b"s3cr3t" not in path.read_bytes()
    st = Store.open(path)
    try:
        assert st.get_setting(WAREHOUSE_SETTING) == {
            "url": "sc://spark.example:15002;user_id=ana", "table": "prod.requests",
            "columns": {"run_id": "replica", "ttft_ms": "ttft"}}
        assert st.con.execute("SELECT count(*) FROM evals").fetchone()[0] == 1
    finally:
        st.close()


def test_reopening_it_reconnects_with_the_same_table_and_mapping(session, qtbot, tmp_path,
                                                                 monkeypatch):
    path = _warehouse_session(tmp_path)
    calls, said = [], []
    monkeypatch.setattr(session, "connect_warehouse", lambda *a: calls.append(a))
    session.message.connect(said.append)
    session.open_session(str(path))
    qtbot.waitUntil(lambda: bool(calls), timeout=30000)
    assert calls == [("sc://spark.example:15002;user_id=ana", "prod.requests",
                      "run_id=replica,ttft_ms=ttft")]
    assert any("Reconnecting to the session's warehouse sc://spark.example:15002;user_id=ana "
               "(prod.requests)" in m for m in said), said
    from explorer.core.warehouse import parse_columns
    assert parse_columns(calls[0][2]) == {"run_id": "replica", "ttft_ms": "ttft"}


def test_a_local_session_does_not_reconnect(session, qtbot, tmp_path, monkeypatch):
    st = Store()
    st.execute("INSERT INTO evals (eval_id) VALUES ('e')")
    path = tmp_path / "local.duckdb"
    st.save_as(path)
    st.close()
    calls = []
    monkeypatch.setattr(session, "connect_warehouse", lambda *a: calls.append(a))
    session.open_session(str(path))
    qtbot.waitUntil(lambda: session.runner.pending() == 0 and
                    session.store.con.execute("SELECT count(*) FROM evals").fetchone()[0] == 1,
                    timeout=30000)
    assert calls == [] and not session.errors


@pytest.mark.parametrize("bad", [{"url": "sc://h:1"}, {"url": "sc://h:1", "table": ""},
                                 {"url": "sc://h:1", "table": "t", "columns": ["run_id"]},
                                 "sc://h:1"])
def test_a_malformed_warehouse_entry_is_refused_naming_the_key(tmp_path, bad):
    st = Store()
    st.set_setting(WAREHOUSE_SETTING, bad)
    path = tmp_path / "bad.duckdb"
    st.save_as(path)
    st.close()
    with pytest.raises(SessionError) as e:
        Store.open(path)
    assert str(path) in str(e.value) and WAREHOUSE_SETTING in str(e.value)
