"""Files in place (explorer/core/inplace.py, docs/files-in-place.md, issue 37): a Parquet / CSV
request table read as a DuckDB view over the file gives the same report as the copy, every
section; a reopened session re-attaches the file, or, moved or changed, says so naming it while
everything else stays; relocate() finds it again; --in-place chooses."""
import json
import math
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from explorer.__main__ import main
from explorer.core import inplace, inplace_session
from explorer.core.store import Store
from explorer.core.errors import InputError
from tests.report_timings import without_timings


@pytest.fixture(autouse=True)
def _mode():
    yield
    inplace.set_mode(None)


def _data(folder, n=3000, seed=3):
    """A trace in Parquet (request ids r0..), one in CSV (ids s0..), a small JSONL (ids j0..)
    and the cases bound to them by request id; a planted cause (low KV-cache hit rate and
    preemptions make a badcase) and a few rows the loader skips (a negative TTFT)."""
    g = np.random.default_rng(seed)
    folder.mkdir(exist_ok=True)

    def frame(prefix, m, version):
        kv = np.clip(g.beta(4, 2, m), 0, 1)
        pre = g.poisson(0.5 + (1 - kv) * 2)
        return pd.DataFrame({
            "request_id": [f"{prefix}{i}" for i in range(m)], "arrival_s": np.sort(g.uniform(0, m / 20, m)),
            "prompt_tokens": g.integers(50, 4000, m), "completion_tokens": g.integers(1, 800, m),
            "kv_cache_hit_rate": kv, "num_preemptions": pre, "batch_size": g.integers(1, 129, m),
            "ttft_ms": g.gamma(2, 60, m) + (1 - kv) * 200, "tpot_ms": 3.8 + pre * 1.5 + g.gamma(2, 1, m),
            "queue_ms": g.exponential(30, m), "e2e_ms": g.gamma(3, 500, m),
            "engine_version": version}), kv, pre

    pq, kv1, pre1 = frame("r", n, "0.5.2")
    pq.loc[7, "ttft_ms"] = -5.0  # skipped by the range check, in both modes
    pq.to_parquet(folder / "trace_a.parquet")
    csv, kv2, pre2 = frame("s", n, "0.6.1")
    csv.loc[11, "tpot_ms"] = -1.0
    csv.to_csv(folder / "trace_b.csv", index=False)
    js, kv3, pre3 = frame("j", 200, "0.6.1")
    js.to_json(folder / "trace_c.jsonl", orient="records", lines=True)
    ids = np.concatenate([pq.request_id[::4], csv.request_id[::4], js.request_id[::4]])
    kv = np.concatenate([kv1[::4], kv2[::4], kv3[::4]])
    pre = np.concatenate([pre1[::4], pre2[::4], pre3[::4]])
    bad = g.random(len(ids)) < 0.1 + 0.5 * (kv < 0.45) * (pre > 1)
    pd.DataFrame({"case_id": [f"c{i}" for i in range(len(ids))], "request_id": ids,
                  "category": np.where(g.random(len(ids)) < 0.5, "math", "physics"),
                  "cluster": np.where(bad, "计算题中间步骤出错", ""), "correct": ~bad}
                 ).to_csv(folder / "cases.csv", index=False)
    return [str(folder / f) for f in ("trace_a.parquet", "trace_b.csv", "trace_c.jsonl", "cases.csv")]


def _report(files, mode, out):
    assert main(["report", *files, "--in-place", mode, "--out", str(out), "--format", "json",
                 "--cluster", "计算题中间步骤出错"]) == 0
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def _differences(a, b, where=""):
    """Where two reports differ: exactly, except floats within 1e-9 relative (DuckDB sums a
    view over the file and a table in another order: the last bits of a mean differ)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{where}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} != {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{where}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [f"{where}: {a} != {b}"]
    return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} != {b!r}"]


def _strip(doc):
    """The report without what legitimately differs: the meta (timings, the engine's kind)
    and the replay's seconds used of its budget."""
    return {k: v for k, v in without_timings(doc).items() if k != "meta"}


def test_every_section_equals_the_copied_store(tmp_path):
    files = _data(tmp_path / "d")
    copied = _report(files, "never", tmp_path / "copy")
    viewed = _report(files, "always", tmp_path / "view")
    assert set(viewed) == set(copied)
    assert _differences(_strip(copied), _strip(viewed)) == []
    assert _differences({"x": 1.0}, {"x": 1.0001}) and _differences({"x": [1]}, {"x": [2]})
    # the sections hold numbers (not two equal "no data"), and the skipped rows are counted
    assert copied["cohort"]["bound"] > 0 and copied["comparison"]
    assert copied["versions"].get("status") != "no_data" and copied["heatmap"]["counts"]
    assert copied["timeline"]["phases"] and copied["sla"]["attainment"] and copied["tree"]["nodes"]
    by_path = {os.path.basename(i["path"]): i for i in viewed["inputs"]}
    assert by_path["trace_a.parquet"]["rows_skipped"] == 1
    assert by_path["trace_b.csv"]["rows_skipped"] == 1


def _loaded(folder, mode="always"):
    inplace.set_mode(mode)
    files = _data(folder)
    s = Store()
    for f in files:
        r = s.load_file(f)
        assert r.error is None, r.error
    return s, files


def test_nothing_copied_and_rows_equal_an_independent_read(tmp_path):
    s, files = _loaded(tmp_path / "d")
    assert s.count(inplace.LOCAL) == 200  # only the JSONL's rows were copied
    kinds = dict(s.con.execute("SELECT view_name, 'view' FROM duckdb_views() WHERE NOT internal "
                               "UNION ALL SELECT table_name, 'table' FROM duckdb_tables()").fetchall())
    assert kinds["requests"] == "view" and kinds["requests_src_1"] == "view"
    # the Parquet file's rows as pandas reads them, minus the negative TTFT
    want = pd.read_parquet(files[0])
    want = want[want.ttft_ms >= 0]
    got = s.df("SELECT * FROM requests WHERE run_id = 'table:trace_a' ORDER BY request_id")
    want = want.sort_values("request_id").reset_index(drop=True)
    assert len(got) == len(want) == 2999
    np.testing.assert_allclose(got.ttft_ms, want.ttft_ms)
    assert (got.prompt_tokens.to_numpy() == want.prompt_tokens.to_numpy()).all()
    assert str(s.df("DESCRIBE requests").set_index("column_name").column_type["prompt_tokens"]) == "INTEGER"


def test_auto_keeps_small_files_copied(tmp_path, monkeypatch):
    s, _ = _loaded(tmp_path / "d", mode="auto")
    assert s.count("in_place_files") == 0 and s.count("requests") == 2 * 3000 + 200 - 2
    monkeypatch.setattr(inplace, "IN_PLACE_ROWS", 1000)  # the Parquet file is now "large"
    t, _ = _loaded(tmp_path / "e", mode="auto")
    assert t.scalar("SELECT list(path) FROM in_place_files") == [str(tmp_path / "e" / "trace_a.parquet")]


def test_reopen_reattaches_and_a_moved_file_is_said_naming_it(tmp_path):
    from explorer.core.pipeline import prepare
    s, files = _loaded(tmp_path / "d")
    prepare(s)
    links = s.count("case_links")
    total = s.count("requests")
    s.save_as(tmp_path / "s.duckdb")
    same = Store.open(tmp_path / "s.duckdb")
    assert same.detached == [] and same.count("requests") == total
    assert same.count("case_links") == links

    shutil.move(files[0], tmp_path / "moved.parquet")  # moved
    with open(files[1], "a", encoding="utf-8") as fh:  # changed (a row appended)
        fh.write("s999999,1,1,1,0.5,0,1,1,1,1,1,0.6.1\n")
    got = Store.open(tmp_path / "s.duckdb")
    assert len(got.detached) == 2
    assert got.detached[0].startswith(files[0] + ": not found")
    assert got.detached[1].startswith(files[1] + ": changed")
    # the rest still loads: the JSONL's copied requests, every case and link, the runs
    assert got.count("requests") == 200 and got.count("cases") == s.count("cases")
    assert got.count("case_links") == links and got.count("runs") == 3
    # found again: the moved file (same SHA-256) re-attaches; another file is refused
    with pytest.raises(InputError, match="SHA-256 differs"):
        inplace_session.relocate(got, files[0], files[1])
    inplace_session.relocate(got, files[0], tmp_path / "moved.parquet")
    assert got.count("requests") == 200 + 2999 and len(got.detached) == 1
    # saved again, the detached file stays recorded: nothing is lost
    got.save_as(tmp_path / "t.duckdb")
    again = Store.open(tmp_path / "t.duckdb")
    assert again.count("in_place_files") == 2 and len(again.detached) == 1


def test_touched_but_same_content_reattaches(tmp_path):
    s, files = _loaded(tmp_path / "d")
    s.save_as(tmp_path / "s.duckdb")
    st = os.stat(files[0])
    os.utime(files[0], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    got = Store.open(tmp_path / "s.duckdb")
    assert got.detached == [] and got.count("requests") == s.count("requests")


def test_bad_mode_is_refused():
    with pytest.raises(ValueError, match="--in-place"):
        inplace.set_mode("sometimes")
    with pytest.raises(SystemExit):
        main(["report", "x.csv", "--in-place", "sometimes"])


def test_saved_with_data_the_session_opens_without_its_files(tmp_path):
    """"Save with data": the rows of the files read in place go into the session file; deleted
    files then, the reopened session has every request (equal to the live one, row for row),
    detaches nothing, and saved again (without data) still loses nothing."""
    s, files = _loaded(tmp_path / "d")
    inplace.set_mode(None)
    order = "ORDER BY run_id, request_id"
    live = s.df(f"SELECT * FROM requests {order}")
    s.save_as(tmp_path / "portable.duckdb", with_data=True)
    assert s.count("requests") == len(live)  # the live session still reads in place
    assert s.con.execute("SELECT count(*) FROM in_place_files WHERE status IS NULL").fetchall()[0][0] == 2
    for f in files:
        if f.endswith((".parquet", ".csv")):
            os.unlink(f)
    got = Store.open(tmp_path / "portable.duckdb")
    assert got.detached == [] and inplace_session.detached_files(got) == []
    pd.testing.assert_frame_equal(got.df(f"SELECT * FROM requests {order}"), live)
    statuses = [r[0] for r in got.con.execute("SELECT status FROM in_place_files").fetchall()]
    assert statuses == [inplace_session.EMBEDDED] * 2
    with pytest.raises(InputError, match="no file read in place"):  # its rows are here already
        inplace_session.relocate(got, files[0], tmp_path / "portable.duckdb")
    got.save_as(tmp_path / "again.duckdb")
    again = Store.open(tmp_path / "again.duckdb")
    assert again.count("requests") == len(live) and again.detached == []


def test_saved_without_data_the_same_deletion_detaches(tmp_path):
    """The counterpart: a plain save of the same session, its files deleted, detaches both."""
    s, files = _loaded(tmp_path / "d")
    inplace.set_mode(None)
    s.save_as(tmp_path / "plain.duckdb")
    for f in files:
        if f.endswith((".parquet", ".csv")):
            os.unlink(f)
    got = Store.open(tmp_path / "plain.duckdb")
    assert len(got.detached) == 2 and len(inplace_session.detached_files(got)) == 2
