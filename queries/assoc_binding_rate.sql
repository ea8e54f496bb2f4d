-- Purpose: how many cases are bound to a request, per badcase cluster and correctness (the
--          numbers behind "21/23 (91%)"; association.binding_rates adds the rows it needs, so
--          bind_cases reads the rates of all cases and of the badcases in one pass). A case
--          counts once, at its best (lowest) level.
-- Params:  none
-- Returns: cluster (NULL = no cluster), bad (correct = false), total, bound, level1, level2,
--          level3
SELECT c.cluster,
       c.correct IS false AS bad,
       count(*) AS total,
       count(l.level) AS bound,
       count(*) FILTER (WHERE l.level = 1) AS level1,
       count(*) FILTER (WHERE l.level = 2) AS level2,
       count(*) FILTER (WHERE l.level = 3) AS level3
FROM cases c
LEFT JOIN case_best_link l USING (case_id)
GROUP BY ALL
ORDER BY c.cluster NULLS LAST, bad
