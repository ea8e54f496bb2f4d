-- Purpose: stage the requests that cases may bind to (temp table _assoc_requests) with a
--          compact row key rk, the end of the request (arrival + E2E) and the run's model
--          (normalised like _assoc_cases.model_key).
-- Params:  none
-- Returns: (creates) _assoc_requests(rk BIGINT, run_id, request_id, prompt_hash,
--          prompt_tokens, arrival_s, end_s, model_key, extra)
CREATE OR REPLACE TEMP TABLE _assoc_requests AS
SELECT row_number() OVER () AS rk, r.run_id, r.request_id, r.prompt_hash, r.prompt_tokens,
       r.arrival_s,
       r.arrival_s + coalesce(greatest(r.e2e_ms, 0), 0) / 1000.0 AS end_s,
       nullif(lower(regexp_replace(regexp_replace(u.model, '^.*/', ''), '[^A-Za-z0-9]', '', 'g')),
              '') AS model_key,
       r.extra
FROM requests r LEFT JOIN runs u USING (run_id)
