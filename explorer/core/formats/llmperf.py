"""LLMPerf `individual_responses` JSON (ray-project/llmperf, token_benchmark_ray.py).

Source format: a JSON list, one object per request with `ttft_s`, `inter_token_latency_s`,
`end_to_end_latency_s` (seconds), `number_input_tokens`, `number_output_tokens`,
`request_output_throughput_token_per_s`, `error_code` (null when the request succeeded) and
`error_msg`. LLMPerf computes its summary over the rows whose error_code is null; failed rows
report 0 for the latencies they never measured, which we store as NULL (missing, not zero).
A response with a value out of range (_common.RANGES: a negative latency or token count) is
skipped, named by its list position and field ("field '[3].ttft_s': negative value: -0.2").
The matching `summary/<same name>.json`, when present beside `individual/`, gives the model and
its aggregates become the run's run_metrics (the vocabulary's [tool.llmperf_summary]).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..i18n import N_, _
from .base import Sniff, read_json
from ._results import insert_run_metrics, published_rows
from ._common import (RowError, check_ranges, insert_requests, integer, no_rows, num,
                      register_run, text)

NAME = "llmperf"
KIND = "trace"

_KEYS = ("ttft_s", "end_to_end_latency_s", "number_input_tokens", "number_output_tokens")
MAPPING = {
    "ttft_s": "ttft_ms (x1000)",
    "inter_token_latency_s": "tpot_ms (x1000)",
    "end_to_end_latency_s": "e2e_ms (x1000)",
    "number_input_tokens": "prompt_tokens",
    "number_output_tokens": "completion_tokens",
    "error_code, error_msg": "error",
    N_("(list position)"): "request_id",  # shown through _()
}


# canonical column -> LLMPerf field (and scale), named by the range check's reasons
_FIELDS = {"ttft_ms": ("ttft_s", 1000.0), "tpot_ms": ("inter_token_latency_s", 1000.0),
           "e2e_ms": ("end_to_end_latency_s", 1000.0), "prompt_tokens": "number_input_tokens",
           "completion_tokens": "number_output_tokens"}


def _fields_of(i: int) -> dict:
    """_FIELDS named as in record i of the list ("[3].ttft_s"), for range reasons."""
    return {c: (f"[{i}].{f[0]}", f[1]) if isinstance(f, tuple) else f"[{i}].{f}"
            for c, f in _FIELDS.items()}


def detect(sniff: Sniff) -> float:
    """High when the head is a JSON list whose objects carry LLMPerf's field names."""
    head = sniff.head.lstrip()
    if not head.startswith("["):
        return 0.0
    hits = sum(f'"{k}"' in sniff.head[:4096] for k in _KEYS)
    return 0.95 if hits == len(_KEYS) else 0.4 * hits / len(_KEYS)


def _summary(path: Path) -> dict:
    summary = path.parent.parent / "summary" / path.name
    if path.parent.name == "individual" and summary.is_file():
        try:
            with open(summary, encoding="utf-8") as fh:
                s = json.load(fh)
            return s if isinstance(s, dict) else {}
        except (OSError, ValueError):
            pass
    return {}


def load(path: Path, store, report) -> None:
    """Load one LLMPerf individual-responses file as one run (engine = the provider API)."""
    data = read_json(path)
    if not isinstance(data, list):
        from ..errors import InputError
        raise InputError(path, _("expected a JSON list of LLMPerf responses"))
    rows = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            report.skip(_("not a JSON object"), field_name=f"[{i}]")
            continue
        try:
            err_code = rec.get("error_code")
            failed = err_code is not None
            row = {"request_id": str(i),
                   "ttft_ms": num(rec.get("ttft_s"), "ttft_s", 1000.0),
                   "tpot_ms": num(rec.get("inter_token_latency_s"), "inter_token_latency_s", 1000.0),
                   "e2e_ms": num(rec.get("end_to_end_latency_s"), "end_to_end_latency_s", 1000.0),
                   "prompt_tokens": integer(rec.get("number_input_tokens"), "number_input_tokens"),
                   "completion_tokens": integer(rec.get("number_output_tokens"),
                                                "number_output_tokens")}
            if failed:
                for c in ("ttft_ms", "tpot_ms", "e2e_ms"):
                    if row[c] == 0:
                        row[c] = None
                msg = text(rec.get("error_msg"))
                row["error"] = f"{err_code}: {msg}" if msg else str(err_code)
            extra = {k: rec[k] for k in ("request_output_throughput_token_per_s",
                                         "number_total_tokens") if k in rec}
            row["extra"] = extra or None
            check_ranges(row, _fields_of(i))
        except RowError as e:  # a range reason names its fields with the record index already
            name = e.field if str(e.field).startswith("[") else f"[{i}].{e.field}"
            report.skip(e.reason, field_name=name)
            continue
        rows.append(row)
    if not rows:
        raise no_rows(path, report)
    s = _summary(path)
    cfg = {k: s[k] for k in ("name", "num_concurrent_requests", "mean_input_tokens",
                             "mean_output_tokens", "framework", "api") if k in s} or None
    run_id = register_run(store, report, path, NAME, f"llmperf:{path.stem}",
                          engine=(cfg or {}).get("framework") or path.stem.split("_")[0],
                          model=text(s.get("model")), benchmark="llmperf", config=cfg)
    insert_requests(store, report, run_id, rows)
    if s:  # LLMPerf's own aggregates of these requests ([tool.llmperf_summary])
        insert_run_metrics(store, run_id, published_rows(s, "llmperf_summary"))
        report.columns["summary/" + path.name] = _("run_metrics (LLMPerf's summary of this run)")
    report.columns.update({(_(k) if k.startswith("(") else k): v for k, v in MAPPING.items()})
