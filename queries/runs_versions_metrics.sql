-- Purpose: the published aggregates of every run that names an engine version, for the
--          run-level version comparison (explorer.core.analysis.run_versions): latency
--          statistics (mean, median, p90, p99 of TTFT, TPOT, ITL, E2E) and throughputs.
-- Params:  none
-- Returns: run_id, engine, benchmark, engine_version, metric, stat, unit, value
SELECT m.run_id, coalesce(r.engine, '') AS engine, coalesce(r.benchmark, '') AS benchmark,
       r.engine_version, m.metric, m.stat, m.unit, m.value
FROM run_metrics m
JOIN runs r USING (run_id)
WHERE r.engine_version IS NOT NULL AND m.value IS NOT NULL AND (
      (m.metric IN ('ttft_ms', 'tpot_ms', 'itl_ms', 'e2e_ms')
       AND m.stat IN ('mean', 'median', 'p90', 'p99'))
   OR (m.metric IN ('request_throughput', 'output_throughput', 'total_token_throughput',
                    'request_goodput') AND m.stat = 'value'))
