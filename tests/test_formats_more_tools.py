"""Tools read by vocabulary entries alone (resources/metrics.toml), on small files written here in
each tool's documented layout (our numbers, not a third party's file)."""
from __future__ import annotations

import csv
import io
import re

import pytest

from explorer.core.store import Store

# triton-inference-server/perf_analyzer docs: `-f perf.csv` header (report_writer.cc), usec
PA_CSV = """Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,\
Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,\
p90 latency,p95 latency,p99 latency
1,70.4,210,2000,60,200,11700,18,0,13800,18700,19700,21000
2,86.6,230,1900,9000,190,11300,17,0,21800,28500,29700,34000
"""

# the console report (docs/quick_start.md layout): settings, one block a concurrency level
# (client then server), then the summary lines perf_analyzer prints last
PA_CONSOLE = """*** Measurement Settings ***
  Batch size: 1
  Service Kind: Triton
  Using "time_windows" mode for stabilization
  Measurement window: 5000 msec

Request concurrency: 1
  Client: 
    Request count: 1009
    Throughput: 168.389 infer/sec
    Avg latency: 5938 usec (standard deviation 1394 usec)
    p50 latency: 5752 usec
    p90 latency: 7061 usec
    p95 latency: 7459 usec
    p99 latency: 9063 usec
    Avg HTTP time: 5928 usec (send/recv 82 usec + response wait 5846 usec)
  Server: 
    Inference count: 1009
    Successful request count: 1009
    Avg request latency: 5118 usec (overhead 46 usec + queue 25 usec + compute input 23 usec + compute infer 4998 usec + compute output 25 usec)

Request concurrency: 2
  Client: 
    Request count: 1250
    Throughput: 208.2 infer/sec
    Avg latency: 9601 usec (standard deviation 1501 usec)
    p50 latency: 9545 usec
    p90 latency: 9576 usec
    p95 latency: 9588 usec
    p99 latency: 9627 usec
  Server: 
    Inference count: 1250
    Successful request count: 1250
    Avg request latency: 8790 usec (overhead 40 usec + queue 3511 usec + compute input 20 usec + compute infer 4756 usec + compute output 7 usec)

Inferences/Second vs. Client Average Batch Latency
Concurrency: 1, throughput: 168.389 infer/sec, latency 5938 usec
Concurrency: 2, throughput: 208.2 infer/sec, latency 9601 usec
"""


def _metrics(st: Store, run_id: str) -> dict:
    return {(m, s): v for m, s, v in st.con.execute(
        "SELECT metric, stat, value FROM run_metrics WHERE run_id = ?", [run_id]).fetchall()}


def _config(st: Store, run_id: str) -> dict:
    import json
    return json.loads(st.con.execute("SELECT config FROM runs WHERE run_id = ?",
                                     [run_id]).fetchone()[0])


def test_perf_analyzer_csv_one_run_per_concurrency(tmp_path):
    f = tmp_path / "perf.csv"
    f.write_text(PA_CSV)
    st = Store()
    r = st.load_file(f)
    assert r.error is None and r.format == "published" and len(r.run_ids) == 2
    table = list(csv.DictReader(io.StringIO(PA_CSV)))
    for run_id, row in zip(r.run_ids, table):
        got = _metrics(st, run_id)
        assert _config(st, run_id)["concurrency"] == float(row["Concurrency"])
        assert got[("request_throughput", "value")] == pytest.approx(float(row["Inferences/Second"]))
        for p in (50, 90, 95, 99):  # usec -> ms
            assert got[("e2e_ms", f"p{p}")] == pytest.approx(float(row[f"p{p} latency"]) / 1000)
        assert {m for m, _ in got} == {"request_throughput", "e2e_ms"}  # components not read as E2E


def test_perf_analyzer_console_matches_its_printed_summary(tmp_path):
    """Each 'Request concurrency' block is a run; its client throughput and average latency are
    the ones perf_analyzer's own closing summary lines print; the server's request latency (a
    server-side breakdown) is not taken for the client's E2E."""
    f = tmp_path / "perf_analyzer_console.txt"
    f.write_text(PA_CONSOLE)
    st = Store()
    r = st.load_file(f)
    assert r.error is None and r.format == "published" and len(r.run_ids) == 2
    summary = re.findall(r"Concurrency: (\d+), throughput: ([\d.]+) infer/sec, latency (\d+) usec",
                         PA_CONSOLE)
    counts = [int(c) for c in re.findall(r"Request count: (\d+)", PA_CONSOLE)]
    for run_id, (conc, tput, lat), n in zip(r.run_ids, summary, counts):
        got, cfg = _metrics(st, run_id), _config(st, run_id)
        assert cfg["concurrency"] == int(conc) and cfg["batch_size"] == 1
        assert got[("request_throughput", "value")] == pytest.approx(float(tput))
        assert got[("e2e_ms", "mean")] == pytest.approx(int(lat) / 1000)
        assert got[("requests", "completed")] == n
    p99 = [int(x) for x in re.findall(r"p99 latency: (\d+) usec", PA_CONSOLE)]
    assert [_metrics(st, i)[("e2e_ms", "p99")] for i in r.run_ids] == pytest.approx(
        [x / 1000 for x in p99])


def test_vllm_v0_cpu_prefix_cache_hit_rate_is_kept(tmp_path):
    """The V0 line 'Prefix cache hit rate: GPU: %.2f%%, CPU: %.2f%%' (vllm/engine/metrics.py):
    the GPU value fills engine_stats as before; the CPU value, which has no engine_stats
    column, is no longer dropped: run_metrics prefix_cache_hit_rate_cpu (last and max logged;
    the -100.00% 'no data' sentinel is passed over)."""
    lines = [("11:11:31", "0.00", "-100.00"), ("11:11:41", "0.00", "90.00"),
             ("11:11:51", "12.50", "95.50"), ("11:12:01", "25.00", "93.25")]
    f = tmp_path / "serve.log"
    f.write_text("".join(f"INFO 02-25 {t} metrics.py:471] Prefix cache hit rate: GPU: {g}%, "
                         f"CPU: {c}%\n" for t, g, c in lines))
    st = Store()
    r = st.load_file(f)
    assert r.error is None and r.format == "vllm_log"
    got = _metrics(st, r.run_ids[0])
    cpu = [float(c) / 100 for _, _, c in lines if float(c) >= 0]
    assert got == {("prefix_cache_hit_rate_cpu", "last"): pytest.approx(cpu[-1]),
                   ("prefix_cache_hit_rate_cpu", "max"): pytest.approx(max(cpu))}
    gpu = st.con.execute("SELECT prefix_cache_hit_rate FROM engine_stats ORDER BY ts_s").fetchall()
    assert [g for g, in gpu] == pytest.approx([float(g) / 100 for _, g, _ in lines])


# llm-d-benchmark's benchmark report, schema 0.1 (workload/report/benchmark_report_v0_1.py), as
# its analysis writes it (YAML); our numbers
LLM_D = """version: '0.1'
scenario:
  model: {name: meta-llama/Llama-3.1-8B-Instruct}
  load:
    name: vllm-benchmark
    args: {max_concurrency: 16, request_rate: 8.0}
metrics:
  time: {duration: 62.5, start: 1760000000.0}
  requests:
    total: 500
    failures: 2
    input_length: {units: count, mean: 1000.0, p50: 1000, max: 1024}
    output_length: {units: count, mean: 200.0, p50: 200, max: 256}
  latency:
    time_to_first_token: {units: ms, mean: 85.2, stddev: 12.1, p0p1: 40.0, p50: 80.1, p99: 150.3, p99p9: 190.0}
    time_per_output_token: {units: ms/token, mean: 18.4, p50: 18.0, p99: 25.6}
    inter_token_latency: {units: ms/token, mean: 18.1, p99: 40.2}
    request_latency: {units: s, mean: 3.75, p50: 3.7, p99: 5.2}
  throughput: {input_tokens_per_sec: 7968.0, output_tokens_per_sec: 1593.6, total_tokens_per_sec: 9561.6, requests_per_sec: 7.968}
  service:
    batch_size: {units: count, mean: 14.0}
"""


def test_llm_d_benchmark_report_read_by_its_vocabulary_entry(tmp_path):
    import yaml
    f = tmp_path / "benchmark_report,_vllm-benchmark_8.yaml"
    f.write_text(LLM_D)
    doc = yaml.safe_load(LLM_D)["metrics"]
    st = Store()
    r = st.load_file(f)
    assert r.error is None and r.format == "published" and len(r.run_ids) == 1
    got, cfg = _metrics(st, r.run_ids[0]), _config(st, r.run_ids[0])
    lat = doc["latency"]
    assert got[("ttft_ms", "mean")] == pytest.approx(lat["time_to_first_token"]["mean"])
    assert got[("ttft_ms", "p0.1")] == pytest.approx(lat["time_to_first_token"]["p0p1"])
    assert got[("ttft_ms", "p99.9")] == pytest.approx(lat["time_to_first_token"]["p99p9"])
    assert got[("ttft_ms", "std")] == pytest.approx(lat["time_to_first_token"]["stddev"])
    assert got[("tpot_ms", "p99")] == pytest.approx(lat["time_per_output_token"]["p99"])
    assert got[("itl_ms", "mean")] == pytest.approx(lat["inter_token_latency"]["mean"])
    assert got[("e2e_ms", "p99")] == pytest.approx(lat["request_latency"]["p99"] * 1000)  # s
    assert got[("requests", "total")] == doc["requests"]["total"]
    assert got[("requests", "failed")] == doc["requests"]["failures"]
    assert got[("prompt_tokens", "mean")] == doc["requests"]["input_length"]["mean"]
    assert got[("output_throughput", "value")] == pytest.approx(doc["throughput"]["output_tokens_per_sec"])
    assert got[("request_throughput", "value")] == pytest.approx(doc["throughput"]["requests_per_sec"])
    assert got[("duration_s", "value")] == pytest.approx(doc["time"]["duration"])
    assert not any(m == "batch_size" for m, _ in got)  # service metrics passed over
    assert cfg["model"] == "meta-llama/Llama-3.1-8B-Instruct" and cfg["concurrency"] == 16
    assert cfg["request_rate"] == 8.0 and cfg["scenario"] == "vllm-benchmark"


def _debug_span(i: int, ttft: float, e2e: float, prompt: int, out: int, status: str = "Unset") -> str:
    return f"""Span #{i}
    Trace ID       : {i:032x}
    Parent ID      : 
    ID             : {i:016x}
    Name           : llm_request
    Kind           : Server
    Start time     : 2025-03-01 10:00:0{i}.123456789 +0000 UTC
    End time       : 2025-03-01 10:00:0{i + 1}.000000000 +0000 UTC
    Status code    : {status}
    Status message : {"upstream reset" if status == "Error" else ""}
Attributes:
     -> gen_ai.response.model: Str(facebook/opt-125m)
     -> gen_ai.request.id: Str(cmpl-{i})
     -> gen_ai.usage.prompt_tokens: Int({prompt})
     -> gen_ai.usage.completion_tokens: Int({out})
     -> gen_ai.latency.time_to_first_token: Double({ttft})
     -> gen_ai.latency.e2e: Double({e2e})
     -> gen_ai.latency.time_in_queue: Double(0.0012)
"""


def test_otel_collector_debug_exporter_text_is_read_as_otlp_spans(tmp_path):
    """The Collector's debug exporter (verbosity: detailed) printing vLLM's llm_request spans,
    with the collector's log prefix on the ResourceSpans line: each span one request, mapped as
    the OTLP reader maps it (TTFT / E2E from gen_ai.latency.*, TPOT = (E2E - TTFT) / (out - 1))."""
    spans = [(0, 0.0214, 0.3012, 7, 16), (1, 0.0300, 0.5100, 12, 32), (2, 0.0250, 0.2600, 9, 8)]
    f = tmp_path / "otelcol.log"
    f.write_text("2025-03-01T10:00:05.000Z\tinfo\tTracesExporter\t{\"kind\": \"exporter\", "
                 "\"data_type\": \"traces\", \"name\": \"debug\", \"resource spans\": 1, \"spans\": 3}\n"
                 "2025-03-01T10:00:05.000Z\tinfo\tResourceSpans #0\nResource SchemaURL: \n"
                 "Resource attributes:\n     -> service.name: Str(vllm)\n"
                 "     -> service.version: Str(0.6.3)\nScopeSpans #0\nScopeSpans SchemaURL: \n"
                 "InstrumentationScope vllm.llm_engine \n"
                 + "".join(_debug_span(*s) for s in spans[:2])
                 + _debug_span(*spans[2], status="Error")
                 + "\t{\"kind\": \"exporter\", \"data_type\": \"traces\", \"name\": \"debug\"}\n")
    st = Store()
    r = st.load_file(f)
    assert r.error is None and r.format == "otel_console" and r.rows_loaded == 3
    run = st.con.execute("SELECT engine, engine_version, model FROM runs").fetchone()
    assert run == ("vllm", "0.6.3", "facebook/opt-125m")
    got = st.con.execute("SELECT request_id, ttft_ms, e2e_ms, tpot_ms, queue_ms, prompt_tokens, "
                         "completion_tokens, arrival_s, error FROM requests ORDER BY request_id"
                         ).fetchall()
    for (i, ttft, e2e, prompt, out), row in zip(spans, got):
        assert row[0] == f"cmpl-{i}"
        assert row[1:5] == pytest.approx((ttft * 1000, e2e * 1000,
                                          (e2e - ttft) * 1000 / (out - 1), 1.2))
        assert row[5:7] == (prompt, out)
        assert row[7] == pytest.approx(1740823200 + i + 0.123456789, abs=1e-6)
    assert [row[8] for row in got] == [None, None, "upstream reset"]
