"""The store: schema, append by name, provenance of failed loads, save and reopen."""
import json
from pathlib import Path

import pandas as pd
import pytest

from explorer.core import schema
from explorer.core.store import Store
from explorer.core.sqlutil import quote_ident


def test_schema_has_every_contract_column(store):
    for table in schema.TABLES:
        got = [r[0] for r in store.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "ORDER BY ordinal_position", [table]).fetchall()]
        assert got == schema.columns(table)
    # the DESIGN.md contract, spelled out independently of schema.py
    req = set(schema.columns("requests"))
    for c in ("run_id request_id arrival_s prompt_tokens completion_tokens cached_prompt_tokens "
              "kv_cache_hit_rate ttft_ms tpot_ms e2e_ms queue_ms prefill_ms decode_ms "
              "num_preemptions batch_size finish_reason error prompt_hash extra").split():
        assert c in req


def test_append_by_name_leaves_missing_as_null(store):
    store.add_run("r1", format="test")
    n = store.append("requests", pd.DataFrame({"run_id": ["r1"], "request_id": ["a"], "ttft_ms": [12.5]}))
    assert n == 1
    row = store.execute("SELECT ttft_ms, tpot_ms FROM requests").fetchall()[0]
    assert row == (12.5, None)


def test_quote_ident_survives_hostile_names(store):
    name = 'x"; DROP TABLE requests; --'
    store.execute(f"CREATE TABLE t ({quote_ident(name)} INTEGER)")
    assert store.count("requests") == 0
    with pytest.raises(ValueError):
        quote_ident("")


def test_missing_and_empty_files_are_reported_not_raised(store, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("")
    r1 = store.load_file(empty)
    r2 = store.load_file(tmp_path / "nope.json")
    assert "empty.json" in r1.error and "empty" in r1.error
    assert "nope.json" in r2.error
    assert [r.error is not None for r in store.input_reports()] == [True, True]


def test_binary_file_names_the_file(store, tmp_path):
    f = tmp_path / "blob.json"
    f.write_bytes(bytes(range(256)) * 64)
    r = store.load_file(f)
    assert r.error and "blob.json" in r.error
    assert f.read_bytes() == bytes(range(256)) * 64  # input unchanged


def test_save_and_reopen_session(store, tmp_path):
    store.add_run("r1", format="test", config={"a": 1})
    store.append("requests", pd.DataFrame({"run_id": ["r1"] * 3, "request_id": list("abc"),
                                           "tpot_ms": [1.0, 2.0, None]}))
    store.set_setting("graph", {"edges": [["a", "b"]]})
    path = tmp_path / "s.duckdb"
    store.save_as(path)
    again = Store.open(path)
    assert again.count("requests") == 3
    assert again.execute("SELECT sum(tpot_ms) FROM requests").fetchall()[0][0] == 3.0
    assert again.get_setting("graph") == {"edges": [["a", "b"]]}
    assert json.loads(again.execute("SELECT config FROM runs").fetchall()[0][0]) == {"a": 1}


def test_open_rejects_non_session(tmp_path):
    from explorer.core.errors import InputError
    f = tmp_path / "x.duckdb"
    f.write_text("hello")
    with pytest.raises(InputError, match="x.duckdb"):
        Store.open(f)


def test_store_reads_leave_the_connection_free_for_appends(store):
    """DuckDB 2 refuses new work on a connection with a half-read result; the store's own
    reads (count, settings, provenance) must not leave one behind."""
    store.add_run("r1", format="test")
    store.count("requests")
    store.get_setting("missing")
    store.append("requests", pd.DataFrame({"run_id": ["r1"], "request_id": ["a"]}))
    store.load_file(store.path or "nope.json")  # records an input row (error) via scalar()
    store.append("requests", pd.DataFrame({"run_id": ["r1"], "request_id": ["b"]}))
    assert store.count("requests") == 2


def test_folder_load_lists_ignored_files_with_reasons(tmp_path):
    """Files in a folder that are not traces or evals are reported as ignored (not failed) and
    recorded, so the Inputs panel can show them; named explicitly they still fail."""
    d = tmp_path / "run"
    d.mkdir()
    (d / "requests.csv").write_text("request_id,ttft_ms,e2e_ms\na,10,100\nb,20,200\n")
    (d / "blob.bin").write_bytes(bytes(range(256)) * 8)
    (d / "empty.json").write_text("")
    (d / "list.json").write_text("[]")
    (d / "obj.json").write_text("{}")
    (d / "pod_count.csv").write_text("Deployment,Running,Pending\nllama,2,0\nllama,3,1\n")
    (d / "NOTES.md").write_text("# Notes\nThe p50, p90 and p99 of the mean latency.\n")
    s = Store()
    reports = s.load_paths([d])
    by = {Path(r.path).name: r for r in reports}
    assert set(by) == {"requests.csv", "blob.bin", "empty.json", "list.json", "obj.json",
                       "pod_count.csv", "NOTES.md"}
    assert by["requests.csv"].rows_loaded == 2 and by["requests.csv"].skipped_file is None
    ignored = {n: r for n, r in by.items() if r.skipped_file}
    assert set(ignored) == set(by) - {"requests.csv"}
    assert all(r.error is None and r.format is None for r in ignored.values())
    assert "binary" in ignored["blob.bin"].skipped_file
    assert "empty" in ignored["empty.json"].skipped_file
    assert "[]" in ignored["list.json"].skipped_file and "{}" in ignored["obj.json"].skipped_file
    assert "no column maps to a request metric" in ignored["pod_count.csv"].skipped_file
    assert "Deployment, Running, Pending" in ignored["pod_count.csv"].skipped_file
    assert "document" in ignored["NOTES.md"].skipped_file
    again = {Path(r.path).name: r.skipped_file for r in s.input_reports()}
    assert again == {n: r.skipped_file for n, r in by.items()}
    named = s.load_paths([d / "pod_count.csv"])[0]
    assert named.skipped_file is None and "no usable column" in named.error
    s.close()


@pytest.mark.parametrize("thread_bytes", [0, 1 << 40])  # hashed in the thread / inline
def test_sha256_provenance_with_the_hash_in_a_thread(tmp_path, monkeypatch, thread_bytes):
    import hashlib
    from explorer.core import store as store_mod
    monkeypatch.setattr(store_mod._Hasher, "THREAD_BYTES", thread_bytes)
    f = tmp_path / "t.csv"
    f.write_text("request_id,ttft_ms,e2e_ms,model\n" + "".join(f"r{i},{i},{2 * i},m\n" for i in range(500)))
    want = hashlib.sha256(f.read_bytes()).hexdigest()
    s = Store()
    r = s.load_file(f)
    assert r.error is None and r.sha256 == want
    assert s.df("SELECT source_sha256 FROM runs")["source_sha256"].tolist() == [want]
    assert s.input_reports()[0].sha256 == want
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert "no usable column" in s.load_file(bad).error and s.count("runs") == 1
    s.close()
