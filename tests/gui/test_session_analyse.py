"""session.analyse runs the comparison, the tree and the case rows on two threads: the
store's own DuckDB connection must stay on the job's thread (a connection used by two threads
at once raises ResourceInUseException or returns another call's result)."""
from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cohort
from explorer.core.store import Store
from explorer.session import analyse


class _OneThreadConnection:
    """The store's connection, failing when called from any thread but its owner's."""

    def __init__(self, con):
        self._con, self._owner, self.foreign = con, threading.get_ident(), []

    def __getattr__(self, name):
        attr = getattr(self._con, name)
        if callable(attr) and threading.get_ident() != self._owner:
            self.foreign.append((name, threading.current_thread().name))
        return attr


def _store_with_cases() -> Store:
    rng = np.random.default_rng(0)
    s = Store()
    s.add_run("r", engine="vllm", engine_version="1", format="synthetic")
    n = 400
    s.append("requests", pd.DataFrame({
        "run_id": "r", "request_id": [f"q{i}" for i in range(n)],
        "kv_cache_hit_rate": rng.uniform(0, 1, n), "tpot_ms": rng.gamma(4, 4, n),
        "num_preemptions": rng.poisson(0.5, n), "batch_size": rng.integers(1, 64, n).astype(float),
        "ttft_ms": rng.gamma(3, 60, n)}))
    s.add_eval("e")
    correct = rng.uniform(size=n) > 0.3
    s.append("cases", pd.DataFrame({
        "case_id": [f"e:{i}" for i in range(n)], "eval_id": "e", "category": "math",
        "correct": correct, "cluster": np.where(correct, None, "k"),
        "request_id": [f"q{i}" for i in range(n)]}))
    s.append("case_links", pd.DataFrame({"case_id": [f"e:{i}" for i in range(n)], "run_id": "r",
                                         "request_id": [f"q{i}" for i in range(n)], "level": 1,
                                         "score": 1.0}))
    return s


@pytest.mark.parametrize("make,cluster", [(Store, "nope"), (_store_with_cases, "k"),
                                          (_store_with_cases, "no such cluster")])
def test_analyse_keeps_the_store_connection_on_its_thread(make, cluster):
    store = make()
    guard = _OneThreadConnection(store.con)
    store.con = guard
    out, _, nbytes = analyse(store, Cohort(cluster), {}, {})
    assert guard.foreign == []
    if cluster == "k":
        # a section travels as its registry entry, its frozen result and its report-JSON view
        from explorer.core import sections
        from explorer.core.analysis.results import TreeResult
        tree = out["tree"]
        assert tree.section is sections.BY_KEY["tree"] and isinstance(tree.result, TreeResult)
        assert tree.view == tree.result.to_dict()
        assert isinstance(out["comparison"].view, list) and isinstance(tree.view, dict)
        assert len(out["cases"]) == 400
        assert nbytes == int(out["frame"].memory_usage(deep=True).sum()) > 0
    else:  # an empty cohort: both sections say why, none fails
        for k in ("comparison", "tree"):
            assert getattr(out[k], "nodata", False), out[k]


def test_a_failing_replay_run_list_does_not_fail_the_runs_payload(session, monkeypatch):
    """The runs payload goes out after every load and connect: the Replay panel's run list
    failing (or a warehouse, where replay does not run) leaves it empty, the rest intact."""
    import explorer.core.viewstate.replay as replay_state

    session.store.add_run("r", engine="vllm", engine_version="1", format="synthetic")

    def broken(store):
        raise RuntimeError("boom")
    monkeypatch.setattr(replay_state, "replay_runs", broken)
    out = session._runs_payload()
    assert out["replay_runs"] == [] and [r["run_id"] for r in out["runs"]] == ["r"]
    monkeypatch.undo()
    monkeypatch.setattr(session.store, "remote", True, raising=False)
    assert session._runs_payload()["replay_runs"] == []


def test_a_load_reads_the_runs_beside_the_binding(session, qtbot, monkeypatch, tmp_path):
    """The runs' rows (Runs, Inputs and Replay panels) read no case: a load reads them on a
    cursor of their own while the cases bind (issue 17, drop to dashboard), and they are
    those of the store read after it."""
    import explorer.core.pipeline as core_pipeline
    import explorer.core.report_runs as report_runs

    n = 60
    pd.DataFrame({"request_id": [f"r{i}" for i in range(n)], "arrival_s": np.arange(n) * 0.5,
                  "prompt_tokens": 100 + np.arange(n), "completion_tokens": 20 + np.arange(n),
                  "ttft_ms": 50.0 + np.arange(n), "tpot_ms": 10.0 + np.arange(n) % 7}
                 ).to_csv(tmp_path / "requests.csv", index=False)
    pd.DataFrame({"case_id": [f"c{i}" for i in range(n)], "request_id": [f"r{i}" for i in range(n)],
                  "category": "math", "cluster": [None if i % 3 else "k" for i in range(n)],
                  "correct": [bool(i % 3) for i in range(n)]}).to_csv(tmp_path / "cases.csv", index=False)
    reading = threading.Event()
    seen = []
    runs_section, prepare = report_runs.runs_section, core_pipeline.prepare

    def runs(store):
        seen.append((threading.current_thread().name, store.con is session.store.con))
        reading.set()
        return runs_section(store)

    def binding(store, *a, **k):
        assert reading.wait(20), "the runs were not read while the cases bind"
        return prepare(store, *a, **k)
    monkeypatch.setattr(report_runs, "runs_section", runs)
    monkeypatch.setattr(core_pipeline, "prepare", binding)
    session.load_paths([str(tmp_path / "requests.csv"), str(tmp_path / "cases.csv")])
    qtbot.waitUntil(lambda: bool(session.data.get("runs")) and session.runner.pending() == 0,
                    timeout=60000)
    assert session.errors == []
    assert seen[0][0].startswith("runs") and seen[0][1] is False  # its own thread and cursor
    monkeypatch.undo()
    assert session.data["runs"] == runs_section(session.store)
    assert session.data["runs"][0]["n_requests"] == n
    assert [r["n"] for r in session.data["replay_runs"]] == [n]
    bound = session.store.scalar("SELECT count(*) FROM case_links")
    assert bound == n and session.data["meta"]["cases"] == n
