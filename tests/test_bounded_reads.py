"""Reads of one file are bounded and cancellable: a record longer than MAX_RECORD_CHARS is
skipped without being held in memory (its line named), and Cancel stops a file while its lines
are being read, not only once it inserts (the FIFO cases, never opened, are in
test_fuzz_inputs.py)."""
from __future__ import annotations

import json

import pytest

from explorer.core.formats import base, generic_table

pytestmark = pytest.mark.timeout(120)


def _line(i: int) -> str:
    return json.dumps({"request_id": f"r{i}", "ttft_ms": 10.0 + i % 7, "e2e_ms": 100.0 + i}) + "\n"


def test_a_record_longer_than_the_bound_is_skipped_unread(tmp_path, store, monkeypatch):
    monkeypatch.setattr(base, "MAX_RECORD_CHARS", 1 << 20)
    f = tmp_path / "trace.jsonl"
    huge = json.dumps({"request_id": "huge", "ttft_ms": 1.0, "note": "x" * (3 << 20)}) + "\n"
    f.write_text(_line(0) + huge + _line(2) + '{"request_id": "tail", "ttft_ms": 2.0, "note": "'
                 + "y" * (2 << 20))  # the last line has no end: the file ends inside it
    r = store.load_file(f)
    assert r.error is None and r.rows_loaded == 2 and r.rows_skipped == 2, r
    assert r.skipped_reasons == ["line 2: a record longer than 1 MiB: not read",
                                 "line 4: a record longer than 1 MiB: not read"]
    assert sorted(x[0] for x in store.con.execute("SELECT request_id FROM requests").fetchall()) \
        == ["r0", "r2"]


def test_cancel_stops_a_file_while_its_lines_are_read(tmp_path, store, monkeypatch):
    f = tmp_path / "long.jsonl"
    n = 20 * base.CHECK_EVERY
    f.write_text("".join(_line(i) for i in range(n)))
    read = {"lines": 0}
    real = generic_table.iter_jsonl

    def counting(path, report=None):
        for item in real(path, report):
            read["lines"] += 1
            yield item
    monkeypatch.setattr(generic_table, "iter_jsonl", counting)
    state = {"cancel": False}

    def progress(i, total, path):  # the user presses Cancel as soon as the file is opened
        state["cancel"] = True
    reports = store.load_paths([f], progress=progress, cancelled=lambda: state["cancel"])
    assert len(reports) == 1 and reports[0].error.endswith("nothing of it was kept"), reports
    assert read["lines"] < 2 * base.CHECK_EVERY < n  # stopped early, not at the insert
    assert store.count("requests") == 0 and store.count("runs") == 0


def test_a_json_document_past_the_bound_is_refused_unread(tmp_path, store, monkeypatch):
    """A format read whole (a JSON document) larger than MAX_DOCUMENT_BYTES is refused by its
    size before a byte is parsed (a mistaken 20 GB file must not exhaust the memory)."""
    monkeypatch.setattr(base, "MAX_DOCUMENT_BYTES", 4096)
    f = tmp_path / "llmperf_individual_responses.json"
    rec = {"ttft_s": 0.1, "end_to_end_latency_s": 1.0, "number_input_tokens": 100,
           "number_output_tokens": 20, "inter_token_latency_s": 0.01, "error_code": None,
           "error_msg": ""}
    f.write_text(json.dumps([rec] * 200))
    assert f.stat().st_size > 4096
    r = store.load_file(f)
    assert r.error and "read as one document" in r.error and r.error.startswith(str(f)), r.error
