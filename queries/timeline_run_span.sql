-- Purpose: the longest request duration of a run, so the neighbour query can bound its scan of
--          arrival_s (a request that arrived up to this long before the window may still be
--          running in it).
-- Params:  $run_id VARCHAR
-- Returns: one row: max_duration_s DOUBLE (s; 0 when no request has a known duration),
--          n BIGINT (requests in the run)
SELECT coalesce(max(coalesce(e2e_ms, ttft_ms + decode_ms, queue_ms + prefill_ms + decode_ms,
                             ttft_ms + tpot_ms * greatest(completion_tokens - 1, 0), ttft_ms))
                / 1000.0, 0.0) AS max_duration_s,
       count(*) AS n
FROM requests
WHERE run_id = $run_id
