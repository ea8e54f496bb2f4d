-- Purpose: the requests of one run in flight during a time window (the swimlane beside a
--          request's timeline), with whether each is bound to a badcase.
-- Params:  $run_id VARCHAR, $lo_s DOUBLE, $hi_s DOUBLE (window, s on the run's clock),
--          $scan_lo_s DOUBLE (earliest arrival that can still be running at $lo_s, i.e.
--          $lo_s minus the run's longest request; lets DuckDB skip row groups by zonemap)
-- Returns: request_id, arrival_s (s), end_s (s: arrival + e2e, else the best sum of the known
--          phases, else arrival), e2e_ms, prompt_tokens, completion_tokens, batch_size,
--          num_preemptions, kv_cache_hit_rate, tpot_ms, is_badcase BOOLEAN (true when a bound
--          case is wrong, false when all bound cases are correct, NULL when unbound);
--          ordered by arrival_s
WITH r AS (
    SELECT request_id, arrival_s,
           arrival_s + coalesce(e2e_ms, ttft_ms + decode_ms, queue_ms + prefill_ms + decode_ms,
                                ttft_ms + tpot_ms * greatest(completion_tokens - 1, 0),
                                ttft_ms, 0.0) / 1000.0 AS end_s,
           e2e_ms, prompt_tokens, completion_tokens, batch_size, num_preemptions,
           kv_cache_hit_rate, tpot_ms
    FROM requests
    WHERE run_id = $run_id AND arrival_s >= $scan_lo_s AND arrival_s <= $hi_s
), w AS (
    SELECT * FROM r WHERE end_s >= $lo_s
), bad AS (
    SELECT l.request_id, bool_or(NOT c.correct) AS is_badcase
    FROM case_links l JOIN cases c USING (case_id)
    WHERE l.run_id = $run_id AND c.correct IS NOT NULL
      AND l.request_id IN (SELECT request_id FROM w)
    GROUP BY l.request_id
)
SELECT w.*, bad.is_badcase
FROM w LEFT JOIN bad USING (request_id)
ORDER BY w.arrival_s, w.request_id
