"""Value range checks of the dedicated trace loaders (explorer.core.formats._common.RANGES,
the rules of generic_table): a row with a negative latency / token count / batch size, a token
count beyond the store's INTEGER or a hit rate outside [0, 1] is skipped (never clipped, never
stored as NULL), counted once, its reason naming the line (where the format has lines) and
every bad field. Each file is synthetic, shaped after the loader's docstring (and the real files
in ../shared/data/real, read in place), written to tmp_path: one good row, one out of range."""
from __future__ import annotations

import json

import pytest

from explorer.core.formats._common import INT_MAX, RowError, check_ranges, range_mask
from explorer.core.store import Store


@pytest.fixture(scope="module")
def mstore():
    """One store for the module's loads (each file gets its own run)."""
    s = Store()
    yield s
    s.close()


def _load(store, path, fmt):
    r = store.load_file(path)
    assert r.format == fmt and r.error is None, (r.format, r.error)
    return r


def _requests(store, run_id, cols):
    return store.execute(f"SELECT {cols} FROM requests WHERE run_id = ? ORDER BY request_id",
                         [run_id]).fetchall()


def _jsonl(path, recs):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


# --- the shared check ------------------------------------------------------------------------

def test_bounds_are_inclusive_and_each_bad_field_is_named_once():
    ok = {"ttft_ms": 0.0, "prompt_tokens": INT_MAX, "kv_cache_hit_rate": 1.0, "batch_size": 0,
          "num_preemptions": 0, "arrival_s": -5.0, "e2e_ms": float("nan"), "tpot_ms": None}
    assert check_ranges(ok) is ok  # arrival_s has no range; NaN / None are missing, not bad
    with pytest.raises(RowError) as e:
        check_ranges({"ttft_ms": -1500.0, "prefill_ms": -1500.0, "completion_tokens": INT_MAX + 1,
                      "kv_cache_hit_rate": 1.0000001},
                     {"ttft_ms": ("lat_s", 1000.0), "prefill_ms": ("lat_s", 1000.0)})
    # column order of the store; one source field feeding two columns is named once
    assert e.value.field == "completion_tokens"
    assert e.value.reason == ("out of range (above 2,147,483,647): 2147483648; "
                              "field 'kv_cache_hit_rate': hit rate outside [0, 1]: 1.0000001; "
                              "field 'lat_s': negative value: -1.5")
    with pytest.raises(RowError, match="negative value: -1$"):
        check_ranges({"num_preemptions": -1})
    with pytest.raises(RowError, match="hit rate outside"):
        check_ranges({"kv_cache_hit_rate": -0.01})


def test_vectorised_mask_agrees_with_the_row_check():
    import pandas as pd
    rows = [{"ttft_ms": 1.0, "prompt_tokens": 3}, {"ttft_ms": -0.001}, {"prompt_tokens": INT_MAX + 1},
            {"kv_cache_hit_rate": 1.5}, {"batch_size": 0.0, "e2e_ms": None}, {"decode_ms": -2}]
    mask = range_mask(pd.DataFrame(rows)).tolist()
    want = []
    for r in rows:
        try:
            check_ranges(r)
            want.append(False)
        except RowError:
            want.append(True)
    assert mask == want == [False, True, True, True, False, True]


# --- each loader -----------------------------------------------------------------------------

def test_mooncake_negative_length(mstore, tmp_path):
    f = _jsonl(tmp_path / "trace.jsonl", [
        {"timestamp": 0, "input_length": 600, "output_length": 12, "hash_ids": [1, 2]},
        {"timestamp": 40, "input_length": -600, "output_length": 12, "hash_ids": [1, 2]}])
    r = _load(mstore, f, "mooncake")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    assert r.skipped_reasons == ["line 2: field 'input_length': negative value: -600"]
    assert _requests(mstore, r.run_ids[0], "request_id, prompt_tokens") == [("1", 600)]


def test_mooncake_token_count_beyond_integer(mstore, tmp_path):
    f = _jsonl(tmp_path / "big.jsonl", [
        {"timestamp": 0, "input_length": 600, "output_length": 3_000_000_000, "hash_ids": []},
        {"timestamp": 40, "input_length": 10, "output_length": 12, "hash_ids": [1]}])
    r = _load(mstore, f, "mooncake")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    assert r.skipped_reasons == [
        "line 1: field 'output_length': out of range (above 2,147,483,647): 3000000000"]


def test_aibrix_client_negative_latency_in_seconds(mstore, tmp_path):
    rec = {"input": [{"role": "user", "content": "q"}], "output": "a", "prompt_tokens": 20,
           "output_tokens": 5, "total_tokens": 25, "latency": 0.8, "throughput": 6.2,
           "start_time": 10.0, "ttft": 0.1, "tpot": 0.05}
    f = _jsonl(tmp_path / "output.jsonl", [rec, {**rec, "latency": -0.8, "output_tokens": -5}])
    r = _load(mstore, f, "aibrix_client")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    assert r.skipped_reasons == ["line 2: field 'output_tokens': negative value: -5; "
                                 "field 'latency': negative value: -0.8"]
    assert _requests(mstore, r.run_ids[0], "request_id, e2e_ms") == [("1", pytest.approx(800.0))]


def test_aiperf_negative_ttft_or_itl_keeps_no_event_of_the_row(mstore, tmp_path):
    def rec(i, ttft_us):
        return {"metadata": {"x_request_id": f"req-{i}", "timestamp_ns": 1_700_000_000_000_000_000 + i},
                "metrics": {"ttft": {"value": ttft_us, "unit": "us"},
                            "request_latency": {"value": 90.0, "unit": "ms"},
                            "input_sequence_length": {"value": 100, "unit": "tokens"},
                            "output_sequence_length": {"value": 9, "unit": "tokens"}},
                "error": None}
    d = tmp_path / "aiperf"
    d.mkdir()
    icl = rec(3, 2500.0)
    icl["metrics"]["inter_chunk_latency"] = {"value": [4.0, -1.0], "unit": "ms"}
    f = _jsonl(d / "profile_export.jsonl", [rec(1, 2500.0), rec(2, -2500.0), icl])
    r = _load(mstore, f, "aiperf")
    assert (r.rows_loaded, r.rows_skipped) == (1, 2)
    # the value in the source's own unit (us), not the stored ms
    assert r.skipped_reasons == ["line 2: field 'metrics.ttft': negative value: -2500",
                                 "line 3: field 'metrics.inter_chunk_latency': negative value: -1"]
    run = r.run_ids[0]
    assert _requests(mstore, run, "request_id, ttft_ms") == [("req-1", pytest.approx(2.5))]
    ev = mstore.execute("SELECT DISTINCT request_id FROM request_events WHERE run_id = ?",
                        [run]).fetchall()
    assert ev == [("req-1",)]


def test_llmperf_negative_latency(mstore, tmp_path):
    rec = {"error_code": None, "error_msg": "", "inter_token_latency_s": 0.02, "ttft_s": 0.3,
           "end_to_end_latency_s": 2.0, "request_output_throughput_token_per_s": 50.0,
           "number_total_tokens": 650, "number_output_tokens": 100, "number_input_tokens": 550}
    f = tmp_path / "anyscale_7b_individual_responses.json"
    f.write_text(json.dumps([{**rec, "ttft_s": -0.3}, rec, {**rec, "ttft_s": -0.3, "number_input_tokens": -5}]))
    r = _load(mstore, f, "llmperf")
    assert (r.rows_loaded, r.rows_skipped) == (1, 2)
    assert r.skipped_reasons == ["field '[0].ttft_s': negative value: -0.3",
                                 "field '[2].number_input_tokens': negative value: -5; "
                                 "field '[2].ttft_s': negative value: -0.3"]
    assert _requests(mstore, r.run_ids[0], "request_id, ttft_ms") == [("1", pytest.approx(300.0))]


def test_sglang_one_batch_negative_batch_size_and_decode(mstore, tmp_path):
    row = {"run_name": "test_run", "batch_size": 1, "input_len": 256, "output_len": 32,
           "prefill_latency": 0.02, "median_decode_latency": 0.004, "total_latency": 0.15}
    f = tmp_path / "result.jsonl"
    f.write_text("torch:\n" + json.dumps(row) + "\n"
                 + json.dumps({**row, "batch_size": -1, "total_latency": 0.01}) + "\n")
    r = _load(mstore, f, "sglang")
    # the 'torch:' label line is skipped as before; the out-of-range row once, both fields named
    assert (r.rows_loaded, r.rows_skipped) == (1, 2)
    assert r.skipped_reasons[1] == ("line 3: field 'total_latency - prefill_latency': negative "
                                    "value: -0.01; field 'batch_size': negative value: -1")
    got = _requests(mstore, r.run_ids[0], "batch_size, decode_ms")
    assert got == [(1.0, pytest.approx(130.0))]


def _serving_result(ttfts, itls, input_lens):
    return {"backend": "vllm", "model_id": "m", "duration": 1.0, "completed": len(ttfts),
            "request_throughput": 2.0, "mean_ttft_ms": 100.0, "median_ttft_ms": 100.0,
            "mean_tpot_ms": 10.0, "mean_itl_ms": 10.0, "ttfts": ttfts, "itls": itls,
            "input_lens": input_lens, "output_lens": [len(x) + 1 for x in itls],
            "errors": [""] * len(ttfts)}


def test_vllm_bench_negative_ttft_names_the_array_entry(mstore, tmp_path):
    f = tmp_path / "vllm_result.json"
    f.write_text(json.dumps(_serving_result([0.1, -0.2], [[0.01, 0.02], [0.01]], [50, 60])))
    r = _load(mstore, f, "vllm_bench")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    # the derived E2E (ttft + the ITLs) is negative too, and named as such
    assert r.skipped_reasons == ["field 'ttfts[1]': negative value: -0.2; "
                                 "field 'ttfts[1] + sum(itls[1])': negative value: -0.19"]
    run = r.run_ids[0]
    assert _requests(mstore, run, "request_id, ttft_ms") == [("0", pytest.approx(100.0))]
    # no per-token latencies of the skipped request
    assert mstore.execute("SELECT DISTINCT request_id FROM token_latencies WHERE run_id = ?",
                          [run]).fetchall() == [("0",)]


def test_sglang_serving_line_names_its_line(mstore, tmp_path):
    res = _serving_result([0.1, 0.2], [[0.01], [0.02, 0.03]], [50, 3_000_000_000])
    res["backend"] = "sglang"
    f = _jsonl(tmp_path / "sglang_serving.jsonl", [res, res])
    r = _load(mstore, f, "sglang")
    assert (r.rows_loaded, r.rows_skipped) == (2, 2)  # one run a line, request 1 bad in each
    assert r.skipped_reasons == [
        f"line {n}: field 'input_lens[1]': out of range (above 2,147,483,647): 3000000000"
        for n in (1, 2)]


def _span(rid, ttft_s, prompt, cached):
    attrs = {"gen_ai.request.id": {"stringValue": rid},
             "gen_ai.latency.time_to_first_token": {"doubleValue": ttft_s},
             "gen_ai.latency.e2e": {"doubleValue": 1.0},
             "gen_ai.usage.prompt_tokens": {"intValue": str(prompt)},
             "gen_ai.usage.completion_tokens": {"intValue": "11"},
             "gen_ai.usage.cache_read.input_tokens": {"intValue": str(cached)}}
    return {"traceId": "t", "spanId": rid, "name": "llm_request",
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
            "attributes": [{"key": k, "value": v} for k, v in attrs.items()]}


def _otlp(spans):
    return {"resourceSpans": [{"resource": {"attributes": []},
                               "scopeSpans": [{"spans": spans}]}]}


def test_otlp_collector_lines_negative_latency(mstore, tmp_path):
    f = _jsonl(tmp_path / "spans.jsonl", [_otlp([_span("a", 0.1, 100, 50)]),
                                          _otlp([_span("b", -0.1, 100, 50)])])
    r = _load(mstore, f, "otlp")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    assert r.skipped_reasons == [
        "line 2: field 'gen_ai.latency.time_to_first_token': negative value: -0.1"]
    assert _requests(mstore, r.run_ids[0], "request_id, kv_cache_hit_rate") == [
        ("a", pytest.approx(0.5))]


def test_otlp_more_cached_than_prompt_tokens_is_a_null_rate_not_one(mstore, tmp_path):
    """As generic_table: the derived hit rate is NULL (never clipped to 1) when a span claims
    more cached than prompt tokens; a negative cached count skips the span."""
    f = tmp_path / "spans.json"
    f.write_text(json.dumps(_otlp([_span("a", 0.1, 100, 150), _span("b", 0.1, 100, -1)])))
    r = _load(mstore, f, "otlp")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    assert r.skipped_reasons == [
        "field 'gen_ai.usage.cache_read.input_tokens': negative value: -1"]
    assert _requests(mstore, r.run_ids[0], "request_id, cached_prompt_tokens, kv_cache_hit_rate") \
        == [("a", 150, None)]


def test_aibrix_csv_bad_rows_once_every_field_named_in_line_order(mstore, tmp_path):
    d = tmp_path / "ps_experiment_v0.3.0_20250519"
    d.mkdir()
    head = "prompt_tokens,generation_tokens,ttft,generation_time,user_id,question_id,launch_time,finish_time\n"
    f = d / "cfg_output_2.csv"
    f.write_text(head
                 + "100,11,0.5,1.0,1,1,1000.0,1001.6\n"      # line 2: good
                 + "100,11,-0.5,1.0,2,1,1002.0,1001.0\n"     # line 3: ttft < 0, finish < launch
                 + "3e9,x,0.5,1.0,3,1,1003.0,1004.6\n")      # line 4: beyond INTEGER, text
    r = _load(mstore, f, "aibrix")
    assert (r.rows_loaded, r.rows_skipped) == (1, 2)
    assert r.skipped_reasons == [
        "line 3: field 'ttft': negative value: -0.5; "
        "field 'finish_time - launch_time': negative value: -1",
        "line 4: field 'generation_tokens': not a number: 'x'; "
        "field 'prompt_tokens': out of range (above 2,147,483,647): 3000000000"]
    got = _requests(mstore, r.run_ids[0], "request_id, prompt_tokens, tpot_ms, e2e_ms")
    assert got == [("u1-q1", 100, pytest.approx(1000.0 / 10), pytest.approx(1600.0))]


def test_azure_token_count_beyond_integer_skips_its_row(mstore, tmp_path):
    f = tmp_path / "AzureLLMInferenceTrace_big.csv"
    f.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                 "2023-11-16 18:17:03.9799600,100,20\n"
                 "2023-11-16 18:17:04.0000000,3000000000,20\n")
    r = _load(mstore, f, "azure")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    assert r.skipped_reasons == [
        "line 3: field 'ContextTokens': out of range (above 2,147,483,647): 3000000000"]


def test_generic_table_and_check_ranges_word_the_same_rules_alike(mstore, tmp_path):
    """generic_table's SQL checks read the same RANGES: one bad value gives the same reason
    through a generic JSONL table as through check_ranges."""
    bad = [{"ttft_ms": -30}, {"prompt_tokens": -3}, {"completion_tokens": 3_000_000_000},
           {"kv_cache_hit_rate": 1.5}, {"batch_size": -2.5}]
    recs = [{"request_id": "ok", "ttft_ms": 5, "prompt_tokens": 7}]
    recs += [{"request_id": f"b{i}", "ttft_ms": 5, **b} for i, b in enumerate(bad)]
    r = _load(mstore, _jsonl(tmp_path / "generic.jsonl", recs), "generic_table")
    assert (r.rows_loaded, r.rows_skipped) == (1, len(bad))
    want = []
    for line, b in enumerate(bad, 2):
        with pytest.raises(RowError) as e:
            check_ranges(b)
        want.append(f"line {line}: field '{e.value.field}': {e.value.reason}")

    def split(reason):  # (text before the value, the value): a JSONL column holding a missing
        head, value = reason.rsplit(": ", 1)  # value is float in generic_table ('-3.0')
        return head, float(value)
    assert [split(x) for x in r.skipped_reasons] == [split(x) for x in want]


def test_negative_inter_token_latency_skips_its_request(mstore, tmp_path):
    """A negative ITL is a negative duration: the request goes (its mean TPOT being positive
    does not save it), with no token latencies left behind."""
    f = tmp_path / "vllm_itl.json"
    f.write_text(json.dumps(_serving_result([0.1, 0.2], [[0.01, 0.02], [0.05, -0.01]], [50, 60])))
    r = _load(mstore, f, "vllm_bench")
    assert (r.rows_loaded, r.rows_skipped) == (1, 1)
    assert r.skipped_reasons == ["field 'itls[1]': negative value: -0.01"]
    assert mstore.execute("SELECT DISTINCT request_id FROM token_latencies WHERE run_id = ?",
                          [r.run_ids[0]]).fetchall() == [("0",)]


def test_missing_values_pass_whatever_their_kind():
    """None, NaN and pandas' NA (a nullable Int64 column's missing value) are missing, not out
    of range; the vectorised mask agrees with the row check."""
    import pandas as pd

    from explorer.core.formats._common import range_mask, range_problems
    for missing in (None, float("nan"), pd.NA):
        assert range_problems({"prompt_tokens": missing, "ttft_ms": -1.0}) == [
            ("ttft_ms", "negative value: -1")]
    frame = pd.DataFrame({"prompt_tokens": pd.array([pd.NA, -2, 3], dtype="Int64"),
                          "ttft_ms": [1.0, 2.0, None]})
    assert range_mask(frame).tolist() == [False, True, False]
