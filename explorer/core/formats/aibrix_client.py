"""aibrix client benchmark output JSONL (vllm-project/aibrix, benchmarks/client/output.jsonl).

Source format: one object a line: `input` (chat messages), `output` (text), `prompt_tokens`,
`output_tokens`, `total_tokens`, `latency` (s), `throughput` (tokens/s), `start_time` (s, the
client's monotonic clock), `ttft` (s), `tpot` (s). The first rows of the real file lack
ttft / tpot / start_time: they load with those columns NULL.
Mapping: e2e_ms = latency x 1000, ttft_ms = ttft x 1000, tpot_ms = tpot x 1000, arrival_s =
start_time (the run's own clock), prompt_hash = hash of the message contents. A line with a
value out of range (_common.RANGES: a negative latency or token count) is skipped with its line
and field.
"""
from __future__ import annotations

from pathlib import Path

from ..i18n import _
from .base import Sniff, iter_jsonl
from ._common import (RowError, check_ranges, insert_requests, integer, no_rows, num,
                      prompt_hash, register_run)

NAME = "aibrix_client"
KIND = "trace"


# canonical column -> client field (and scale), named by the range check's reasons
_FIELDS = {"prompt_tokens": "prompt_tokens", "completion_tokens": "output_tokens",
           "e2e_ms": ("latency", 1000.0), "ttft_ms": ("ttft", 1000.0), "tpot_ms": ("tpot", 1000.0)}


def detect(sniff: Sniff) -> float:
    """High when the first JSON line has input, output, prompt_tokens, output_tokens, latency."""
    obj = sniff.first_json_line()
    if not obj:
        return 0.0
    keys = ("input", "output", "prompt_tokens", "output_tokens", "latency")
    return 0.9 if all(k in obj for k in keys) else 0.0


def load(path: Path, store, report) -> None:
    """Load the client output as one run (request_id = line number)."""
    rows = []
    for line, rec in iter_jsonl(path, report):
        try:
            rows.append(check_ranges({
                "request_id": str(line),
                "arrival_s": num(rec.get("start_time"), "start_time"),
                "prompt_tokens": integer(rec.get("prompt_tokens"), "prompt_tokens"),
                "completion_tokens": integer(rec.get("output_tokens"), "output_tokens"),
                "e2e_ms": num(rec.get("latency"), "latency", 1000.0),
                "ttft_ms": num(rec.get("ttft"), "ttft", 1000.0),
                "tpot_ms": num(rec.get("tpot"), "tpot", 1000.0),
                "prompt_hash": prompt_hash(rec.get("input")),
                "extra": {"throughput_tok_s": rec.get("throughput")},
            }, _FIELDS))
        except RowError as e:
            report.skip(e.reason, line=line, field_name=e.field)
    if not rows:
        raise no_rows(path, report)
    run_id = register_run(store, report, path, NAME, f"aibrix_client:{path.stem}",
                          engine="aibrix", benchmark="aibrix client")
    insert_requests(store, report, run_id, rows)
    report.columns.update({"latency": "e2e_ms (x1000)", "ttft": "ttft_ms (x1000)",
                           "tpot": "tpot_ms (x1000)", "start_time": _("arrival_s (client clock)"),
                           "prompt_tokens": "prompt_tokens", "output_tokens": "completion_tokens",
                           "input": "prompt_hash", _("(line number)"): "request_id"})
