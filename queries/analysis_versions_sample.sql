-- Purpose: a deterministic random sample of at most about $max_n requests per
--          (benchmark, engine_version), for the Mann-Whitney test between versions (a hash of
--          run_id and request_id decides, so the same store gives the same sample).
-- Params:  $max_n INTEGER, $by_benchmark BOOLEAN (false: pool every benchmark), $eval_id
--          VARCHAR (NULL: every run; else the runs bound to cases of that eval)
-- Returns: benchmark (NULL when pooled or unknown), engine_version, run_id, kv_cache_hit_rate,
--          num_preemptions, tpot_ms, batch_size, ttft_ms, queue_ms, e2e_ms, prompt_tokens,
--          completion_tokens
-- Shape:   the group sizes are counted per run and carried to each run (k: one row per run), so
--          the requests are joined to k on run_id alone and read once; joining them to the group
--          sizes on (benchmark, engine_version) after a CTE over every request column took twice
--          the CPU (10M requests: 2.3 -> 1.2 s). Same rows (tests/test_analysis_versions.py).
WITH ru AS (
    SELECT run_id, CASE WHEN $by_benchmark THEN benchmark END AS benchmark, engine_version
    FROM runs
    WHERE engine_version IS NOT NULL
      AND ($eval_id IS NULL OR run_id IN (SELECT l.run_id FROM case_links l JOIN cases c ON c.case_id = l.case_id
                                WHERE c.eval_id = $eval_id))
),
per_run AS (
    SELECT run_id, count(*) AS n FROM requests GROUP BY run_id
),
g AS (
    SELECT ru.benchmark, ru.engine_version, CAST(sum(p.n) AS BIGINT) AS n
    FROM ru JOIN per_run p ON p.run_id = ru.run_id
    GROUP BY ALL
),
k AS (
    SELECT ru.run_id, ru.benchmark, ru.engine_version, g.n
    FROM ru JOIN g ON g.benchmark IS NOT DISTINCT FROM ru.benchmark
                  AND g.engine_version = ru.engine_version
)
SELECT k.benchmark, k.engine_version, q.run_id, q.kv_cache_hit_rate, q.num_preemptions, q.tpot_ms,
       q.batch_size, q.ttft_ms, q.queue_ms, q.e2e_ms, q.prompt_tokens, q.completion_tokens
FROM requests q JOIN k ON k.run_id = q.run_id
WHERE k.n <= $max_n
   -- abs(): DuckDB's hash is unsigned, Spark's a signed INT (a negative remainder would
   -- select every other row there)
   OR CAST(abs(hash(q.run_id, q.request_id) % 1000003) AS DOUBLE) < 1000003.0 * $max_n / k.n
