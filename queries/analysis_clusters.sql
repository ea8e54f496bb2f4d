-- Purpose: the badcase clusters: size, share of all badcases, how many are bound to a request;
--          restricted to one eval when $eval_id is not NULL.
-- Params:  $eval_id VARCHAR (NULL = every eval)
-- Returns: cluster, badcases, share (0..1 of the badcases of the same evals), bound,
--          categories (list of distinct categories), largest cluster first (ties by name)
--          `bound` lists only the linked cases that are clustered badcases (the only ones
--          counted): the links are probed against those few cases instead of every linked case
--          being made distinct (1M links: 0.27 -> 0.15 s CPU; the report runs this twice).
WITH c AS (SELECT * FROM cases WHERE $eval_id IS NULL OR eval_id = $eval_id),
bound AS (SELECT DISTINCT case_id FROM case_links
          WHERE case_id IN (SELECT case_id FROM c WHERE correct = false AND cluster IS NOT NULL))
SELECT c.cluster,
       count(*) AS badcases,
       count(*) / (SELECT count(*) FROM c WHERE correct = false) AS share,
       count(b.case_id) AS bound,
       list(DISTINCT c.category ORDER BY c.category) AS categories
FROM c
LEFT JOIN bound b ON b.case_id = c.case_id
WHERE c.correct = false AND c.cluster IS NOT NULL
GROUP BY c.cluster
ORDER BY badcases DESC, c.cluster
