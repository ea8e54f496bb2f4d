-- Purpose: the request a case is bound to (the strongest link), so selecting a case opens its
--          request's timeline.
-- Params:  $case_id VARCHAR
-- Returns: at most one row: run_id, request_id, level (1 exact id, 2 fuzzy, 3 weak)
SELECT run_id, request_id, level
FROM case_best_link
WHERE case_id = $case_id AND run_id IS NOT NULL AND request_id IS NOT NULL
