-- Purpose: the cases of a cohort: one cluster's badcases (all badcases when $cluster is NULL)
--          and the control group: correct cases of the badcases' categories
--          ($control = 'same-category'; a NULL category matches a NULL category) or every
--          correct case ($control = 'all-correct'), or the cases of the badcases' categories
--          outside the cluster: correct ones and other clusters' badcases
--          ($control = 'outside-cluster', with a $cluster; their grp is 'control' and the caller
--          sets badcase from grp); both groups restricted to one eval when $eval_id is not NULL.
--          Reads `cv`, the case view (queries/analysis_case_view.sql) bound as a CTE by the
--          caller; the caller may append "AND (<selection>)".
-- Params:  $cluster VARCHAR (NULL = every badcase), $control VARCHAR,
--          $eval_id VARCHAR (NULL = every eval)
-- Returns: every case-view column plus grp ('bad' | 'control')
SELECT CASE WHEN cv.badcase = 1 AND ($cluster IS NULL OR cv.cluster = $cluster) THEN 'bad'
            ELSE 'control' END AS grp, cv.*
FROM cv
WHERE ($eval_id IS NULL OR cv.eval_id = $eval_id)
  AND ((cv.badcase = 1 AND ($cluster IS NULL OR cv.cluster = $cluster))
   OR ((cv.badcase = 0 OR ($control = 'outside-cluster' AND $cluster IS NOT NULL
                           AND cv.badcase = 1 AND cv.cluster IS DISTINCT FROM $cluster))
       AND ($control = 'all-correct' OR cv.category IN (
           SELECT DISTINCT b.category FROM cases b
           WHERE b.correct = false AND b.category IS NOT NULL
             AND ($cluster IS NULL OR b.cluster = $cluster)
             AND ($eval_id IS NULL OR b.eval_id = $eval_id))
       OR (cv.category IS NULL AND EXISTS (
           SELECT 1 FROM cases b
           WHERE b.correct = false AND b.category IS NULL
             AND ($cluster IS NULL OR b.cluster = $cluster)
             AND ($eval_id IS NULL OR b.eval_id = $eval_id))))))
