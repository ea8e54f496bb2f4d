-- Purpose: how many cases are bound to a request, per badcase cluster (the numbers behind
--          "21/23 (91%)"). A case counts once, at its best (lowest) level.
-- Params:  $badcases_only BOOLEAN (true: only cases with correct = false)
-- Returns: cluster (NULL = no cluster), total, bound, level1, level2, level3
SELECT c.cluster,
       count(*) AS total,
       count(l.level) AS bound,
       count(*) FILTER (WHERE l.level = 1) AS level1,
       count(*) FILTER (WHERE l.level = 2) AS level2,
       count(*) FILTER (WHERE l.level = 3) AS level3
FROM cases c
LEFT JOIN case_best_link l USING (case_id)
WHERE NOT $badcases_only OR c.correct IS false
GROUP BY c.cluster
ORDER BY c.cluster NULLS LAST
