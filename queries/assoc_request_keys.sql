-- Purpose: every id under which a staged request can be found (temp table _assoc_keys):
--          its request_id and its x-request-id / gen_ai.request.id forms (alt_ids) as
--          stored (exact = true), plus each of them normalised like _assoc_cases.norm_id
--          where normalising changes it (exact = false); only keys equal to a staged case's
--          request_id or norm_id (the others can bind nothing).
-- Params:  none
-- Returns: (creates) _assoc_keys(rk BIGINT, key VARCHAR, exact BOOLEAN)
CREATE OR REPLACE TEMP TABLE _assoc_keys AS
WITH raw AS (
    SELECT rk, request_id AS id FROM _assoc_requests
    UNION ALL
    SELECT rk, unnest(alt_ids) AS id FROM _assoc_requests WHERE alt_ids IS NOT NULL
), l AS (
    SELECT rk, id, lower(trim(id)) AS n0 FROM raw
), p AS (
    SELECT rk, id,
           -- the same as regexp_replace(n0, '^(chatcmpl|cmpl|req|request)[-_:]', ''),
           -- written with prefixes because it runs on every request
           CASE WHEN starts_with(n0, 'chatcmpl') AND substr(n0, 9, 1) IN ('-', '_', ':')
                     THEN substr(n0, 10)
                WHEN starts_with(n0, 'request') AND substr(n0, 8, 1) IN ('-', '_', ':')
                     THEN substr(n0, 9)
                WHEN starts_with(n0, 'cmpl') AND substr(n0, 5, 1) IN ('-', '_', ':')
                     THEN substr(n0, 6)
                WHEN starts_with(n0, 'req') AND substr(n0, 4, 1) IN ('-', '_', ':')
                     THEN substr(n0, 5)
                ELSE n0 END AS n1
    FROM l
), n AS (
    SELECT rk, id,
           CASE WHEN length(n1) >= 18 AND n1 LIKE '%-0' THEN left(n1, length(n1) - 2)
                ELSE n1 END AS norm
    FROM p
)
-- only the keys a staged case can meet (assoc_level1 joins exact keys on request_id and any
-- key on norm_id): 10M requests keep ~1M keys instead of 10M (binding 42 -> s at load 11)
SELECT rk, id AS key, true AS exact FROM n
WHERE id IN (SELECT request_id FROM _assoc_cases WHERE request_id IS NOT NULL)
   OR id IN (SELECT norm_id FROM _assoc_cases WHERE norm_id IS NOT NULL)
UNION ALL
SELECT rk, norm AS key, false AS exact FROM n
WHERE norm <> id AND norm IN (SELECT norm_id FROM _assoc_cases WHERE norm_id IS NOT NULL)
