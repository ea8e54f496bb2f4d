-- Purpose: the per-request values of one run that the benchmarks' own aggregates are computed
--          from (explorer.core.runs.recompute): successful requests only (error IS NULL).
-- Params:  $run_id VARCHAR
-- Returns: request_id, ttft_ms, tpot_ms, e2e_ms, prompt_tokens, completion_tokens (NULL where
--          the source has no value)
SELECT request_id, ttft_ms, tpot_ms, e2e_ms, prompt_tokens, completion_tokens
FROM requests
WHERE run_id = $run_id AND error IS NULL
