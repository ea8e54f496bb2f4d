"""JSON NaN / Infinity literals (Python's json module and many exporters write them) in the
generic loaders: the row is skipped with its line and field, before any SQL stores it; so the
SLA, which judges what is stored, never counts a NaN as a miss."""
from __future__ import annotations

import json

import pytest

from explorer.core.analysis.sla import sla_attainment

pytestmark = pytest.mark.timeout(120)

GOOD = [  # (ttft_ms, tpot_ms): judged against TTFT <= 500 ms and TPOT <= 50 ms
    (120.0, 20.0), (480.0, 45.0), (650.0, 30.0), (90.0, 70.0), (300.0, 10.0)]
TRACE = "\n".join(
    [json.dumps({"request_id": f"g{i}", "ttft_ms": a, "tpot_ms": b, "e2e_ms": 1000.0 + i})
     for i, (a, b) in enumerate(GOOD[:2])]
    + ['{"request_id": "n1", "ttft_ms": NaN, "tpot_ms": 20.0, "e2e_ms": 900.0}',
       '{"request_id": "n2", "ttft_ms": 100.0, "tpot_ms": 20.0, "e2e_ms": Infinity}',
       '{"request_id": "n3", "ttft_ms": 100.0, "tpot_ms": -Infinity, "e2e_ms": 900.0}']
    + [json.dumps({"request_id": f"g{i}", "ttft_ms": a, "tpot_ms": b, "e2e_ms": 1000.0 + i})
       for i, (a, b) in enumerate(GOOD[2:], 2)]) + "\n"
REASONS = ["line 3: field 'ttft_ms': not a finite number: NaN",
           "line 4: field 'e2e_ms': not a finite number: inf",
           "line 5: field 'tpot_ms': not a finite number: -inf"]


def _check(report, header_lines: int = 0) -> None:
    assert report.error is None, report.error
    assert report.rows_loaded == len(GOOD) and report.rows_skipped == 3, report
    want = [r.replace(f"line {n}:", f"line {n + header_lines}:") for n, r in enumerate(REASONS, 3)]
    assert [r.lower() for r in report.skipped_reasons] == [r.lower() for r in want]


def test_a_jsonl_trace_skips_nan_and_infinity_with_line_and_field(tmp_path, store):
    f = tmp_path / "trace.jsonl"
    f.write_text(TRACE)
    _check(store.load_file(f))
    assert store.scalar("SELECT count(*) FROM requests WHERE request_id LIKE 'n%'") == 0
    assert store.scalar("SELECT bool_and(isfinite(ttft_ms) AND isfinite(tpot_ms) AND "
                        "isfinite(e2e_ms)) FROM requests") is True


def test_the_same_in_a_folder_of_several_such_files(tmp_path, store):
    """Files read together (a batch) skip the same lines as each file read alone."""
    d = tmp_path / "many"
    d.mkdir()
    for i in range(3):
        (d / f"t{i}.jsonl").write_text(TRACE.replace('"g', f'"f{i}g'))
    reports = store.load_paths([d])
    assert len(reports) == 3
    for r in reports:
        _check(r)


def test_sla_never_counts_a_nan_as_a_miss(tmp_path, store):
    """The same rows as JSONL literals and as CSV text (DuckDB reads 'NaN' as a NaN double)."""
    f = tmp_path / "trace.jsonl"
    f.write_text(TRACE)
    c = tmp_path / "trace.csv"
    c.write_text("request_id,ttft_ms,tpot_ms,e2e_ms\n" + "".join(
        f"{r['request_id']},{r['ttft_ms']},{r['tpot_ms']},{r['e2e_ms']}\n"
        for r in map(json.loads, TRACE.splitlines())))
    for r in store.load_paths([f, c]):
        _check(r, header_lines=1 if r.path == str(c) else 0)
    res = sla_attainment(store).to_dict()
    met = 2 * sum(a <= 500 and b <= 50 for a, b in GOOD)  # computed from the files' good rows
    assert res["attainment"]["n"] == 2 * len(GOOD) and res["attainment"]["n_met"] == met, res
    assert res["attainment"]["n_unjudged"] == 0
    assert res["attainment"]["share"] == pytest.approx(met / (2 * len(GOOD)))


def test_a_jsonl_eval_skips_an_infinite_timestamp_with_line_and_field(tmp_path, store):
    f = tmp_path / "eval.jsonl"
    f.write_text('{"case_id": "a", "correct": true, "timestamp_s": 1700000000}\n'
                 '{"case_id": "b", "correct": false, "timestamp_s": Infinity}\n'
                 '{"case_id": "c", "correct": true, "timestamp_s": 1700000002}\n')
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2 and r.rows_skipped == 1, r
    assert r.skipped_reasons[0].startswith("line 2: field 'timestamp_s': not a finite number")
