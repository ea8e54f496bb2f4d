"""Valid files the second round of fault-finding saw refused: Excel's `sep=;` first line,
leading `#` comment lines, mixed line endings, eval Parquet with struct / list columns;
compressed inputs named as compressed; DuckDB files of other programs refused as sessions
without touching what was loaded."""
from __future__ import annotations

import gzip

import duckdb
import pytest

pytestmark = pytest.mark.timeout(120)


def test_excel_sep_line_with_semicolons(tmp_path, store):
    f = tmp_path / "t.csv"
    f.write_text('sep=;\nrequest_id;ttft_ms;e2e_ms;note\nr1;1,5;2;"a;b"\nr2;3;4;x\n')
    r = store.load_file(f)
    assert "sep=;" in " ".join(r.columns.values())
    # the quoted ";" stayed inside its field; "1,5" (a decimal comma) is not read as a number:
    # that row is skipped and named, not guessed
    assert r.error is None and r.rows_loaded == 1 and r.rows_skipped == 1, r
    assert r.skipped_reasons[0].startswith("line 3: field 'ttft_ms'"), r.skipped_reasons
    assert store.con.execute("SELECT request_id FROM requests").fetchall() == [("r2",)]


def test_excel_sep_line_in_an_eval(tmp_path, store):
    f = tmp_path / "e.csv"
    f.write_text("sep=;\ncase_id;correct;category\nc1;1;a\nc2;0;a\n")
    r = store.load_file(f)
    assert r.error is None and r.kind == "eval" and r.rows_loaded == 2, r


def test_leading_comment_lines_and_original_line_numbers(tmp_path, store):
    f = tmp_path / "t.csv"
    f.write_text("# written by bench.py v1\n# model: x\nrequest_id,ttft_ms,e2e_ms\n"
                 "r1,1,2\nr2,x,4\nr3,5,6\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2 and r.rows_skipped == 1, r
    assert r.skipped_reasons == ["line 5: field 'ttft_ms': not a number: 'x'"]


def test_mixed_line_endings(tmp_path, store):
    f = tmp_path / "t.csv"
    f.write_bytes(b"request_id,ttft_ms,e2e_ms\r\nr1,1,2\nr2,3,4\r\nr3,5,6\rr4,1,1\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 4, r


def test_eval_parquet_with_struct_and_list_columns(tmp_path, store):
    import pyarrow as pa
    import pyarrow.parquet as pq
    f = tmp_path / "e.parquet"
    pq.write_table(pa.table({"case_id": ["c1", "c2", "c3"], "correct": [True, False, True],
                             "category": ["a", "a", "b"],
                             "meta": [{"x": 1, "y": "u"}, {"x": 2, "y": "v"}, {"x": 3, "y": None}],
                             "tags": [["a"], [], ["b", "c"]]}), f)
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 3, r


@pytest.mark.parametrize("name", ["t.jsonl.gz", "t.jsonl"])
def test_a_compressed_input_is_named_as_compressed(tmp_path, store, name):
    f = tmp_path / name
    f.write_bytes(gzip.compress(b'{"request_id": "a", "ttft_ms": 1}\n' * 100))
    r = store.load_file(f)
    if r.error is None:  # read in place (decompression support): then it must have loaded
        assert r.rows_loaded == 100
        return
    assert "gzip-compressed" in r.error and "gunzip" in r.error, r.error


def test_a_foreign_duckdb_file_is_not_a_session(tmp_path):
    from explorer.core.errors import SessionError
    from explorer.core.store import Store
    f = tmp_path / "other.duckdb"
    con = duckdb.connect(str(f))
    con.execute("CREATE TABLE requests (run_id VARCHAR, request_id VARCHAR, ttft_ms DOUBLE)")
    con.execute("CREATE TABLE cases (case_id VARCHAR, eval_id VARCHAR)")
    con.execute("INSERT INTO requests VALUES ('x', 'y', 1.0)")
    con.close()
    with pytest.raises(SessionError, match="not a Trace Explorer session"):
        Store.open(f)


def test_a_saved_session_still_opens(tmp_path, store):
    from explorer.core.store import Store
    f = tmp_path / "t.csv"
    f.write_text("request_id,ttft_ms,e2e_ms\nr1,1,2\n")
    store.load_file(f)
    store.save_as(tmp_path / "s.duckdb")
    s = Store.open(tmp_path / "s.duckdb")
    assert s.count("requests") == 1
    s.close()


def test_a_folder_of_small_tables_with_preambles_and_mixed_encodings(tmp_path, store):
    """Small tables of a folder are loaded in batches: one with a sep= line, a comment head or
    a GBK / mixed head is read on its own (normalised / decoded, or refused naming the line)."""
    d = tmp_path / "drop"
    d.mkdir()
    for i in range(20):
        (d / f"t{i}.csv").write_text(f"request_id,ttft_ms,e2e_ms\nr{i},1,2\n")
    (d / "sep.csv").write_text("sep=;\nrequest_id;ttft_ms;e2e_ms\ns1;1;2\n")
    (d / "comment.csv").write_text("# tool\nrequest_id,ttft_ms,e2e_ms\nc1,1,2\n")
    (d / "mixed.csv").write_bytes("request_id,ttft_ms,e2e_ms,note\nm1,1,2,单\n".encode()
                                  + "m2,1,2,单\n".encode("gbk"))
    got = {r.path: r for r in store.load_paths([d])}
    assert got[str(d / "sep.csv")].rows_loaded == 1 and got[str(d / "comment.csv")].rows_loaded == 1
    assert "mixes encodings" in got[str(d / "mixed.csv")].error
    assert store.count("requests") == 22
