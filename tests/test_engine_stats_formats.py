"""Engine statistics from logs and scrapes: the published files of ../shared/data/real/published
reproduce the numbers their SOURCES.md quotes, and small fixtures made of lines found in public
issue threads and docs (each names where it came from) pin the other wordings."""
from __future__ import annotations

import re
from datetime import datetime, timezone

import numpy as np
import pytest

from explorer.core.formats import detect_format
from tests.conftest import REAL

PUB = REAL / "published"
needs_pub = pytest.mark.skipif(not PUB.is_dir(), reason=f"published real files missing: {PUB}")


def _stats(store, path):
    r = store.load_file(path)
    assert r.error is None, r.error
    return r, store.df("SELECT * FROM engine_stats WHERE run_id = ? ORDER BY ts_s, engine",
                       [r.run_ids[0]])


@needs_pub
def test_vllm_43295_v1_engine_log(store):
    r, s = _stats(store, PUB / "vllm-43295-v1-engine-log.txt")
    assert r.format == "vllm_log" and r.rows_loaded == 5
    assert s["running"].min() == 18 and s["running"].max() == 21
    assert s["waiting"].iloc[0] == 43 and s["waiting"].iloc[-1] == 23
    assert s["kv_usage_gpu"].min() == pytest.approx(0.877)
    assert s["kv_usage_gpu"].max() == pytest.approx(0.984)
    assert (s["prefix_cache_hit_rate"] == 0).all()
    assert s["gen_tps"].min() == 589.8 and s["gen_tps"].max() == 1242.7
    assert s["ts_s"].tolist() == [0, 10, 20, 30, 40] and set(s["engine"]) == {"0"}


@needs_pub
def test_vllm_30738_two_dp_engines_at_one_second_stay_apart(store):
    r, s = _stats(store, PUB / "vllm-30738-v1-dp2-two-engines-mfu.txt")
    assert r.rows_loaded == 4
    at = s[s["ts_s"] == 10]  # 18:51:44, ten seconds after the first line
    assert at["engine"].tolist() == ["0", "1"]
    assert at["running"].tolist() == [106, 106] and at["waiting"].tolist() == [22, 22]
    assert at["running"].sum() == 212 and at["waiting"].sum() == 44


@needs_pub
def test_vllm_3094_early_v0_line_without_final_period(store):
    r, s = _stats(store, PUB / "vllm-3094-v0-pending.txt")
    assert r.rows_loaded == 1
    row = s.iloc[0]
    assert (row["running"], row["swapped"], row["waiting"]) == (2, 0, 3)
    assert row["kv_usage_gpu"] == pytest.approx(0.821)
    assert row["prefix_cache_hit_rate"] != row["prefix_cache_hit_rate"]  # NULL: not logged


@needs_pub
def test_sglang_1270_decode_lines_with_time_only(store):
    r, s = _stats(store, PUB / "sglang-1270-decode-batch-no-date.txt")
    assert r.format == "sglang_log" and r.rows_loaded == 10
    text = (PUB / "sglang-1270-decode-batch-no-date.txt").read_text()
    want = [float(x) for x in re.findall(r"gen throughput \(token/s\): ([\d.]+)", text)]
    np.testing.assert_allclose(s["gen_tps"], want)
    assert s["running"].iloc[0] == 2 and s["running"].iloc[-1] == 1
    assert min(want) == 212.82 and max(want) == 447.31
    assert s["ts_s"].tolist() == [0] * 3 + [1] * 5 + [2] * 2 and set(s["engine"]) == {"TP0"}


@needs_pub
def test_er0080_idle_scrape_prefix_hit_rate_is_undefined(store):
    r, s = _stats(store, PUB / "er0080-metrics-vllm-0.25.1-idle.prom.txt")
    assert r.format == "prometheus" and r.rows_loaded == 1
    row = s.iloc[0]
    assert (row["running"], row["waiting"], row["kv_usage_gpu"], row["num_preemptions"]) == (0, 0, 0, 0)
    assert np.isnan(row["prefix_cache_hit_rate"])  # 0 hits / 0 queries
    assert row["engine"] == "0"


@needs_pub
def test_korean_doc_scrape_minus_one_sentinel_is_null(store):
    r, s = _stats(store, PUB / "korean-doc-vllm-0.6-llama31-metrics.prom.txt")
    row = s.iloc[0]
    assert "vllm:gpu_prefix_cache_hit_rate{" in (PUB / "korean-doc-vllm-0.6-llama31-metrics.prom.txt").read_text()
    assert np.isnan(row["prefix_cache_hit_rate"])  # -1.0 in the file: prefix caching off
    assert (row["running"], row["waiting"], row["swapped"], row["kv_usage_gpu"],
            row["prompt_tps"], row["gen_tps"], row["num_preemptions"]) == (0, 0, 0, 0, 0, 0, 0)
    assert store.scalar("SELECT model FROM runs") == "meta-llama/Llama-3.1-8B-Instruct"


# vllm-project/vllm#13939 (vLLM 0.7.2, first post): a V0 stat line and its separate prefix line.
V0_PAIR = (
    "INFO 02-25 11:11:31 metrics.py:455] Avg prompt throughput: 2082.8 tokens/s, Avg generation "
    "throughput: 194.4 tokens/s, Running: 3 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache "
    "usage: 4.8%, CPU KV cache usage: 0.0%.\n"
    "INFO 02-25 11:11:31 metrics.py:471] Prefix cache hit rate: GPU: 52.36%, CPU: 0.00%\n"
    'INFO:     172.27.0.4:60994 - "POST /v1/chat/completions HTTP/1.0" 200 OK\n')


def test_v0_separate_prefix_line_fills_its_stat_row(store, tmp_path):
    f = tmp_path / "serve.log"
    f.write_text(V0_PAIR)
    r, s = _stats(store, f)
    assert r.rows_loaded == 1 and s["running"].tolist() == [3]
    assert s["prefix_cache_hit_rate"].tolist() == [pytest.approx(0.5236)]
    assert s["engine"].isna().all()


def test_v0_minus_one_prefix_sentinel_is_null(store, tmp_path):
    """V0 logs the prefix line when either rate is >= 0, printing -1 x 100 for the other
    (format string "Prefix cache hit rate: GPU: %.2f%%, CPU: %.2f%%", vllm/engine/metrics.py)."""
    f = tmp_path / "serve.log"
    f.write_text(V0_PAIR.replace("GPU: 52.36%", "GPU: -100.00%"))
    _, s = _stats(store, f)
    assert s["prefix_cache_hit_rate"].isna().all()


def test_v0_prefix_lines_alone_are_rows(store, tmp_path):
    """Lines from a public NVIDIA Dynamo guide (kubectl logs ... | grep "Prefix cache hit rate")."""
    f = tmp_path / "decoder.log"
    f.write_text("INFO 04-14 05:42:50 metrics.py:471] Prefix cache hit rate: GPU: 0.00%, CPU: 0.00%\n"
                 "INFO 04-14 05:42:59 metrics.py:471] Prefix cache hit rate: GPU: 50.00%, CPU: 0.00%\n"
                 "INFO 04-14 05:43:04 metrics.py:471] Prefix cache hit rate: GPU: 75.00%, CPU: 0.00%\n")
    assert detect_format(f).NAME == "vllm_log"
    _, s = _stats(store, f)
    assert s["ts_s"].tolist() == [0, 9, 14]
    np.testing.assert_allclose(s["prefix_cache_hit_rate"], [0, 0.5, 0.75])


# SGLang docs (function calling page, 2025-09): dated scheduler lines with a trailing comma.
SGL_DATED = (
    "[2025-09-03 05:49:04] Prefill batch. #new-seq: 1, #new-token: 115, #cached-token: 351, "
    "token usage: 0.02, #running-req: 0, #queue-req: 0,\n"
    "[2025-09-03 05:49:04] Decode batch. #running-req: 1, #token: 501, token usage: 0.02, "
    "cuda graph: True, gen throughput (token/s): 65.75, #queue-req: 0,\n"
    "[2025-09-03 05:49:05] Decode batch. #running-req: 1, #token: 541, token usage: 0.03, "
    "cuda graph: True, gen throughput (token/s): 75.29, #queue-req: 0,\n"
    '[2025-09-03 05:49:05] INFO:     127.0.0.1:54504 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n')


def test_sglang_dated_prefill_and_decode_lines(store, tmp_path):
    f = tmp_path / "sglang.log"
    f.write_text(SGL_DATED)
    r, s = _stats(store, f)
    assert r.format == "sglang_log" and r.rows_loaded == 3
    t0 = datetime(2025, 9, 3, 5, 49, 4, tzinfo=timezone.utc).timestamp()
    assert s["ts_s"].tolist() == [t0, t0, t0 + 1]
    prefill = s[s["gen_tps"].isna()].iloc[0]
    assert prefill["prefix_cache_hit_rate"] == pytest.approx(351 / (351 + 115))
    assert prefill["kv_usage_gpu"] == pytest.approx(0.02)
    assert sorted(s["gen_tps"].dropna()) == [65.75, 75.29]
    assert s["engine"].isna().all()


def test_sglang_line_without_time_is_skipped_with_its_number(store, tmp_path):
    """sgl-project/sglang issue (return_logprob, 2024): an old prefill line with "[gpu_id=0]"
    and the logged "cache hit rate" instead of a time."""
    f = tmp_path / "old.log"
    f.write_text("[gpu_id=0] Prefill batch. #new-seq: 1, #new-token: 2, #cached-token: 42, "
                 "cache hit rate: 45.26%, #running-req: 0, #queue-req: 0\n" + SGL_DATED)
    r, s = _stats(store, f)
    assert r.rows_loaded == 3 and r.rows_skipped == 1
    assert r.skipped_reasons[0].startswith("line 1: batch line without")


PROM_TS = """vllm:num_requests_running{{engine="{e}",model_name="m"}} {run} {t}
vllm:num_preemptions_total{{engine="{e}",model_name="m"}} {pre} {t}
vllm:prefix_cache_hits_total{{engine="{e}",model_name="m"}} {hits} {t}
vllm:prefix_cache_queries_total{{engine="{e}",model_name="m"}} {q} {t}
vllm:generation_tokens_total{{engine="{e}",model_name="m"}} {gen} {t}
"""


def test_prometheus_counters_differenced_per_engine_with_a_restart(store, tmp_path):
    """Two engines scraped three times 15 s apart; engine 1 restarts before the third scrape
    (its counters drop), which Prometheus' increase() reads as a count from 0."""
    spec = {  # engine -> [(running, preemptions, hits, queries, generation tokens)]
        "0": [(2, 1, 10, 100, 1000), (3, 4, 70, 200, 2500), (1, 4, 70, 200, 2500)],
        "1": [(5, 0, 0, 0, 0), (6, 2, 50, 50, 3000), (1, 1, 9, 10, 600)]}
    t0 = 1_700_000_000_000
    text = "".join(PROM_TS.format(e=e, run=v[0], pre=v[1], hits=v[2], q=v[3], gen=v[4],
                                  t=t0 + 15_000 * i)
                   for i in range(3) for e, rows in spec.items() for v in [rows[i]])
    f = tmp_path / "scrapes.prom"
    f.write_text(text)
    _, s = _stats(store, f)
    e0, e1 = s[s["engine"] == "0"], s[s["engine"] == "1"]
    assert e0["running"].tolist() == [2, 3, 1] and e1["running"].tolist() == [5, 6, 1]
    assert e0["num_preemptions"].tolist() == [1, 3, 0] and e1["num_preemptions"].tolist() == [0, 2, 1]
    np.testing.assert_allclose(e0["prefix_cache_hit_rate"], [0.1, 0.6, np.nan])  # 0 new queries
    np.testing.assert_allclose(e1["prefix_cache_hit_rate"], [np.nan, 1.0, 0.9])
    np.testing.assert_allclose(e0["gen_tps"], [np.nan, 100.0, 0.0])  # 1500 tokens / 15 s
    np.testing.assert_allclose(e1["gen_tps"], [np.nan, 200.0, 40.0])


def test_sglang_scrape_tp_ranks_are_one_engine_dp_ranks_two(store, tmp_path):
    """SGLang's label layout (engine_type / model_name / tp_rank, and dp_rank with DP
    attention) as quoted in public router projects' tests: a gauge per tensor-parallel rank
    describes one batch (4 running, not 8); data-parallel ranks are separate engines."""
    f = tmp_path / "sglang.prom"
    f.write_text("# HELP sglang:num_running_reqs The number of running requests.\n"
                 "# TYPE sglang:num_running_reqs gauge\n"
                 'sglang:num_running_reqs{engine_type="unified",model_name="m",tp_rank="0"} 4.0\n'
                 'sglang:num_running_reqs{engine_type="unified",model_name="m",tp_rank="1"} 4.0\n'
                 'sglang:num_queue_reqs{engine_type="unified",model_name="m"} 3.0\n')
    _, s = _stats(store, f)
    assert s[["running", "waiting"]].values.tolist() == [[4, 3]]
    g = tmp_path / "sglang-dp.prom"
    g.write_text("# TYPE sglang:num_running_reqs gauge\n"
                 'sglang:num_running_reqs{dp_rank="0"} 0\nsglang:num_running_reqs{dp_rank="1"} 2\n')
    _, s = _stats(store, g)
    assert s["engine"].tolist() == ["0", "1"] and s["running"].tolist() == [0, 2]
    assert store.scalar("SELECT engine FROM runs WHERE format = 'prometheus' LIMIT 1") == "sglang"


def test_v1_external_prefix_hit_rate_is_not_the_local_one(store, tmp_path):
    """Later V1 lines append "External prefix cache hit rate" (KV connector / offload) after the
    local "Prefix cache hit rate" (field order as public log parsers of vLLM's LoggingStatLogger
    match it); the local one is the engine's prefix_cache_hit_rate."""
    f = tmp_path / "serve.log"
    f.write_text("INFO 07-16 00:35:10 [loggers.py:123] Engine 000: Avg prompt throughput: 1200.0 "
                 "tokens/s, Avg generation throughput: 50.0 tokens/s, Running: 3 reqs, Waiting: 0 "
                 "reqs, GPU KV cache usage: 12.0%, Prefix cache hit rate: 87.5%, External prefix "
                 "cache hit rate: 49.4%\n")
    _, s = _stats(store, f)
    assert s["prefix_cache_hit_rate"].tolist() == [pytest.approx(0.875)]


@pytest.mark.parametrize("lines, version, line_no, model", [
    (["INFO 07-16 00:33:01 [api_server.py:1395] vLLM API server version 0.9.2",
      "INFO 07-16 00:33:20 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: "
      "model='Qwen/Qwen3-8B', speculative_config=None, tokenizer='Qwen/Qwen3-8B'"],
     "0.9.2", 1, "Qwen/Qwen3-8B"),
    (["INFO 10-21 09:00:00 llm_engine.py:237] Initializing an LLM engine (v0.6.3.post1) with "
      "config: model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=None"],
     "0.6.3.post1", 1, "meta-llama/Llama-3.1-8B-Instruct"),
])
def test_log_states_its_own_version_and_model(store, tmp_path, lines, version, line_no, model):
    """The server's start-up lines (format strings of vllm/entrypoints/openai/api_server.py,
    vllm/engine/llm_engine.py, vllm/v1/engine/core.py; values ours) name the version and model:
    the run takes them, and the version source names the line."""
    stat = ("INFO 07-16 00:35:10 [loggers.py:118] Engine 000: Avg prompt throughput: 10.0 "
            "tokens/s, Avg generation throughput: 5.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, "
            "GPU KV cache usage: 12.0%, Prefix cache hit rate: 50.0%")
    f = tmp_path / "v0.1.0" / "serve.log"  # a folder naming another version: the content wins
    f.parent.mkdir()
    f.write_text("\n".join(lines + [stat]) + "\n")
    r, s = _stats(store, f)
    assert r.rows_loaded == 1
    run = store.df("SELECT engine_version, version_source, model FROM runs").iloc[0]
    assert (run["engine_version"], run["model"]) == (version, model)
    assert run["version_source"].startswith(f"file content (line {line_no}:")


@needs_pub
@pytest.mark.parametrize("name, blocks, caching", [
    ("korean-doc-vllm-0.6-llama31-metrics.prom.txt", "2375", "False"),
    ("er0080-metrics-vllm-0.25.1-idle.prom.txt", "25028", "True")])
def test_cache_config_info_labels_are_the_runs_engine_settings(store, name, blocks, caching):
    """vllm:cache_config_info's labels (published/SOURCES.md: num_gpu_blocks 2375 on the
    Korean guide's 0.6 server, prefix caching off, which is why its hit rate gauge says -1)."""
    import json
    r = store.load_file(PUB / name)
    cfg = json.loads(store.scalar("SELECT config FROM runs WHERE run_id = ?", [r.run_ids[0]]))
    cache = cfg["cache_config"]
    assert cache["enable_prefix_caching"] == caching and cache["block_size"] == "16"
    assert cache.get("num_gpu_blocks") == blocks
    assert "engine" not in cache and r.columns["vllm:cache_config_info"].startswith("runs.config")


def test_sglang_log_names_its_model(store, tmp_path):
    """SGLang logs its ServerArgs first (sglang/srt/server_args.py's repr; values ours)."""
    f = tmp_path / "sglang.log"
    f.write_text("[2025-09-03 05:48:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', "
                 "tokenizer_path='Qwen/Qwen2.5-7B-Instruct', tp_size=1)\n" + SGL_DATED)
    r, s = _stats(store, f)
    assert r.rows_loaded == 3
    assert store.scalar("SELECT model FROM runs") == "Qwen/Qwen2.5-7B-Instruct"
