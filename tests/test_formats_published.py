"""The metric vocabulary (resources/metrics.toml) and the structural readers (formats/published.py):
each tool's published layout read into run_metrics / runs.config. Real files are read in place
from ../shared/data/real (AIPerf's aggregates beside its per-request export, lm-eval's results);
for the other tools each test writes a small file in the tool's published layout (the writer
named in the vocabulary's `example`) with its own numbers."""
from __future__ import annotations

import json

import pytest

from explorer.core.formats import _vocab, detect_format
from explorer.core.formats._vocab import read_name
from explorer.core.store import Store
from tests.conftest import REAL


def _metrics(store: Store, run_id: str | None = None) -> dict[tuple[str, str], float]:
    df = store.query("runs_published", {"run_ids": None if run_id is None else [run_id]})
    return {(r.metric, r.stat): r.value for r in df.itertuples()}


def _config(store: Store, run_id: str) -> dict:
    return json.loads(store.scalar("SELECT config FROM runs WHERE run_id = ?", [run_id]))


def _load(path, fmt="published"):
    store = Store()
    rep = store.load_file(path)
    assert rep.error is None, rep.error
    assert rep.format == fmt
    return store, rep


@pytest.mark.parametrize("name, want", [
    ("Mean TTFT (ms)", ("ttft_ms", "mean", 1.0)),
    ("time_to_first_token_ms", None),                      # a distribution needs a statistic
    ("p99.9_ttft_ms", ("ttft_ms", "p99.9", 1.0)),
    ("50.00 percentile latency (ns)", ("e2e_ms", "p50", 1e-6)),
    ("Average time-to-first-token [TTFT] (ms)", ("ttft_ms", "mean", 1.0)),
    ("[Latency] P99", ("e2e_ms", "p99", 1.0)),
    ("平均首Token时延", ("ttft_ms", "mean", 1.0)),
    ("Total generated tokens (retokenized)", ("completion_tokens", "total_retokenized", 1.0)),
    ("Request Throughput (requests/sec)", ("request_throughput", "value", 1.0)),
    ("Total Latency (ms)", ("duration_s", "value", 1e-3)),
    ("max_concurrency", None),                             # vLLM's configured limit
    ("exact_match,strict-match", ("accuracy", "value@strict-match", 1.0)),
])
def test_a_name_is_read_as_statistic_metric_unit(name, want):
    got = read_name(name)
    assert (got and (got.metric, got.stat, got.scale)) == want or (got is None and want is None)


def test_a_statistic_beside_the_name_and_a_unit_elsewhere():
    assert read_name("TTFT (ms)", "p99").stat == "p99"
    nm = read_name("request_latency", "mean", "ns")
    assert (nm.metric, nm.scale) == ("e2e_ms", 1e-6)
    assert _vocab.number("1,234.56") == (1234.56, "")
    assert _vocab.number("20.45 ms") == (20.45, "ms")


def test_aiperf_aggregates_land_beside_its_requests_and_are_recomputed():
    folder = REAL / "aiperf_example"
    if not folder.is_dir():
        pytest.skip("aiperf_example missing")
    from explorer.core.runs import overview
    store = Store()
    reps = store.load_paths([folder])
    loaded = [r for r in reps if not r.skipped_file]
    assert [r.format for r in loaded] == ["aiperf"]
    ignored = {r.path.rsplit("/", 1)[1]: r.skipped_file for r in reps if r.skipped_file}
    assert set(ignored) >= {"profile_export_aiperf.json", "profile_export_aiperf.csv"}
    assert all("profile_export.jsonl" in why for k, why in ignored.items() if "aiperf" in k)
    pub = _metrics(store)
    raw = json.loads((folder / "profile_export_aiperf.json").read_text())["records"]
    assert pub[("ttft_ms", "p99")] == pytest.approx(raw["ttft"]["p99"])
    assert pub[("requests", "completed")] == raw["request_count"]["avg"] == 89
    assert pub[("requests", "failed")] == 11
    run = overview(store)[0]
    rec = {(r["metric"], r["stat"]): r for r in run["recomputed"]}
    for key in [("ttft_ms", "mean"), ("ttft_ms", "p99"), ("e2e_ms", "p50"), ("tpot_ms", "mean"),
                ("itl_ms", "p99"), ("completion_tokens", "total")]:
        assert rec[key]["recomputed"] == pytest.approx(rec[key]["published"], rel=1e-6), key


def test_aiperf_csv_alone_reads_both_sections():
    path = REAL / "aiperf_example" / "profile_export_aiperf.csv"
    if not path.is_file():
        pytest.skip("aiperf_example missing")
    store, _ = _load(path)
    pub = _metrics(store)
    assert pub[("ttft_ms", "mean")] == 2343.22 and pub[("ttft_ms", "p99")] == 3833.39
    assert pub[("request_throughput", "value")] == 9.55
    assert pub[("requests", "completed")] == 89 and pub[("requests", "failed")] == 11
    assert pub[("tpot_ms", "p50")] == 27.62          # AIPerf's inter_token_latency is TPOT
    assert pub[("itl_ms", "p50")] == 22.67           # its inter_chunk_latency the chunk gaps


def test_genai_perf_json_and_csv(tmp_path):
    stats = {"request_throughput": {"unit": "requests/sec", "avg": 3.5},
             "request_latency": {"unit": "ms", "avg": 812.0, "p99": 990.5, "min": 700.0},
             "time_to_first_token": {"unit": "ms", "avg": 41.0, "p90": 60.25},
             "inter_token_latency": {"unit": "ms", "avg": 6.5, "p50": 6.25},
             "output_token_throughput": {"unit": "tokens/sec", "avg": 1400.0},
             "input_config": {"model_names": ["my-model"], "concurrency": 8}}
    j = tmp_path / "profile_export_genai_perf.json"
    j.write_text(json.dumps(stats))
    store, _ = _load(j)
    pub = _metrics(store)
    assert pub[("e2e_ms", "p99")] == 990.5 and pub[("ttft_ms", "p90")] == 60.25
    assert pub[("tpot_ms", "p50")] == 6.25 and pub[("request_throughput", "value")] == 3.5
    assert pub[("output_throughput", "value")] == 1400.0
    run = store.scalar("SELECT run_id FROM runs")
    assert _config(store, run) == {"tool": "genai_perf", "model": "my-model", "concurrency": 8}
    c = tmp_path / "profile_export_genai_perf.csv"
    c.write_text("Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1\r\n"
                 "Time To First Token (ms),41.00,30.00,70.00,69.50,65.00,60.25,50.00,40.00,35.00,"
                 "32.00,31.00,30.10\r\n"
                 "Request Latency (ms),\"1,812.00\",700.00,990.50,990.00,980.00,970.00,900.00,"
                 "800.00,750.00,720.00,710.00,701.00\r\n\r\n"
                 "Metric,Value\r\nRequest Throughput (requests/sec),3.50\r\n")
    store, _ = _load(c)
    pub = _metrics(store)
    assert pub[("ttft_ms", "p90")] == 60.25 and pub[("e2e_ms", "mean")] == 1812.0
    assert pub[("request_throughput", "value")] == 3.5


def _guidellm_dist(mean, p99, scale=1.0):
    d = {"mean": mean * scale, "median": mean * scale, "std_dev": 0.5 * scale,
         "min": 0.1 * scale, "max": 2 * p99 * scale, "count": 10,
         "percentiles": {"p001": 0.1 * scale, "p50": mean * scale, "p99": p99 * scale,
                         "p999": 1.5 * p99 * scale}}
    return {"successful": d, "errored": {**d, "mean": 12345.0}, "incomplete": d, "total": d}


def _guidellm_requests(n, ttft0, prefix="r"):
    """GenerativeRequestStats records (src/guidellm/schemas/request_stats.py, computed fields
    serialised): our numbers."""
    return [{"type_": "generative_request_stats", "request_id": f"{prefix}{j}",
             "request_latency": 1.0 + j / 10, "prompt_tokens": 100, "output_tokens": 21 + j,
             "time_to_first_token_ms": ttft0 + j, "time_per_output_token_ms": 99.0,
             "inter_token_latency_ms": 5.0 + j} for j in range(n)]


def _guidellm_report(rates):
    benches = []
    for i, rate in enumerate(rates):
        benches.append({"type_": "generative_benchmark",
                        "requests": {"successful": _guidellm_requests(4, 40.0 + i),
                                     "errored": _guidellm_requests(1, 500.0, "e"), "incomplete": []},
                        "config": {"strategy": {"type_": "constant", "rate": rate}},
                        "metrics": {"request_totals": {"successful": 10 + i, "errored": 1,
                                                       "incomplete": 0, "total": 11 + i},
                                    "requests_per_second": _guidellm_dist(rate, rate),
                                    "request_latency": _guidellm_dist(1.5 + i, 2.0 + i),
                                    "time_to_first_token_ms": _guidellm_dist(40.0 + i, 90.0),
                                    "inter_token_latency_ms": _guidellm_dist(7.0, 9.0),
                                    "time_per_output_token_ms": _guidellm_dist(8.0, 10.0),
                                    "output_tokens_per_second": _guidellm_dist(500.0, 600.0)}})
    return {"metadata": {"version": 2}, "benchmarks": benches}


def test_guidellm_sweep_is_several_runs_json_and_yaml(tmp_path):
    import yaml
    rep_obj = _guidellm_report([1.0, 4.0])
    for name, text in (("benchmarks.json", json.dumps(rep_obj)),
                       ("benchmarks.yaml", yaml.safe_dump(rep_obj))):
        p = tmp_path / name
        p.write_text(text)
        store, rep = _load(p)
        assert len(rep.run_ids) == 2
        second = _metrics(store, rep.run_ids[1])
        assert second[("ttft_ms", "mean")] == 41.0 and second[("ttft_ms", "p99.9")] == 135.0
        assert second[("e2e_ms", "mean")] == pytest.approx(2500.0)    # seconds -> ms
        assert second[("tpot_ms", "p99")] == 9.0                      # GuideLLM's ITL
        assert second[("requests", "completed")] == 11
        assert _config(store, rep.run_ids[1])["request_rate"] == 4.0
        req = store.df("SELECT request_id, error, ttft_ms, tpot_ms, e2e_ms, completion_tokens "
                       "FROM requests WHERE run_id = ? ORDER BY request_id", [rep.run_ids[1]])
        ok = req[req["error"].isna()]
        assert len(req) == 5 and len(ok) == 4 and set(req["error"].dropna()) == {"errored"}
        assert ok["ttft_ms"].tolist() == [41.0, 42.0, 43.0, 44.0]
        assert ok["tpot_ms"].tolist() == [5.0, 6.0, 7.0, 8.0]          # not the 99 incl. first
        assert ok["e2e_ms"].tolist() == pytest.approx([1000.0, 1100.0, 1200.0, 1300.0])


def test_inference_perf_lifecycle_summary(tmp_path):
    dist = lambda m: {"mean": m, "median": m, "p90": 1.5 * m, "p99": 2 * m, "max": 3 * m}
    obj = {"load_summary": {"count": 120, "schedule_delay": dist(0.001)},
           "successes": {"count": 118, "latency": {"request_latency": dist(2.0),
                                                   "time_to_first_token": dist(0.05),
                                                   "time_per_output_token": dist(0.01),
                                                   "inter_token_latency": dist(0.009)},
                         "throughput": {"output_tokens_per_sec": 900.0,
                                        "requests_per_sec": 4.0},
                         "prompt_len": dist(512)},
           "failures": {"count": 2, "request_latency": dist(9.0)}}
    p = tmp_path / "summary_lifecycle_metrics.json"
    p.write_text(json.dumps(obj))
    store, _ = _load(p)
    pub = _metrics(store)
    assert pub[("ttft_ms", "p99")] == pytest.approx(100.0)
    assert pub[("e2e_ms", "mean")] == pytest.approx(2000.0)        # not the failures' 9 s
    assert pub[("tpot_ms", "median")] == pytest.approx(10.0)
    assert pub[("itl_ms", "p90")] == pytest.approx(13.5)
    assert pub[("requests", "completed")] == 118 and pub[("requests", "failed")] == 2
    assert pub[("requests", "total")] == 120
    assert pub[("output_throughput", "value")] == 900.0
    assert pub[("prompt_tokens", "mean")] == 512


def test_trtllm_bench_printed_report(tmp_path):
    p = tmp_path / "trtllm_throughput.txt"
    p.write_text("[12/01/2025-10:00:00] [TRT-LLM] [I] \n"
                 "===========================================================\n"
                 "= PERFORMANCE OVERVIEW\n"
                 "===========================================================\n"
                 "Request Throughput (req/sec):                     12.5000\n"
                 "Total Output Throughput (tokens/sec):             3200.0000\n"
                 "Total Latency (ms):                               80000.0000\n"
                 "Average request latency (ms):                     6400.0000\n"
                 "Average time-to-first-token [TTFT] (ms):          150.0000\n"
                 "Average time-per-output-token [TPOT] (ms):        24.0000\n"
                 "-- Request Latency Breakdown (ms) -----------------------\n"
                 "[Latency] P50    : 6300.0000\n"
                 "[Latency] P99    : 7100.0000\n"
                 "[TTFT] P99       : 310.0000\n")
    store, _ = _load(p)
    pub = _metrics(store)
    assert pub[("request_throughput", "value")] == 12.5
    assert pub[("output_throughput", "value")] == 3200.0
    assert pub[("duration_s", "value")] == 80.0
    assert pub[("ttft_ms", "mean")] == 150.0 and pub[("tpot_ms", "mean")] == 24.0
    assert pub[("e2e_ms", "p99")] == 7100.0 and pub[("ttft_ms", "p99")] == 310.0


def test_mlperf_loadgen_summary(tmp_path):
    p = tmp_path / "mlperf_log_summary.txt"
    p.write_text("================================================\n"
                 "MLPerf Results Summary\n"
                 "================================================\n"
                 "SUT name : my-sut\nScenario : Server\nMode     : PerformanceOnly\n"
                 "Completed samples per second    : 41.50\n"
                 "Result is : VALID\n\n"
                 "================================================\nAdditional Stats\n"
                 "================================================\n"
                 "Min latency (ns)                : 1200000000\n"
                 "Mean latency (ns)               : 2500000000\n"
                 "99.00 percentile latency (ns)   : 4100000000\n"
                 "Mean First Token latency (ns)   : 300000000\n"
                 "99.00 percentile first token latency (ns) : 710000000\n\n"
                 "================================================\nTest Parameters Used\n"
                 "================================================\ntarget_qps : 42\n")
    store, rep = _load(p)
    pub = _metrics(store)
    assert pub[("request_throughput", "value")] == 41.5
    assert pub[("e2e_ms", "mean")] == pytest.approx(2500.0)
    assert pub[("e2e_ms", "p99")] == pytest.approx(4100.0)
    assert pub[("ttft_ms", "p99")] == pytest.approx(710.0)
    cfg = _config(store, rep.run_ids[0])
    assert cfg["model"] == "my-sut" and cfg["scenario"] == "Server" and cfg["request_rate"] == 42


def test_lmdeploy_profile_throughput_tuples(tmp_path):
    p = tmp_path / "lmdeploy.txt"
    p.write_text("--------------------------------------------------\n"
                 "concurrency: 64\nelapsed_time: 120.500s\n\n"
                 "first token latency(s)(min, max, ave): 0.050, 2.100, 0.420\n"
                 "per-token latency(s) percentile(50, 75, 95, 99): [0.021, 0.025, 0.031, 0.040]\n\n"
                 "token throughput (completion token): 2345.678 token/s\n"
                 "RPS (request per second): 9.870 req/s\n"
                 "--------------------------------------------------\n")
    store, rep = _load(p)
    pub = _metrics(store)
    assert pub[("ttft_ms", "max")] == pytest.approx(2100.0)
    assert pub[("ttft_ms", "mean")] == pytest.approx(420.0)
    assert pub[("tpot_ms", "p99")] == pytest.approx(40.0)
    assert pub[("output_throughput", "value")] == pytest.approx(2345.678)
    assert pub[("request_throughput", "value")] == pytest.approx(9.87)
    assert pub[("duration_s", "value")] == pytest.approx(120.5)
    assert _config(store, rep.run_ids[0])["concurrency"] == 64


def test_tgi_benchmark_table_is_one_run_per_batch_size(tmp_path):
    p = tmp_path / "tgi.md"
    p.write_text("| Step           | Batch Size | Average   | Lowest    | Highest   | p50       | p90       | p99       |\n"
                 "|----------------|------------|-----------|-----------|-----------|-----------|-----------|-----------|\n"
                 "| Prefill        | 1          | 20.50 ms  | 19.00 ms  | 25.00 ms  | 20.00 ms  | 22.00 ms  | 24.50 ms  |\n"
                 "| Decode (token) | 1          | 9.50 ms   | 9.00 ms   | 11.00 ms  | 9.40 ms   | 9.90 ms   | 10.80 ms  |\n"
                 "| Prefill        | 8          | 60.00 ms  | 55.00 ms  | 70.00 ms  | 59.00 ms  | 66.00 ms  | 69.00 ms  |\n"
                 "\n"
                 "| Step    | Batch Size | Average           | Lowest            | Highest           |\n"
                 "|---------|------------|-------------------|-------------------|-------------------|\n"
                 "| Prefill | 1          | 48.78 tokens/secs | 40.00 tokens/secs | 52.63 tokens/secs |\n")
    store, rep = _load(p)
    assert len(rep.run_ids) == 2
    one, eight = (_metrics(store, r) for r in rep.run_ids)
    assert one[("prefill_ms", "mean")] == 20.5 and one[("tpot_ms", "p99")] == 10.8
    assert one[("prefill_throughput", "mean")] == 48.78
    assert eight[("prefill_ms", "p90")] == 66.0
    assert _config(store, rep.run_ids[1])["batch_size"] == 8


def test_aisbench_fancy_grid_tables(tmp_path):
    """AISBench's two printed tables (ais_bench/benchmark/calculators/base_perf_metric_calculator
    .py: Performance Parameters | Stage | Average ... | N, values with " ms"; summarizers/
    default_perf.py: Common Metric | Stage | Value, tabulate fancy_grid); our numbers."""
    p = tmp_path / "aisbench_perf.txt"
    p.write_text("╒══════════════════════════╤═════════╤═══════════╤═══════════╤═══════════╤═══════════╤═════╕\n"
                 "│ Performance Parameters   │ Stage   │ Average   │ Min       │ Max       │ P99       │ N   │\n"
                 "╞══════════════════════════╪═════════╪═══════════╪═══════════╪═══════════╪═══════════╪═════╡\n"
                 "│ E2EL                     │ total   │ 2048.2 ms │ 1000.0 ms │ 4000.0 ms │ 3900.5 ms │ 100 │\n"
                 "├──────────────────────────┼─────────┼───────────┼───────────┼───────────┼───────────┼─────┤\n"
                 "│ TTFT                     │ total   │ 51.3 ms   │ 20.0 ms   │ 120.0 ms  │ 110.2 ms  │ 100 │\n"
                 "│ TPOT                     │ total   │ 19.8 ms   │ 10.0 ms   │ 30.0 ms   │ 28.4 ms   │ 100 │\n"
                 "│ OutputTokenThroughput    │ total   │ 50.5 token/s │ 40.0 token/s │ 60.0 token/s │ 59.0 token/s │ 100 │\n"
                 "╘══════════════════════════╧═════════╧═══════════╧═══════════╧═══════════╧═══════════╧═════╛\n"
                 "\n"
                 "╒══════════════════════╤═════════╤═════════════╕\n"
                 "│ Common Metric        │ Stage   │ Value       │\n"
                 "╞══════════════════════╪═════════╪═════════════╡\n"
                 "│ Benchmark Duration   │ total   │ 65000.0 ms  │\n"
                 "│ Total Requests       │ total   │ 100         │\n"
                 "│ Failed Requests      │ total   │ 2           │\n"
                 "│ Max Concurrency      │ total   │ 16          │\n"
                 "│ Request Throughput   │ total   │ 3.1 req/s   │\n"
                 "╘══════════════════════╧═════════╧═════════════╛\n")
    store, rep = _load(p)
    assert len(rep.run_ids) == 1  # the N column is no run setting
    pub = _metrics(store)
    assert pub[("e2e_ms", "mean")] == 2048.2 and pub[("ttft_ms", "p99")] == 110.2
    assert pub[("tpot_ms", "max")] == 30.0 and pub[("output_throughput_per_user", "mean")] == 50.5
    assert pub[("duration_s", "value")] == 65.0 and pub[("request_throughput", "value")] == 3.1
    assert pub[("requests", "total")] == 100 and pub[("requests", "failed")] == 2
    assert ("concurrency", "max") not in pub and ("concurrency", "value") not in pub


def test_chinese_statistic_and_metric_headers(tmp_path):
    """The vocabulary's Chinese spellings (平均值 / 最大值 / 首Token时延 ...) in a Markdown table."""
    p = tmp_path / "aisbench_zh.md"
    p.write_text("| 指标 | 平均值 | 最大值 | P99 |\n|---|---|---|---|\n"
                 "| 首Token时延 (ms) | 51.3 | 120.0 | 110.2 |\n| 端到端时延 (ms) | 2048.2 | 4000 | 3900.5 |\n"
                 "\nPerformance Parameters\n")
    store, _ = _load(p)
    pub = _metrics(store)
    assert pub[("ttft_ms", "mean")] == 51.3 and pub[("ttft_ms", "max")] == 120.0
    assert pub[("e2e_ms", "p99")] == 3900.5


def test_lm_eval_results_real_file_one_run_per_task():
    path = next(iter(sorted((REAL / "every_eval_ever").glob("results_*.json"))), None)
    if path is None:
        pytest.skip("every_eval_ever missing")
    raw = json.loads(path.read_text())
    store, rep = _load(path)
    assert len(rep.run_ids) == len(raw["results"])
    for run_id, (task, res) in zip(rep.run_ids, raw["results"].items()):
        pub = _metrics(store, run_id)
        for key, value in res.items():
            if "," in key and isinstance(value, (int, float)) and key.split(",")[0] in (
                    "exact_match", "exact_match_stderr"):
                stat = ("stderr@" if "stderr" in key else "value@") + key.split(",", 1)[1]
                assert pub[("accuracy", stat)] == pytest.approx(value), (task, key)


def test_a_tool_added_by_a_vocabulary_entry_alone(tmp_path, monkeypatch):
    """A new tool (a made-up `bench9000`) that writes known names in a known structure is read
    after one [tool.*] entry, written as TOML like the vocabulary file, and no code."""
    import tomllib
    entry = tomllib.loads('''
[tool.bench9000]
files = ["b9k_report.json"]
markers = ['"b9k_version"']
structure = "tree"
runs = "results"
benchmark = "bench9000"
[tool.bench9000.units]
e2e_ms = "s"
[tool.bench9000.config]
concurrency = ["load.users"]
''')["tool"]
    monkeypatch.setitem(_vocab.TOOLS, "bench9000", entry["bench9000"])
    p = tmp_path / "b9k_report.json"
    p.write_text(json.dumps({"b9k_version": "1", "results": [
        {"load": {"users": 16}, "ttft": {"avg": 33.0, "p99": 70.0},
         "e2e_latency": {"median": 1.25}, "request_throughput": 7.0}]}))
    assert detect_format(p).NAME == "published"
    store, rep = _load(p)
    pub = _metrics(store)
    assert pub == {("ttft_ms", "mean"): 33.0, ("ttft_ms", "p99"): 70.0,
                   ("e2e_ms", "median"): 1250.0, ("request_throughput", "value"): 7.0}
    assert _config(store, rep.run_ids[0])["concurrency"] == 16
    monkeypatch.delitem(_vocab.TOOLS, "bench9000")
    assert detect_format.__module__ and Store().load_file(p).error  # without the entry: unread


def test_llmperf_summary_is_its_runs_published_numbers_and_every_one_is_recomputed():
    """LLMPerf's summary/<name>.json (its own aggregates) loads with individual/<name>.json:
    all 19 leaderboard runs' TTFT / TPOT / E2E statistics and counts are reproduced from the
    requests (its stddev is the sample standard deviation, ddof 1: std_sample)."""
    folder = REAL / "llmperf_leaderboard"
    if not folder.is_dir():
        pytest.skip("llmperf_leaderboard missing")
    from explorer.core.runs import overview
    store = Store()
    reps = store.load_paths([folder])
    assert {r.format for r in reps if not r.skipped_file} == {"llmperf"}
    assert sum(1 for r in reps if r.skipped_file and "individual" in r.skipped_file) == 19
    checked = 0
    for run in overview(store):
        for x in run["recomputed"]:
            assert x["recomputed"] == pytest.approx(x["published"], rel=1e-9, abs=1e-9), \
                (run["label"], x)
            checked += 1
    stats = {(x["metric"], x["stat"]) for run in overview(store) for x in run["recomputed"]}
    assert {("ttft_ms", "p99"), ("tpot_ms", "std_sample"), ("e2e_ms", "mean"),
            ("requests", "completed")} <= stats
    # the measured token counts (results_number_output_tokens_*), not the requested
    # mean_output_tokens / stddev_output_tokens settings, are its published token statistics
    assert {("completion_tokens", "mean"), ("completion_tokens", "std_sample"),
            ("prompt_tokens", "p50")} <= stats
    assert checked >= 19 * 30


def test_guidellm_csv_multirow_header_one_run_per_benchmark(tmp_path):
    """GuideLLM's benchmarks.csv (outputs/csv.py: three header rows, a 'Percentiles' cell
    listing min, p0.1 ... p99, max; errored / incomplete columns passed over); our numbers."""
    import csv as _csv
    heads = [("Benchmark", "Strategy", ""), ("Request Counts", "Successful", ""),
             ("Timings", "Duration", "Sec"),
             ("Time to First Token", "Successful ms", "Mean"),
             ("Time to First Token", "Successful ms", "Median"),
             ("Time to First Token", "Successful ms", "Percentiles"),
             ("Time to First Token", "Errored ms", "Mean"),
             ("Inter Token Latency", "Successful ms", "Mean"),
             ("Request Latency", "Successful Sec", "Mean"),
             ("Server Throughput", "Successful Requests/Sec", "Mean"),
             ("Token Throughput", "Successful Output Tokens/Sec", "Mean")]
    pct = "[10.0, 11.0, 12.0, 13.0, 14.0, 20.0, 40.0, 50.0, 55.0, 70.0, 90.0]"
    rows = [["constant", 30, 60.0, 31.5, 30.0, pct, 999.0, 6.5, 1.25, 0.5, 250.0],
            ["constant", 60, 60.0, 45.0, 44.0, pct, 999.0, 7.5, 2.5, 1.0, 480.0]]
    p = tmp_path / "benchmarks.csv"
    with open(p, "w", newline="") as fh:
        w = _csv.writer(fh)
        for level in range(3):
            w.writerow([h[level] for h in heads])
        w.writerows(rows)
    store, rep = _load(p)
    assert len(rep.run_ids) == 2
    first, second = (_metrics(store, r) for r in rep.run_ids)
    assert first[("ttft_ms", "mean")] == 31.5 and first[("ttft_ms", "p99")] == 70.0
    assert first[("ttft_ms", "p0.1")] == 11.0 and first[("ttft_ms", "max")] == 90.0
    assert first[("tpot_ms", "mean")] == 6.5 and first[("requests", "completed")] == 30
    assert second[("e2e_ms", "mean")] == pytest.approx(2500.0)
    assert second[("request_throughput", "mean")] == 1.0
    assert second[("output_throughput", "mean")] == 480.0
    assert 999.0 not in first.values()  # the errored requests' TTFT is not the run's
    assert first[("duration_s", "value")] == 60.0
    assert _config(store, rep.run_ids[0])["scenario"] == "constant"


def _review(i, acc, latency, ttft, out_tokens):
    tpot = (latency - ttft) / (out_tokens - 1)
    return {"index": i, "target": str(i), "messages": [
        {"id": f"u{i}", "role": "user", "content": f"question {i}", "perf_metrics": None},
        {"id": f"a{i}", "role": "assistant", "content": "...", "model": "my-model",
         "perf_metrics": {"latency": latency, "ttft": ttft, "input_tokens": 100 + i,
                          "output_tokens": out_tokens, "tpot": tpot}}],
        "sample_score": {"score": {"value": {"acc": acc}, "extracted_prediction": str(i),
                                   "main_score_name": None}, "sample_id": i}}


def test_evalscope_reviews_are_cases_and_requests_bound_exactly(tmp_path):
    """evalscope's reviews/<model>/<dataset>_<subset>.jsonl (modelscope/evalscope examples/viz,
    perf_metrics in seconds): each sample is a case and its own request; our numbers."""
    from explorer.core import pipeline
    d = tmp_path / "reviews" / "my-model"
    d.mkdir(parents=True)
    recs = [_review(1, 1.0, 2.0, 0.5, 31), _review(2, 0.0, 4.0, 1.0, 61),
            _review(3, 1.0, 1.0, 0.25, 16)]
    p = d / "gsm8k_main.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    store = Store()
    rep = store.load_file(p)
    assert rep.error is None and rep.format == "evalscope"
    assert len(rep.run_ids) == 1 and len(rep.eval_ids) == 1
    req = store.df("SELECT request_id, e2e_ms, ttft_ms, tpot_ms, completion_tokens FROM requests "
                   "ORDER BY request_id")
    assert req["e2e_ms"].tolist() == [2000.0, 4000.0, 1000.0]
    assert req["tpot_ms"].tolist() == pytest.approx([50.0, 50.0, 50.0])
    cases = store.df("SELECT request_id, correct FROM cases ORDER BY request_id")
    assert cases["correct"].tolist() == [True, False, True]
    pipeline.prepare(store)
    links = store.df("SELECT c.request_id AS case_req, l.request_id, l.level FROM case_links l "
                     "JOIN cases c USING (case_id) ORDER BY 1")
    assert (links["case_req"] == links["request_id"]).all() and len(links) == 3
    assert set(links["level"]) == {1}


def test_evalscope_report_json(tmp_path):
    """evalscope's reports/<model>/<dataset>.json (evalscope/report/report.py Report: name,
    dataset_name, model_name, score, metrics [...]); our numbers."""
    p = tmp_path / "gsm8k.json"
    p.write_text(json.dumps({"name": "my-model@gsm8k", "dataset_name": "gsm8k",
                             "model_name": "my-model", "score": 0.75,
                             "metrics": [{"name": "mean_acc", "num": 4, "score": 0.75}]}))
    store, rep = _load(p)
    assert _metrics(store)[("accuracy", "value")] == 0.75
    cfg = _config(store, rep.run_ids[0])
    assert cfg["model"] == "my-model" and cfg["dataset"] == "gsm8k"


def test_vllm_log_with_bare_carriage_return_progress_lines(tmp_path):
    """An offline vLLM log whose tqdm progress lines end in bare CRs (no newline) before and
    after the stat lines: every stat line is read, none is lost to the progress text."""
    stat = ("INFO 05-12 10:00:{ss} metrics.py:341] Avg prompt throughput: 512.0 tokens/s, Avg "
            "generation throughput: {gen} tokens/s, Running: 8 reqs, Swapped: 0 reqs, Pending: 2 "
            "reqs, GPU KV cache usage: 41.5%, CPU KV cache usage: 0.0%.")
    prog = "".join(f"Processed prompts:  {i * 10}%| {i * 5}/50 [00:0{i}<00:10, est. speed input: "
                   f"2491.51 toks/s, output: 1143.60 toks/s]\r" for i in range(1, 8))
    p = tmp_path / "offline.log"
    with open(p, "w", newline="") as fh:
        fh.write(prog + stat.format(ss="00", gen=240.5) + "\r" + prog +
                 stat.format(ss="05", gen=250.0) + "\r" + prog + "\n")
    store = Store()
    r = store.load_file(p)
    assert r.error is None and r.format == "vllm_log" and r.rows_loaded == 2
    got = store.df("SELECT ts_s, gen_tps, waiting FROM engine_stats ORDER BY ts_s")
    assert got["gen_tps"].tolist() == [240.5, 250.0] and got["ts_s"].tolist() == [0.0, 5.0]


def test_per_request_records_with_shared_names_stay_request_tables(tmp_path):
    """A per-request JSONL or JSON list using GenAI-Perf's metric names is no aggregate file:
    the structural readers leave it to the request tables."""
    from explorer.core.formats import rank_formats
    p = tmp_path / "requests.jsonl"
    p.write_text('{"request_id": "a", "time_to_first_token": 0.1, "request_latency": 1.2}\n'
                 '{"request_id": "b", "time_to_first_token": 0.2, "request_latency": 1.5}\n')
    assert {n: s for s, n in rank_formats(p)}["published"] == 0.0
    store = Store()
    r = store.load_file(p)
    assert r.format == "generic_table" and r.rows_loaded == 2


def test_inspect_prints_the_published_numbers_and_the_recomputation(tmp_path, capsys):
    """`inspect` on an aggregates-only file prints its published numbers; on AIPerf's folder
    (per-request file + aggregates) the recomputation stands beside them."""
    from explorer.__main__ import main
    p = tmp_path / "mlperf_log_summary.txt"
    p.write_text("MLPerf Results Summary\nSUT name : my-sut\n"
                 "Completed samples per second    : 41.50\n"
                 "99.00 percentile latency (ns)   : 4100000000\n")
    assert main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out
    assert "published" in out and "4,100.00 ms" in out and "41.50 req/s" in out
    if not AIPERF_DIR.is_dir():
        return
    assert main(["inspect", str(AIPERF_DIR)]) == 0
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.strip().startswith("ttft_ms p99"))
    assert row.count("3,833.39 ms") == 2  # published and recomputed, side by side


AIPERF_DIR = REAL / "aiperf_example"


def test_a_trace_format_added_by_a_records_entry_alone(tmp_path, monkeypatch):
    """A per-request CSV with fixed columns (a made-up `trace9000`) is read after one
    [records.*] entry and no module: its rows, scales, clock and skip reasons as specified."""
    import tomllib
    from explorer.core import formats
    entry = tomllib.loads('''
[records.trace9000]
kind = "csv"
require = ["t_ms", "in_tok", "out_tok", "lat_s"]
confidence = [0.9, 0.9]
required = ["arrival_s"]
fields = {arrival_s = ["t_ms", 0.001], prompt_tokens = ["in_tok"], completion_tokens = ["out_tok"], e2e_ms = ["lat_s", 1000.0]}
columns = {lat_s = "e2e_ms (x1000)"}
''')["records"]
    monkeypatch.setitem(_vocab.VOCAB.setdefault("records", {}), "trace9000", entry["trace9000"])
    formats.all_formats.cache_clear()
    p = tmp_path / "t9k.csv"
    p.write_text("t_ms,in_tok,out_tok,lat_s\n1500,10,5,0.25\n,3,3,1\n2500,-4,5,0.5\n3000,7,2,2\n")
    try:
        assert detect_format(p).NAME == "trace9000"
        store = Store()
        rep = store.load_file(p)
        assert rep.format == "trace9000" and rep.error is None and rep.rows_loaded == 2
        assert rep.skipped_reasons == ["line 3: field 't_ms': missing",
                                       "line 4: field 'in_tok': negative value: -4"]
        got = store.df("SELECT request_id, arrival_s, prompt_tokens, completion_tokens, e2e_ms "
                       "FROM requests ORDER BY arrival_s")
        assert got.values.tolist() == [["1", 1.5, 10, 5, 250.0], ["4", 3.0, 7, 2, 2000.0]]
    finally:
        monkeypatch.undo()
        formats.all_formats.cache_clear()
    assert Store().load_file(p).format != "trace9000"  # without the entry: not this format
