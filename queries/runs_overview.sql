-- Purpose: one row per run with its identity, provenance and request counts (the Runs view,
--          `inspect`, the report's `runs` section).
-- Params:  none
-- Returns: run_id, label, engine, engine_version, version_source, model, benchmark, format,
--          source_path, simulated, n_requests (request rows), n_ok (rows without an error),
--          n_failed (rows with an error)
SELECT r.run_id, r.label, r.engine, r.engine_version, r.version_source, r.model, r.benchmark,
       r.format, r.source_path, r.simulated,
       count(q.request_id) AS n_requests,
       count(q.request_id) FILTER (WHERE q.error IS NULL) AS n_ok,
       count(q.request_id) FILTER (WHERE q.error IS NOT NULL) AS n_failed
FROM runs r
LEFT JOIN requests q USING (run_id)
GROUP BY ALL
ORDER BY r.source_path, r.run_id
