"""sqlutil.arrow_frame reads the cohort's column types as DuckDB's own .df() does."""
import duckdb
import pandas as pd
from pandas.testing import assert_frame_equal

from explorer.core.sqlutil import arrow_frame

QUERY = """SELECT * FROM (VALUES
    ('a', 1.5::DOUBLE, 3, 7::BIGINT, true, NULL::VARCHAR, NULL::DOUBLE),
    ('b', NULL::DOUBLE, 4, 8::BIGINT, false, NULL::VARCHAR, NULL::DOUBLE))
    t(name, ttft_ms, n, big, badcase, empty_text, empty_num)"""


def test_arrow_frame_matches_df_for_the_cohort_types():
    con = duckdb.connect()
    assert_frame_equal(arrow_frame(con.sql(QUERY)), con.sql(QUERY).df())


def test_arrow_frame_matches_df_on_an_empty_result():
    con = duckdb.connect()
    q = f"SELECT * FROM ({QUERY}) WHERE false"
    got, want = arrow_frame(con.sql(q)), con.sql(q).df()
    assert list(got.columns) == list(want.columns) and len(got) == 0
    assert got["empty_text"].dtype == want["empty_text"].dtype == object


def test_frames_without_arrow_use_their_own_df():
    class Rel:
        def df(self):
            return pd.DataFrame({"x": [1]})

    assert arrow_frame(Rel())["x"].tolist() == [1]
