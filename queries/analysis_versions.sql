-- Purpose: engine metrics per (benchmark, engine_version) over every request of the runs that
--          name a version.
-- Params:  $by_benchmark BOOLEAN (false: pool every benchmark), $eval_id VARCHAR (NULL: every
--          run; else only the runs that hold a request bound to a case of that eval)
-- Returns: benchmark (NULL when unknown or pooled), engine_version, runs, requests, and per metric M in
--          kv_cache_hit_rate, num_preemptions, tpot_ms, batch_size, ttft_ms, queue_ms, e2e_ms,
--          prompt_tokens, completion_tokens: M (mean) and n_M (requests with a value)
SELECT CASE WHEN $by_benchmark THEN ru.benchmark END AS benchmark, ru.engine_version,
       count(DISTINCT r.run_id) AS runs, count(*) AS requests,
       avg(r.kv_cache_hit_rate) AS kv_cache_hit_rate, count(r.kv_cache_hit_rate) AS n_kv_cache_hit_rate,
       avg(r.num_preemptions) AS num_preemptions, count(r.num_preemptions) AS n_num_preemptions,
       avg(r.tpot_ms) AS tpot_ms, count(r.tpot_ms) AS n_tpot_ms,
       avg(r.batch_size) AS batch_size, count(r.batch_size) AS n_batch_size,
       avg(r.ttft_ms) AS ttft_ms, count(r.ttft_ms) AS n_ttft_ms,
       avg(r.queue_ms) AS queue_ms, count(r.queue_ms) AS n_queue_ms,
       avg(r.e2e_ms) AS e2e_ms, count(r.e2e_ms) AS n_e2e_ms,
       avg(r.prompt_tokens) AS prompt_tokens, count(r.prompt_tokens) AS n_prompt_tokens,
       avg(r.completion_tokens) AS completion_tokens, count(r.completion_tokens) AS n_completion_tokens
FROM requests r
JOIN runs ru ON ru.run_id = r.run_id
WHERE ru.engine_version IS NOT NULL
  AND ($eval_id IS NULL OR ru.run_id IN (SELECT l.run_id FROM case_links l JOIN cases c ON c.case_id = l.case_id
                                WHERE c.eval_id = $eval_id))
GROUP BY ALL
