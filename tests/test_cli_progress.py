"""The CLI's load progress line (explorer.cli.progress): on a terminal, the file being loaded
and DuckDB's own progress of its scan; on anything else, nothing."""
import io

from explorer.cli.progress import LoadProgress
from explorer.core.store import Store


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _parquet(tmp_path, n=3_000_000):
    p = tmp_path / "big.parquet"
    con = Store().con
    con.execute(f"COPY (SELECT 'r' || range AS request_id, random() * 100 AS ttft_ms, "
                f"random() * 10 AS tpot_ms, range % 4000 AS prompt_tokens FROM range({n})) "
                f"TO '{p}' (FORMAT parquet, ROW_GROUP_SIZE 100000)")
    return p


def test_progress_line_on_a_terminal(tmp_path, capfd):
    p = _parquet(tmp_path)
    store = Store()
    out = _Tty()
    with LoadProgress(store, stream=out, period_s=0.02) as shown:
        store.con.execute("SET progress_bar_time = 0")  # DuckDB counts from the start (not 2 s)
        reports = store.load_paths([p], progress=shown)
    assert reports[0].error is None and reports[0].rows_loaded == 3_000_000
    text = out.getvalue()
    assert "\rloading 1/1: " in text and str(p)[-30:] in text
    pcts = [float(x.split("(")[-1].split("%")[0]) for x in text.split("\r") if "% of this" in x]
    assert pcts and all(0 <= v <= 100 for v in pcts) and max(pcts) > 0, pcts
    assert text.endswith("\r") and text.rstrip("\r").split("\r")[-1].strip() == ""  # erased
    # the store still answers and its bar is off again (nothing printed by DuckDB itself)
    assert store.scalar("SELECT current_setting('enable_progress_bar')") is False
    assert store.scalar("SELECT count(*) FROM requests") == 3_000_000
    assert "%" not in capfd.readouterr().out  # DuckDB drew no bar of its own


def test_nothing_when_not_a_terminal(tmp_path):
    store = Store()
    out = io.StringIO()
    with LoadProgress(store, stream=out) as shown:
        store.load_paths([_parquet(tmp_path, 1000)], progress=shown)
    assert out.getvalue() == ""
