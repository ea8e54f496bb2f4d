-- Purpose: the run-wide 99th percentile of inter-token latency (the threshold above which a
--          request's gaps are flagged), with the number of gaps it was computed from.
--          quantile_cont interpolates linearly, as numpy.percentile does by default.
-- Params:  $run_id VARCHAR
-- Returns: one row: p99_itl_ms DOUBLE (ms; NULL when the run has no per-token data), n BIGINT
SELECT quantile_cont(itl_ms, 0.99) AS p99_itl_ms, count(itl_ms) AS n
FROM token_latencies
WHERE run_id = $run_id
