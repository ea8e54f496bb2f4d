-- Purpose: level 1 (exact id) candidates per case (temp table _assoc_l1). A case's
--          request_id matches a request's id as stored or in its x-request-id /
--          gen_ai.request.id forms (_assoc_keys); an exact string match beats a match after
--          normalisation (the case's norm_id against any key, normalised or already
--          normal). Candidates that contradict the case are dropped: another run than
--          the case's run_hint, another model (where both are known; one name containing the
--          other counts as the same), another prompt hash (where the pair compares hashes).
--          n_cand > 1 means the id is ambiguous (e.g. the same id in two runs).
--          $norm = false (the keys are the ids as stored, association.stage_level1): exact
--          matches only; the rows of a case with an exact candidate are final, the other
--          cases need the normalised keys and $norm = true.
-- Params:  $norm BOOLEAN
-- Returns: (creates) _assoc_l1(ck, rk, eval_id, run_id, exact BOOLEAN, n_cand BIGINT);
--          exact: the case's request_id is the request's id as stored
CREATE OR REPLACE TEMP TABLE _assoc_l1 AS
WITH rid AS (
    -- the ids each staged request is found under (_assoc_keys.id)
    SELECT rk, request_id AS id FROM _assoc_requests
    UNION ALL
    SELECT rk, unnest(alt_ids) AS id FROM _assoc_requests WHERE alt_ids IS NOT NULL
), k AS (
    SELECT rid.rk, k.key, k.exact FROM _assoc_keys k JOIN rid ON rid.id = k.id
), m0 AS (
    SELECT c.ck, k.rk, true AS exact
    FROM _assoc_cases c JOIN k ON k.exact AND k.key = c.request_id
    UNION ALL
    SELECT c.ck, k.rk, false AS exact
    FROM _assoc_cases c JOIN k ON k.key = c.norm_id
    WHERE $norm
), m AS (
    SELECT ck, rk, bool_or(exact) AS exact FROM m0 GROUP BY ck, rk
), f AS (
    SELECT m.ck, m.rk, m.exact, c.eval_id, r.run_id
    FROM m
    JOIN _assoc_cases c USING (ck)
    JOIN _assoc_requests r USING (rk)
    LEFT JOIN _assoc_runs u ON u.run_id = r.run_id
    LEFT JOIN _assoc_pairs p ON p.eval_id IS NOT DISTINCT FROM c.eval_id AND p.run_id = r.run_id
    WHERE (c.run_hint IS NULL OR c.run_hint = r.run_id)
      AND NOT coalesce(NOT (contains(c.model_key, u.model_key)
                            OR contains(u.model_key, c.model_key)), false)
      AND NOT coalesce(p.hash_comparable AND c.prompt_hash <> r.prompt_hash, false)
), best AS (
    -- n_cand from here, not a window over f (a window partitioned by case: 80 ms of 0.2 s
    -- at 100k cases)
    SELECT ck, bool_or(exact) AS bx, count(CASE WHEN exact THEN 1 END) AS n_exact,
           count(*) AS n_all
    FROM f GROUP BY ck
)
SELECT f.ck, f.rk, f.eval_id, f.run_id, f.exact,
       CASE WHEN b.bx THEN b.n_exact ELSE b.n_all END AS n_cand
FROM f JOIN best b ON b.ck = f.ck AND f.exact = b.bx
