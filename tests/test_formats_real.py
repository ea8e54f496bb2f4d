"""Every trace file of ../shared/data/real loads, and the numbers match independent readings of
the raw files (numpy straight from the JSON / CSV) or the tools' own published aggregates."""
from __future__ import annotations

import csv
import json
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from explorer.core.formats import detect_format
from explorer.core.store import Store, sha256_of

# Files in ../shared/data/real that are not traces: licences and notes, aggregate summaries
# (the oracles), the autoscaling experiment's side files, the eval files (engineer E), and the
# published/ artefacts (results, logs, scrapes: each has its own test against its published numbers).
NOT_TRACES = re.compile(
    r"(LICENSE|SOURCES\.md$|^published/|/summary/|profile_export_aiperf\.(json|csv)$|pod_count\.csv$|"
    r"performance_stats\.txt$|every_eval_ever/|gsm8k_model_solutions/|mmlu_pro_outputs/)")


def trace_files(real: Path) -> list[Path]:
    return [p for p in sorted(real.rglob("*")) if p.is_file()
            and not NOT_TRACES.search(p.relative_to(real).as_posix())]


@pytest.fixture(scope="module")
def loaded(real):
    """All real trace files loaded into one store: (store, {relative path: LoadReport})."""
    store = Store()
    before = {p: sha256_of(p) for p in trace_files(real)}
    reports = {p.relative_to(real).as_posix(): store.load_file(p) for p in before}
    after = {p: sha256_of(p) for p in before}
    yield store, reports, before, after
    store.close()


def test_every_real_trace_file_loads(loaded, real):
    store, reports, before, after = loaded
    assert len(reports) > 150  # 132 aibrix CSVs, 19 LLMPerf, ... (the walk found them)
    for rel, r in reports.items():
        assert r.error is None, rel
        assert r.kind in ("trace", "stats"), rel
        assert r.rows_loaded > 0 and r.run_ids and r.columns, rel
    assert before == after  # inputs unchanged


def test_run_rows_carry_provenance(loaded):
    store, reports, *_ = loaded
    runs = store.df("SELECT run_id, source_path, source_sha256, format FROM runs")
    assert len(runs) == sum(len(r.run_ids) for r in reports.values())
    assert runs["source_sha256"].str.len().eq(64).all()
    assert store.count("inputs") == len(reports)


def _rows(store, run_id, cols="*", where=""):
    return store.df(f"SELECT {cols} FROM requests WHERE run_id = ? {where} "
                    "ORDER BY TRY_CAST(request_id AS INTEGER), request_id", [run_id])


def test_llmperf_rows_match_raw_json(loaded, real):
    store, reports, *_ = loaded
    for f in sorted((real / "llmperf_leaderboard" / "individual").glob("*.json")):
        raw = json.loads(f.read_text())
        r = reports[f.relative_to(real).as_posix()]
        assert r.format == "llmperf" and r.rows_loaded == len(raw)
        df = _rows(store, r.run_ids[0], "ttft_ms, error")
        ok = np.array([x["error_code"] is None for x in raw])
        assert (df["error"].isna().to_numpy() == ok).all()
        np.testing.assert_allclose(df["ttft_ms"][ok].to_numpy(),
                                   [x["ttft_s"] * 1000 for x, k in zip(raw, ok) if k], rtol=1e-12)
    model = store.df("SELECT model FROM runs WHERE run_id = 'llmperf:anyscale_13b'")["model"][0]
    assert model == "meta-llama/Llama-2-13b-chat-hf"  # from the matching summary file


def test_aiperf_per_token_and_events_match_raw(loaded, real):
    store, reports, *_ = loaded
    r = reports["aiperf_example/profile_export.jsonl"]
    recs = [json.loads(ln) for ln in (real / "aiperf_example/profile_export.jsonl").open()]
    n_itl = sum(len(x["metrics"]["inter_chunk_latency"]["value"]) for x in recs
                if "inter_chunk_latency" in x["metrics"])
    run = r.run_ids[0]
    assert store.execute("SELECT count(*) FROM token_latencies WHERE run_id = ?", [run]).fetchall()[0][0] == n_itl
    assert store.execute("SELECT count(*) FROM requests WHERE run_id = ? AND error IS NOT NULL",
                         [run]).fetchall()[0][0] == sum(x.get("error") is not None for x in recs)
    first = next(x for x in recs if "ttft" in x["metrics"])
    rid = first["metadata"]["x_request_id"]
    ev = dict(store.execute("SELECT kind, ts_s FROM request_events WHERE run_id = ? AND request_id = ?",
                            [run, rid]).fetchall())
    t0 = first["metadata"]["timestamp_ns"] / 1e9
    assert ev["arrived"] == pytest.approx(t0)
    assert ev["first_token"] - t0 == pytest.approx(first["metrics"]["ttft"]["value"] / 1000)
    assert ev["finished"] - t0 == pytest.approx(first["metrics"]["request_latency"]["value"] / 1000)
    assert store.df("SELECT model FROM runs WHERE run_id = ?", [run])["model"][0] == "openai/gpt-oss-20b"


def test_sglang_bench_one_batch_rows_and_skipped_text_lines(loaded, real):
    store, reports, *_ = loaded
    r = reports["sglang_bench_one_batch/result_bs1_128.jsonl"]
    lines = (real / "sglang_bench_one_batch/result_bs1_128.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines if x.strip().startswith("{")]
    text = [(i + 1, x.strip()) for i, x in enumerate(lines) if x.strip() and not x.strip().startswith("{")]
    assert r.rows_loaded == len(rows) and r.rows_skipped == len(text) == 2
    assert all(f"line {no}:" in why and t in why for (no, t), why in zip(text, r.skipped_reasons))
    df = store.df("SELECT tpot_ms, prefill_ms, batch_size, prompt_tokens, extra FROM requests "
                  "WHERE run_id = ?", [r.run_ids[0]])
    np.testing.assert_allclose(sorted(df["tpot_ms"]), sorted(x["median_decode_latency"] * 1000 for x in rows))
    np.testing.assert_allclose(sorted(df["batch_size"]), sorted(x["batch_size"] for x in rows))
    assert json.loads(df["extra"][0])["run_name"] == "test_run"
    assert {json.loads(e)["group"] for e in df["extra"]} == {"torch", "te"}


def test_mooncake_keeps_hash_ids_and_ms_timestamps(loaded, real):
    store, reports, *_ = loaded
    f = real / "mooncake/synthetic_trace.jsonl"
    raw = [json.loads(x) for x in f.open()]
    run = reports["mooncake/synthetic_trace.jsonl"].run_ids[0]
    df = _rows(store, run, "arrival_s, prompt_tokens, extra")
    assert len(df) == len(raw)
    np.testing.assert_allclose(df["arrival_s"], [x["timestamp"] / 1000 for x in raw])
    assert json.loads(df["extra"][7])["hash_ids"] == raw[7]["hash_ids"]


def test_azure_arrivals_relative_to_first_row(loaded, real):
    store, reports, *_ = loaded
    f = real / "azure_llm_2023/AzureLLMInferenceTrace_conv.csv"
    with f.open() as fh:
        raw = list(csv.DictReader(fh))
    ts = [datetime.strptime(x["TIMESTAMP"][:26], "%Y-%m-%d %H:%M:%S.%f") for x in raw]
    run = reports["azure_llm_2023/AzureLLMInferenceTrace_conv.csv"].run_ids[0]
    df = _rows(store, run, "arrival_s, prompt_tokens, completion_tokens")
    t0 = min(ts)
    np.testing.assert_allclose(df["arrival_s"], [(t - t0).total_seconds() for t in ts], atol=1e-6)
    assert df["prompt_tokens"].tolist() == [int(x["ContextTokens"]) for x in raw]


def test_aibrix_csv_release_rate_and_tpot(loaded, real):
    store, reports, *_ = loaded
    rel = "aibrix/ps_experiment_v0.3.0_20250519/aibrix_naive_output_2.5.csv"
    r = reports[rel]
    run = store.df("SELECT * FROM runs WHERE run_id = ?", [r.run_ids[0]]).iloc[0]
    assert run["engine_version"] == "0.3.0"
    assert json.loads(run["config"]) == {"config": "aibrix_naive", "request_rate_qps": 2.5}
    with (real / rel).open() as fh:
        raw = list(csv.DictReader(fh))
    df = store.df("SELECT request_id, ttft_ms, tpot_ms, tenant FROM requests WHERE run_id = ?",
                  [r.run_ids[0]]).set_index("request_id")
    for x in raw[:20]:
        row = df.loc[f"u{x['user_id']}-q{x['question_id']}"]
        assert row["ttft_ms"] == pytest.approx(float(x["ttft"]) * 1000)
        gen = float(x["generation_tokens"])
        assert row["tpot_ms"] == pytest.approx(float(x["generation_time"]) / (gen - 1) * 1000)
        assert row["tenant"] == x["user_id"]
    v021 = reports["aibrix/ps_experiment_v0.2.1_20250323/naive_output_0.5.csv"].run_ids[0]
    v030 = reports["aibrix/ps_experiment_v0.3.0_20250519/naive_output_0.5.csv"].run_ids[0]
    got = store.df("SELECT engine_version, benchmark FROM runs WHERE run_id IN (?, ?) "
                   "ORDER BY engine_version", [v021, v030])
    assert got["engine_version"].tolist() == ["0.2.1", "0.3.0"]
    assert got["benchmark"].nunique() == 1  # the same benchmark across the two releases


def test_aibrix_client_rows_without_ttft_stay_null(loaded, real):
    store, reports, *_ = loaded
    raw = [json.loads(x) for x in (real / "aibrix/client_output.jsonl").open()]
    df = _rows(store, reports["aibrix/client_output.jsonl"].run_ids[0], "ttft_ms, e2e_ms")
    assert len(df) == len(raw)
    assert df["ttft_ms"].isna().tolist() == ["ttft" not in x for x in raw]
    np.testing.assert_allclose(df["e2e_ms"], [x["latency"] * 1000 for x in raw])


def test_vllm_log_engine_stats(loaded, real):
    store, reports, *_ = loaded
    rel = "aibrix/autoscaling_apa_20250209/vllm_pod_rxgzd.log.txt"
    text = (real / rel).read_text()
    gpu = [float(x) / 100 for x in re.findall(r"GPU KV cache usage: ([\d.]+)%", text)]
    run = reports[rel].run_ids[0]
    s = store.df("SELECT * FROM engine_stats WHERE run_id = ? ORDER BY ts_s", [run])
    assert len(s) == len(gpu) == reports[rel].rows_loaded
    np.testing.assert_allclose(s["kv_usage_gpu"], gpu)
    assert s["ts_s"].iloc[0] == 0 and s["ts_s"].iloc[1] == 10  # 14:48:43 -> 14:48:53
    assert s["running"].max() == max(int(x) for x in re.findall(r"Running: (\d+) reqs", text))


def test_detected_by_content_not_extension(real, tmp_path):
    src = real / "llmperf_leaderboard/individual/groq_70b.json"
    for name in ("groq_70b.txt", "groq_70b"):
        (tmp_path / name).write_bytes(src.read_bytes())
        assert detect_format(tmp_path / name).NAME == "llmperf"
    odd = tmp_path / "trace.csv"  # a JSONL file with a misleading extension
    odd.write_bytes((real / "mooncake/synthetic_trace.jsonl").read_bytes())
    assert detect_format(odd).NAME == "mooncake"
