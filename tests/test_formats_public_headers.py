"""Per-request tables as public projects write them: the headers below are those of real tools
and experiment folders found in public repositories (each test says which); the rows are
written here. They must load through the alias table with the benchmarks' meanings: a failed
request keeps its error and no latency (its printed 0 is no measurement), a column named
like the canonical one wins over a synonym, and time-to-last-token is the E2E latency."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.core.store import Store


def _load(tmp_path, text: str):
    f = tmp_path / "requests.csv"
    f.write_text(text)
    s = Store()
    r = s.load_file(f)
    assert r.error is None and r.format == "generic_table", (r.format, r.error)
    return s, r, s.df("SELECT * FROM requests ORDER BY request_id")


def test_benchmark_client_export_with_success_flag(tmp_path):
    """A desktop OpenAI-compatible benchmark client's CSV export (a Tauri app's export_report:
    request_id,ttft_ms,tpot_avg_ms,e2e_ms,tokens,success,error; a failed request is written
    with 0.00 latencies)."""
    s, r, df = _load(tmp_path, "request_id,ttft_ms,tpot_avg_ms,e2e_ms,tokens,success,error\n"
                               "1,100.00,5.5000,200.00,3,true,\n"
                               "2,0.00,0.0000,0.00,0,false,timeout\n"
                               "3,120.00,4.2500,250.00,3,true,\n")
    assert r.columns["tpot_avg_ms"] == "tpot_ms"
    assert df["error"].tolist()[1] == "timeout" and df["error"].isna().tolist() == [True, False, True]
    for c in ("ttft_ms", "tpot_ms", "e2e_ms"):
        assert np.isnan(df[c][1])  # not 0: the mean TTFT is that of the 2 that succeeded
    assert s.scalar("SELECT avg(ttft_ms) FROM requests") == pytest.approx(110.0)


def test_success_false_without_an_error_column(tmp_path):
    _, r, df = _load(tmp_path, "request_id,ttft_ms,e2e_ms,success\na,10,90,1\nb,0,0,0\n")
    assert df["error"].isna().tolist() == [True, False] and df["error"][1] == "success = 0"
    assert df["ttft_ms"].isna().tolist() == [False, True]
    assert r.columns["success"].startswith("error")


def test_provider_benchmark_csv_with_status_and_error_type(tmp_path):
    """The CSV output of a multi-provider LLM latency benchmark (its design doc's example:
    timestamp,provider,model,request_id,ttft_ms,total_latency_ms,input_tokens,output_tokens,
    cost_usd,status,error_type)."""
    s, _, df = _load(
        tmp_path,
        "timestamp,provider,model,request_id,ttft_ms,total_latency_ms,input_tokens,output_tokens,"
        "cost_usd,status,error_type\n"
        "2024-01-15T10:00:00.123Z,p,m-1,req_001,456,3234,89,145,0.00152,success,\n"
        "2024-01-15T10:00:01.234Z,p,m-1,req_002,423,3156,92,142,0.00148,success,\n"
        "2024-01-15T10:00:02.000Z,p,m-1,req_003,0,0,90,0,0,error,rate_limit\n"
        "2024-01-15T10:00:03.000Z,p,m-1,req_004,0,0,90,0,0,error,\n")
    assert df["e2e_ms"].tolist()[:2] == [3234.0, 3156.0]
    assert df["error"].tolist()[2:] == ["rate_limit", "status = error"]
    assert df["error"].isna().tolist() == [True, True, False, False]
    assert df["ttft_ms"].isna().tolist() == [False, False, True, True]
    assert df["arrival_s"][1] - df["arrival_s"][0] == pytest.approx(1.111)
    assert s.scalar("SELECT model FROM runs") == "m-1"


def test_the_canonical_name_wins_over_a_synonym(tmp_path):
    """A scheduling study's per-request printout (request_id,ttft_ms,mean_tbt_ms,tpot_ms,
    queueing_delay_ms,prefill_time_ms,decode_time_ms,output_tokens): `tpot_ms` is TPOT even
    though `mean_tbt_ms` comes first; the queueing delay is queue_ms."""
    _, r, df = _load(tmp_path, "request_id,ttft_ms,mean_tbt_ms,tpot_ms,queueing_delay_ms,"
                               "prefill_time_ms,decode_time_ms,output_tokens\n"
                               "0,12.5,3.1,3.2,1.5,10.0,300.0,95\n1,14.5,3.3,3.4,2.5,11.0,320.0,97\n")
    assert df["tpot_ms"].tolist() == [3.2, 3.4] and df["queue_ms"].tolist() == [1.5, 2.5]
    assert r.columns["mean_tbt_ms"] == "extra"


def test_time_to_last_token_is_e2e(tmp_path):
    """A gateway-routing experiment's samples.csv (request_id,ttft_ms,ttlt_ms,output_tokens,
    baseline_service_ms,category,policy,profile,error)."""
    _, r, df = _load(tmp_path, "request_id,ttft_ms,ttlt_ms,output_tokens,baseline_service_ms,"
                               "category,policy,profile,error\n"
                               "r1,50,900,64,800,chat,fifo,mixed,\nr2,70,1200,80,1000,code,fifo,mixed,\n")
    assert r.columns["ttlt_ms"] == "e2e_ms" and df["e2e_ms"].tolist() == [900.0, 1200.0]
    assert df["error"].isna().all()
