-- Purpose: levels 2 and 3 (fuzzy) for the cases level 1 did not settle (temp table
--          _assoc_fuzzy), inside DuckDB with equi-joins only:
--          candidates come from (a) equal prompt hash, (b) equal time bucket ($bucket_s wide;
--          a request covers the buckets of [arrival - $window_s, arrival + E2E + $window_s])
--          and prompt tokens within $tokens_tol, (c) equal time bucket alone for cases that
--          know neither prompt hash nor tokens. Requests already bound at level 1 are not
--          candidates. Each candidate is checked on three conditions: same prompt hash,
--          prompt tokens within $tokens_tol, case timestamp within $window_s of the request's
--          [arrival, arrival + E2E]. A candidate is dropped when a known fact contradicts it:
--          hashes differ (where the pair compares hashes), tokens or time outside tolerance
--          (time only where the pair shares a clock), another model, another run than the
--          case's run_hint, or the case has a request id and the (eval, run) pair shares id
--          space (it would have matched by id). Level 2 needs two or more conditions; level 3
--          one condition, from prompt hash ($l3_hash) or time ($l3_time) only.
--          The candidate with the most conditions wins; several equally good -> ambiguous.
--          Crowd guard: a prompt hash shared by more than $max_fanout free requests, or a
--          (bucket, tokens) cell holding more, yields no candidates (no single request could
--          win on it; without the guard a fixed-prompt benchmark would join every case with
--          every request).
-- Params:  $tokens_tol INTEGER, $window_s DOUBLE, $bucket_s DOUBLE, $l3_hash BOOLEAN,
--          $l3_time BOOLEAN, $max_fanout INTEGER
-- Returns: (creates) _assoc_fuzzy(ck, rk, run_id, nconds, n_best BIGINT, score DOUBLE)
--          one row per case with a qualifying candidate; n_best > 1 = ambiguous
CREATE OR REPLACE TEMP TABLE _assoc_fuzzy AS
WITH todo AS (
    SELECT c.* FROM _assoc_cases c
    WHERE NOT EXISTS (SELECT 1 FROM _assoc_l1 l WHERE l.ck = c.ck)
), free AS (
    SELECT r.* FROM _assoc_requests r
    WHERE NOT EXISTS (SELECT 1 FROM _assoc_l1 l WHERE l.rk = r.rk AND l.n_cand = 1)
), rb AS (
    SELECT rk, prompt_tokens,
           unnest(range(CAST(floor((arrival_s - $window_s) / $bucket_s) AS BIGINT),
                        CAST(floor((end_s + $window_s) / $bucket_s) AS BIGINT) + 1)) AS bucket
    FROM free WHERE arrival_s IS NOT NULL
), hot_hash AS (
    SELECT prompt_hash FROM free WHERE prompt_hash IS NOT NULL
    GROUP BY prompt_hash HAVING count(*) > $max_fanout
), hot_cell AS (
    SELECT bucket, prompt_tokens FROM rb GROUP BY ALL HAVING count(*) > $max_fanout
), hot_bucket AS (
    SELECT bucket FROM rb GROUP BY ALL HAVING count(*) > $max_fanout
), cb AS (
    SELECT ck, CAST(floor(timestamp_s / $bucket_s) AS BIGINT) AS bucket, prompt_tokens,
           prompt_hash
    FROM todo WHERE timestamp_s IS NOT NULL
), ct AS (
    -- the unnest stands alone in its SELECT (Spark allows no generator inside an expression)
    SELECT ck, bucket, prompt_tokens + d AS tok
    FROM (SELECT ck, bucket, prompt_tokens, unnest(range(-$tokens_tol, $tokens_tol + 1)) AS d
          FROM cb WHERE prompt_tokens IS NOT NULL) AS cbt
), cand AS (
    SELECT t.ck, f.rk FROM todo t JOIN free f ON t.prompt_hash = f.prompt_hash
    WHERE t.prompt_hash NOT IN (SELECT prompt_hash FROM hot_hash)
    UNION
    SELECT ct.ck, rb.rk FROM ct JOIN rb ON rb.bucket = ct.bucket AND rb.prompt_tokens = ct.tok
    ANTI JOIN hot_cell h ON h.bucket = ct.bucket AND h.prompt_tokens = ct.tok
    UNION
    SELECT cb.ck, rb.rk FROM cb JOIN rb ON rb.bucket = cb.bucket
    ANTI JOIN hot_bucket h ON h.bucket = cb.bucket
    WHERE cb.prompt_tokens IS NULL AND cb.prompt_hash IS NULL AND $l3_time
), ev AS (
    SELECT x.ck, x.rk, r.run_id,
           c.prompt_hash IS NOT NULL AND r.prompt_hash IS NOT NULL AS hash_known,
           coalesce(c.prompt_hash = r.prompt_hash, false) AS hash_ok,
           coalesce(p.hash_comparable, false) AS hash_cmp,
           abs(c.prompt_tokens - r.prompt_tokens) AS dtok,
           coalesce(p.time_comparable, false) AND c.timestamp_s IS NOT NULL
               AND r.arrival_s IS NOT NULL AS time_known,
           greatest(r.arrival_s - c.timestamp_s, c.timestamp_s - r.end_s, 0) AS dt,
           coalesce(NOT (contains(c.model_key, u.model_key)
                         OR contains(u.model_key, c.model_key)), false) AS model_clash,
           (c.run_hint IS NOT NULL AND c.run_hint <> r.run_id)
               OR (c.request_id IS NOT NULL AND EXISTS (
                   SELECT 1 FROM _assoc_l1 l
                   WHERE l.eval_id IS NOT DISTINCT FROM c.eval_id AND l.run_id = r.run_id))
               AS id_clash
    FROM cand x
    JOIN _assoc_cases c ON c.ck = x.ck
    JOIN _assoc_requests r ON r.rk = x.rk
    LEFT JOIN _assoc_runs u ON u.run_id = r.run_id
    LEFT JOIN _assoc_pairs p ON p.eval_id IS NOT DISTINCT FROM c.eval_id AND p.run_id = r.run_id
), sc AS (
    SELECT *,
           coalesce(dtok <= $tokens_tol, false) AS tok_ok,
           time_known AND dt <= $window_s AS time_ok,
           (hash_known AND hash_cmp AND NOT hash_ok) OR coalesce(dtok > $tokens_tol, false)
               OR (time_known AND dt > $window_s) OR model_clash OR id_clash AS contradicted
    FROM ev
), ok AS (
    SELECT ck, rk, run_id,
           hash_ok::INTEGER + tok_ok::INTEGER + time_ok::INTEGER AS nconds,
           (hash_ok::INTEGER
            + CASE WHEN tok_ok THEN 1 - dtok / ($tokens_tol + 1.0) ELSE 0 END
            + CASE WHEN time_ok THEN 1 - dt / ($window_s + 1.0) ELSE 0 END) / 3.0 AS score
    FROM sc
    WHERE NOT contradicted
      AND (hash_ok::INTEGER + tok_ok::INTEGER + time_ok::INTEGER >= 2
           OR (hash_ok AND $l3_hash) OR (time_ok AND NOT tok_ok AND $l3_time))
), ranked AS (
    SELECT *, max(nconds) OVER (PARTITION BY ck) AS best FROM ok
)
SELECT ck, any_value(rk) AS rk, any_value(run_id) AS run_id, max(nconds) AS nconds,
       count(*) AS n_best, max(score) AS score
FROM ranked WHERE nconds = best
GROUP BY ck
