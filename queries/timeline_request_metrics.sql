-- Purpose: TPOT and the other ordering metrics of a list of requests (used to fill a cohort
--          frame that lacks them when picking the typical control or the worst badcase).
-- Params:  $run_ids VARCHAR[], $request_ids VARCHAR[] (same length, pairwise)
-- Returns: run_id, request_id, tpot_ms, e2e_ms, ttft_ms (ms), num_preemptions
SELECT r.run_id, r.request_id, r.tpot_ms, r.e2e_ms, r.ttft_ms, r.num_preemptions
FROM requests r
JOIN (SELECT unnest($run_ids) AS run_id, unnest($request_ids) AS request_id) k
  ON r.run_id = k.run_id AND r.request_id = k.request_id
