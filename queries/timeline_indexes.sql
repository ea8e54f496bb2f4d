-- Purpose: ART indexes that turn the timeline's per-request lookups (requests,
--          request_events, token_latencies by request_id) from full scans into index scans
--          (5M events: 9 -> 5 ms, 6.4M token gaps: 10 -> 6 ms; the gain grows with the table;
--          see bench/timeline.py). Idempotent. Several statements, one per table: the caller
--          runs them one by one (split on semicolons) for the tables big enough to need one.
-- Params:  none
-- Returns: nothing
CREATE INDEX IF NOT EXISTS timeline_requests_rid ON requests (request_id);
CREATE INDEX IF NOT EXISTS timeline_events_rid ON request_events (request_id);
CREATE INDEX IF NOT EXISTS timeline_itl_rid ON token_latencies (request_id)
