"""AIPerf's server_metrics_export.jsonl in completion order: overlapping scrapes reordered.

AIPerf's scrapes of /metrics overlap and each line's timestamp_ns is the first byte of its answer,
so a scrape the server rendered first can carry the later timestamp (CI saw the generation-token
counter's increase counted twice: the fall read as a restart). A fall between overlapping scrapes
keeps the earlier value; a fall between scrapes that did not overlap stays a restart.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core.store import Store

T0 = 1_796_000_000_000_000_000


def _request(i: int) -> dict:
    start = T0 + i * 10_000_000
    return {"metadata": {"x_request_id": f"r{i}", "conversation_id": f"s{i}", "turn_index": 0,
                         "request_start_ns": start, "request_end_ns": start + 50_000_000,
                         "benchmark_phase": "profiling", "was_cancelled": False},
            "metrics": {"time_to_first_token": {"value": 10.0, "unit": "ms"},
                        "request_latency": {"value": 50.0, "unit": "ms"},
                        "input_sequence_length": {"value": 32, "unit": "tokens"},
                        "output_sequence_length": {"value": 12, "unit": "tokens"}},
            "error": None}


def _scrape(sent_ms: float, answered_ms: float, generated: float) -> dict:
    lab = {"model_name": "m"}
    return {"endpoint_url": "http://127.0.0.1:1/metrics", "timestamp_ns": T0 + int(answered_ms * 1e6),
            "request_sent_ns": T0 + int(sent_ms * 1e6), "first_byte_ns": T0 + int(answered_ms * 1e6),
            "metrics": {"vllm:num_requests_running": [{"labels": lab, "value": 1.0}],
                        "vllm:generation_tokens": [{"labels": lab, "value": generated}]}}


def _load(tmp_path, scrapes):
    (tmp_path / "profile_export.jsonl").write_text(
        "".join(json.dumps(_request(i)) + "\n" for i in range(3)))
    (tmp_path / "server_metrics_export.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in scrapes))
    st = Store()
    st.load_paths([tmp_path / "profile_export.jsonl"])
    es = st.con.execute("SELECT ts_s, gen_tps FROM engine_stats ORDER BY ts_s").df()
    return float(np.nansum(es.gen_tps.to_numpy()[1:] * np.diff(es.ts_s.to_numpy())))


def test_overlapping_scrapes_in_completion_order_count_each_token_once(tmp_path):
    # file order = completion order; the 240 scrape was sent at 300 ms but answered at 305 ms,
    # after the 216 one sent at 290 ms got its first byte at 310 ms: by timestamp 240 then 216.
    lines = [_scrape(0, 1, 0.0), _scrape(100, 101, 96.0), _scrape(200, 201, 192.0),
             _scrape(300, 305, 240.0), _scrape(290, 310, 216.0), _scrape(400, 401, 240.0)]
    assert _load(tmp_path, lines) == pytest.approx(240.0, rel=1e-5)


def test_a_fall_between_scrapes_that_did_not_overlap_is_a_restart(tmp_path):
    # 0 -> 100, then the server restarts (counter 20 a second later), then 50: 100 + 20 + 30
    lines = [_scrape(0, 1, 0.0), _scrape(100, 101, 100.0), _scrape(1100, 1101, 20.0),
             _scrape(1200, 1201, 50.0)]
    assert _load(tmp_path, lines) == pytest.approx(150.0, rel=1e-5)
