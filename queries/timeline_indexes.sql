-- Purpose: ART indexes that turn the timeline's per-request lookups (requests,
--          request_events, token_latencies by request_id) from full scans into index scans
--          (about 80 ms -> 5 ms in a 1M-request store; see bench/timeline.py). Idempotent.
--          Several statements: run them one by one (split on ';').
-- Params:  none
-- Returns: nothing
CREATE INDEX IF NOT EXISTS timeline_requests_rid ON requests (request_id);
CREATE INDEX IF NOT EXISTS timeline_events_rid ON request_events (request_id);
CREATE INDEX IF NOT EXISTS timeline_itl_rid ON token_latencies (request_id)
