-- Purpose: per canonical request metric, n / mean / p50 / p90 / p99 over the requests of some
--          runs that carry no error (what `trace-explorer inspect` prints for one file).
--          Percentiles are linear-interpolated (quantile_cont, numpy's default); NULLs (metric
--          missing in the source) are not counted.
-- Params:  $run_ids VARCHAR[] (the runs one input file produced)
-- Returns: metric VARCHAR, n BIGINT, mean DOUBLE, p50 DOUBLE, p90 DOUBLE, p99 DOUBLE
WITH r AS (
    SELECT CAST(ttft_ms AS DOUBLE) AS ttft_ms, CAST(tpot_ms AS DOUBLE) AS tpot_ms,
           CAST(e2e_ms AS DOUBLE) AS e2e_ms, CAST(queue_ms AS DOUBLE) AS queue_ms,
           CAST(prefill_ms AS DOUBLE) AS prefill_ms, CAST(decode_ms AS DOUBLE) AS decode_ms,
           CAST(kv_cache_hit_rate AS DOUBLE) AS kv_cache_hit_rate,
           CAST(num_preemptions AS DOUBLE) AS num_preemptions,
           CAST(batch_size AS DOUBLE) AS batch_size,
           CAST(prompt_tokens AS DOUBLE) AS prompt_tokens,
           CAST(completion_tokens AS DOUBLE) AS completion_tokens,
           CAST(cached_prompt_tokens AS DOUBLE) AS cached_prompt_tokens
    FROM requests
    WHERE list_contains($run_ids, run_id) AND error IS NULL
), long AS (
    UNPIVOT r ON COLUMNS(*) INTO NAME metric VALUE v
)
SELECT metric, count(v) AS n, avg(v) AS mean, quantile_cont(v, 0.5) AS p50,
       quantile_cont(v, 0.9) AS p90, quantile_cont(v, 0.99) AS p99
FROM long
GROUP BY metric
