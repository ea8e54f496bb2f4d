-- Purpose: requests grouped in time windows of $window_s seconds on arrival_s, per run; per
--          window the Shannon entropy (bits) of its batch_size distribution (batch_size
--          rounded to whole requests) and the mean of every engine metric.
--          The entropy's denominator (the window's requests with a batch size) comes from the
--          window means' own GROUP BY, joined to the per-size counts, not from a window
--          function over them (1M requests: 0.31 -> 0.26 s CPU; the same formula and sums).
-- Params:  $window_s DOUBLE (> 0), $runs VARCHAR[] (NULL = every run)
-- Returns: run_id, w (window index: floor(arrival_s / $window_s)), n_requests,
--          batch_size_entropy (bits; NULL when no request of the window has a batch_size),
--          kv_cache_hit_rate, num_preemptions, tpot_ms, batch_size, ttft_ms, queue_ms, e2e_ms,
--          prefill_ms, decode_ms, prompt_tokens, completion_tokens (window means)
-- r is read twice (bs, m): NOT MATERIALIZED scans the requests twice instead of DuckDB 2
--          keeping every row of r's columns it reads (a materialised CTE) for the second read;
--          at 10M requests the section's peak stayed within noise (+354 / +349 MB, its hash
--          aggregates dominate), at 100M the kept rows would be ~10x (not measured).
WITH r AS NOT MATERIALIZED (
    SELECT *, CAST(floor(arrival_s / $window_s) AS BIGINT) AS w
    FROM requests
    WHERE arrival_s IS NOT NULL AND ($runs IS NULL OR list_contains($runs, run_id))
),
bs AS (
    SELECT run_id, w, round(batch_size) AS b, count(*) AS k
    FROM r WHERE batch_size IS NOT NULL
    GROUP BY run_id, w, round(batch_size)
),
m AS (
    SELECT run_id, w, count(*) AS n_requests, count(batch_size) AS n_sized,
           avg(kv_cache_hit_rate) AS kv_cache_hit_rate, avg(num_preemptions) AS num_preemptions,
           avg(tpot_ms) AS tpot_ms, avg(batch_size) AS batch_size, avg(ttft_ms) AS ttft_ms,
           avg(queue_ms) AS queue_ms, avg(e2e_ms) AS e2e_ms, avg(prefill_ms) AS prefill_ms,
           avg(decode_ms) AS decode_ms, avg(prompt_tokens) AS prompt_tokens,
           avg(completion_tokens) AS completion_tokens
    FROM r GROUP BY run_id, w
),
ent AS (
    SELECT bs.run_id, bs.w, -sum((bs.k / m.n_sized) * log2(bs.k / m.n_sized)) AS batch_size_entropy
    FROM bs JOIN m ON m.run_id = bs.run_id AND m.w = bs.w
    GROUP BY bs.run_id, bs.w
)
SELECT m.run_id, m.w, m.n_requests, m.kv_cache_hit_rate, m.num_preemptions, m.tpot_ms,
       m.batch_size, m.ttft_ms, m.queue_ms, m.e2e_ms, m.prefill_ms, m.decode_ms,
       m.prompt_tokens, m.completion_tokens, ent.batch_size_entropy
FROM m LEFT JOIN ent ON ent.run_id = m.run_id AND ent.w = m.w
ORDER BY m.run_id, m.w
