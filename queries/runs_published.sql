-- Purpose: the aggregates result files published per run (run_metrics), for some runs.
-- Params:  $run_ids VARCHAR[] (NULL = every run)
-- Returns: run_id, metric, stat, value, unit
SELECT run_id, metric, stat, value, unit
FROM run_metrics
WHERE $run_ids IS NULL OR list_contains($run_ids, run_id)
ORDER BY run_id, metric, stat
