-- Purpose: the requests row of one request (the timeline's metrics and, when the source has no
--          request_events, the numbers the derived timeline is built from).
-- Params:  $run_id VARCHAR, $request_id VARCHAR
-- Returns: at most one row: run_id, request_id, arrival_s (s), prompt_tokens,
--          completion_tokens, cached_prompt_tokens, kv_cache_hit_rate (0..1), ttft_ms, tpot_ms,
--          e2e_ms, queue_ms, prefill_ms, decode_ms (ms), num_preemptions, batch_size,
--          finish_reason, error (NULL where the trace did not record the value)
-- Note:    DuckDB (2.0) takes an ART index scan only when the indexed column is the table's
--          only filter; with run_id beside it, it scans (20-30 ms in a 1M-request store
--          instead of < 1 ms). The MATERIALIZED CTE keeps the run_id filter out of the scan.
WITH by_id AS MATERIALIZED (  -- lets DuckDB use the request_id index (see the note)
    SELECT run_id, request_id, arrival_s, prompt_tokens, completion_tokens,
           cached_prompt_tokens, kv_cache_hit_rate, ttft_ms, tpot_ms, e2e_ms, queue_ms,
           prefill_ms, decode_ms, num_preemptions, batch_size, finish_reason, error
    FROM requests
    WHERE request_id = $request_id
)
SELECT * FROM by_id WHERE run_id = $run_id
LIMIT 1
