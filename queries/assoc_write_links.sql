-- Purpose: write the bindings of the staged association into case_links: every level-1
--          case with exactly one candidate, and every fuzzy case with exactly one best
--          candidate whose request no other fuzzy case claims (two cases on one request
--          means one of them is wrong, so neither is bound).
-- Params:  none
-- Returns: nothing (inserts into case_links(case_id, run_id, request_id, level, score))
INSERT INTO case_links (case_id, run_id, request_id, level, score)
WITH fz AS (
    SELECT ck, rk, CASE WHEN nconds >= 2 THEN 2 ELSE 3 END AS level, score,
           count(*) OVER (PARTITION BY rk) AS n_claims
    FROM _assoc_fuzzy WHERE n_best = 1
), x AS (
    SELECT ck, rk, 1 AS level, 1.0 AS score FROM _assoc_l1 WHERE n_cand = 1
    UNION ALL
    SELECT ck, rk, level, score FROM fz WHERE n_claims = 1
)
SELECT c.case_id, r.run_id, r.request_id, x.level, x.score
FROM x JOIN _assoc_cases c USING (ck) JOIN _assoc_requests r USING (rk)
