-- Purpose: which (eval, run) pairs can be compared on time and on prompt hash (temp table
--          _assoc_pairs). Time: the eval's case timestamps and the run's request intervals
--          overlap once widened by $margin_s (otherwise the two use different clocks or
--          epochs and time is treated as unknown). Hash: at least one case of the eval has
--          the prompt hash of some request of the run (otherwise the two hash different
--          texts, e.g. a chat template around the prompt, and a hash mismatch proves nothing).
-- Params:  $margin_s DOUBLE (seconds)
-- Returns: (creates) _assoc_pairs(eval_id, run_id, time_comparable BOOLEAN,
--          hash_comparable BOOLEAN)
CREATE OR REPLACE TEMP TABLE _assoc_pairs AS
WITH e AS (
    SELECT eval_id, min(timestamp_s) AS lo, max(timestamp_s) AS hi
    FROM _assoc_cases GROUP BY eval_id
), r AS (
    -- every request (assoc_requests may stage only some): hi is the largest
    -- _assoc_requests.end_s
    SELECT run_id, min(arrival_s) AS lo,
           max(arrival_s + coalesce(greatest(e2e_ms, 0), 0) / 1000.0) AS hi
    FROM requests GROUP BY run_id
), h AS (
    SELECT DISTINCT ce.eval_id, rr.run_id
    FROM (SELECT DISTINCT eval_id, prompt_hash FROM _assoc_cases
          WHERE prompt_hash IS NOT NULL) ce
    JOIN (SELECT DISTINCT run_id, prompt_hash FROM requests
          WHERE prompt_hash IN (SELECT prompt_hash FROM _assoc_cases)) rr USING (prompt_hash)
)
SELECT e.eval_id, r.run_id,
       coalesce(e.lo <= r.hi + $margin_s AND r.lo <= e.hi + $margin_s, false) AS time_comparable,
       h.run_id IS NOT NULL AS hash_comparable
FROM e CROSS JOIN r
LEFT JOIN h ON h.eval_id IS NOT DISTINCT FROM e.eval_id AND h.run_id = r.run_id
