-- Purpose: every request id, as a trace stores it, that can bind a staged case (temp table
--          _assoc_keys), with the key it meets: the requests' request_id and their
--          x-request-id / gen_ai.request.id forms (requests.extra keys x_request_id,
--          x-request-id, gen_ai.request.id, request_id) as stored (exact = true) and, with
--          $norm, each of them normalised like _assoc_cases.norm_id where normalising changes
--          it (exact = false); only keys equal to a staged case's request_id or (with $norm)
--          norm_id (the others can bind nothing). Read from `requests` before any request is
--          staged, so that assoc_requests can stage only the requests these ids name when the
--          ids bind every case (no fuzzy level to run).
--          $norm = false is the first pass (association.stage_level1): an exact id beats a
--          normalised one, so while every case's id is some request's id, and one of those
--          requests survives assoc_level1's checks, no id needs normalising (the lower / trim
--          / prefix strip below ran on every request id: 0.31 of 0.92 s CPU of binding at 1M).
-- Params:  $norm BOOLEAN
-- Returns: (creates) _assoc_keys(id VARCHAR, key VARCHAR, exact BOOLEAN); id is the stored
--          id (a request's request_id or one of its alt_ids, see assoc_requests)
CREATE OR REPLACE TEMP TABLE _assoc_keys AS
WITH raw AS (
    SELECT id FROM (
        SELECT request_id AS id FROM requests
        UNION ALL
        SELECT unnest(alt_ids) AS id FROM (
            -- the same list as _assoc_requests.alt_ids (assoc_requests.sql)
            SELECT list_filter([json_extract_string(r.extra, '$.x_request_id'),
                                json_extract_string(r.extra, '$."x-request-id"'),
                                json_extract_string(r.extra, '$."gen_ai.request.id"'),
                                json_extract_string(r.extra, '$.request_id')],
                               lambda x: x IS NOT NULL AND trim(x) <> '') AS alt_ids
            FROM requests r
            -- '%request%' first: each of the three implies it, and it rules out an extra
            -- without ids in a quarter of their time (1M extras: 17 ms CPU, not 60)
            WHERE r.extra LIKE '%request%' AND (r.extra LIKE '%request_id%'
                                                OR r.extra LIKE '%request.id%'
                                                OR r.extra LIKE '%request-id%')) AS x
    ) AS ids WHERE id IS NOT NULL
), l AS (
    SELECT id, lower(trim(id)) AS n0 FROM raw WHERE $norm
), p AS (
    SELECT id,
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
    SELECT id,
           CASE WHEN length(n1) >= 18 AND n1 LIKE '%-0' THEN left(n1, length(n1) - 2)
                ELSE n1 END AS norm
    FROM p
)
-- only the keys a staged case can meet (assoc_level1 joins exact keys on request_id and any
-- key on norm_id): 10M requests keep ~1M keys instead of 10M (binding 42 -> s at load 11)
SELECT id, id AS key, true AS exact FROM raw
WHERE id IN (SELECT request_id FROM _assoc_cases WHERE request_id IS NOT NULL)
   OR ($norm AND id IN (SELECT norm_id FROM _assoc_cases WHERE norm_id IS NOT NULL))
UNION ALL
SELECT id, norm AS key, false AS exact FROM n
WHERE norm <> id AND norm IN (SELECT norm_id FROM _assoc_cases WHERE norm_id IS NOT NULL)
