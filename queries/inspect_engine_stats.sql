-- Purpose: per engine_stats column, n / mean / p50 / p90 / p99 over the stat rows of some runs
--          (vLLM log lines, Prometheus scrapes) for `trace-explorer inspect`.
-- Params:  $run_ids VARCHAR[]
-- Returns: metric VARCHAR, n BIGINT, mean DOUBLE, p50 DOUBLE, p90 DOUBLE, p99 DOUBLE
WITH s AS (
    SELECT running, waiting, swapped, kv_usage_gpu, kv_usage_cpu, prompt_tps, gen_tps,
           prefix_cache_hit_rate, num_preemptions
    FROM engine_stats
    WHERE list_contains($run_ids, run_id)
), long AS (
    UNPIVOT s ON COLUMNS(*) INTO NAME metric VALUE v
)
SELECT metric, count(v) AS n, avg(v) AS mean, quantile_cont(v, 0.5) AS p50,
       quantile_cont(v, 0.9) AS p90, quantile_cont(v, 0.99) AS p99
FROM long
GROUP BY metric
