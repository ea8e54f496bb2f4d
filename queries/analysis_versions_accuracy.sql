-- Purpose: eval accuracy per (benchmark, engine_version), overall and per case category: the
--          cases bound to requests of the version's runs.
-- Params:  $by_benchmark BOOLEAN (false: pool every benchmark), $eval_id VARCHAR (NULL:
--          every eval; else only that eval's cases)
-- Returns: benchmark, engine_version, category (NULL on the overall rows), by_category
--          (false on the overall rows), n_cases, n_correct, accuracy (0..1)
WITH j AS (
    SELECT CASE WHEN $by_benchmark THEN ru.benchmark END AS benchmark, ru.engine_version,
           c.category, c.correct
    FROM cases c
    JOIN case_best_link l ON l.case_id = c.case_id
    JOIN runs ru ON ru.run_id = l.run_id
    WHERE ru.engine_version IS NOT NULL AND c.correct IS NOT NULL
      AND ($eval_id IS NULL OR c.eval_id = $eval_id)
)
SELECT benchmark, engine_version, category, grouping(category) = 0 AS by_category,
       count(*) AS n_cases, count(*) FILTER (WHERE correct) AS n_correct,
       avg(CAST(correct AS DOUBLE)) AS accuracy
FROM j
GROUP BY GROUPING SETS ((benchmark, engine_version), (benchmark, engine_version, category))
