-- Purpose: the time series of one stats run, every engine, in time order (for the report's
--          `engine` section and the Engine panel's counter tracks).
-- Params:  $run_id VARCHAR
-- Returns: engine ('' when the source names none), ts_s, running, waiting, kv_usage_gpu,
--          prefix_cache_hit_rate, gen_tps, prompt_tps, num_preemptions
SELECT coalesce(engine, '') AS engine, ts_s, running, waiting, kv_usage_gpu,
       prefix_cache_hit_rate, gen_tps, prompt_tps, num_preemptions
FROM engine_stats
WHERE run_id = $run_id
ORDER BY engine, ts_s NULLS FIRST
