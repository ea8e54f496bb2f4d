"""Mooncake arrival trace JSONL (kvcache-ai/Mooncake, FAST25-release/traces).

Source format: one object a line: `timestamp` (ms from the trace start), `input_length`,
`output_length` (tokens), `hash_ids` (ids of 512-token prompt blocks; equal ids = shared prefix
blocks). Only arrivals and sizes are recorded (no latencies): arrival_s = timestamp / 1000,
prompt_tokens, completion_tokens; hash_ids are kept in extra.hash_ids (the replay engine reads
them). prompt_hash stays NULL: block ids are not prompt text. A line with a negative token
count or one beyond the store's INTEGER (_common.RANGES) is skipped with its line and field.
"""
from __future__ import annotations

from pathlib import Path

from .base import Sniff, iter_jsonl
from ._common import RowError, check_ranges, insert_requests, integer, no_rows, num, register_run
from ..i18n import _

NAME = "mooncake"
KIND = "trace"


def detect(sniff: Sniff) -> float:
    """High when the first JSON line has timestamp, input_length, output_length (+ hash_ids)."""
    obj = sniff.first_json_line()
    if not obj or not all(k in obj for k in ("timestamp", "input_length", "output_length")):
        return 0.0
    return 0.95 if "hash_ids" in obj else 0.6


def load(path: Path, store, report) -> None:
    """Load a Mooncake trace as one run (request_id = line number)."""
    rows = []
    for line, rec in iter_jsonl(path, report):
        try:
            ts = num(rec.get("timestamp"), "timestamp", 1e-3, required=True)
            hids = rec.get("hash_ids")
            if hids is not None and (not isinstance(hids, list)
                                     or not all(isinstance(h, int) for h in hids)):
                raise RowError("hash_ids", _("expected a list of integers"))
            row = {"request_id": str(line), "arrival_s": ts,
                   "prompt_tokens": integer(rec.get("input_length"), "input_length"),
                   "completion_tokens": integer(rec.get("output_length"), "output_length"),
                   "extra": {"hash_ids": hids} if hids is not None else None}
            check_ranges(row, {"prompt_tokens": "input_length", "completion_tokens": "output_length"})
        except RowError as e:
            report.skip(e.reason, line=line, field_name=e.field)
            continue
        rows.append(row)
    if not rows:
        raise no_rows(path, report)
    run_id = register_run(store, report, path, NAME, f"mooncake:{path.stem}", engine="mooncake",
                          benchmark=path.stem, config={"hash_block_tokens": 512})
    insert_requests(store, report, run_id, rows)
    report.columns.update({"timestamp": "arrival_s (/1000)", "input_length": "prompt_tokens",
                           "output_length": "completion_tokens",
                           "hash_ids": "extra.hash_ids",
                           _("(line number)"): "request_id"})
