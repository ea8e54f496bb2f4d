-- Purpose: the inter-token latency sequence of one request.
-- Params:  $run_id VARCHAR, $request_id VARCHAR
-- Returns: token_index INTEGER (the gap before output token token_index; formats start at 1),
--          itl_ms DOUBLE (ms); rows with a NULL gap are left out
SELECT token_index, itl_ms
FROM token_latencies
WHERE request_id = $request_id AND run_id = $run_id AND itl_ms IS NOT NULL
ORDER BY token_index
