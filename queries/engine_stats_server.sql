-- Purpose: the server-wide load of each stats run: at each sample time, running and waiting
--          summed over its engines (two data-parallel engines logging at the same second are
--          two rows of engine_stats, one server), and the peak of that sum.
-- Params:  none
-- Returns: run_id, engines, peak_running, peak_running_ts_s, waiting_at_peak (the first
--          sample time with the highest summed running)
WITH per_ts AS (
    SELECT run_id, ts_s, count(DISTINCT coalesce(engine, '')) AS engines,
           sum(running) AS running, sum(waiting) AS waiting
    FROM engine_stats
    WHERE running IS NOT NULL
    GROUP BY run_id, ts_s
)
SELECT run_id, max(engines) AS engines, max(running) AS peak_running,
       arg_max(ts_s, [running, -coalesce(ts_s, 0)]) AS peak_running_ts_s,
       arg_max(waiting, [running, -coalesce(ts_s, 0)]) AS waiting_at_peak
FROM per_ts
GROUP BY run_id
ORDER BY run_id
