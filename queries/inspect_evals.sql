-- Purpose: what `trace-explorer inspect` shows for an eval file: per eval, its model, case
--          count, correct count, and per badcase cluster the badcases and how many of them are
--          bound to a trace request (a case_links row).
-- Params:  $eval_ids VARCHAR[]
-- Returns: eval_id, model, cases BIGINT, correct BIGINT, cluster VARCHAR (NULL = none),
--          badcases BIGINT, bound BIGINT  (one row per eval x cluster; cluster rows only
--          for badcases, an eval without badcases gives one row with cluster NULL, badcases 0)
WITH c AS (
    SELECT c.*, EXISTS (SELECT 1 FROM case_links l WHERE l.case_id = c.case_id) AS is_bound
    FROM cases c WHERE list_contains($eval_ids, c.eval_id)
), totals AS (
    SELECT e.eval_id, e.model, count(c.case_id) AS cases,
           count(*) FILTER (WHERE c.correct) AS correct
    FROM evals e LEFT JOIN c USING (eval_id)
    WHERE list_contains($eval_ids, e.eval_id)
    GROUP BY e.eval_id, e.model
), clusters AS (
    SELECT eval_id, cluster, count(*) AS badcases, count(*) FILTER (WHERE is_bound) AS bound
    FROM c WHERE correct = false
    GROUP BY eval_id, cluster
)
SELECT t.eval_id, t.model, t.cases, t.correct, k.cluster, coalesce(k.badcases, 0) AS badcases,
       coalesce(k.bound, 0) AS bound
FROM totals t LEFT JOIN clusters k USING (eval_id)
ORDER BY t.eval_id, badcases DESC, k.cluster
