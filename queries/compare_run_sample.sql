-- Purpose: the successful requests' latencies of one run that the run comparison's intervals
--          resample: every request up to $max_rows, else a deterministic sample of $max_rows
--          (the smallest hashes of the request ids; the point values come from
--          compare_run_stats, over every request).
-- Params:  $run_id VARCHAR, $max_rows INTEGER
-- Returns: ttft_ms, tpot_ms, e2e_ms (NULL where the source has no value)
SELECT ttft_ms, tpot_ms, e2e_ms
FROM requests
WHERE run_id = $run_id AND error IS NULL
ORDER BY hash(request_id)
LIMIT $max_rows
