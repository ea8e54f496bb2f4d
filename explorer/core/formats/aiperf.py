"""AIPerf `profile_export.jsonl` (ai-dynamo/aiperf): one JSON record per request.

Source format: {"metadata": {"x_request_id", "x_correlation_id", "conversation_id",
"turn_index", "timestamp_ns", ...}, "metrics": {name: {"value", "unit"}}, "error": {"code",
"type", "message"} | null}. Metric units are converted by their `unit` field (ns / us / ms / s
-> ms). `inter_token_latency` is AIPerf's (request_latency - ttft) / (output tokens - 1), i.e.
TPOT; `inter_chunk_latency` (a list) becomes token_latencies. arrival_s is timestamp_ns in unix
seconds. Events: arrived (timestamp_ns), first_token (+ttft), finished (+request_latency) or
error. A record with a value out of range (_common.RANGES: a negative latency or token count,
or a negative inter_chunk_latency entry) is skipped with its line and field, the value in the
source's unit ("line 4: field 'metrics.ttft': negative value: -12"). The sibling
profile_export_aiperf.json, when present, gives the model and the command, and its aggregates
become the run's run_metrics (the vocabulary's [tool.aiperf] entry); the sibling
server_metrics_export.jsonl and gpu_telemetry_export.jsonl become its engine_stats and gpu_*
run_metrics (_aiperf_side.py).
"""
from __future__ import annotations

from pathlib import Path

from .base import Sniff, iter_jsonl, side_json
from ..i18n import _
from ._common import (RowError, check_itls, check_ranges, insert_events, insert_requests,
                      insert_token_latencies, integer, no_rows, num, register_run, text)

NAME = "aiperf"
KIND = "trace"

_TO_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0, "sec": 1000.0}
# AIPerf metric -> canonical column (times; converted to ms by unit). AIPerf 0.13 names the
# TTFT `time_to_first_token` (metrics/types/ttft_metric.py, tag), earlier exports `ttft`.
_TIMES = {"ttft": "ttft_ms", "inter_token_latency": "tpot_ms", "request_latency": "e2e_ms"}
_ALIASES = {"ttft": "time_to_first_token"}
_TOKENS = {"input_sequence_length": "prompt_tokens", "output_sequence_length": "completion_tokens"}


def detect(sniff: Sniff) -> float:
    """High when the first JSON line has AIPerf's metadata + metrics {value, unit} layout."""
    obj = sniff.first_json_line()
    if not obj or not isinstance(obj.get("metrics"), dict) or not isinstance(obj.get("metadata"), dict):
        return 0.0
    md = obj["metadata"]
    return 0.95 if ("x_request_id" in md or "timestamp_ns" in md) else 0.6


def _metric_ms(metrics: dict, name: str) -> tuple[float | None, float]:
    """(value in ms or None, the scale applied to the source's unit)."""
    m = metrics.get(name)
    if m is None:
        return None, 1.0
    if not isinstance(m, dict) or "value" not in m:
        raise RowError(f"metrics.{name}", "expected {value, unit}")
    unit = str(m.get("unit", "ms")).lower()
    if unit not in _TO_MS:
        raise RowError(f"metrics.{name}", f"unknown time unit {unit!r}")
    return num(m["value"], f"metrics.{name}", _TO_MS[unit]), _TO_MS[unit]


def _metric_value(metrics: dict, name: str):
    m = metrics.get(name)
    return m.get("value") if isinstance(m, dict) else m


def _sidecar(path: Path) -> tuple[str | None, dict | None, str | None]:
    d = side_json(path.with_name("profile_export_aiperf.json"))
    if d is None:
        return None, None, None
    try:
        cfg = d.get("input_config") or {}
        models = (cfg.get("endpoint") or {}).get("model_names") or [None]
        return text(models[0]), cfg, text(d.get("start_time"))
    except AttributeError:
        return None, None, None


def _aggregates(path: Path, store, report, run_id: str) -> None:
    """AIPerf's own aggregates of the run (profile_export_aiperf.json beside the file, read by
    the vocabulary's tree reader) as its run_metrics: `inspect` shows them beside the
    recomputation from the requests."""
    from . import published
    from ._results import insert_run_metrics
    side = path.with_name("profile_export_aiperf.json")
    obj = side_json(side)
    if obj is not None:
        cols: dict = {}
        insert_run_metrics(store, run_id, published.tree_rows(obj, "aiperf", cols))
        report.columns[side.name] = _("run_metrics (AIPerf's aggregates of this run)")


def load(path: Path, store, report) -> None:
    """Load one AIPerf per-request export as one run; fills requests, token_latencies and
    request_events."""
    rows, itls, events = [], {}, []
    for line, rec in iter_jsonl(path, report):
        try:
            md = rec.get("metadata") or {}
            metrics = rec.get("metrics") or {}
            if not isinstance(md, dict) or not isinstance(metrics, dict):
                raise RowError("metadata", _("expected an object"))
            rid = text(md.get("x_request_id")) or text(md.get("x_correlation_id")) or f"line{line}"
            ts_ns = num(md.get("timestamp_ns"), "metadata.timestamp_ns")
            row = {"request_id": rid, "arrival_s": ts_ns / 1e9 if ts_ns is not None else None}
            fields: dict = {col: f"metrics.{src}" for src, col in _TOKENS.items()}
            for src, col in _TIMES.items():
                if src not in metrics and _ALIASES.get(src) in metrics:
                    src = _ALIASES[src]
                row[col], scale = _metric_ms(metrics, src)
                fields[col] = (f"metrics.{src}", scale)
            for src, col in _TOKENS.items():
                row[col] = integer(_metric_value(metrics, src), f"metrics.{src}")
            check_ranges(row, fields)  # before any event of the row is kept
            err = rec.get("error")
            if err:
                if isinstance(err, dict):
                    row["error"] = " ".join(str(err[k]) for k in ("code", "type", "message")
                                            if err.get(k) is not None) or "error"
                else:
                    row["error"] = str(err)
            icl = metrics.get("inter_chunk_latency")
            if isinstance(icl, dict) and isinstance(icl.get("value"), list):
                scale = _TO_MS.get(str(icl.get("unit", "ms")).lower(), 1.0)
                itls[rid] = check_itls([num(v, "metrics.inter_chunk_latency", scale)
                                        for v in icl["value"]], "metrics.inter_chunk_latency", scale)
            extra = {k: _metric_value(metrics, k) for k in ("ttst", "reasoning_token_count",
                                                            "output_token_count",
                                                            "output_token_throughput_per_user")
                     if k in metrics}
            extra.update({k: md[k] for k in ("x_correlation_id", "conversation_id", "turn_index",
                                             "worker_id", "credit_phase") if k in md})
            row["extra"] = extra
            if row["arrival_s"] is not None:
                t0 = row["arrival_s"]
                events.append((rid, t0, "arrived", None))
                if row["ttft_ms"] is not None:
                    events.append((rid, t0 + row["ttft_ms"] / 1000, "first_token", None))
                if row.get("error"):
                    events.append((rid, t0 + (row["e2e_ms"] or 0) / 1000, "error", row["error"]))
                elif row["e2e_ms"] is not None:
                    events.append((rid, t0 + row["e2e_ms"] / 1000, "finished", None))
        except RowError as e:
            report.skip(e.reason, line=line, field_name=e.field)
            continue
        rows.append(row)
    if not rows:
        raise no_rows(path, report)
    model, cfg, started = _sidecar(path)
    run_id = register_run(store, report, path, NAME, f"aiperf:{path.parent.name or path.stem}",
                          engine=None, model=model, benchmark="aiperf",
                          started_at=started, config=cfg)
    insert_requests(store, report, run_id, rows)
    insert_token_latencies(store, run_id, itls)
    insert_events(store, run_id, events)
    _aggregates(path, store, report, run_id)
    from . import _aiperf_side  # the folder's server-metrics and GPU telemetry exports
    _aiperf_side.server_metrics(path, store, report, run_id)
    _aiperf_side.gpu_telemetry(path, store, report, run_id)
    report.columns.update({
        "metadata.x_request_id": "request_id",
        "metadata.timestamp_ns": "arrival_s (/1e9, unix s)",
        "metrics.ttft": _("ttft_ms (by unit)"),
        "metrics.inter_token_latency": _("tpot_ms (by unit)"),
        "metrics.request_latency": _("e2e_ms (by unit)"),
        "metrics.input_sequence_length": "prompt_tokens",
        "metrics.output_sequence_length": "completion_tokens",
        "metrics.inter_chunk_latency": _("token_latencies.itl_ms (by unit)"),
        "error": _("error (code type message)"),
    })
