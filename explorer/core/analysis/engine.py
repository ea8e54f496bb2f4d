"""Engine statistics over time, per engine, and their summary (report key `engine`).

Reads engine_stats as the engine-log and scrape loaders left it (explorer/core/formats/
vllm_log.py, sglang_log.py, prometheus.py: one row per sample and engine, fractions in [0, 1],
sentinels NULL): per stats run its clock, per engine the summary (queries/
engine_stats_summary.sql) and the series, the server-wide peak of running requests summed over
engines at one sample time (queries/engine_stats_server.sql), and how many bound requests got
an engine context (queries/request_engine_context.sql). Needs no eval and no trace.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..errors import NoData
from ..sqlutil import load_query
from explorer.core.i18n import _

SERIES = ("running", "waiting", "kv_usage_gpu", "prefix_cache_hit_rate", "gen_tps",
          "prompt_tps", "num_preemptions")
SUMMARY = ("running", "waiting", "kv_usage_gpu", "prefix_cache_hit_rate", "gen_tps", "prompt_tps")
MAX_POINTS = 2000  # per engine in the report; longer series keep every k-th sample (said so)


def _num(x):
    """A JSON number, None for NULL / NaN."""
    if x is None:
        return None
    x = float(x)
    return None if np.isnan(x) else (int(x) if x.is_integer() and abs(x) < 2**53 else x)


@dataclass(frozen=True)
class EngineStats:
    """runs: one dict per stats run (run_id, source, format, engine_kind, model, clock,
    first_stat_line_time, engines: [{engine, samples, ts_first, ts_last, <col>_mean / _max,
    num_preemptions_sum, series: {ts_s: [...], <col>: [...]}, thinned_every}], server:
    {engines, peak_running, peak_running_ts_s, waiting_at_peak}); request_context:
    {bound_requests (requests some case is bound to), with_context (those with an engine
    context)}."""
    runs: tuple
    request_context: dict

    def to_dict(self) -> dict:
        return {"runs": [dict(r) for r in self.runs], "request_context": dict(self.request_context),
                "definitions": {
                    "running / waiting": "requests in the running batch / waiting queue, per engine",
                    "kv_usage_gpu": "share of the GPU KV cache in use (0..1)",
                    "prefix_cache_hit_rate": "share of queried prompt tokens served from the "
                                             "prefix cache (0..1); NULL where undefined",
                    "gen_tps / prompt_tps": "generation / prompt throughput, tokens/s",
                    "server": "running / waiting summed over the engines at one sample time"}}


# the engine's own settings worth a line in the report (vllm:cache_config_info's labels)
SETTINGS = ("enable_prefix_caching", "block_size", "num_gpu_blocks", "gpu_memory_utilization",
            "kv_cache_size_tokens")


def _settings(cfg: dict) -> dict | None:
    """SETTINGS from the run's cache_config (one engine's, or engine 0's), None if absent."""
    cache = cfg.get("cache_config")
    if isinstance(cache, dict) and cache and all(isinstance(v, dict) for v in cache.values()):
        cache = cache[sorted(cache)[0]]  # several engines: the first one's (they share flags)
    if not isinstance(cache, dict):
        return None
    got = {k: cache[k] for k in SETTINGS if cache.get(k) not in (None, "None", "")}
    return got or None


def engine_stats(store, con=None, max_points: int = MAX_POINTS) -> EngineStats:
    """The `engine` report section. Raises NoData when no engine statistics are loaded."""
    con = con or store.con
    summary = con.execute(load_query("engine_stats_summary")).df()
    if summary.empty:
        raise NoData(_("no engine statistics loaded (vLLM / SGLang server logs or /metrics scrapes)"))
    server = {r.run_id: r for r in con.execute(load_query("engine_stats_server")).df().itertuples()}
    meta = {r[0]: r for r in con.execute(
        "SELECT run_id, source_path, format, engine, model, config FROM runs "
        "WHERE run_id IN (SELECT DISTINCT run_id FROM engine_stats) ORDER BY run_id").fetchall()}
    runs = []
    for run_id, group in summary.groupby("run_id", sort=True):
        _run, src, fmt, kind, model, cfg = meta.get(run_id, (run_id, None, None, None, None, None))
        cfg = json.loads(cfg) if cfg else {}
        series = con.execute(load_query("engine_stats_series"), {"run_id": run_id}).df()
        engines = []
        for r in group.itertuples(index=False):
            e = {"engine": r.engine or None, "samples": int(r.samples),
                 "ts_first": _num(r.ts_first), "ts_last": _num(r.ts_last),
                 "num_preemptions_sum": _num(r.num_preemptions_sum)}
            for c in SUMMARY:
                e[f"{c}_mean"] = _num(getattr(r, f"{c}_mean"))
                e[f"{c}_max"] = _num(getattr(r, f"{c}_max"))
            s = series[series["engine"] == r.engine]
            step = max(1, -(-len(s) // max_points))
            s = s.iloc[::step]
            e["series"] = {c: [_num(x) for x in s[c]] for c in ("ts_s",) + SERIES
                           if c == "ts_s" or s[c].notna().any()}
            e["thinned_every"] = step if step > 1 else None
            engines.append(e)
        sv = server.get(run_id)
        runs.append({"run_id": run_id, "source": src, "format": fmt, "engine_kind": kind,
                     "model": model, "clock": cfg.get("clock"),
                     "first_stat_line_time": cfg.get("first_stat_line_time"),
                     "settings": _settings(cfg), "engines": engines,
                     "server": None if sv is None else {
                         "engines": int(sv.engines), "peak_running": _num(sv.peak_running),
                         "peak_running_ts_s": _num(sv.peak_running_ts_s),
                         "waiting_at_peak": _num(sv.waiting_at_peak)}})
    ctx = con.execute(
        f"SELECT (SELECT count(*) FROM (SELECT DISTINCT run_id, request_id FROM case_links)), "
        f"count(*) FROM (\n{load_query('request_engine_context')}\n) WHERE engine_samples > 0"
    ).fetchall()[0]
    return EngineStats(runs=tuple(runs),
                       request_context={"bound_requests": int(ctx[0]), "with_context": int(ctx[1])})
