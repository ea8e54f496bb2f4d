-- Purpose: a deterministic random sample of at most about $max_n requests per
--          (benchmark, engine_version), for the Mann-Whitney test between versions (a hash of
--          run_id and request_id decides, so the same store gives the same sample).
-- Params:  $max_n INTEGER, $by_benchmark BOOLEAN (false: pool every benchmark), $eval_id
--          VARCHAR (NULL: every run; else the runs bound to cases of that eval)
-- Returns: benchmark (NULL when pooled or unknown), engine_version, run_id, kv_cache_hit_rate,
--          num_preemptions, tpot_ms, batch_size, ttft_ms, queue_ms, e2e_ms, prompt_tokens,
--          completion_tokens
WITH r AS (
    SELECT CASE WHEN $by_benchmark THEN ru.benchmark END AS benchmark, ru.engine_version, q.*
    FROM requests q JOIN runs ru ON ru.run_id = q.run_id
    WHERE ru.engine_version IS NOT NULL
      AND ($eval_id IS NULL OR ru.run_id IN (SELECT l.run_id FROM case_links l JOIN cases c ON c.case_id = l.case_id
                                    WHERE c.eval_id = $eval_id))
),
g AS (
    SELECT benchmark, engine_version, count(*) AS n FROM r GROUP BY ALL
)
SELECT r.benchmark, r.engine_version, r.run_id, r.kv_cache_hit_rate, r.num_preemptions, r.tpot_ms,
       r.batch_size, r.ttft_ms, r.queue_ms, r.e2e_ms, r.prompt_tokens, r.completion_tokens
FROM r JOIN g ON g.benchmark IS NOT DISTINCT FROM r.benchmark
             AND g.engine_version = r.engine_version
WHERE g.n <= $max_n
   -- abs(): DuckDB's hash is unsigned, Spark's a signed INT (a negative remainder would
   -- select every other row there)
   OR CAST(abs(hash(r.run_id, r.request_id) % 1000003) AS DOUBLE) < 1000003.0 * $max_n / g.n
