"""`vllm bench sweep serve` folders: each run loads once, from its run=N.json; the summaries
that repeat them (summary.json per combination, summary.csv per experiment), the warm-up run
and a failed run's record are listed with the reason. The layout is the one
vllm/benchmarks/sweep/serve.py writes; the results are the two runs of the real sweep point in
../shared/data/real/published/er0080-sweep-max_num_seqs4-summary.json (a second combination
is the same runs with max_num_seqs=8, so both combinations' files have the same names)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from explorer.core.store import Store
from tests.conftest import REAL

SUMMARY = REAL / "published" / "er0080-sweep-max_num_seqs4-summary.json"
pytestmark = pytest.mark.skipif(not SUMMARY.is_file(), reason=f"published sweep missing: {SUMMARY}")
COMBS = {"SERVE--max_num_seqs=4-BENCH-": 4, "SERVE--max_num_seqs=8-BENCH-": 8}


@pytest.fixture
def experiment(tmp_path):
    runs = json.loads(SUMMARY.read_text())
    root = tmp_path / "20260818_021333"
    every = []
    for comb, seqs in COMBS.items():
        d = root / comb
        d.mkdir(parents=True)
        done = [dict(r, max_num_seqs=seqs) for r in runs]
        for r in done:
            (d / f"run={r['run_number']}.json").write_text(json.dumps(r, indent=4))
        (d / "summary.json").write_text(json.dumps(done, indent=4))
        (d / "warmup.json").write_text(json.dumps(dict(runs[0], run_number=-1, num_prompts=2)))
        every += done
    (root / "SERVE--max_num_seqs=8-BENCH-" / "run=2.failure.json").write_text(json.dumps(
        {"run_number": 2, "error_type": "RuntimeError", "error": "server exited",
         "serve_overrides": {"max_num_seqs": 8}, "bench_overrides": {}}))
    pd.DataFrame.from_records(every).to_csv(root / "summary.csv")  # as run_combs writes it
    return root, runs


def _ttft_means(store):
    return store.df("SELECT r.label, m.value FROM runs r JOIN run_metrics m USING (run_id)"
                    " WHERE m.metric = 'ttft_ms' AND m.stat = 'mean' ORDER BY r.label")


def test_sweep_folder_loads_each_run_once(experiment):
    root, runs = experiment
    s = Store()
    reports = {r.path.removeprefix(str(root) + "/"): r for r in s.load_paths([root])}
    loaded = sorted(k for k, r in reports.items() if r.run_ids)
    assert loaded == [f"{c}/run={n}.json" for c in COMBS for n in (0, 1)]
    assert all(r.error is None for r in reports.values())
    why = {k: r.skipped_file for k, r in reports.items() if r.skipped_file}
    assert "run=0.json, run=1.json beside it" in why["SERVE--max_num_seqs=4-BENCH-/summary.json"]
    assert "warm-up" in why["SERVE--max_num_seqs=8-BENCH-/warmup.json"]
    assert "run 2: RuntimeError: server exited" in why[
        "SERVE--max_num_seqs=8-BENCH-/run=2.failure.json"]
    assert "summary table of this experiment" in why["summary.csv"]
    got = _ttft_means(s)
    assert got["label"].tolist() == [f"{c} run={n}" for c in COMBS for n in (0, 1)]
    assert got["value"].tolist() == [r["mean_ttft_ms"] for r in runs] * 2
    assert got["value"][0] == pytest.approx(217.27, abs=0.005)  # published/SOURCES.md


def test_summary_csv_named_alone_is_one_run_a_row(experiment):
    root, runs = experiment
    s = Store()
    r = s.load_file(root / "summary.csv")
    assert r.error is None and r.format == "vllm_bench" and len(r.run_ids) == 4
    assert s.count("requests") == 0  # aggregates only: no row is taken for a request
    labels = s.df("SELECT label FROM runs ORDER BY run_id")["label"].tolist()
    assert labels[0] == "summary row 1 run_number=0 max_num_seqs=4"
    assert labels[3] == "summary row 4 run_number=1 max_num_seqs=8"
    for run, src in zip(r.run_ids, runs * 2):
        got = dict(s.df("SELECT metric || '/' || stat, value FROM run_metrics WHERE run_id = ?",
                        [run]).itertuples(index=False))
        assert got["tpot_ms/p99"] == pytest.approx(src["p99_tpot_ms"])
        assert got["e2e_ms/mean"] == pytest.approx(src["mean_e2el_ms"])
        assert got["requests/completed"] == src["completed"]


def test_summary_json_named_alone_still_loads(experiment):
    root, _ = experiment
    s = Store()
    r = s.load_file(root / "SERVE--max_num_seqs=4-BENCH-" / "summary.json")
    assert r.error is None and len(r.run_ids) == 2
