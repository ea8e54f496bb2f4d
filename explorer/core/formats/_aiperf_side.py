"""The rest of an AIPerf artefact folder, loaded with its profile_export.jsonl into the same run.

* `server_metrics_export.jsonl` (aiperf profile --server-metrics-formats jsonl; written by
  aiperf/server_metrics/jsonl_writer.py): one line per scrape of the server's Prometheus
  endpoint, `{endpoint_url, timestamp_ns, metrics: {name: [{labels, value}]}}`, counters without
  their `_total` suffix (prometheus_client's parser strips it). Each scrape becomes engine_stats
  rows through the Prometheus reader's mapping (prometheus.py: running, waiting, kv_usage_gpu,
  prompt_tps / gen_tps from the token counters' increase between scrapes, ...), ts_s =
  timestamp_ns / 1e9 (unix s), one engine per endpoint URL when several were scraped.
* `gpu_telemetry_export.jsonl` (aiperf/gpu_telemetry/jsonl_writer.py): one line per GPU sample,
  `{gpu_index, gpu_uuid, timestamp_ns, telemetry_data: {nvidia_gpu_utilization,
  nvidia_memory_used, nvidia_power_usage, ...}}`. Its samples within the profiling window
  (profile_export_aiperf.json `telemetry_data.summary.start_time .. end_time`; all samples when
  absent) are summarised as AIPerf summarises them (metrics/metric_dicts.py
  `metric_result_from_array` with ddof=1 for telemetry: mean, std with Bessel's correction,
  min, max, p50 / p90 / p99 by linear interpolation) into run_metrics `gpu_<name>` (GPU n > 0:
  `gpu<n>_<name>`), in the unit AIPerf publishes for it (utilisation %, memory GB, power W).

Found in a folder beside profile_export.jsonl, both files are passed over (`pass_over`): they
load with it; so is profile_export_console.txt, the console's print of profile_export_aiperf.json
(whose numbers load with the per-request file).
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import numpy as np

from ..i18n import _

SERVER_METRICS = "server_metrics_export.jsonl"
GPU_TELEMETRY = "gpu_telemetry_export.jsonl"
PER_REQUEST = "profile_export.jsonl"
CONSOLE = "profile_export_console.txt"
_UNITS = {"gpu_utilization": "%", "memory_used": "GB", "power_usage": "W", "temperature": "°C",
          "energy_consumption": "MJ", "sm_clock": "MHz", "memory_clock": "MHz"}


def pass_over(path: Path) -> str | None:
    """Why a file of an AIPerf artefact folder is not loaded on its own (None: it is)."""
    if not (path.parent / PER_REQUEST).is_file():
        return None
    if path.name in (SERVER_METRICS, GPU_TELEMETRY):
        return _("part of the AIPerf artefact folder: loads with {file} beside it").format(
            file=PER_REQUEST)
    if path.name == CONSOLE and (path.parent / "profile_export_aiperf.json").is_file():
        return _("AIPerf's printed copy of profile_export_aiperf.json, whose numbers load with "
                 "{file} beside it").format(file=PER_REQUEST)
    return None


def _lines(path: Path, report):
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line, raw in enumerate(fh, 1):
            if raw.strip():
                try:
                    yield json.loads(raw)
                except ValueError:
                    report.skip(_("not JSON"), line=line)


def _in_time_order(records) -> list[dict]:
    """The scrapes sorted by time, counters made monotone where two scrapes overlapped.

    AIPerf's scrapes overlap (aiperf/server_metrics/manager.py `_collect_metrics_loop`), its
    lines arrive in completion order and `timestamp_ns` is the first byte of the answer
    (data_collector.py), so a scrape the server answered earlier can carry a later timestamp
    than one it answered after. A counter that falls between two scrapes whose request/answer
    intervals [request_sent_ns, timestamp_ns] overlap is that reordering, not a restart: it keeps
    the earlier value (a restart's drop, between scrapes that did not overlap, stays a drop)."""
    from . import prometheus
    def at(r) -> float | None:
        return r["timestamp_ns"] if isinstance(r.get("timestamp_ns"), (int, float)) else None
    recs = sorted((r for r in records if isinstance(r, dict) and isinstance(r.get("metrics"), dict)),
                  key=lambda r: (at(r) is None, at(r) or 0))  # untimed ones last, in file order
    last: dict[tuple, tuple[float, float | None]] = {}  # (url, name, labels) -> (value, answered at)
    for rec in recs:
        url, sent = str(rec.get("endpoint_url") or ""), rec.get("request_sent_ns")
        for name, samples in rec["metrics"].items():
            if f"{name}_total" not in prometheus.COUNTERS and name not in prometheus.COUNTERS:
                continue
            for s in samples if isinstance(samples, list) else ():
                if not (isinstance(s, dict) and isinstance(s.get("value"), (int, float))):
                    continue
                key = (url, name, tuple(sorted((s.get("labels") or {}).items())))
                before = last.get(key)
                if (before is not None and s["value"] < before[0] and before[1] is not None
                        and isinstance(sent, (int, float)) and sent < before[1]):
                    s["value"] = before[0]
                last[key] = (float(s["value"]), at(rec))
    return recs


def server_metrics(path: Path, store, report, run_id: str) -> int:
    """engine_stats rows of `run_id` from the server_metrics_export.jsonl beside `path`."""
    from . import prometheus
    from ._stats import insert_stats
    side = path.with_name(SERVER_METRICS)
    if not side.is_file():
        return 0
    urls: list[str] = []
    scrapes = []
    for rec in _in_time_order(_lines(side, report)):
        url = str(rec.get("endpoint_url") or "")
        if url not in urls:
            urls.append(url)
        ts_ms = rec["timestamp_ns"] / 1e6 if isinstance(rec.get("timestamp_ns"), (int, float)) else None
        sc = []
        for name, samples in rec["metrics"].items():
            if f"{name}_total" in prometheus.COUNTERS:
                name = f"{name}_total"
            for s in samples if isinstance(samples, list) else ():
                if isinstance(s, dict) and isinstance(s.get("value"), (int, float)):
                    labels = dict(s.get("labels") or {})
                    if len(urls) > 1 or url != urls[0]:
                        labels["engine"] = url
                    sc.append((name, labels, float(s["value"]), ts_ms))
        if sc:
            scrapes.append(sc)
    rows = prometheus._scrape_rows(scrapes)
    if not rows:
        return 0
    loaded = report.rows_loaded
    insert_stats(store, report, side, run_id, rows, "server metrics")
    report.rows_loaded = loaded  # rows_loaded counts the requests of the per-request file
    report.columns[side.name] = _("engine_stats ({n} scrapes of the server's metrics)").format(
        n=len(scrapes))
    return len(rows)


def _window(path: Path) -> tuple[float, float] | None:
    try:
        obj = json.loads(path.with_name("profile_export_aiperf.json").read_text(encoding="utf-8"))
        s = obj["telemetry_data"]["summary"]
        return (datetime.fromisoformat(s["start_time"]).timestamp() * 1e9,
                datetime.fromisoformat(s["end_time"]).timestamp() * 1e9)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def summarise(values) -> dict[str, float]:
    """AIPerf's telemetry summary of one series (metric_result_from_array, ddof=1)."""
    a = np.asarray(values, dtype=float)
    out = {"mean": float(a.mean()), "min": float(a.min()), "max": float(a.max()),
           "std": float(np.std(a, ddof=1)) if len(a) > 1 else 0.0, "count": float(len(a))}
    out.update({f"p{q}": float(np.percentile(a, q)) for q in (50, 90, 99)})
    return out


def gpu_telemetry(path: Path, store, report, run_id: str) -> int:
    """run_metrics of `run_id` summarising the gpu_telemetry_export.jsonl beside `path`."""
    from ._results import insert_run_metrics
    side = path.with_name(GPU_TELEMETRY)
    if not side.is_file():
        return 0
    win = _window(path)
    series: dict[str, list[float]] = {}
    for rec in _lines(side, report):
        if not isinstance(rec, dict) or not isinstance(rec.get("telemetry_data"), dict):
            continue
        ts = rec.get("timestamp_ns")
        if win and isinstance(ts, (int, float)) and not win[0] <= ts <= win[1]:
            continue
        idx = rec.get("gpu_index") or 0
        for name, v in rec["telemetry_data"].items():
            if isinstance(v, (int, float)) and v == v:
                short = name.removeprefix("nvidia_").removeprefix("amd_")
                key = f"gpu_{short.removeprefix('gpu_')}" if idx == 0 else f"gpu{idx}_{short.removeprefix('gpu_')}"
                series.setdefault(key, []).append(float(v))
    rows = []
    for key, vals in series.items():
        unit = next((u for k, u in _UNITS.items() if key.endswith(k)), "")
        rows += [(key, stat, value, "" if stat == "count" else unit)
                 for stat, value in summarise(vals).items()]
    if rows:
        insert_run_metrics(store, run_id, rows)
        report.columns[side.name] = _("run_metrics gpu_* (AIPerf's summary of its GPU samples)")
    return len(series)
