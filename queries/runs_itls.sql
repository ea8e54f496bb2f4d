-- Purpose: every inter-token (inter-chunk) gap of the successful requests of one run, pooled:
--          the ITL population of vLLM / SGLang bench serving.
-- Params:  $run_id VARCHAR
-- Returns: itl_ms DOUBLE
SELECT t.itl_ms
FROM token_latencies t
JOIN requests q ON q.run_id = t.run_id AND q.request_id = t.request_id
WHERE t.run_id = $run_id AND q.error IS NULL AND t.itl_ms IS NOT NULL
