-- Purpose: the badcase clusters: size, share of all badcases, how many are bound to a request.
-- Params:  none
-- Returns: cluster, badcases, share (0..1), bound, categories (list of distinct categories),
--          largest cluster first (ties by name)
WITH bound AS (SELECT DISTINCT case_id FROM case_links)
SELECT c.cluster,
       count(*) AS badcases,
       count(*) / (SELECT count(*) FROM cases WHERE correct = false) AS share,
       count(b.case_id) AS bound,
       list(DISTINCT c.category ORDER BY c.category) AS categories
FROM cases c
LEFT JOIN bound b ON b.case_id = c.case_id
WHERE c.correct = false AND c.cluster IS NOT NULL
GROUP BY c.cluster
ORDER BY badcases DESC, c.cluster
