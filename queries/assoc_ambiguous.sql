-- Purpose: the cases the staged association left unbound because several requests fit
--          equally well. reason: 'id' (the id matches several requests, e.g. in two runs),
--          'fuzzy' (several requests meet the same number of conditions), 'shared' (the one
--          best request is also the one best request of another case).
-- Params:  none
-- Returns: case_id, reason, candidates (number of equally good requests; for 'shared', the
--          number of cases claiming the request)
WITH fz AS (
    SELECT ck, n_best, count(*) OVER (PARTITION BY rk) AS n_claims FROM _assoc_fuzzy
    WHERE n_best = 1
)
SELECT c.case_id, a.reason, a.candidates
FROM (
    SELECT DISTINCT ck, 'id' AS reason, n_cand AS candidates FROM _assoc_l1 WHERE n_cand > 1
    UNION ALL
    SELECT ck, 'fuzzy', n_best FROM _assoc_fuzzy WHERE n_best > 1
    UNION ALL
    SELECT ck, 'shared', n_claims FROM fz WHERE n_claims > 1
) a JOIN _assoc_cases c USING (ck)
ORDER BY c.case_id
