-- Purpose: one row per request with its run's version, benchmark and simulated flag; the row
--          view that request selections (tree nodes, heatmap cells) are evaluated on.
-- Params:  none
-- Returns: every `requests` column, engine_version, benchmark, simulated
SELECT r.*, ru.engine_version, ru.benchmark, ru.simulated
FROM requests r
LEFT JOIN runs ru ON ru.run_id = r.run_id
