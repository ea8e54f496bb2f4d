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


# -- the same content loaded twice ------------------------------------------------------------
def _trace_csv(path: Path, n: int, scale: float = 1.0) -> Path:
    path.write_text("request_id,ttft_ms,e2e_ms,model\n"
                    + "".join(f"r{i},{scale * (i % 997)},{scale * (3 * i % 1009)},m\n"
                              for i in range(n)))
    return path


def _sha(path: Path) -> str:
    import hashlib
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assert_duplicate(r, earlier: Path, sha: str) -> None:
    assert r.error is None and r.format is None and r.kind is None
    assert (r.rows_loaded, r.run_ids, r.eval_ids) == (0, [], [])
    assert r.sha256 == sha
    assert r.skipped_file == (f"same content as {earlier} (sha256 {sha[:12]}…), "
                              f"already loaded: not loaded again")


def _snapshot(s: Store) -> tuple:
    return (s.df("SELECT run_id, source_path, source_sha256 FROM runs ORDER BY run_id"),
            s.df("SELECT run_id, request_id, ttft_ms, e2e_ms FROM requests"
                 " ORDER BY run_id, request_id"))


def test_same_file_twice_is_ignored_and_counts_stay(tmp_path):
    """QA: `report F F` doubled every count. The second load of one file (named twice, or its
    folder dropped again) leaves the store as it was and is listed as ignored, naming the
    first path; the reason survives input_reports() (the Inputs panel and report read it)."""
    d = tmp_path / "run"
    d.mkdir()
    f = _trace_csv(d / "requests.csv", 300)
    (d / "NOTES.md").write_text("# notes\n")
    want = pd.read_csv(f)  # independent reading of the file
    s = Store()
    first, second = s.load_paths([f, f])
    assert first.error is None and first.rows_loaded == len(want) and first.skipped_file is None
    _assert_duplicate(second, f, _sha(f))
    before = _snapshot(s)
    assert len(before[0]) == 1 and len(before[1]) == len(want)
    assert before[1]["ttft_ms"].sum() == pytest.approx(want["ttft_ms"].sum())
    again = s.load_paths([d])  # the folder dropped again: its trace is the same content
    by = {Path(r.path).name: r for r in again}
    _assert_duplicate(by["requests.csv"], f, _sha(f))
    assert "document" in by["NOTES.md"].skipped_file
    after = _snapshot(s)
    assert all(a.equals(b) for a, b in zip(before, after))
    stored = s.input_reports()
    assert [r.skipped_file is not None for r in stored] == [False, True, True, True]
    assert stored[1].skipped_file == second.skipped_file and stored[1].sha256 == _sha(f)
    s.close()


def test_same_content_under_another_name_is_a_duplicate(tmp_path):
    """Content, not path, decides: a copy under another name is not loaded again; a file
    that differs by one value is (a second run)."""
    import shutil
    a = _trace_csv(tmp_path / "a.csv", 200)
    b = tmp_path / "copy_of_a.csv"
    shutil.copyfile(a, b)
    c = _trace_csv(tmp_path / "c.csv", 200, scale=2.0)
    s = Store()
    ra, rb, rc = s.load_paths([a, b, c])
    assert ra.error is None and ra.rows_loaded == 200
    _assert_duplicate(rb, a, _sha(a))
    assert rc.error is None and rc.skipped_file is None and rc.rows_loaded == 200
    runs = s.df("SELECT source_path, source_sha256 FROM runs ORDER BY source_path")
    assert runs["source_path"].map(lambda x: Path(x).name).tolist() == ["a.csv", "c.csv"]
    assert runs["source_sha256"].tolist() == [_sha(a), _sha(c)]
    assert s.count("requests") == 400
    s.close()


def test_big_file_twice_is_rolled_back_after_the_threaded_hash(tmp_path, monkeypatch):
    """A file over _Hasher.THREAD_BYTES is hashed in a thread while it loads; its duplicate is
    found once the hash is known and rolled back: nothing of it stays."""
    from explorer.core import store as store_mod
    threaded = []
    run = store_mod._Hasher._run
    monkeypatch.setattr(store_mod._Hasher, "_run",
                        lambda self, path: (threaded.append(path), run(self, path)))
    f = _trace_csv(tmp_path / "big.csv", 220_000)
    assert f.stat().st_size > store_mod._Hasher.THREAD_BYTES
    n = sum(1 for _ in open(f)) - 1  # data lines, counted independently
    s = Store()
    first = s.load_file(f)
    assert first.error is None and first.rows_loaded == n and first.sha256 == _sha(f)
    before = _snapshot(s)
    second = s.load_file(f)
    assert threaded == [f, f]  # both hashes ran in the thread
    _assert_duplicate(second, f, _sha(f))
    after = _snapshot(s)
    assert all(a.equals(b) for a, b in zip(before, after))
    assert len(after[1]) == n and after[0]["source_sha256"].tolist() == [_sha(f)]
    assert [r.skipped_file is None for r in s.input_reports()] == [True, False]
    s.close()


def test_a_failed_file_may_be_loaded_again(tmp_path):
    """An input that failed is no reference for duplicates: the same content loads when the
    failure is gone (a wrong format forced, then detection), and a fixed file loads."""
    f = _trace_csv(tmp_path / "t.csv", 50)
    s = Store()
    forced = s.load_file(f, format="mmlu_pro")
    assert forced.error and "t.csv" in forced.error and s.count("runs") == 0
    ok = s.load_file(f)
    assert ok.error is None and ok.skipped_file is None and ok.rows_loaded == 50
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    e1, e2 = s.load_file(bad), s.load_file(bad)
    assert "no usable column" in e1.error and "no usable column" in e2.error
    assert e2.skipped_file is None
    _trace_csv(bad, 30, scale=3.0)  # fixed in place
    fixed = s.load_file(bad)
    assert fixed.error is None and fixed.skipped_file is None and fixed.rows_loaded == 30
    assert s.count("requests") == 80 and s.count("runs") == 2
    s.close()


def test_helm_folder_twice_uses_the_folder_digest(real, tmp_path):
    """A folder a format claims as a whole (a HELM run) is one input whose sha256 is the
    folder digest: loaded again (or a copy of it) it is a duplicate; a changed copy is not."""
    import shutil
    from explorer.core.store import sha256_of
    helm = real / "every_eval_ever" / "helm_mmlu_philosophy_gpt2"
    copy = tmp_path / "helm_copy"
    shutil.copytree(helm, copy)
    s = Store()
    first = s.load_file(helm)
    assert first.error is None and first.kind == "eval" and first.rows_loaded > 0
    cases = s.count("cases")
    _assert_duplicate(s.load_file(helm), helm, sha256_of(helm))
    _assert_duplicate(s.load_file(copy), helm, sha256_of(helm))
    assert s.count("cases") == cases and s.count("evals") == 1
    with open(copy / "run_spec.json", "a") as fh:
        fh.write("\n")  # same JSON, other bytes: other content
    changed = s.load_file(copy)
    assert changed.error is None and changed.skipped_file is None
    assert s.count("cases") == 2 * cases and s.count("evals") == 2
    s.close()


def test_a_helm_file_and_its_run_folder_are_one_input(real):
    """per_instance_stats.json loads its whole run folder, so it is hashed as that folder:
    the file after the folder (or the folder after the file) is a duplicate (review: the file
    loaded the run a second time)."""
    from explorer.core.store import sha256_of
    helm = real / "every_eval_ever" / "helm_mmlu_philosophy_gpt2"
    for first, second in ((helm, helm / "per_instance_stats.json"),
                          (helm / "per_instance_stats.json", helm)):
        s = Store()
        r = s.load_file(first)
        assert r.error is None and r.sha256 == sha256_of(helm)
        cases = s.count("cases")
        _assert_duplicate(s.load_file(second), first, sha256_of(helm))
        assert s.count("cases") == cases and s.count("evals") == 1
        s.close()


def test_new_ids_equals_new_id_taken_one_after_another(store):
    for run_id in ("a", "a#2", "b#2", "a%", "c_d"):
        store.add_run(run_id, format="x")
    bases = ["a", "b#2", "a", "b", "a%", "c.d", "b#2"]
    got = store.new_ids("runs", "run_id", bases)
    want = []
    for base in bases:  # new_id, each id inserted before the next is asked for
        want.append(store.new_id("runs", "run_id", base))
        store.add_run(want[-1], format="x")
    assert got == want == ["a#3", "b#2#2", "a#4", "b", "a%#2", "c.d", "b#2#3"]
    assert store.new_ids("runs", "run_id", []) == []
