-- Purpose: eval accuracy per (benchmark, engine_version): the cases bound to requests of the
--          version's runs.
-- Params:  $by_benchmark BOOLEAN (false: pool every benchmark)
-- Returns: benchmark, engine_version, n_cases, n_correct, accuracy (0..1)
WITH link AS (
    SELECT case_id, run_id, request_id FROM case_links
    QUALIFY row_number() OVER (PARTITION BY case_id
                               ORDER BY level NULLS LAST, score DESC NULLS LAST) = 1
)
SELECT CASE WHEN $by_benchmark THEN ru.benchmark END AS benchmark, ru.engine_version,
       count(*) AS n_cases, count(*) FILTER (WHERE c.correct) AS n_correct,
       avg(CAST(c.correct AS DOUBLE)) AS accuracy
FROM cases c
JOIN link l ON l.case_id = c.case_id
JOIN runs ru ON ru.run_id = l.run_id
WHERE ru.engine_version IS NOT NULL AND c.correct IS NOT NULL
GROUP BY ALL
