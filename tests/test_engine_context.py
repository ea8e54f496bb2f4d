"""Each bound request gets the engine's state over its lifetime (queries/request_engine_context.sql),
recomputed here independently from the log lines with pandas."""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis.cohort import Cohort, cohort_frame
from explorer.core.analysis.compare import compare_metrics
from explorer.core.association import bind_cases

T0 = datetime(2025, 5, 19, 10, 13, 11, tzinfo=timezone.utc).timestamp()


def _v1_line(t: float, engine: int, run: int, wait: int, kv: float, hit: float) -> str:
    stamp = datetime.fromtimestamp(t, timezone.utc).strftime("%m-%d %H:%M:%S")
    return (f"(APIServer pid=1) INFO {stamp} [loggers.py:271] Engine {engine:03d}: Avg prompt "
            f"throughput: 0.0 tokens/s, Avg generation throughput: 100.0 tokens/s, Running: "
            f"{run} reqs, Waiting: {wait} reqs, GPU KV cache usage: {kv:.1f}%, Prefix cache hit "
            f"rate: {hit:.1f}%\n")


def _fixture(tmp_path, rng):
    samples = []  # (t, engine, running, waiting, kv %, hit %): every 10 s, two DP engines
    for k in range(12):
        for e in (0, 1):
            samples.append((T0 + 10 * k, e, int(rng.integers(0, 40)), int(rng.integers(0, 20)),
                            float(np.round(rng.uniform(5, 95), 1)), float(np.round(rng.uniform(0, 80), 1))))
    log = tmp_path / "serve.log"
    log.write_text("".join(_v1_line(*s) for s in samples))
    n = 40
    arrival = T0 + rng.uniform(0, 100, n)
    e2e_ms = rng.uniform(50, 30000, n)
    reqs = pd.DataFrame({"request_id": [f"r{i}" for i in range(n)], "arrival_s": arrival,
                         "e2e_ms": e2e_ms, "ttft_ms": rng.uniform(10, 40, n)})
    trace = tmp_path / "trace.csv"
    reqs.to_csv(trace, index=False)
    cases = pd.DataFrame({"case_id": range(n), "request_id": reqs["request_id"],
                          "correct": ["false" if i % 3 == 0 else "true" for i in range(n)],
                          "category": "maths"})
    ev = tmp_path / "eval.csv"
    cases.to_csv(ev, index=False)
    return samples, reqs, [log, trace, ev]


def _expected(samples, reqs) -> pd.DataFrame:
    """Per request: per engine the mean over the sample in force at arrival and the samples up
    to the finish; running / waiting summed over engines, KV usage / hit rate averaged."""
    s = pd.DataFrame(samples, columns=["t", "engine", "running", "waiting", "kv", "hit"])
    out = []
    for r in reqs.itertuples():
        a, f = r.arrival_s, r.arrival_s + r.e2e_ms / 1000
        per = []
        for _, g in s.groupby("engine"):
            before = g[g["t"] <= a].tail(1)
            during = g[(g["t"] > a) & (g["t"] <= f)]
            per.append(pd.concat([before, during])[["running", "waiting", "kv", "hit"]].mean())
        per = pd.DataFrame(per)
        out.append({"request_id": r.request_id, "engine_running": per["running"].sum(),
                    "engine_waiting": per["waiting"].sum(), "engine_kv_usage": per["kv"].mean() / 100,
                    "engine_prefix_hit_rate": per["hit"].mean() / 100})
    return pd.DataFrame(out)


def test_bound_requests_get_the_engine_state_over_their_lifetime(store, tmp_path):
    rng = np.random.default_rng(7)
    samples, reqs, files = _fixture(tmp_path, rng)
    for f in files:
        assert store.load_file(f).error is None
    bind_cases(store)
    frame = cohort_frame(store, Cohort(control="all-correct"))
    assert frame["request_id"].notna().all()
    got = frame.set_index("request_id").sort_index()
    want = _expected(samples, reqs).set_index("request_id").sort_index()
    for col in want.columns:
        np.testing.assert_allclose(got[col], want[col], rtol=1e-9, err_msg=col)
    comp = {r.metric: r for r in compare_metrics(store, Cohort(control="all-correct")).rows}
    row = comp["engine_running"]
    assert row.n_bad == 14 and row.n_control == 26 and row.unit == "requests"
    bad = want.loc[reqs["request_id"][::3], "engine_running"]
    assert row.bad_mean == pytest.approx(bad.mean())


def test_two_logs_covering_a_request_leave_it_without_context(store, tmp_path):
    rng = np.random.default_rng(3)
    samples, reqs, files = _fixture(tmp_path, rng)
    twin = tmp_path / "other-server.log"
    twin.write_text(files[0].read_text() + "\n")  # a second server's log over the same span
    for f in files + [twin]:
        assert store.load_file(f).error is None
    bind_cases(store)
    frame = cohort_frame(store, Cohort(control="all-correct"))
    assert frame["request_id"].notna().all() and frame["engine_running"].isna().all()


def test_no_engine_stats_means_no_context(store, tmp_path):
    rng = np.random.default_rng(5)
    _, _, files = _fixture(tmp_path, rng)
    for f in files[1:]:
        store.load_file(f)
    bind_cases(store)
    frame = cohort_frame(store, Cohort(control="all-correct"))
    assert frame["engine_running"].isna().all()
    comp = {r.metric for r in compare_metrics(store, Cohort(control="all-correct")).rows}
    assert "ttft_ms" in comp


def test_engine_section_counts_the_bound_requests_with_context(store, tmp_path):
    from explorer.core.analysis.engine import engine_stats
    rng = np.random.default_rng(11)
    _, reqs, files = _fixture(tmp_path, rng)
    for f in files:
        store.load_file(f)
    bind_cases(store)
    ctx = engine_stats(store).to_dict()["request_context"]
    assert ctx == {"bound_requests": len(reqs), "with_context": len(reqs)}


def test_dated_sglang_log_serves_spans_of_the_same_engine_kind(store, tmp_path):
    """A dated SGLang log is on the unix clock already; console-exported spans of an SGLang
    server get its context, the same spans labelled as another engine (service.name vllm) do not."""
    import json

    from tests.test_formats_readers import console_span
    log = tmp_path / "sglang.log"
    log.write_text("".join(
        f"[2024-10-04 05:16:{s:02d}] Decode batch. #running-req: {r}, #token: 100, token usage: "
        f"{u:.2f}, gen throughput (token/s): 50.00, #queue-req: {q}\n"
        for s, r, u, q in ((40, 2, 0.10, 0), (46, 4, 0.20, 1), (48, 6, 0.30, 3), (55, 1, 0.05, 0))))
    spans = [console_span(i) for i in range(2)]  # arrive 05:16:47.25 / 48.25, E2E 0.7 s
    for sp in spans:
        sp["resource"]["attributes"]["service.name"] = "sglang"
    trace = tmp_path / "spans.txt"
    trace.write_text("".join(json.dumps(sp, indent=4) + "\n" for sp in spans))
    ev = tmp_path / "eval.csv"
    ev.write_text("case_id,request_id,correct\n1,cmpl-0,false\n2,cmpl-1,true\n")
    for f in (log, trace, ev):
        assert store.load_file(f).error is None
    bind_cases(store)
    got = cohort_frame(store, Cohort(control="all-correct")).set_index("request_id")
    # cmpl-0 lives 47.25..47.95: the 05:16:46 line is in force, none follows before it ends
    assert got.loc["cmpl-0", "engine_running"] == 4 and got.loc["cmpl-0", "engine_waiting"] == 1
    # cmpl-1 lives 48.25..48.95: the 05:16:48 line is in force
    assert got.loc["cmpl-1", "engine_kv_usage"] == pytest.approx(0.30)
    store.execute("UPDATE runs SET engine = 'vllm' WHERE format = 'otel_console'")
    from explorer.core.analysis.cohort import invalidate_case_view
    invalidate_case_view(store)
    assert cohort_frame(store, Cohort(control="all-correct"))["engine_running"].isna().all()
