"""Cancel is cooperative (a Python thread cannot be killed from outside): each kind of long
work polls cancelled() and stops itself. Here the latency of the two that were slowest: a
load of one large file (DuckDB's scan is interrupted: before, a Cancel waited for the whole
file) and a replay (the engine polls every 1,024 loops). docs/faults.md has the figures."""
import time

import pytest

from explorer.core.errors import Cancelled
from explorer.core.inputfiles import LOAD_CANCELLED

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    import duckdb
    p = tmp_path_factory.mktemp("big") / "big_trace.csv"
    duckdb.connect().execute(
        f"COPY (SELECT i::VARCHAR AS request_id, i / 1000.0 AS arrival_time, "
        f"10 + i % 3000 AS input_tokens, 1 + i % 700 AS output_tokens, "
        f"50 + (i * 7919) % 500 AS ttft_ms, 5 + (i * 104729) % 40 AS tpot_ms "
        f"FROM range(2000000) t(i)) TO '{p}' (HEADER)")
    return p


def test_a_cancel_stops_the_scan_of_a_large_file_promptly(big_csv, tmp_path):
    from explorer.core.store import Store
    store = Store()
    try:
        flip = [float("inf")]
        started = time.monotonic()
        flip[0] = started + 0.8
        reports = store.load_paths([big_csv], cancelled=lambda: time.monotonic() >= flip[0])
        latency = time.monotonic() - flip[0]
        if latency < 0:
            pytest.skip("the file loaded before the cancel")
        assert reports[0].error and reports[0].error.endswith(LOAD_CANCELLED), reports[0].error
        assert store.count("requests") == 0  # nothing of it kept
        assert latency < 2.0, latency  # before: the whole scan (5-11 s here)
        small = tmp_path / "small.csv"
        small.write_text("request_id,arrival_time,input_tokens,output_tokens,ttft_ms,tpot_ms\n"
                         "a,0,10,2,50,5\nb,1,12,3,60,6\n")
        r = store.load_paths([small])[0]  # the connection is usable after the interrupt
        assert r.error is None and store.count("requests") == 2, r.error
    finally:
        store.close()


def test_a_replay_stops_within_a_fraction_of_a_second(real):
    from explorer.core.replay.engine import simulate
    from explorer.core.replay.io import requests_from_store
    from explorer.core.replay.model import EngineConfig
    from explorer.core.store import Store
    store = Store()
    store.load_file(real / "mooncake" / "conversation_trace.jsonl")
    run = store.df("SELECT DISTINCT run_id FROM requests")["run_id"][0]
    trace = requests_from_store(store, run)
    store.close()
    at = time.monotonic() + 0.5
    with pytest.raises(Cancelled):
        simulate(trace, EngineConfig(), cancelled=lambda: time.monotonic() >= at,
                 record_events=False)
    assert time.monotonic() - at < 1.0
