-- Purpose: stage the requests that cases may bind to (temp table _assoc_requests) with a
--          compact row key rk, the end of the request (arrival + E2E) and the other ids the
--          trace formats keep in requests.extra (keys x_request_id, x-request-id,
--          gen_ai.request.id, request_id). The run's model is in _assoc_runs.
--          $all = false stages only the requests an id of _assoc_keys can name (their
--          request_id is one, or they keep other ids: level 1 needs no other request);
--          $all = true stages every request (the fuzzy levels look at all of them).
-- Params:  $all BOOLEAN
-- Returns: (creates) _assoc_requests(rk BIGINT, run_id, request_id, prompt_hash,
--          prompt_tokens, arrival_s, end_s, alt_ids VARCHAR[])
CREATE OR REPLACE TEMP TABLE _assoc_requests AS
SELECT row_number() OVER () AS rk, r.run_id, r.request_id, r.prompt_hash, r.prompt_tokens,
       r.arrival_s,
       r.arrival_s + coalesce(greatest(r.e2e_ms, 0), 0) / 1000.0 AS end_s,
       -- the same list as assoc_request_keys.sql reads
       CASE WHEN r.extra LIKE '%request%' AND (r.extra LIKE '%request_id%'
                                               OR r.extra LIKE '%request.id%'
                                               OR r.extra LIKE '%request-id%')
            THEN list_filter([json_extract_string(r.extra, '$.x_request_id'),
                              json_extract_string(r.extra, '$."x-request-id"'),
                              json_extract_string(r.extra, '$."gen_ai.request.id"'),
                              json_extract_string(r.extra, '$.request_id')],
                             lambda x: x IS NOT NULL AND trim(x) <> '') END AS alt_ids
FROM requests r
WHERE $all
   OR r.request_id IN (SELECT id FROM _assoc_keys)
   OR (r.extra LIKE '%request%' AND (r.extra LIKE '%request_id%' OR r.extra LIKE '%request.id%'
                                     OR r.extra LIKE '%request-id%'))
