"""Formats without a real public sample in ../shared/data/real, written here in tmp_path from
the field names of the tools' own source (vllm/benchmarks/serve.py, sglang/bench_serving.py,
vllm/tracing.py + OTLP/JSON, Prometheus text format 0.0.4), and the generic alias table."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from explorer.core.formats import detect_format, rank_formats
from explorer.core.store import Store

RNG = np.random.default_rng(7)


def vllm_result(n=6, detailed=True):
    ttfts = RNG.uniform(0.05, 0.4, n).tolist()
    itls = [RNG.uniform(0.005, 0.03, int(k)).tolist() for k in RNG.integers(2, 9, n)]
    errors = [""] * n
    ttfts[2], itls[2], errors[2] = 0.0, [], "Bad Request"
    d = {"date": "20250101-120000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B",
         "tokenizer_id": "meta-llama/Llama-3.1-8B", "num_prompts": n, "request_rate": "inf",
         "duration": 3.2, "completed": n - 1, "total_input_tokens": 600,
         "total_output_tokens": 40, "request_throughput": 1.9, "output_throughput": 12.5,
         "mean_ttft_ms": 120.0, "median_ttft_ms": 110.0, "p99_ttft_ms": 300.0,
         "mean_tpot_ms": 15.0, "mean_itl_ms": 15.0, "mean_e2el_ms": 200.0}
    if detailed:
        d.update({"input_lens": [100] * n, "output_lens": [len(x) + 1 for x in itls],
                  "ttfts": ttfts, "itls": itls, "generated_texts": ["x"] * n, "errors": errors})
    return d


def test_vllm_bench_detailed(store, tmp_path):
    d = vllm_result()
    f = tmp_path / "vllm-result.json"
    f.write_text(json.dumps(d))
    r = store.load_file(f)
    assert r.format == "vllm_bench" and r.error is None and r.rows_loaded == 6
    df = store.df("SELECT * FROM requests ORDER BY CAST(request_id AS INT)")
    ok = [e == "" for e in d["errors"]]
    np.testing.assert_allclose(df["ttft_ms"][ok], np.array(d["ttfts"])[ok] * 1000)
    np.testing.assert_allclose(df["tpot_ms"][ok], [np.mean(x) * 1000 for x, k in zip(d["itls"], ok) if k])
    assert df["error"][2] == "Bad Request" and pd.isna(df["ttft_ms"][2])
    itl = store.df("SELECT itl_ms FROM token_latencies WHERE request_id = '0' ORDER BY token_index")
    np.testing.assert_allclose(itl["itl_ms"], np.array(d["itls"][0]) * 1000)
    run = store.df("SELECT engine, model FROM runs").iloc[0]
    assert run["engine"] == "vllm" and run["model"] == "meta-llama/Llama-3.1-8B"
    assert r.columns["ttfts"] == "ttft_ms (x1000)"


def test_vllm_bench_aggregates_only(store, tmp_path):
    f = tmp_path / "agg.json"
    f.write_text(json.dumps(vllm_result(detailed=False), indent=2))
    r = store.load_file(f)
    assert r.format == "vllm_bench" and r.error is None and r.rows_loaded == 0
    cfg = json.loads(store.df("SELECT config FROM runs")["config"][0])
    assert cfg["mean_ttft_ms"] == 120.0 and cfg["completed"] == 5


def test_sglang_bench_serving_jsonl_one_run_per_line(store, tmp_path):
    a, b = vllm_result(4), vllm_result(3)
    for d in (a, b):
        d["backend"] = "sglang"
        d["mean_e2e_latency_ms"] = 200.0
    f = tmp_path / "sglang_serving.jsonl"
    f.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n")
    r = store.load_file(f)
    assert r.format == "sglang" and r.error is None and len(r.run_ids) == 2
    assert r.rows_loaded == 7
    assert store.df("SELECT DISTINCT engine FROM runs")["engine"].tolist() == ["sglang"]


def otlp_doc():
    def attr(k, v):
        key = "doubleValue" if isinstance(v, float) else "intValue" if isinstance(v, int) else "stringValue"
        return {"key": k, "value": {key: str(v) if key == "intValue" else v}}
    spans = []
    for i in range(3):
        t0 = 1_700_000_000_000_000_000 + i * 10**9
        a = {"gen_ai.request.id": f"cmpl-{i}", "gen_ai.response.model": "Qwen/Qwen2.5-7B",
             "gen_ai.usage.prompt_tokens": 200, "gen_ai.usage.completion_tokens": 11,
             "gen_ai.usage.cache_read.input_tokens": 50 * i,
             "gen_ai.latency.time_in_queue": 0.01 * (i + 1),
             "gen_ai.latency.time_to_first_token": 0.1 + i / 10, "gen_ai.latency.e2e": 0.6 + i / 10,
             "gen_ai.latency.time_in_model_prefill": 0.05, "gen_ai.latency.time_in_model_decode": 0.4}
        spans.append({"traceId": f"t{i}", "spanId": f"s{i}", "name": "llm_request",
                      "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + 6 * 10**8),
                      "attributes": [attr(k, v) for k, v in a.items()],
                      "events": [{"timeUnixNano": str(t0 + 2 * 10**7), "name": "scheduled"}]})
    spans.append({"traceId": "x", "spanId": "y", "name": "http_get", "attributes": []})
    return {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "vllm")]},
                               "scopeSpans": [{"scope": {"name": "vllm"}, "spans": spans}]}]}


def test_otlp_llm_request_spans(store, tmp_path):
    f = tmp_path / "spans.json"
    f.write_text(json.dumps(otlp_doc()))
    r = store.load_file(f)
    assert r.format == "otlp" and r.error is None and r.rows_loaded == 3
    assert r.rows_skipped == 1 and "http_get" in r.skipped_reasons[0]
    df = store.df("SELECT * FROM requests ORDER BY request_id")
    assert df["request_id"].tolist() == ["cmpl-0", "cmpl-1", "cmpl-2"]
    np.testing.assert_allclose(df["ttft_ms"], [100, 200, 300])
    np.testing.assert_allclose(df["queue_ms"], [10, 20, 30])
    np.testing.assert_allclose(df["kv_cache_hit_rate"], [0, 0.25, 0.5])
    np.testing.assert_allclose(df["tpot_ms"], [40, 40, 40])  # 400 ms decode / (11 - 1)
    assert store.df("SELECT model FROM runs")["model"][0] == "Qwen/Qwen2.5-7B"
    kinds = store.df("SELECT kind FROM request_events WHERE request_id = 'cmpl-1' ORDER BY ts_s")
    assert kinds["kind"].tolist() == ["arrived", "scheduled", "first_token", "finished"]


PROM = """# HELP vllm:num_requests_running Number of requests currently running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="m"}} {run}
vllm:num_requests_waiting{{engine="0",model_name="m"}} {wait}
vllm:gpu_cache_usage_perc{{engine="0",model_name="m"}} {kv}
vllm:num_preemptions_total{{engine="0",model_name="m"}} {pre}
vllm:prefix_cache_hits_total{{engine="0",model_name="m"}} {hits}
vllm:prefix_cache_queries_total{{engine="0",model_name="m"}} {queries}
vllm:time_to_first_token_seconds_sum{{engine="0",model_name="m"}} 12.0
vllm:time_to_first_token_seconds_count{{engine="0",model_name="m"}} 48.0
"""


def test_prometheus_scrapes_to_engine_stats(store, tmp_path):
    f = tmp_path / "metrics.txt"
    f.write_text(PROM.format(run=3, wait=1, kv=0.25, pre=0, hits=100.0, queries=1000.0)
                 + PROM.format(run=7, wait=4, kv=0.5, pre=2, hits=400.0, queries=2000.0))
    r = store.load_file(f)
    assert r.format == "prometheus" and r.kind == "stats" and r.rows_loaded == 2
    s = store.df("SELECT * FROM engine_stats")
    assert s["running"].tolist() == [3, 7] and s["waiting"].tolist() == [1, 4]
    np.testing.assert_allclose(s["kv_usage_gpu"], [0.25, 0.5])
    # counters differenced between scrapes: (400 - 100) / (2000 - 1000) hits per query
    np.testing.assert_allclose(s["prefix_cache_hit_rate"], [0.1, 0.3])
    assert s["num_preemptions"].tolist() == [0, 2] and s["engine"].tolist() == ["0", "0"]
    cfg = json.loads(store.df("SELECT config FROM runs")["config"][0])
    assert cfg["vllm:time_to_first_token_seconds_mean"] == 0.25


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl"])
def test_generic_table_aliases_and_units(tmp_path, kind):
    n = 50
    df = pd.DataFrame({"req_id": [f"r{i}" for i in range(n)],
                       "time_to_first_token_s": RNG.uniform(0.1, 0.5, n),
                       "itl_us": RNG.uniform(8000, 20000, n),
                       "e2e_latency": RNG.uniform(1.0, 3.0, n),  # no unit: seconds by median
                       "input_tokens": RNG.integers(10, 900, n),
                       "cached_tokens": RNG.integers(0, 10, n),
                       "model": "m-7b", "gpu": "H100"})
    f = tmp_path / f"t.{kind}"
    if kind == "csv":
        df.to_csv(f, index=False)
    elif kind == "parquet":
        df.to_parquet(f)
    else:
        df.to_json(f, orient="records", lines=True)
    store = Store()
    r = store.load_file(f)
    assert r.format == "generic_table" and r.error is None and r.rows_loaded == n
    got = store.df("SELECT * FROM requests ORDER BY CAST(substr(request_id, 2) AS INT)")
    np.testing.assert_allclose(got["ttft_ms"], df["time_to_first_token_s"] * 1000)
    np.testing.assert_allclose(got["tpot_ms"], df["itl_us"] / 1000)
    np.testing.assert_allclose(got["e2e_ms"], df["e2e_latency"] * 1000)
    np.testing.assert_allclose(got["kv_cache_hit_rate"], df["cached_tokens"] / df["input_tokens"])
    assert json.loads(got["extra"][0]) == {"gpu": "H100"}
    assert store.df("SELECT model FROM runs")["model"][0] == "m-7b"
    assert r.columns["time_to_first_token_s"] == "ttft_ms (x1000)"
    assert "seconds guessed" in r.columns["e2e_latency"]
    store.close()


def test_generic_eval_table_is_left_to_eval_formats(tmp_path):
    f = tmp_path / "results.csv"
    f.write_text("request_id,ttft_ms,e2e_ms,correct\na,1,2,true\n")
    assert dict((n, c) for c, n in rank_formats(f))["generic_table"] <= 0.1
    g = tmp_path / "results.jsonl"
    g.write_text('{"id": 1, "latency_ms": 3, "tpot_ms": 2, "exact_match": 0}\n')
    assert dict((n, c) for c, n in rank_formats(g))["generic_table"] <= 0.1


def test_vllm_log_v1_lines(store, tmp_path):
    f = tmp_path / "serve.log"
    f.write_text(
        "INFO 05-08 10:31:12 [loggers.py:111] Engine 000: Avg prompt throughput: 100.0 tokens/s, "
        "Avg generation throughput: 50.0 tokens/s, Running: 2 reqs, Waiting: 1 reqs, "
        "GPU KV cache usage: 12.5%, Prefix cache hit rate: 40.0%\n"
        "INFO 05-08 10:31:13 [api_server.py:1] some other line\n"
        "INFO 05-08 10:31:22 [loggers.py:111] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 80.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, "
        "GPU KV cache usage: 20.0%, Prefix cache hit rate: 45.0%\n")
    r = store.load_file(f)
    assert r.format == "vllm_log" and r.rows_loaded == 2
    s = store.df("SELECT * FROM engine_stats ORDER BY ts_s")
    assert s["ts_s"].tolist() == [0, 10] and s["waiting"].tolist() == [1, 0]
    np.testing.assert_allclose(s["prefix_cache_hit_rate"], [0.4, 0.45])


def test_bad_rows_are_skipped_with_line_and_field(store, tmp_path):
    f = tmp_path / "mc.jsonl"
    f.write_text('{"timestamp": 0, "input_length": 5, "output_length": 2, "hash_ids": [1]}\n'
                 '{"timestamp": 10, "input_length": "many", "output_length": 2, "hash_ids": [1]}\n'
                 '{"timestamp": 20, "input_length": 7, "output_length": 2, "hash_ids": "x"}\n'
                 '{"timestamp": 30, "input_length": 8, "outp')
    r = store.load_file(f)
    assert detect_format(f).NAME == "mooncake" and r.rows_loaded == 1 and r.rows_skipped == 3
    assert r.skipped_reasons[0].startswith("line 2: field 'input_length': not a number")
    assert r.skipped_reasons[1].startswith("line 3: field 'hash_ids'")
    assert r.skipped_reasons[2].startswith("line 4: not a JSON object")


def test_generic_error_column_zero_means_success(store, tmp_path):
    f = tmp_path / "runs.csv"
    f.write_text("id,ttft_ms,e2e_ms,error_code\n1,10,100,0\n2,20,200,\n3,30,300,503\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 3
    df = store.df("SELECT request_id, error FROM requests ORDER BY request_id")
    assert df["error"].isna().tolist() == [True, True, False] and df["error"][2] == "503"


def test_generic_csv_late_bad_value_is_skipped_with_its_line(store, tmp_path):
    """A text value far past DuckDB's type-sniffing sample still skips only its row."""
    lines = ["request_id,ttft_ms,e2e_ms"] + [f"r{i},{i % 50 + 1},{i % 70 + 100}" for i in range(5000)]
    lines[4001] = "r4000,slow,150"
    f = tmp_path / "late.csv"
    f.write_text("\n".join(lines) + "\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 4999 and r.rows_skipped == 1
    assert r.skipped_reasons == ["line 4002: field 'ttft_ms': not a number: 'slow'"]
    want = np.mean([i % 50 + 1 for i in range(5000) if i != 4000])
    assert store.scalar("SELECT avg(ttft_ms) FROM requests") == pytest.approx(want)


def test_otlp_collector_jsonl_one_document_a_line(store, tmp_path):
    doc = otlp_doc()
    f = tmp_path / "otel-export.jsonl"
    f.write_text(json.dumps(doc) + "\n" + json.dumps(doc) + "\n")
    r = store.load_file(f)
    assert r.format == "otlp" and r.rows_loaded == 6 and len(r.run_ids) == 1


def test_prometheus_samples_with_timestamps_group_by_time(store, tmp_path):
    f = tmp_path / "scrape.prom"
    f.write_text('vllm:num_requests_running{model_name="m"} 2 1700000000000\n'
                 'vllm:num_requests_waiting{model_name="m"} 5 1700000000000\n'
                 'vllm:num_requests_running{model_name="m"} 4 1700000015000\n'
                 'vllm:num_requests_waiting{model_name="m"} 0 1700000015000\n')
    r = store.load_file(f)
    assert r.format == "prometheus" and r.rows_loaded == 2
    s = store.df("SELECT ts_s, running, waiting FROM engine_stats ORDER BY ts_s")
    assert s.values.tolist() == [[1700000000.0, 2, 5], [1700000015.0, 4, 0]]


def test_generic_jsonl_out_of_range_values_skip_their_row_with_line_and_field(store, tmp_path):
    """Negative durations / token counts, hit rates outside [0, 1] and token counts that do not
    fit the store's INTEGER skip their row (never loaded, never silently NULL), reasons in line
    order, a bad JSON line's reason uncut."""
    rows = [{"request_id": "a", "ttft_s": 0.1, "prompt_tokens": 10, "kv_cache_hit_rate": 0.5},
            {"request_id": "b", "ttft_s": -5, "prompt_tokens": 1e99},
            {"request_id": "c", "ttft_s": 0.2, "prompt_tokens": -3},
            {"request_id": "d", "ttft_s": 0.3, "kv_cache_hit_rate": 1.5},
            {"request_id": "e", "ttft_s": 0.4, "prompt_tokens": 12}]
    lines = [json.dumps(r) for r in rows]
    lines.insert(2, '{"request_id": "x", "ttft_s": 0.1 "prompt_tokens": 3}')  # line 3: broken
    f = tmp_path / "mixed.jsonl"
    f.write_text("\n".join(lines) + "\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2 and r.rows_skipped == 4
    assert r.skipped_reasons[0].startswith("line 2: field 'ttft_s': negative value: -5")
    assert "field 'prompt_tokens': out of range" in r.skipped_reasons[0]
    assert r.skipped_reasons[1].startswith("line 3: not a JSON object (Expecting ',' delimiter at column")
    assert r.skipped_reasons[1].endswith(")")
    assert r.skipped_reasons[2].startswith("line 4: field 'prompt_tokens': negative value: -3")
    assert r.skipped_reasons[3].startswith("line 5: field 'kv_cache_hit_rate': hit rate outside [0, 1]")
    got = store.df("SELECT request_id, ttft_ms FROM requests ORDER BY request_id")
    assert got["request_id"].tolist() == ["a", "e"]
    np.testing.assert_allclose(got["ttft_ms"].mean(), np.mean([0.1, 0.4]) * 1000)


def test_generic_csv_row_with_two_bad_fields_counts_once(store, tmp_path):
    f = tmp_path / "wrongtypes.csv"
    f.write_text("request_id,ttft_ms,e2e_ms,prompt_tokens\na,10,100,5\nb,fast,slow,5\n"
                 "c,-30,300,1e99\nd,x,300,7\ne,4,-3,7\nf,20,200,6\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2 and r.rows_skipped == 4
    assert r.skipped_reasons[0] == ("line 3: field 'ttft_ms': not a number: 'fast'; "
                                    "field 'e2e_ms': not a number: 'slow'")
    # a value check after a row DuckDB's reader rejected keeps its true line number
    assert r.skipped_reasons[1].startswith("line 4: field 'ttft_ms': negative value: -30")
    assert "field 'prompt_tokens': out of range" in r.skipped_reasons[1]
    assert r.skipped_reasons[2] == "line 5: field 'ttft_ms': not a number: 'x'"
    assert r.skipped_reasons[3].startswith("line 6: field 'e2e_ms': negative value: -3")
    assert store.df("SELECT request_id FROM requests ORDER BY 1")["request_id"].tolist() == ["a", "f"]


def test_generic_derived_hit_rate_is_null_when_cached_exceeds_prompt(store, tmp_path):
    f = tmp_path / "cache.csv"
    f.write_text("request_id,ttft_ms,input_tokens,cached_tokens\na,1,10,5\nb,2,10,12\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2
    got = store.df("SELECT kv_cache_hit_rate FROM requests ORDER BY request_id")["kv_cache_hit_rate"]
    assert got[0] == pytest.approx(0.5) and pd.isna(got[1])


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_generic_many_bad_rows_counted_exactly_first_reasons_in_line_order(store, tmp_path, kind):
    """More bad rows than reasons kept: every bad row counted once, the first 20 reasons are
    the first 20 bad lines."""
    recs, bad_lines = [], []
    for i in range(300):
        v = 10 + i % 7
        if i % 5 == 1:
            v = -1 - i  # negative
        elif i % 5 == 3:
            v = "oops"  # not a number (CSV: rejected by DuckDB's reader; JSONL: value check)
        recs.append({"request_id": f"r{i}", "ttft_ms": v, "e2e_ms": 100 + i})
    if kind == "csv":
        text = "request_id,ttft_ms,e2e_ms\n" + "".join(
            f"{r['request_id']},{r['ttft_ms']},{r['e2e_ms']}\n" for r in recs)
        first = 2
        lines_of = {i: i + first for i in range(300)}
    else:
        out, lines_of, no = [], {}, 0
        for i, r in enumerate(recs):
            if i % 50 == 7:  # broken JSON lines interleaved
                out.append('{"request_id": "x", "ttft_ms": 1,')
                no += 1
                bad_lines.append(no + 0)
            out.append(json.dumps(r))
            no += 1
            lines_of[i] = no
        text = "\n".join(out) + "\n"
    bad_lines += [lines_of[i] for i in range(300) if i % 5 in (1, 3)]
    f = tmp_path / f"many.{kind}"
    f.write_text(text)
    r = store.load_file(f)
    good = [x for i, x in enumerate(recs) if i % 5 not in (1, 3)]
    assert r.error is None and r.rows_loaded == len(good)
    assert r.rows_skipped == len(bad_lines)
    got_lines = [int(x.split(":")[0].split()[1]) for x in r.skipped_reasons]
    assert got_lines == sorted(bad_lines)[:20]
    mean = store.scalar("SELECT avg(ttft_ms) FROM requests")
    assert mean == pytest.approx(np.mean([x["ttft_ms"] for x in good]))


def test_azure_negative_token_counts_skip_their_row(store, tmp_path):
    f = tmp_path / "AzureLLMInferenceTrace_x.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                 "2023-11-16 18:17:03.9799600,100,20\n"
                 "2023-11-16 18:17:04.0000000,-396,20\n"
                 "2023-11-16 18:17:05.0000000,50,10\n"
                 "2023-11-16 18:17:06.0000000,-5,3000000000\n")
    r = store.load_file(f)
    assert r.error is None and (r.rows_loaded, r.rows_skipped) == (2, 2)
    assert r.skipped_reasons == [
        "line 3: field 'ContextTokens': negative value: -396",
        "line 5: field 'ContextTokens': negative value: -5; "
        "field 'GeneratedTokens': out of range (above 2,147,483,647): 3000000000"]
    assert store.execute("SELECT min(prompt_tokens) FROM requests").fetchall()[0][0] == 50


@pytest.mark.parametrize("int_type", ["int32", "int64", "uint32", "float64"])
def test_generic_parquet_token_counts_range_checked_whatever_their_integer_type(store, tmp_path, int_type):
    """Integer Parquet columns take shorter paths into the INTEGER columns (as they are when
    they fit, a range test when wider): the range rules stay those of every other type."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    big = 3_000_000_000 if int_type in ("int64", "uint32", "float64") else 7
    tokens = [10, -3 if int_type != "uint32" else 11, big, 12]
    f = tmp_path / f"t_{int_type}.parquet"
    pq.write_table(pa.table({"request_id": ["a", "b", "c", "d"], "ttft_ms": [1.0, 2.0, 3.0, 4.0],
                             "prompt_tokens": pa.array(tokens, type=getattr(pa, int_type)())}), f)
    r = store.load_file(f)
    assert r.error is None
    want = [t for t in tokens if 0 <= t <= 2**31 - 1]
    got = store.df("SELECT prompt_tokens FROM requests ORDER BY request_id")["prompt_tokens"]
    assert got.tolist() == want and r.rows_skipped == len(tokens) - len(want)
    reasons = " ".join(r.skipped_reasons)
    if -3 in tokens:
        assert "field 'prompt_tokens': negative value: -3" in reasons
    if big > 2**31 - 1:
        assert "field 'prompt_tokens': out of range" in reasons
