"""The demo workload through the store: what the user must see, checked with SQL on the loaded
tables (never by reading the generator's parameters)."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from explorer.core.store import Store
from explorer.demo import DEMO_NOTE, load_demo
from explorer.demo.trace import synthesize_trace, write_mooncake

N = 1200  # requests per engine version: small enough to build in about a second
PLANTED = "计算题中间步骤出错"


@pytest.fixture(scope="module")
def demo():
    s = Store()
    reports = load_demo(s, n_requests=N, use_cache=False)
    yield s, reports
    s.close()


def _requests_sha(store: Store) -> str:
    df = store.df("SELECT * EXCLUDE (run_id) FROM requests ORDER BY request_id")
    return hashlib.sha256(df.to_csv(index=False).encode()).hexdigest()


def _cohort(store: Store, version: str):
    """Badcases of the planted cluster and their control group (correct cases of the same
    categories), with the bound request's metrics, for the eval run on `version`."""
    return store.df("""
        WITH c AS (
            SELECT c.case_id, c.correct, c.cluster, c.category, r.kv_cache_hit_rate,
                   r.num_preemptions
            FROM cases c JOIN evals e USING (eval_id)
            JOIN case_links l USING (case_id)
            JOIN requests r ON r.run_id = l.run_id AND r.request_id = l.request_id
            JOIN runs u ON u.run_id = r.run_id
            WHERE u.engine_version = $v AND e.eval_id LIKE '%' || $v)
        SELECT 'bad' AS grp, * FROM c WHERE NOT correct AND cluster = $cluster
        UNION ALL
        SELECT 'control', * FROM c WHERE correct AND category IN
            (SELECT category FROM c WHERE NOT correct AND cluster = $cluster)
        """, {"v": version, "cluster": PLANTED})


def test_runs_evals_and_inputs_say_simulated(demo):
    store, reports = demo
    runs = store.df("SELECT engine, engine_version, simulated, config, format FROM runs "
                    "ORDER BY engine_version")
    assert runs["engine"].tolist() == ["vllm-sim", "vllm-sim"]
    assert runs["engine_version"].tolist() == ["0.5.2", "0.6.1"]
    assert runs["simulated"].all()
    assert all(json.loads(c)["num_gpu_blocks"] > 0 for c in runs["config"])
    assert store.df("SELECT bool_and(simulated) AS s, count(*) AS n FROM evals").iloc[0].tolist() == [True, 2]
    inputs = store.df("SELECT path, kind, rows_loaded, error FROM inputs ORDER BY input_id")
    assert len(inputs) == len(reports) == 4 and inputs["error"].isna().all()
    assert all("demo workload (simulated, seed 7)" in p for p in inputs["path"])
    assert inputs["rows_loaded"].tolist() == [r.rows_loaded for r in reports]
    assert sorted(inputs["kind"]) == ["eval", "eval", "trace", "trace"]
    assert "simulated" in DEMO_NOTE.lower() and "no real engine" in DEMO_NOTE


def test_requests_carry_every_canonical_metric(demo):
    store, _ = demo
    row = store.df("""
        SELECT count(*) AS n, count(kv_cache_hit_rate) AS hit, count(ttft_ms) AS ttft,
               count(tpot_ms) AS tpot, count(queue_ms) AS queue, count(e2e_ms) AS e2e,
               count(num_preemptions) AS pre, count(batch_size) AS batch,
               count(prompt_hash) AS hash, min(kv_cache_hit_rate) AS lo,
               max(kv_cache_hit_rate) AS hi FROM requests""").iloc[0]
    assert row["n"] == 2 * N
    for c in ("hit", "ttft", "queue", "e2e", "pre", "hash"):
        assert row[c] == 2 * N, c
    # one-token answers have no decode: no TPOT and no decode batch
    assert row["tpot"] > 0.95 * 2 * N and row["batch"] > 0.95 * 2 * N
    assert 0.0 <= row["lo"] and row["hi"] <= 1.0


def test_preemptions_come_with_their_events(demo):
    store, _ = demo
    df = store.df("""
        SELECT u.engine_version, sum(r.num_preemptions) AS pre,
               (SELECT count(*) FROM request_events e WHERE e.run_id = u.run_id
                AND e.kind = 'preempted') AS ev_pre,
               (SELECT count(*) FROM request_events e WHERE e.run_id = u.run_id
                AND e.kind = 'resumed') AS ev_res,
               (SELECT count(DISTINCT e.request_id) FROM request_events e
                WHERE e.run_id = u.run_id AND e.kind = 'finished') AS finished
        FROM requests r JOIN runs u USING (run_id) GROUP BY ALL ORDER BY 1""")
    new = df[df["engine_version"] == "0.6.1"].iloc[0]
    assert new["pre"] > 20  # memory pressure on the newer version
    assert (df["pre"] == df["ev_pre"]).all() and (df["ev_pre"] == df["ev_res"]).all()
    assert (df["finished"] == N).all()


def test_token_latencies_add_up_to_the_decode_time(demo):
    store, _ = demo
    df = store.df("""
        SELECT r.run_id, r.request_id, any_value(r.completion_tokens) AS completion_tokens,
               any_value(r.decode_ms) AS decode_ms, count(t.token_index) AS n,
               sum(t.itl_ms) AS total
        FROM requests r LEFT JOIN token_latencies t USING (run_id, request_id)
        GROUP BY r.run_id, r.request_id""")
    assert len(df) == 2 * N
    np.testing.assert_array_equal(df["n"], df["completion_tokens"] - 1)
    many = df[df["n"] > 0]
    np.testing.assert_allclose(many["total"], many["decode_ms"], rtol=1e-6)


def test_newer_version_has_the_lower_kv_cache_hit_rate(demo):
    store, _ = demo
    df = store.df("SELECT u.engine_version AS v, r.kv_cache_hit_rate AS h, r.num_preemptions AS p "
                  "FROM requests r JOIN runs u USING (run_id)")
    old, new = df[df.v == "0.5.2"], df[df.v == "0.6.1"]
    assert new.h.mean() < 0.8 * old.h.mean()
    assert mannwhitneyu(new.h, old.h, alternative="less").pvalue < 0.01
    assert new.p.mean() > old.p.mean()


def test_planted_cluster_shows_low_hit_rate_and_preemptions(demo):
    store, _ = demo
    df = _cohort(store, "0.6.1")
    bad, ctl = df[df.grp == "bad"], df[df.grp == "control"]
    assert len(bad) >= 40 and len(ctl) > 3 * len(bad)
    assert set(ctl.category) == {"arithmetic", "algebra", "geometry"}
    assert bad.kv_cache_hit_rate.mean() < ctl.kv_cache_hit_rate.mean()
    assert mannwhitneyu(bad.kv_cache_hit_rate, ctl.kv_cache_hit_rate,
                        alternative="two-sided").pvalue < 0.01
    assert bad.num_preemptions.mean() > ctl.num_preemptions.mean()
    assert mannwhitneyu(bad.num_preemptions, ctl.num_preemptions,
                        alternative="two-sided").pvalue < 0.01


def test_older_version_has_fewer_planted_badcases(demo):
    store, _ = demo
    df = store.df("SELECT eval_id, avg(coalesce(cluster = $c, false)::INT) AS share FROM cases GROUP BY 1 "
                  "ORDER BY 1", {"c": PLANTED})
    assert df["share"].iloc[0] < df["share"].iloc[1]  # 0.5.2 < 0.6.1


def test_noise_clusters_carry_no_effect(demo):
    store, _ = demo
    df = store.df("""
        SELECT c.correct, r.kv_cache_hit_rate AS h
        FROM cases c JOIN case_links l USING (case_id)
        JOIN requests r ON r.run_id = l.run_id AND r.request_id = l.request_id
        WHERE c.eval_id LIKE '%0.6.1' AND (c.correct OR c.cluster <> $planted)""",
                  {"planted": PLANTED})
    p = mannwhitneyu(df[~df.correct].h, df[df.correct].h).pvalue
    assert p > 0.001  # the noise badcases look like the correct ones


def test_clusters_and_categories(demo):
    store, _ = demo
    df = store.df("SELECT DISTINCT cluster FROM cases WHERE NOT correct")
    names = set(df["cluster"])
    assert PLANTED in names and "单位换算错误" in names
    assert any(n.isascii() for n in names)
    assert store.df("SELECT count(*) AS n FROM cases WHERE correct AND cluster IS NOT NULL")["n"][0] == 0
    cats = set(store.df("SELECT DISTINCT category FROM cases")["category"])
    assert cats == {"arithmetic", "algebra", "geometry"}
    per_version = store.df("SELECT eval_id, count(*) AS n FROM cases GROUP BY 1 ORDER BY 1")
    assert per_version["n"].tolist()[1] == N  # one case per request of the newer version
    assert 0.2 * N < per_version["n"].tolist()[0] < 0.5 * N


def test_nine_in_ten_badcases_carry_their_request_id(demo):
    store, _ = demo
    share = store.df("SELECT avg((request_id IS NOT NULL)::INT) AS s FROM cases WHERE NOT correct")["s"][0]
    assert 0.85 <= share <= 0.95


def test_binding_is_high_and_uses_the_fuzzy_level(demo):
    store, _ = demo
    df = store.df("""
        SELECT c.case_id, c.request_id AS given, l.level, l.request_id,
               u.engine_version, e.eval_id
        FROM cases c JOIN evals e USING (eval_id)
        LEFT JOIN case_links l USING (case_id) LEFT JOIN runs u ON u.run_id = l.run_id""")
    bound = df[df.level.notna()]
    assert len(bound) / len(df) > 0.97
    assert (df[df.given.notna()].level == 1).all()
    fuzzy = bound[bound.level == 2]
    assert len(fuzzy) > 0.05 * len(df)
    # every link lands on the request that served the case: same version, same trace row
    want = "req-" + bound.eval_id.str.split("@").str[1] + "-" + bound.case_id.str.split(":").str[1]
    assert (bound.request_id == want).all()


def test_demo_is_deterministic_in_its_seed(demo):
    store, _ = demo
    again = Store()
    load_demo(again, n_requests=N, use_cache=False)
    assert _requests_sha(again) == _requests_sha(store)
    q = "SELECT case_id, correct, cluster, prediction FROM cases ORDER BY case_id"
    assert again.df(q).equals(store.df(q))


def test_second_load_is_refused_and_changes_nothing(demo):
    store, _ = demo
    before = store.count("requests"), store.count("cases")
    reports = load_demo(store, n_requests=N, use_cache=False)
    assert len(reports) == 1 and "already loaded" in reports[0].error
    assert (store.count("requests"), store.count("cases")) == before


def test_cache_serves_the_same_demo(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACE_EXPLORER_CACHE", str(tmp_path))
    a, b, c, other = Store(), Store(), Store(), Store()
    load_demo(a, n_requests=300)
    assert len(list((tmp_path / "demo").iterdir())) == 1
    load_demo(b, n_requests=300)  # from the cache
    load_demo(c, n_requests=300, use_cache=False)
    load_demo(other, n_requests=300, seed=8, use_cache=False)
    assert _requests_sha(a) == _requests_sha(b) == _requests_sha(c)
    assert _requests_sha(other) != _requests_sha(a)
    q = "SELECT run_id, request_id, token_index, itl_ms FROM token_latencies ORDER BY ALL"
    assert a.df(q).equals(b.df(q))


def test_cache_keeps_only_the_recent_entries(tmp_path, monkeypatch):
    import os
    from explorer.demo import workload
    monkeypatch.setenv("TRACE_EXPLORER_CACHE", str(tmp_path))
    root = tmp_path / "demo"
    root.mkdir()
    for i in range(workload.CACHE_KEEP + 3):
        old = root / f"{i:020x}"
        old.mkdir()
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    (root / "notes").mkdir()  # not a cache entry: left alone
    load_demo(Store(), n_requests=100)
    left = sorted(p.name for p in root.iterdir())
    assert len(left) == workload.CACHE_KEEP + 1 and "notes" in left
    assert f"{0:020x}" not in left and f"{workload.CACHE_KEEP + 2:020x}" in left


def test_users_own_mooncake_trace(tmp_path):
    path = write_mooncake(synthesize_trace(250, seed=11), tmp_path / "mine.jsonl")
    s = Store()
    calls = []
    reports = load_demo(s, trace_path=path, use_cache=False,
                        progress=lambda done, total, what: calls.append((done, total, what)))
    assert [r.error for r in reports] == [None] * 4
    done = [c[0] for c in calls]
    assert done == sorted(done) and calls[-1] == (100, 100, "done")
    assert any("0.6.1" in c[2] for c in calls)
    assert s.df("SELECT count(*) AS n FROM requests")["n"][0] == 500
    assert all("mine.jsonl" in p for p in s.df("SELECT path FROM inputs")["path"])
    lines = path.read_text().splitlines()
    ts = np.array([json.loads(x)["timestamp"] for x in lines]) / 1000.0
    got = s.df("SELECT arrival_s - min(arrival_s) OVER () AS t FROM requests r JOIN runs u "
               "USING (run_id) WHERE u.engine_version = '0.6.1' ORDER BY request_id")["t"]
    np.testing.assert_allclose(got, ts - ts[0], atol=1e-6)


def test_bad_user_trace_is_reported_not_raised(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [0]}\n'
                   '{"timestamp": 5, "output_length": 2}\n', encoding="utf-8")
    s = Store()
    reports = load_demo(s, trace_path=bad, use_cache=False)
    assert len(reports) == 1 and str(bad) in reports[0].error and ":2:" in reports[0].error
    assert s.count("runs") == 0 and s.count("cases") == 0
    assert s.df("SELECT error FROM inputs")["error"][0] == reports[0].error


def test_long_traces_skip_token_latencies(monkeypatch):
    from explorer.demo import workload
    monkeypatch.setattr(workload, "ITL_MAX_REQUESTS", 100)
    s = Store()
    reports = load_demo(s, n_requests=150, use_cache=False)
    assert [r.error for r in reports] == [None] * 4
    assert s.count("requests") == 300 and s.count("token_latencies") == 0


def test_demo_runs_keep_their_prefix_blocks_for_replay(demo):
    """QA: replaying the demo's own run said 'no prefix information (no hash_ids)'. Each
    request keeps the prompt's 512-token blocks: as many as the prompt starts (ceil(n / 512))."""
    from explorer.core.replay.io import requests_from_store
    store, _ = demo
    run = store.df("SELECT run_id FROM runs WHERE engine_version = '0.6.1' AND format <> 'replay' "
                   "LIMIT 1")["run_id"][0]
    trs = requests_from_store(store, run)
    assert trs and all(t.hash_ids for t in trs)
    assert all(len(t.hash_ids) == -(-t.prompt_tokens // 512) for t in trs)
