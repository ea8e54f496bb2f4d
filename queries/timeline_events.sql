-- Purpose: the recorded life events of one request (arrived, queued, scheduled, first_token,
--          preempted, resumed, finished, error, or any other kind a source carries), in time
--          order.
-- Params:  $run_id VARCHAR, $request_id VARCHAR
-- Returns: ts_s DOUBLE (s, the run's clock, same clock as requests.arrival_s), kind VARCHAR,
--          detail VARCHAR (NULL when the source gave none)
SELECT ts_s, kind, detail
FROM request_events
WHERE request_id = $request_id AND run_id = $run_id AND ts_s IS NOT NULL
ORDER BY ts_s, kind
