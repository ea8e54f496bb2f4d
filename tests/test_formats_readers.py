"""More readers: OpenTelemetry ConsoleSpanExporter output, eval correctness aliases, BurstGPT,
and detection that sees a whole long first record, ignores a byte-order mark and survives a
stray NUL line."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pytest

from explorer.core.formats import detect_format, rank_formats
from tests.conftest import REAL

PUB = REAL / "published"


def console_span(i: int, *, error: bool = False) -> dict:
    """One span as the Python SDK's ReadableSpan.to_json() prints it (field layout of the SDK's
    console output, as quoted in public docs, e.g. Mirascope's OpenTelemetry page), with vLLM's
    llm_request attribute names (vllm/tracing.py) and OpenTelemetry GenAI usage names."""
    start = f"2024-10-04T05:16:{47 + i:02d}.250000Z"
    end = f"2024-10-04T05:16:{47 + i:02d}.950000Z"
    span = {
        "name": "llm_request",
        "context": {"trace_id": f"0x{i:032x}", "span_id": f"0x{i:016x}", "trace_state": "[]"},
        "kind": "SpanKind.SERVER", "parent_id": None, "start_time": start, "end_time": end,
        "status": {"status_code": "ERROR", "description": "boom"} if error else {"status_code": "UNSET"},
        "attributes": {"gen_ai.request.id": f"cmpl-{i}", "gen_ai.response.model": "llama-8b",
                       "gen_ai.usage.input_tokens": 100 + i, "gen_ai.usage.output_tokens": 11,
                       "gen_ai.latency.time_to_first_token": 0.05 * (i + 1),
                       "gen_ai.latency.e2e": 0.7, "gen_ai.latency.time_in_queue": 0.01,
                       "gen_ai.response.finish_reasons": ["stop"]},
        "events": [], "links": [],
        "resource": {"attributes": {"service.name": "vllm", "telemetry.sdk.language": "python"},
                     "schema_url": ""}}
    return span


@pytest.mark.parametrize("layout", ["one", "concatenated", "per_line", "array"])
def test_otel_console_spans_map_like_otlp(store, tmp_path, layout):
    spans = [console_span(i, error=(i == 2)) for i in range(3)]
    f = tmp_path / "spans.txt"
    if layout == "one":
        spans = spans[:1]
        f.write_text(json.dumps(spans[0], indent=4) + "\n")
    elif layout == "concatenated":  # the exporter's default: to_json(indent=4) + os.linesep each
        f.write_text("INFO: server started\n" + "".join(json.dumps(s, indent=4) + "\n" for s in spans))
    elif layout == "per_line":
        f.write_text("".join(json.dumps(s) + "\n" for s in spans))
    else:
        f.write_text(json.dumps(spans, indent=2))
    assert detect_format(f).NAME == "otel_console"
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == len(spans)
    got = store.df("SELECT * FROM requests ORDER BY request_id")
    assert got["request_id"].tolist() == [f"cmpl-{i}" for i in range(len(spans))]
    np.testing.assert_allclose(got["ttft_ms"], [50.0 * (i + 1) for i in range(len(spans))])
    np.testing.assert_allclose(got["e2e_ms"], 700.0)
    np.testing.assert_allclose(got["queue_ms"], 10.0)
    assert got["prompt_tokens"].tolist() == [100 + i for i in range(len(spans))]
    # TPOT as the OTLP reader defines it: (e2e - ttft) / (output tokens - 1)
    np.testing.assert_allclose(got["tpot_ms"], [(700 - 50.0 * (i + 1)) / 10 for i in range(len(spans))])
    t0 = datetime(2024, 10, 4, 5, 16, 47, 250000, tzinfo=timezone.utc).timestamp()
    np.testing.assert_allclose(got["arrival_s"], [t0 + i for i in range(len(spans))])
    assert got["finish_reason"].tolist() == ["stop"] * len(spans)
    if len(spans) == 3:
        assert got["error"].isna().tolist() == [True, True, False] and got["error"][2] == "boom"
    run = store.df("SELECT engine, model FROM runs").iloc[0]
    assert (run["engine"], run["model"]) == ("vllm", "llama-8b")


def test_otel_console_non_llm_span_is_skipped_with_its_line(store, tmp_path):
    other = console_span(5)
    other["name"], other["attributes"] = "going to the grocery store", {}
    f = tmp_path / "spans.txt"
    f.write_text(json.dumps(console_span(0), indent=4) + "\n" + json.dumps(other, indent=4) + "\n")
    r = store.load_file(f)
    assert r.rows_loaded == 1 and r.rows_skipped == 1
    line = 1 + json.dumps(console_span(0), indent=4).count("\n") + 1
    assert r.skipped_reasons == [f"line {line}: span 'going to the grocery store' is not an LLM request"]


def test_otel_console_span_with_a_bad_time_is_skipped_with_field_and_line(store, tmp_path):
    bad = console_span(1)
    bad["start_time"] = "yesterday"
    f = tmp_path / "spans.txt"
    f.write_text(json.dumps(console_span(0)) + "\n" + json.dumps(bad) + "\n")
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 1 and r.rows_skipped == 1
    assert len(r.skipped_reasons) == 1
    assert r.skipped_reasons[0].startswith("line 2:") and "start_time" in r.skipped_reasons[0]


@pytest.mark.parametrize("column,values", [("reward", [1.0, 0.0, 1.0]), ("passed", [True, False, True]),
                                           ("is_correct", [1, 0, 1]), ("score", [1, 0, 1])])
def test_eval_jsonl_with_a_correctness_alias_is_an_eval(store, tmp_path, column, values):
    f = tmp_path / "results.jsonl"
    f.write_text("".join(json.dumps({"id": i, "prompt": f"q{i}", "ttft_ms": 5.0, "latency_ms": 9.0,
                                     column: v}) + "\n" for i, v in enumerate(values)))
    assert detect_format(f).NAME == "generic_eval"
    r = store.load_file(f)
    assert r.kind == "eval" and r.rows_loaded == 3
    assert store.df("SELECT correct FROM cases ORDER BY case_id")["correct"].tolist() == [True, False, True]
    assert store.count("requests") == 0


def test_a_graded_score_does_not_make_an_eval(tmp_path):
    f = tmp_path / "trace.jsonl"
    f.write_text("".join(json.dumps({"request_id": f"r{i}", "ttft_ms": 5.0 + i, "e2e_ms": 9.0 + i,
                                     "score": 0.37 + i / 10}) + "\n" for i in range(3)))
    assert detect_format(f).NAME == "generic_table"


@pytest.mark.skipif(not PUB.is_dir(), reason=f"published real files missing: {PUB}")
def test_burstgpt_published_rows(store):
    f = PUB / "burstgpt-1-first-rows-as-quoted.csv"
    r = store.load_file(f)
    assert r.format == "burstgpt" and r.rows_loaded == 3
    got = store.df("SELECT arrival_s, prompt_tokens, completion_tokens, extra FROM requests "
                   "ORDER BY arrival_s")
    assert got["arrival_s"].tolist() == [5, 45, 118]
    assert got["prompt_tokens"].tolist() == [472, 1087, 417]
    assert got["completion_tokens"].tolist() == [18, 230, 276]
    assert [json.loads(x)["model"] for x in got["extra"]] == ["ChatGPT", "ChatGPT", "GPT-4"]


def test_burstgpt_failed_request_and_bad_value(store, tmp_path):
    """BurstGPT's README: files with failures mark them with Response tokens 0."""
    f = tmp_path / "BurstGPT_1.csv"
    f.write_text("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                 "5,ChatGPT,472,18,490,Conversation log\n"
                 "7,ChatGPT,300,0,300,API log\n"
                 "9,GPT-4,lots,1,1,API log\n")
    r = store.load_file(f)
    assert r.rows_loaded == 2 and r.skipped_reasons == ["line 4: field 'Request tokens': not a number: 'lots'"]
    err = store.df("SELECT error FROM requests ORDER BY arrival_s")["error"]
    assert err.isna().tolist() == [True, False]


def test_first_record_longer_than_the_head_is_read_whole(store, tmp_path):
    """An AIPerf record (profile_export.jsonl field layout) whose inter_chunk_latency array
    alone is longer than the 64 KiB head, then a normal one."""
    def rec(i, n):
        return {"metadata": {"x_request_id": f"r{i}", "timestamp_ns": 1759522419159192408 + i,
                             "credit_phase": "profiling"},
                "metrics": {"ttft": {"value": 100.0, "unit": "ms"},
                            "request_latency": {"value": 100.0 + n * 20.0, "unit": "ms"},
                            "output_token_count": {"value": n + 1, "unit": "tokens"},
                            "inter_chunk_latency": {"value": [20.123456789] * n, "unit": "ms"}}}
    f = tmp_path / "profile_export.jsonl"
    f.write_text(json.dumps(rec(0, 6000)) + "\n" + json.dumps(rec(1, 3)) + "\n")
    assert len(f.read_text().splitlines()[0]) > 64 * 1024
    assert detect_format(f).NAME == "aiperf"
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2
    assert store.scalar("SELECT count(*) FROM token_latencies WHERE request_id = 'r0'") == 6000


def test_long_first_eval_sample_with_reward(store, tmp_path):
    f = tmp_path / "samples.jsonl"
    long_prompt = "Read the passage. " * 8000  # ~144 KB, a long-context sample
    f.write_text(json.dumps({"doc_id": 0, "prompt": long_prompt, "reward": 1.0}) + "\n"
                 + json.dumps({"doc_id": 1, "prompt": "short", "reward": 0.0}) + "\n")
    assert detect_format(f).NAME == "generic_eval"
    assert store.load_file(f).rows_loaded == 2


def test_byte_order_mark_is_ignored(store, tmp_path):
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + b'{"request_id": "a", "ttft_ms": 5, "e2e_ms": 9}\n'
                  b'{"request_id": "b", "ttft_ms": 6, "e2e_ms": 8}\n')
    assert detect_format(f).NAME == "generic_table"
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2 and r.rows_skipped == 0
    g = tmp_path / "bom.csv"
    g.write_bytes(b"\xef\xbb\xbfid,correct\n1,true\n2,false\n")
    assert detect_format(g).NAME == "generic_eval"
    assert store.load_file(g).rows_loaded == 2


def test_stray_nul_line_in_jsonl_is_skipped_with_its_number(store, tmp_path):
    f = tmp_path / "mc.jsonl"
    f.write_bytes(b'{"timestamp": 0, "input_length": 5, "output_length": 2, "hash_ids": [1]}\n'
                  + b"\x00" * 4096 + b"\n"
                  + b'{"timestamp": 10, "input_length": 7, "output_length": 2, "hash_ids": [1]}\n')
    assert dict((n, c) for c, n in rank_formats(f))["mooncake"] >= 0.5
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2
    assert r.skipped_reasons == ["line 2: a line of NUL bytes, not a JSON object"]


def test_long_context_lm_eval_sample_first(store, tmp_path):
    """lm-evaluation-harness samples_*.jsonl (doc_id, doc, target, resps, filtered_resps, a
    metric per sample) whose first sample carries a ~200 KB context."""
    def sample(i, text, acc):
        return {"doc_id": i, "doc": {"context": text, "question": f"q{i}"}, "target": "A",
                "arguments": [[text, {"until": ["\n"]}]], "resps": [["A" if acc else "B"]],
                "filtered_resps": ["A" if acc else "B"], "acc": acc}
    f = tmp_path / "samples_longbench_2024-06-01T00-00-00.jsonl"
    f.write_text(json.dumps(sample(0, "lorem ipsum " * 9000, 1.0)) + "\n"
                 + json.dumps(sample(1, "short", 0.0)) + "\n")
    assert len(f.read_text().splitlines()[0]) > 64 * 1024
    assert detect_format(f).NAME == "lm_eval"
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2


def test_genai_client_span_without_latency_attributes(store, tmp_path):
    """A GenAI client span printed by the console exporter, in the layout of the span pasted in
    BerriAI/litellm PR #4076 (a proxy's completion span: gen_ai.response.id, the older
    gen_ai.usage.prompt_tokens / completion_tokens names, no gen_ai.latency.*); values here are
    our own. The completion id binds (it is what the client logged) and the span's duration is
    the call's E2E."""
    span = console_span(0)
    span.update(name="proxy-completion", kind="SpanKind.INTERNAL",
                start_time="2025-01-02T03:04:05.100000Z", end_time="2025-01-02T03:04:06.350000Z",
                attributes={"gen_ai.request.model": "m-small", "gen_ai.system": "openai",
                            "gen_ai.response.id": "chatcmpl-abc1",
                            "gen_ai.response.model": "m-small-0125", "llm.usage.total_tokens": 30,
                            "gen_ai.usage.completion_tokens": 12, "gen_ai.usage.prompt_tokens": 18})
    f = tmp_path / "proxy.log"
    f.write_text(json.dumps(span, indent=4) + "\n")
    r = store.load_file(f)
    assert r.format == "otel_console" and r.error is None and r.rows_loaded == 1
    row = store.df("SELECT * FROM requests").iloc[0]
    assert row["request_id"] == "chatcmpl-abc1"
    assert row["e2e_ms"] == pytest.approx(1250.0)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (18, 12)
    assert np.isnan(row["ttft_ms"]) and np.isnan(row["tpot_ms"])  # not in the span: not invented
    assert store.scalar("SELECT model FROM runs") == "m-small-0125"


@pytest.mark.skipif(not PUB.is_dir(), reason=f"published real files missing: {PUB}")
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_utf16_printed_block_in_a_version_folder(store, tmp_path, encoding):
    """Windows PowerShell's `>` writes UTF-16 (with a byte-order mark; Out-File -Encoding
    unicode without one in some tools): vllm#19954's printed block saved that way reads as its
    UTF-8 original does, its version still comes from the folder, and the run names the file."""
    src = PUB / "vllm-19954-before-0.8.5.txt"
    f = tmp_path / "vllm-0.8.5" / "bench.txt"
    f.parent.mkdir()
    f.write_bytes(src.read_text().replace("\n", "\r\n").encode(encoding))
    r = store.load_file(f)
    assert r.error is None and r.format == "bench_stdout"
    assert r.columns["(file encoding)"].startswith("UTF-16")
    got = dict(store.df("SELECT metric || '/' || stat, value FROM run_metrics").itertuples(index=False))
    assert got["ttft_ms/p99"] == 8046.79 and got["requests/completed"] == 10000
    run = store.df("SELECT source_path, engine_version, version_source, label FROM runs").iloc[0]
    assert run["source_path"] == str(f) and run["engine_version"] == "0.8.5"
    assert "folder 'vllm-0.8.5'" in run["version_source"]
    assert run["label"] == "vllm-0.8.5/bench"  # not the UTF-8 copy's temporary folder


def test_single_byte_eval_csv_keeps_its_letters(store, tmp_path):
    """A CSV saved as Windows-1252 (Excel): 'café' stays 'café', so its prompt hash equals the
    trace's UTF-8 prompt."""
    from explorer.core.association import prompt_hash
    f = tmp_path / "graded.csv"
    f.write_bytes("id,question,is_correct\n1,Où est le café ?,1\n2,“Deux” crêpes,0\n".encode("cp1252"))
    r = store.load_file(f)
    assert r.error is None and r.kind == "eval"
    assert r.columns["(file encoding)"] == "Windows-1252, read as UTF-8"
    got = store.df("SELECT prompt, prompt_hash FROM cases ORDER BY case_id")
    assert got["prompt"].tolist() == ["Où est le café ?", "“Deux” crêpes"]
    assert got["prompt_hash"][0] == prompt_hash("Où est le café ?")


def test_utf16_bad_value_and_bad_json_name_the_original_file(store, tmp_path):
    f = tmp_path / "trace.csv"
    f.write_bytes("request_id,ttft_ms,e2e_ms\n1,abc,9\n2,5,9\n".encode("utf-16"))
    r = store.load_file(f)
    assert r.rows_loaded == 1 and r.skipped_reasons == ["line 2: field 'ttft_ms': not a number: 'abc'"]
    assert store.scalar("SELECT source_path FROM runs") == str(f)
    g = tmp_path / "result.json"
    g.write_bytes('{"ttfts": [0.1, ], "input_lens": [1]}'.encode("utf-16"))
    r = store.load_file(g)
    assert r.error == f"{g}:1: invalid JSON (Expecting value, column 17)"


def test_ungraded_opencompass_predictions_are_refused_with_the_reason(store, tmp_path):
    """The record shape open-compass/LawBench publishes its predictions in (index-keyed
    origin_prompt turns, prediction, a reference `refr`; values here our own) carries no
    grading: the file is an OpenCompass prediction, refused with what would make it usable."""
    f = tmp_path / "predictions" / "zero_shot" / "model-x" / "3-2.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({str(i): {"origin_prompt": [{"role": "HUMAN", "prompt": f"问题 {i}"}],
                                      "prediction": f"答 {i}", "refr": f"参考 {i}"}
                             for i in range(3)}, ensure_ascii=False, indent=4))
    r = store.load_file(f)
    assert r.format == "opencompass" and r.rows_loaded == 0
    assert r.error.startswith(str(f)) and "--dump-eval-details" in r.error


def test_a_json_file_cut_short_is_a_syntax_error_with_its_line_alone_and_in_a_folder(store,
                                                                                    tmp_path):
    """No format recognises a broken JSON document: it was "unrecognised file ... a [tool.*]
    entry would read it" (inspect) and "ignored" in a folder; it is its syntax error, a
    failure, while an unknown but valid JSON file stays unrecognised / ignored."""
    from pathlib import Path

    from explorer.core.store import Store
    cut = tmp_path / "cut.json"
    text = '{"ttft_s": 0.1, "foo": [1,2'
    cut.write_text(text)
    two = tmp_path / "two.json"
    two.write_text('{"a": 1,\n "b": [1,\n')
    (tmp_path / "fine.json").write_text('{"x": 1}')
    for f in (cut, two):
        with pytest.raises(json.JSONDecodeError) as want:
            json.loads(f.read_text())
        r = store.load_file(f)
        assert r.error == (f"{f}:{want.value.lineno}: invalid JSON ({want.value.msg}, column "
                           f"{want.value.colno})")
    got = {Path(r.path).name: r for r in Store().load_paths([tmp_path])}
    assert got["cut.json"].error.startswith(f"{cut}:1: invalid JSON")
    assert got["two.json"].error.startswith(f"{two}:3: invalid JSON")
    assert got["fine.json"].error is None and "no known format" in got["fine.json"].skipped_file
