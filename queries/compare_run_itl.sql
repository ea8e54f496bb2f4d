-- Purpose: per run, the inter-token latency statistics over every chunk gap of its successful
--          requests pooled (the ITL population of vLLM / SGLang bench serving), for the run
--          comparison and the Runs tab's recomputation.
-- Params:  $run_ids VARCHAR[]
-- Returns: run_id, itl_ms_mean, itl_ms_median, itl_ms_p90, itl_ms_p99
SELECT t.run_id, avg(t.itl_ms) AS itl_ms_mean, quantile_cont(t.itl_ms, 0.5) AS itl_ms_median,
       quantile_cont(t.itl_ms, 0.9) AS itl_ms_p90, quantile_cont(t.itl_ms, 0.99) AS itl_ms_p99
FROM token_latencies t
JOIN requests q ON q.run_id = t.run_id AND q.request_id = t.request_id
WHERE list_contains($run_ids, t.run_id) AND q.error IS NULL AND t.itl_ms IS NOT NULL
GROUP BY t.run_id
