"""What each SLA window looked like (the features the diagnosis compares), one row per window.

From the requests arriving in the window (windows as analysis.sla_windows cuts them):
- kv_cache_hit_rate: mean per-request KV-cache (prefix) hit rate (requests.kv_cache_hit_rate,
  else cached_prompt_tokens / prompt_tokens, as vLLM counts prefix-cache hits per prompt token);
- preempted: share of requests preempted at least once (num_preemptions >= 1);
- tpot_ms: median TPOT; tpot_spread: its sample standard deviation (TPOT fluctuation);
- batch_size: mean running batch size; batch_entropy: Shannon entropy (bits) of the window's
  batch sizes rounded to whole requests (0 when one batch size served every request);
- queue_ms: median queue delay;
- prompt_tokens: mean prompt length and request_rate (arrivals / window seconds): the workload.
From engine_stats on the same clock (the request run's arrivals on the unix clock, as
queries/request_engine_context.sql aligns them: arrival_s when >= 1e9, else runs.started_at +
arrival_s; stats runs with a unix clock): engine_running / engine_waiting (summed over the
engines, per sample time), engine_kv_usage and engine_prefix_hit_rate (averaged), each the mean
of the samples in the window. A window that two stats runs cover gets no engine value.
"""
from __future__ import annotations

import pandas as pd

from .sla_windows import T0_CTE

# feature -> (checklist step, the direction that is bad for the SLA, kind)
FEATURES = {
    "kv_cache_hit_rate": ("kv_cache", "lower", "engine"),
    "engine_prefix_hit_rate": ("kv_cache", "lower", "engine"),
    "engine_kv_usage": ("kv_cache", "higher", "engine"),
    "preempted": ("kv_cache", "higher", "engine"),
    "tpot_ms": ("tpot", "higher", "engine"),
    "tpot_spread": ("tpot", "higher", "engine"),
    "batch_size": ("batching", "higher", "engine"),
    "batch_entropy": ("batching", "higher", "engine"),
    "queue_ms": ("queueing", "higher", "engine"),
    "engine_waiting": ("queueing", "higher", "engine"),
    "engine_running": ("queueing", "higher", "engine"),
    "prompt_tokens": ("workload", "higher", "workload"),
    "request_rate": ("workload", "higher", "workload"),
}

_SQL = """
WITH {T0_CTE}, r AS (
    SELECT run_id, arrival_s, kv_cache_hit_rate, cached_prompt_tokens, prompt_tokens,
           num_preemptions, tpot_ms, batch_size, queue_ms, t0
    FROM requests JOIN t0s USING (run_id) WHERE arrival_s IS NOT NULL AND isfinite(arrival_s)
), k AS NOT MATERIALIZED (SELECT *, floor((arrival_s - t0) / $w)::BIGINT AS k FROM r),  -- read twice
b AS (SELECT run_id, k, round(batch_size) AS bs, count(*) AS c FROM k
      WHERE batch_size IS NOT NULL GROUP BY ALL),
e AS (SELECT run_id, k, -sum(c / tot * log2(c / tot)) AS batch_entropy
      FROM (SELECT *, sum(c) OVER (PARTITION BY run_id, k) AS tot FROM b) GROUP BY ALL),
a AS (
    SELECT run_id, k,
           avg(coalesce(kv_cache_hit_rate, cached_prompt_tokens::DOUBLE / nullif(prompt_tokens, 0)))
               AS kv_cache_hit_rate,
           avg((num_preemptions >= 1)::DOUBLE) AS preempted,
           median(tpot_ms) AS tpot_ms, stddev_samp(tpot_ms) AS tpot_spread,
           avg(batch_size) AS batch_size, median(queue_ms) AS queue_ms,
           avg(prompt_tokens) AS prompt_tokens, count(*) / $w AS request_rate
    FROM k GROUP BY run_id, k
)  -- the entropy joined to one row per window, not to every request (+900 MB at 10M)
SELECT a.run_id, a.k, a.kv_cache_hit_rate, a.preempted, a.tpot_ms, a.tpot_spread, a.batch_size,
       e.batch_entropy, a.queue_ms, a.prompt_tokens, a.request_rate
FROM a LEFT JOIN e ON e.run_id = a.run_id AND e.k = a.k
""".replace("{T0_CTE}", T0_CTE)

# the engine's samples per window on the unix clock (see the module doc)
_ENGINE_SQL = """
WITH w AS (
    SELECT w.run_id, w.k,
           CASE WHEN w.start_s >= 1e9 THEN w.start_s
                WHEN ru.started_at IS NOT NULL THEN epoch(ru.started_at) + w.start_s END AS lo
    FROM _sla_windows w LEFT JOIN runs ru ON ru.run_id = w.run_id
), s AS (
    SELECT e.run_id AS stats_run, coalesce(e.engine, '') AS engine, e.ts_s,
           avg(running) AS running, avg(waiting) AS waiting, avg(kv_usage_gpu) AS kv,
           avg(prefix_cache_hit_rate) AS hit
    FROM engine_stats e JOIN runs ru ON ru.run_id = e.run_id
    WHERE e.ts_s IS NOT NULL
      AND coalesce(json_extract_string(ru.config, '$.clock'), '') LIKE 'unix%'
    GROUP BY ALL
), per_t AS (   -- one value per stats run and sample time: engines summed / averaged
    SELECT stats_run, ts_s, sum(running) AS running, sum(waiting) AS waiting, avg(kv) AS kv,
           avg(hit) AS hit FROM s GROUP BY ALL
), j AS (
    SELECT w.run_id, w.k, p.stats_run, avg(p.running) AS engine_running,
           avg(p.waiting) AS engine_waiting, avg(p.kv) AS engine_kv_usage,
           avg(p.hit) AS engine_prefix_hit_rate
    FROM w JOIN per_t p ON p.ts_s >= w.lo AND p.ts_s < w.lo + $w AND p.stats_run <> w.run_id
    GROUP BY ALL
)
SELECT run_id, k, any_value(engine_running) AS engine_running,
       any_value(engine_waiting) AS engine_waiting, any_value(engine_kv_usage) AS engine_kv_usage,
       any_value(engine_prefix_hit_rate) AS engine_prefix_hit_rate
FROM j GROUP BY run_id, k HAVING count(*) = 1
"""


def window_features(store, windows: pd.DataFrame, window_s: float) -> pd.DataFrame:
    """`windows` (sla_windows' frame, with run_id and k) joined to the features (module doc)."""
    con = store.con
    feats = con.execute(_SQL, {"w": window_s}).df()
    out = windows.merge(feats, on=["run_id", "k"], how="left")
    has_stats = con.execute("SELECT count(*) FROM engine_stats").fetchall()[0][0]
    if has_stats:
        con.register("_sla_windows", windows[["run_id", "k", "start_s"]])
        try:
            eng = con.execute(_ENGINE_SQL, {"w": window_s}).df()
        finally:
            con.unregister("_sla_windows")
        out = out.merge(eng, on=["run_id", "k"], how="left")
    for c in FEATURES:
        if c not in out:
            out[c] = float("nan")
    return out
