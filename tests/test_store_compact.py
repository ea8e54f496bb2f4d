"""An in-memory store compresses its tables after big loads (Store.compact, a DuckDB
CHECKPOINT): the rows read back unchanged, saved and reopened, from a worker's cursor, and the
analyses over them agree with pandas on the source file."""
import threading

import duckdb
import numpy as np
import pandas as pd
import pytest

from explorer.core.store import Store

ROWS = 200_000
COLS = ["request_id", "arrival_s", "prompt_tokens", "completion_tokens", "ttft_ms", "tpot_ms",
        "e2e_ms", "queue_ms", "num_preemptions", "batch_size", "finish_reason"]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A request table as Parquet (canonical names, units in the names) and its frame."""
    rng = np.random.default_rng(17)
    df = pd.DataFrame({
        "request_id": [f"req-{i}" for i in range(ROWS)],
        "arrival_s": np.sort(rng.uniform(0, 3600, ROWS)),
        "prompt_tokens": rng.integers(16, 4000, ROWS),
        "completion_tokens": rng.integers(1, 800, ROWS),
        "ttft_ms": rng.uniform(20, 520, ROWS),
        "tpot_ms": rng.uniform(5, 45, ROWS),
        "e2e_ms": rng.uniform(200, 20200, ROWS),
        "queue_ms": rng.uniform(0, 100, ROWS),
        "num_preemptions": rng.integers(0, 3, ROWS),
        "batch_size": rng.uniform(1, 256, ROWS),
        "finish_reason": rng.choice(["stop", "length"], ROWS),
    })
    path = tmp_path_factory.mktemp("compact") / "trace.parquet"
    df.to_parquet(path, index=False)
    return path, df


def _rows(con) -> pd.DataFrame:
    cols = ", ".join(COLS)
    return con.execute(f"SELECT {cols} FROM requests ORDER BY request_id").df()


def _expected(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values("request_id", ignore_index=True)


def _compression(store) -> set[str]:
    return {r[0] for r in store.execute(
        "SELECT DISTINCT compression FROM pragma_storage_info('requests') "
        "WHERE column_name = 'prefill_ms' AND segment_type <> 'VALIDITY'").fetchall()}


def _same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    for c in COLS:
        if want[c].dtype.kind == "f":
            np.testing.assert_array_equal(got[c].to_numpy(float), want[c].to_numpy(float))
        else:
            assert got[c].tolist() == want[c].tolist(), c


def test_compact_keeps_every_value_and_shrinks_the_store(trace, tmp_path):
    path, df = trace
    store = Store()
    assert store.load_file(path).error is None
    before = store._table_bytes()
    assert "Constant" not in _compression(store)  # as inserted: uncompressed
    assert store.compact(force=True)
    after = store._table_bytes()
    assert after < 0.6 * before  # the all-NULL columns alone are a quarter of it
    assert _compression(store) == {"Constant"}  # prefill_ms: NULL in every row
    want = _expected(df)
    _same(_rows(store.con), want)
    # what the analyses read: aggregates equal to pandas on the source file
    got = store.execute("SELECT count(*), sum(ttft_ms), avg(tpot_ms), sum(prompt_tokens), "
                        "count(*) FILTER (WHERE finish_reason = 'length') FROM requests"
                        ).fetchall()[0]
    assert got[0] == ROWS
    assert got[1] == pytest.approx(df["ttft_ms"].sum(), rel=1e-12)
    assert got[2] == pytest.approx(df["tpot_ms"].mean(), rel=1e-12)
    assert got[3] == int(df["prompt_tokens"].sum())
    assert got[4] == int((df["finish_reason"] == "length").sum())
    # saved and reopened: the same rows
    saved = tmp_path / "session.duckdb"
    store.save_as(saved)
    again = Store.open(saved)
    _same(_rows(again.con), want)
    again.close()
    store.close()


def test_a_worker_cursor_reads_through_a_compaction(trace):
    """A cursor with a result half read while compact() runs (a worker's query during a load)
    finishes with the rows it started with; a cursor opened after reads the same rows."""
    path, df = trace
    store = Store()
    assert store.load_file(path).error is None
    cur = store.cursor()
    res = cur.execute("SELECT request_id, ttft_ms FROM requests ORDER BY request_id")
    head = res.fetchmany(10)
    assert store.compact(force=True)
    rest = res.fetchall()
    want = _expected(df)
    assert [r[0] for r in head + rest] == want["request_id"].tolist()
    assert [r[1] for r in head + rest] == want["ttft_ms"].tolist()
    out = {}

    def work():
        c = store.cursor()
        out["rows"] = _rows(c)
        c.close()
    t = threading.Thread(target=work)
    t.start()
    t.join()
    _same(out["rows"], want)
    store.close()


def test_load_paths_compacts_past_the_threshold_only(trace, monkeypatch):
    path, df = trace
    small = Store()
    assert small.load_paths([path])[0].error is None
    assert "Constant" not in _compression(small)  # 200k rows: below COMPACT_BYTES
    small.close()
    monkeypatch.setattr(Store, "COMPACT_BYTES", 1 << 20)
    monkeypatch.setattr(Store, "COMPACT_CHECK_ROWS", 1000)
    big = Store()
    assert big.load_paths([path])[0].error is None
    assert _compression(big) == {"Constant"}
    _same(_rows(big.con), _expected(df))
    big.close()


def test_a_file_store_is_left_to_duckdb(trace, tmp_path):
    path, _ = trace
    store = Store(tmp_path / "file.duckdb")
    assert store.load_file(path).error is None
    assert store.compact(force=True) is False
    store.close()


class _FailingCheckpoint:
    """The store's connection, except that CHECKPOINT fails as DuckDB does when it runs out
    of memory while rewriting the tables."""

    def __init__(self, con):
        self._con = con

    def execute(self, sql, *args, **kwargs):
        if sql.strip().upper() == "CHECKPOINT":
            raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate")
        return self._con.execute(sql, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


def test_a_failing_checkpoint_loses_nothing_and_the_load_goes_on(trace, monkeypatch, tmp_path):
    path, df = trace
    monkeypatch.setenv("TRACE_EXPLORER_LOG_FILE", str(tmp_path / "te.log"))
    monkeypatch.setattr(Store, "COMPACT_BYTES", 1 << 20)
    monkeypatch.setattr(Store, "COMPACT_CHECK_ROWS", 1000)
    store = Store()
    real = store.con
    store.con = _FailingCheckpoint(real)
    reports = store.load_paths([path])
    assert [r.error for r in reports] == [None]
    assert store.compact(force=True) is False
    store.con = real
    assert "Constant" not in _compression(store)  # left uncompressed, as loaded
    _same(_rows(store.con), _expected(df))
    assert "Out of Memory Error" in (tmp_path / "te.log").read_text()
    store.close()
