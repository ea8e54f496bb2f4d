-- Purpose: per stats run and engine (data-parallel rank; '' when the source names none) the
--          summary of its engine statistics: samples, time span, and mean / max of each
--          column over the samples that have it.
-- Params:  none
-- Returns: run_id, engine, samples, ts_first, ts_last, and for c in running, waiting,
--          kv_usage_gpu, prefix_cache_hit_rate, gen_tps, prompt_tps: c_mean, c_max;
--          num_preemptions_sum (NULL where no sample has the value)
SELECT run_id, coalesce(engine, '') AS engine, count(*) AS samples,
       min(ts_s) AS ts_first, max(ts_s) AS ts_last,
       avg(running) AS running_mean, max(running) AS running_max,
       avg(waiting) AS waiting_mean, max(waiting) AS waiting_max,
       avg(kv_usage_gpu) AS kv_usage_gpu_mean, max(kv_usage_gpu) AS kv_usage_gpu_max,
       avg(prefix_cache_hit_rate) AS prefix_cache_hit_rate_mean,
       max(prefix_cache_hit_rate) AS prefix_cache_hit_rate_max,
       avg(gen_tps) AS gen_tps_mean, max(gen_tps) AS gen_tps_max,
       avg(prompt_tps) AS prompt_tps_mean, max(prompt_tps) AS prompt_tps_max,
       sum(num_preemptions) AS num_preemptions_sum
FROM engine_stats
GROUP BY ALL
ORDER BY run_id, engine
