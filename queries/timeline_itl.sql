-- Purpose: the inter-token latency sequence of one request.
-- Params:  $run_id VARCHAR, $request_id VARCHAR
-- Returns: token_index INTEGER (the gap before output token token_index; formats start at 1),
--          itl_ms DOUBLE (ms); rows with a NULL gap are left out
-- Note:    DuckDB (2.0) takes an ART index scan only when the indexed column is the table's
--          only filter; with run_id beside it, it scans (20-30 ms in a 1M-request store
--          instead of < 1 ms). The MATERIALIZED CTE keeps the run_id filter out of the scan.
WITH by_id AS MATERIALIZED (  -- lets DuckDB use the request_id index (see the note)
    SELECT run_id, token_index, itl_ms FROM token_latencies WHERE request_id = $request_id
)
SELECT token_index, itl_ms
FROM by_id
WHERE run_id = $run_id AND itl_ms IS NOT NULL
ORDER BY token_index
