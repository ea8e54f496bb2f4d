-- Purpose: one row per badcase cluster: its badcases, their share of all badcases, how many
--          are bound to a request (at any level), and the categories they come from.
-- Params:  none
-- Returns: cluster VARCHAR, badcases BIGINT, share DOUBLE (0..1), bound BIGINT,
--          level1 BIGINT, level2 BIGINT, level3 BIGINT, categories VARCHAR[] (sorted)
WITH bad AS (
    SELECT c.case_id, coalesce(c.cluster, 'uncategorised') AS cluster, c.category, l.level
    FROM cases c
    LEFT JOIN case_best_link l
        USING (case_id)
    WHERE c.correct IS false
)
SELECT cluster,
       count(*) AS badcases,
       count(*) / sum(count(*)) OVER () AS share,
       count(level) AS bound,
       count(*) FILTER (WHERE level = 1) AS level1,
       count(*) FILTER (WHERE level = 2) AS level2,
       count(*) FILTER (WHERE level = 3) AS level3,
       list_sort(list_distinct(list(category))) AS categories
FROM bad
GROUP BY cluster
ORDER BY badcases DESC, cluster
