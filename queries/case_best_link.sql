-- Purpose: each case's best link, the one definition of "the request a case is bound to":
--          the lowest level, then the highest score, then the smallest (run_id, request_id).
--          A whole row is kept, so run_id and request_id always come from the same link (an
--          arg_min per column could pair one link's run_id with another's request_id on a tie).
--          The store creates it as the view `case_best_link` with the schema
--          (explorer/core/schema.py VIEWS); queries that run in a warehouse engine, which has
--          no such view, include this text as a CTE body instead.
--          Cases with one link (nearly all: a case binds to one request) take it as it is; only
--          the cases with several are ranked (a window over every link sorted 1M links by case:
--          1.1 s CPU at 1M cases, 0.55 s this way; the same rows).
-- Params:  none
-- Returns: one row per linked case: case_id, run_id, request_id, level, score
SELECT case_id, run_id, request_id, level, score
FROM case_links
WHERE case_id IN (SELECT case_id FROM case_links GROUP BY case_id HAVING count(*) = 1)
UNION ALL
SELECT case_id, run_id, request_id, level, score
FROM case_links
WHERE case_id IN (SELECT case_id FROM case_links GROUP BY case_id HAVING count(*) > 1)
QUALIFY row_number() OVER (PARTITION BY case_id
                           ORDER BY level NULLS LAST, score DESC NULLS LAST,
                                    run_id NULLS LAST, request_id NULLS LAST) = 1
