-- Purpose: every id under which a staged request can be found (temp table _assoc_keys):
--          its request_id as stored (exact = true), the same normalised like
--          _assoc_cases.norm_id, and the x-request-id / gen_ai.request.id forms that trace
--          formats keep in requests.extra (keys x_request_id, x-request-id,
--          gen_ai.request.id, request_id), normalised.
-- Params:  none
-- Returns: (creates) _assoc_keys(rk BIGINT, key VARCHAR, exact BOOLEAN)
CREATE OR REPLACE TEMP TABLE _assoc_keys AS
WITH raw AS (
    SELECT rk, request_id AS id, true AS exact FROM _assoc_requests
    UNION ALL
    SELECT rk, unnest([json_extract_string(extra, '$.x_request_id'),
                       json_extract_string(extra, '$."x-request-id"'),
                       json_extract_string(extra, '$."gen_ai.request.id"'),
                       json_extract_string(extra, '$.request_id')]) AS id, false AS exact
    FROM _assoc_requests
    WHERE extra IS NOT NULL AND (extra LIKE '%request_id%' OR extra LIKE '%request.id%'
                                 OR extra LIKE '%request-id%')
), n AS (
    SELECT rk, exact, id,
           lower(regexp_replace(trim(id), '^(chatcmpl|cmpl|req|request)[-_:]', '', 'i')) AS n0
    FROM raw WHERE id IS NOT NULL AND trim(id) <> ''
)
SELECT DISTINCT rk, id AS key, true AS exact FROM n
UNION
SELECT DISTINCT rk, CASE WHEN length(n0) >= 18 AND n0 LIKE '%-0' THEN left(n0, length(n0) - 2) ELSE n0 END,
       false
FROM n
