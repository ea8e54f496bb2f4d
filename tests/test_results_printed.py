"""Printed serving benchmark result blocks (vLLM / SGLang stdout) are a format detected by
content: each block becomes a run whose printed numbers are run_metrics. Real excerpts from
../shared/data/real/published (numbers of published/SOURCES.md), plus small blocks written here
from lines pasted in public issue threads (each test names its thread)."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer.core import runs as runs_mod
from explorer.core.formats import detect_format
from explorer.core.store import Store

PUB = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "real" / "published"
need_pub = pytest.mark.skipif(not PUB.is_dir(), reason=f"published artefacts missing: {PUB}")


def _pub(store, run_id):
    df = store.df("SELECT metric, stat, value FROM run_metrics WHERE run_id = ?", [run_id])
    return {(m, st): v for m, st, v in df.itertuples(index=False)}


def _load(path):
    s = Store()
    r = s.load_file(path)
    assert r.error is None and r.format == "bench_stdout", (r.format, r.error)
    return s, r


@need_pub
def test_vllm_19954_before_block():
    s, r = _load(PUB / "vllm-19954-before-0.8.5.txt")
    (run,) = r.run_ids
    p = _pub(s, run)
    assert p[("requests", "completed")] == 10000
    assert p[("duration_s", "value")] == 451.28 and p[("request_throughput", "value")] == 22.16
    assert p[("output_throughput", "value")] == 4457.76
    assert [p[("ttft_ms", st)] for st in ("mean", "median", "p99")] == [987.38, 538.83, 8046.79]
    assert [p[("tpot_ms", st)] for st in ("mean", "median")] == [262.05, 267.88]
    assert ("tpot_ms", "p99") not in p  # the excerpt ends after Median TPOT: nothing invented
    row = s.df("SELECT engine, engine_version, version_source, config FROM runs").iloc[0]
    assert row["engine"] == "vllm"
    assert row["engine_version"] == "0.8.5" and "before-0.8.5" in row["version_source"]
    assert '"request_rate": 30.0' in row["config"]  # printed above the block


@need_pub
def test_sglang_8285_block():
    s, r = _load(PUB / "sglang-8285-bench-serving-stdout.txt")
    (run,) = r.run_ids
    p = _pub(s, run)
    assert p[("requests", "completed")] == 660 and p[("request_throughput", "value")] == 11.91
    assert p[("e2e_ms", "mean")] == 26530.12
    assert [p[("ttft_ms", st)] for st in ("mean", "median", "p99")] == [2533.44, 2409.87, 6002.16]
    assert p[("itl_ms", "mean")] == 23.46 and p[("concurrency", "mean")] == 315.98
    assert s.scalar("SELECT engine FROM runs") == "sglang"


def test_commented_blocks_several_runs_and_unknown_lines(tmp_path):
    """Two blocks pasted as '# ' comments (the shape of yiliu30/vllm-fork
    scripts/pp_local_test_res.sh), with a line the reader does not know."""
    block = ["# ============ Serving Benchmark Result ============",
             "# Successful requests:                     32        ",
             "# Benchmark duration (s):                  150.87    ",
             "# Request throughput (req/s):              0.21      ",
             "# Accuracy Rate (%):                       97.00     ",
             "# ---------------Time to First Token----------------",
             "# Mean TTFT (ms):                          7279.56   ",
             "# P99 TPOT (ms):                           72.63     ",
             "# =================================================="]
    f = tmp_path / "results.sh"
    f.write_text("\n".join(["# Traffic request rate: inf"] + block + ["", "# next"] + block) + "\n")
    s, r = _load(f)
    assert len(r.run_ids) == 2
    for run in r.run_ids:
        p = _pub(s, run)
        assert p[("requests", "completed")] == 32 and p[("ttft_ms", "mean")] == 7279.56
        assert p[("tpot_ms", "p99")] == 72.63
    assert r.columns["Accuracy Rate (%)"] == "(not mapped)"


def test_failed_requests_line_and_all_failed_block(tmp_path):
    """vLLM >= 0.10 prints 'Failed requests:'; a run with 0 successful requests is flagged and
    keeps no latency (the block prints 0.00 for them)."""
    f = tmp_path / "out.txt"
    f.write_text("============ Serving Benchmark Result ============\n"
                 "Successful requests:                     0         \n"
                 "Failed requests:                         8         \n"
                 "Benchmark duration (s):                  0.01      \n"
                 "---------------Time to First Token----------------\n"
                 "Mean TTFT (ms):                          0.00      \n"
                 "==================================================\n")
    s, r = _load(f)
    p = _pub(s, r.run_ids[0])
    assert p[("requests", "failed")] == 8 and ("ttft_ms", "mean") not in p
    (o,) = runs_mod.overview(s)
    assert o["no_success"] and o["flags"]


def test_header_only_is_a_clear_error(tmp_path):
    f = tmp_path / "cut.txt"
    f.write_text("============ Serving Benchmark Result ============\nwhatever\n")
    s = Store()
    r = s.load_file(f)
    assert r.error and "cut.txt" in r.error and "no result line" in r.error
    assert s.count("runs") == 0


def test_plain_text_is_not_taken(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("Mean TTFT (ms): 12\nsome notes\n")
    with pytest.raises(Exception):
        detect_format(f)
