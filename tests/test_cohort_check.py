"""bench/cohort_check.py at a small size (issue 37: the 100M report's cohort equal to a DuckDB
recomputation; this keeps the same check in CI): the default report over a Parquet request
file read in place and a case CSV, against plain DuckDB on the same two files."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import cohort_check  # noqa: E402


def _files(tmp_path: Path, n: int = 20_000, m: int = 4_000) -> tuple[Path, Path]:
    """The shape of ../shared/bench/make_scale_data.py: canonical request columns, cases for a
    tenth of the requests whose correctness depends on KV-cache hits and preemptions, clusters
    incl. CJK names, plus 50 cases whose request is not in the file (unbound)."""
    g = np.random.default_rng(7)
    kv = g.beta(4, 2, n)
    pre = g.poisson(0.5 + (1 - kv) * 2)
    req = pd.DataFrame({
        "request_id": [f"r{i}" for i in range(n)], "arrival_s": np.sort(g.uniform(0, n / 50, n)),
        "prompt_tokens": g.integers(50, 4000, n), "completion_tokens": g.integers(1, 800, n),
        "kv_cache_hit_rate": kv, "num_preemptions": pre, "batch_size": g.integers(1, 129, n),
        "ttft_ms": g.gamma(2, 60, n) + (1 - kv) * 200, "tpot_ms": 3.8 + pre * 1.5 + g.gamma(2, 1, n),
        "queue_ms": g.exponential(30, n), "e2e_ms": g.gamma(3, 500, n)})
    idx = g.choice(n, m, replace=False)
    bad = g.random(m) < 0.1 + 0.5 * (kv[idx] < 0.35) * (pre[idx] > 2)
    names = np.array(["计算题中间步骤出错", "单位换算错误", "format"])
    rid = np.array([f"r{i}" for i in idx], dtype=object)
    rid[:50] = [f"gone{i}" for i in range(50)]
    cases = pd.DataFrame({"case_id": [f"c{i}" for i in range(m)], "request_id": rid,
                          "category": np.where(g.random(m) < 0.5, "mathematics", "physics"),
                          "cluster": np.where(bad, names[g.integers(0, 3, m)], ""),
                          "correct": ~bad})
    rp, cp = tmp_path / "requests.parquet", tmp_path / "cases.csv"
    req.to_parquet(rp)
    cases.to_csv(cp, index=False)
    return rp, cp


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from explorer.__main__ import main
    tmp = tmp_path_factory.mktemp("cohort_check")
    rp, cp = _files(tmp)
    out = tmp / "rep"
    rc = main(["report", str(rp), str(cp), "--in-place", "always", "--no-whatif", "--no-replay",
               "--format", "json", "--out", str(out)])
    assert rc == 0
    return out / "report.json", rp, cp


def test_report_cohort_equals_duckdb_on_the_files(report, capsys):
    path, rp, cp = report
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert [f["rows_loaded"] for f in doc["inputs"]] == [20_000, 4_000]
    assert cohort_check.main([str(path), str(rp), str(cp)]) == 0
    printed = capsys.readouterr().out
    assert "35/35 equal" in printed
    got = cohort_check.recompute(str(rp), str(cp))
    assert got["bound"] < got["badcases"] or got["control_bound"] < got["control_cases"]  # unbound seen


def test_the_check_fails_on_a_different_cohort(report, tmp_path):
    path, rp, cp = report
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["cohort"]["control_bound"] -= 1
    ttft = next(r for r in doc["comparison"] if r["metric"] == "ttft_ms")
    ttft["bad_mean"] *= 1 + 1e-6
    wrong = tmp_path / "report.json"
    wrong.write_text(json.dumps(doc), encoding="utf-8")
    assert cohort_check.main([str(wrong), str(rp), str(cp)]) == 1
    rows = {k: ok for k, _, _, ok in cohort_check.compare(cohort_check.from_report(doc),
                                                           cohort_check.recompute(str(rp), str(cp)))}
    assert [k for k, ok in rows.items() if not ok] == ["control_bound", "ttft_ms.bad_mean"]
