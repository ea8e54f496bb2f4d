"""Many small request tables in a folder are read in batches (Store._load_batch,
generic_table.load_batch): the store must hold exactly what loading each file on its own gives,
and a bad file in a batch must fail (or skip its rows) alone, named, as it does on its own."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.core.formats import generic_table
from explorer.core.store import Store

pytestmark = pytest.mark.timeout(120)

CSV_HEADER = "request_id,arrival_s,prompt_tokens,completion_tokens,ttft,e2e_ms,model,note"


def _csv(i: int, rows: int = 4) -> str:
    # ttft has no unit suffix: seconds guessed from each file's own median (which differs)
    return CSV_HEADER + "\n" + "".join(
        f"r{i}-{k},{1.7e9 + i + k / 10},{100 + 7 * i + k},{10 + k},{0.02 + 0.001 * (i + k)},"
        f"{300 + i + k},llama-{i % 2},n{k}\n" for k in range(rows))


def _jsonl(i: int, rows: int = 3) -> str:
    return "".join(json.dumps({
        "request_id": f"j{i}-{k}", "arrival_s": 1.7e9 + i + k, "prompt_tokens": 50 + i + k,
        "ttft_ms": 20.5 + i + k, "tpot_ms": 5.25 + k, "finish_reason": "stop",
        "meta": {"slot": k, "tags": ["a", i]}, "ok": True}) + "\n" for k in range(rows))


def _folder(root: Path, n: int = 12) -> Path:
    d = root / "many"
    (d / "sub").mkdir(parents=True)
    for i in range(n):
        (d / ("sub" if i % 3 == 0 else "") / f"t{i:03d}.csv").write_text(_csv(i))
        (d / f"u{i:03d}.jsonl").write_text(_jsonl(i))
    (d / "copy_of_t001.csv").write_text(_csv(1))  # same content: a duplicate, not loaded twice
    return d


def _contents(store: Store) -> dict:
    """Every row of the tables a load writes (inputs without its id and time), sorted."""
    out = {}
    for table, cols in (("runs", "*"), ("requests", "*"),
                        ("inputs", "path, sha256, format, kind, rows_loaded, rows_skipped, "
                                   "skipped_reasons, columns, run_ids, eval_ids, error")):
        rows = store.con.execute(f"SELECT {cols} FROM {table}").fetchall()
        out[table] = sorted(rows, key=repr)
    out["input order"] = [r[0] for r in store.con.execute(
        "SELECT path FROM inputs ORDER BY input_id").fetchall()]
    return out


@pytest.fixture
def batches(monkeypatch):
    """Records what each generic_table.load_batch call returned (True: read as one)."""
    seen: list[tuple[int, bool]] = []
    real = generic_table.load_batch

    def spy(paths, store, reports):
        ok = real(paths, store, reports)
        seen.append((len(paths), ok))
        return ok
    monkeypatch.setattr(generic_table, "load_batch", spy)
    return seen


def _per_file(paths) -> tuple[list, dict]:
    s = Store()
    s.BATCH_MIN_FILES = 10**9  # every file on its own, as before batching
    reports = s.load_paths(paths)
    try:
        return reports, _contents(s)
    finally:
        s.close()


def test_a_folder_loaded_in_batches_equals_each_file_loaded_alone(tmp_path, store, batches):
    d = _folder(tmp_path)
    reports = store.load_paths([d])
    assert sum(n for n, ok in batches if ok) == 24 and all(ok for _, ok in batches), batches
    alone_reports, alone = _per_file([d])
    assert _contents(store) == alone
    assert [r.to_dict() for r in reports] == [r.to_dict() for r in alone_reports]
    dup = next(r for r in reports if r.path.endswith("/t001.csv"))  # after copy_of_t001.csv
    assert dup.skipped_file and "same content as " + str(d / "copy_of_t001.csv") in dup.skipped_file
    # each file kept its own unit note and its own run (model from its column)
    t2 = next(r for r in reports if r.path.endswith("t002.csv"))
    assert "seconds guessed from median 0.0235" in t2.columns["ttft"], t2.columns
    assert store.scalar("SELECT model FROM runs WHERE run_id = ?", [t2.run_ids[0]]) == "llama-0"
    assert store.count("runs") == 24 and store.count("requests") == 12 * 4 + 12 * 3
    # 1000 ms x the seconds in the file, per row (a recomputation from the file's text)
    want = {f"r2-{k}": 1000 * (0.02 + 0.001 * (2 + k)) for k in range(4)}
    got = dict(store.con.execute("SELECT request_id, ttft_ms FROM requests WHERE run_id = ?",
                                 [t2.run_ids[0]]).fetchall())
    assert got == pytest.approx(want)


def test_a_bad_file_in_a_batch_fails_alone_and_the_others_load(tmp_path, store, batches):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(10):
        (d / f"t{i:02d}.csv").write_text(_csv(i))
    (d / "t04.csv").write_text(CSV_HEADER + "\n" + "x,1,2,3,fast,4,m,n\n")  # no usable row
    (d / "t07.csv").write_text(_csv(7) + "r7-x,1,2,3,0.02,-5,m,n\n")  # one negative e2e
    for i in range(6):
        (d / f"u{i}.jsonl").write_text(_jsonl(i))
    (d / "u3.jsonl").write_text(_jsonl(3) + '{"request_id": "bad", "ttft_ms": NaN}\n')
    reports = {Path(r.path).name: r for r in store.load_paths([d])}
    assert (10, False) in batches and (6, False) in batches  # each group fell back
    bad = reports["t04.csv"]
    assert bad.error and bad.error.startswith(str(d / "t04.csv")) and "line 2" in bad.error
    assert reports["t07.csv"].rows_loaded == 4 and reports["t07.csv"].rows_skipped == 1
    assert reports["t07.csv"].skipped_reasons == ["line 6: field 'e2e_ms': negative value: -5.0"]
    u3 = reports["u3.jsonl"]
    assert u3.rows_loaded == 3 and u3.skipped_reasons == [
        "line 4: field 'ttft_ms': not a finite number: NaN"], u3.skipped_reasons
    for name, r in reports.items():
        if name != "t04.csv":
            assert r.error is None and r.rows_loaded > 0, r
    _, alone = _per_file([d])
    assert _contents(store) == alone


def test_cancel_during_a_batch_rolls_it_back_and_says_so(tmp_path, store, monkeypatch):
    d = _folder(tmp_path, n=4)
    state = {"cancel": False}
    real = generic_table.load_batch

    def read_then_cancel(paths, store, reports):  # the user presses Cancel during the read
        ok = real(paths, store, reports)
        state["cancel"] = True
        return ok
    monkeypatch.setattr(generic_table, "load_batch", read_then_cancel)
    reports = store.load_paths([d], cancelled=lambda: state["cancel"])
    csv_files = sorted(str(p) for p in d.rglob("*.csv"))
    assert sorted(r.path for r in reports) == csv_files  # the first batch, nothing after it
    assert all(r.error.endswith("nothing of it was kept") for r in reports), reports
    assert store.count("requests") == 0 and store.count("runs") == 0
    assert sorted(r.path for r in store.input_reports()) == csv_files


def test_classify_keeps_only_a_batch_key_and_none_for_a_large_file(tmp_path, store):
    d = _folder(tmp_path, n=3)
    big = d / "big.csv"  # over BATCH_MAX_BYTES: read on its own, nothing of its head kept
    big.write_text(CSV_HEADER + "\n" + _csv(5, rows=store.BATCH_MAX_BYTES // 40).split("\n", 1)[1])
    assert big.stat().st_size > store.BATCH_MAX_BYTES
    from explorer.core.store import walk_inputs
    todo = walk_inputs([d])
    found = store._classify(todo, lambda: False)
    by_name = {todo[i][0].name: got for i, got in found.items()}
    assert by_name["big.csv"] == (None, "generic_table", None, None)
    assert by_name["t001.csv"] == (None, "generic_table", None, ("csv", CSV_HEADER))
    assert by_name["u001.jsonl"][3][0] == "jsonl"
    assert all(isinstance(x, (str, tuple, type(None))) for got in found.values() for x in got)


def test_run_ids_in_a_batch_follow_new_ids_rule_against_ids_taken(tmp_path, store, batches):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(4):
        (d / f"t{i:03d}.csv").write_text(_csv(i))
    (d / "t009#2.csv").write_text(_csv(9))  # its base is itself an id with a #N suffix
    for s in (store, earlier := Store()):
        for run_id in ("table:t000", "table:t000#2", "table:t009#2"):
            s.add_run(run_id, format="generic_table")
    reports = {Path(r.path).name: r for r in store.load_paths([d])}
    assert batches == [(5, True)]  # read as one, no primary-key error and fallback
    assert reports["t000.csv"].run_ids == ["table:t000#3"]
    assert reports["t009#2.csv"].run_ids == ["table:t009#2#2"]
    assert reports["t001.csv"].run_ids == ["table:t001"]
    earlier.BATCH_MIN_FILES = 10**9  # each file on its own: Store.new_id per file
    try:
        alone = {Path(r.path).name: r.run_ids for r in earlier.load_paths([d])}
    finally:
        earlier.close()
    assert alone == {name: r.run_ids for name, r in reports.items()}


def test_interleaved_batches_record_the_walk_order(tmp_path, store, batches):
    # two batches (CSV, JSONL) whose files alternate in the walk, an ignored file and a file
    # read on its own between them: each `inputs` row keeps its place in the walk
    d = tmp_path / "mixed"
    (d / "sub").mkdir(parents=True)
    names = ["a.csv", "b.jsonl", "c.csv", "d.jsonl", "e.csv", "sub/a.csv", "sub/b.csv",
             "sub/b.jsonl", "sub/f.jsonl"]
    for i, name in enumerate(names):
        (d / name).write_text(_csv(i) if name.endswith(".csv") else _jsonl(i))
    (d / "c1.txt").write_text("just a note\n")  # ignored, between the batches' files
    (d / "c2.csv").write_text("request_id,ttft_ms\nx,5\n")  # another header: alone
    reports = store.load_paths([d])
    # b.jsonl, sub/b.csv and sub/b.jsonl (one run base, table:b, in two batches) load alone,
    # in walk order: their runs are table:b, table:b#2, table:b#3 as without batches
    assert sorted(batches) == [(2, True), (4, True)], batches
    runs = {Path(r.path).relative_to(d).as_posix(): r.run_ids for r in reports}
    assert [runs[n] for n in ("b.jsonl", "sub/b.csv", "sub/b.jsonl")] == [
        ["table:b"], ["table:b#2"], ["table:b#3"]]
    walk = ["a.csv", "b.jsonl", "c.csv", "c1.txt", "c2.csv", "d.jsonl", "e.csv", "sub/a.csv",
            "sub/b.csv", "sub/b.jsonl", "sub/f.jsonl"]
    want = [str(d / n) for n in walk]
    assert [r.path for r in reports] == want
    assert [r.path for r in store.input_reports()] == want
    alone_reports, alone = _per_file([d])
    assert _contents(store) == alone
    assert [r.to_dict() for r in reports] == [r.to_dict() for r in alone_reports]
    # a second load goes after the first (its files are duplicates now)
    again = store.load_paths([d / "a.csv", d / "c2.csv"])
    assert [r.path for r in store.input_reports()] == want + [r.path for r in again]
