-- Purpose: each bound request's engine context (requests some case is linked to: the cohort's
--          rows; all requests would cost a join per request): the engine's logged state over the
--          request's lifetime, from the engine_stats of a stats run (engine log / scrape) on the same clock.
--          Lifetime = [arrival, arrival + E2E] (just the arrival when E2E is missing), on the
--          unix clock: arrival_s itself when it is a unix time (>= 1e9), else runs.started_at +
--          arrival_s. A stats run's ts_s is unix already (clock 'unix…'), or counts from its
--          first stamp (runs.config.first_stat_line_time): 'MM-DD HH:MM:SS' takes the year, and
--          'HH:MM:SS' the date, of the request run's first arrival (log times read as UTC).
--          Matching: a stats run serves a request when its engine kind and model do not
--          contradict the request's run and its sample span covers the arrival; a request that
--          two stats runs cover is left without context (ambiguous), never guessed.
--          Per engine (data-parallel rank) the state is a step function: the mean over the sample
--          in force at arrival (ASOF: the last one at or before it) and every sample up to the
--          finish (samples of one engine at one second averaged first). Across engines running
--          and waiting are summed (server-wide: a log does not say which engine served the
--          request), KV usage and prefix hit rate averaged.
-- Params:  none
-- Returns: run_id, request_id, stats_run_id, engine_running, engine_waiting, engine_kv_usage,
--          engine_prefix_hit_rate (NULL where no sample has the value), engine_samples
WITH req AS (
    SELECT r.run_id, r.request_id, ru.engine AS kind, ru.model,
           CASE WHEN r.arrival_s >= 1e9 THEN r.arrival_s
                WHEN ru.started_at IS NOT NULL THEN epoch(ru.started_at) + r.arrival_s END AS t0,
           coalesce(r.e2e_ms, 0) / 1000.0 AS life_s
    FROM requests r JOIN runs ru ON ru.run_id = r.run_id
    WHERE r.arrival_s IS NOT NULL
      AND (r.run_id, r.request_id) IN (SELECT run_id, request_id FROM case_links)
      AND EXISTS (SELECT 1 FROM engine_stats)
),
samples AS (
    SELECT run_id AS stats_run_id, coalesce(engine, '') AS engine,
           dense_rank() OVER (ORDER BY run_id, coalesce(engine, '')) AS k, ts_s,
           avg(running) AS running, avg(waiting) AS waiting, avg(kv_usage_gpu) AS kv,
           avg(prefix_cache_hit_rate) AS hit
    FROM engine_stats WHERE ts_s IS NOT NULL
    GROUP BY run_id, coalesce(engine, ''), ts_s
),
stat_runs AS (
    SELECT s.stats_run_id, ru.engine AS kind, ru.model,
           coalesce(json_extract_string(ru.config, '$.clock'), '') LIKE 'unix%' AS is_unix,
           json_extract_string(ru.config, '$.first_stat_line_time') AS first_stamp,
           min(s.ts_s) AS lo, max(s.ts_s) AS hi
    FROM samples s JOIN runs ru ON ru.run_id = s.stats_run_id
    GROUP BY ALL
),
req_runs AS (
    SELECT run_id, any_value(kind) AS kind, any_value(model) AS model, min(t0) AS first_t0
    FROM req WHERE t0 IS NOT NULL GROUP BY run_id
),
pairs AS (
    SELECT rr.run_id, sr.stats_run_id, sr.lo, sr.hi,
           CASE WHEN sr.is_unix THEN 0.0
                WHEN length(sr.first_stamp) = 14 THEN epoch(try_strptime(
                    strftime(make_timestamp(CAST(rr.first_t0 * 1e6 AS BIGINT)), '%Y') || '-' || sr.first_stamp,
                    '%Y-%m-%d %H:%M:%S'))
                WHEN length(sr.first_stamp) = 8 THEN epoch(try_strptime(
                    strftime(make_timestamp(CAST(rr.first_t0 * 1e6 AS BIGINT)), '%Y-%m-%d') || ' ' || sr.first_stamp,
                    '%Y-%m-%d %H:%M:%S'))
           END AS offset_s
    FROM req_runs rr JOIN stat_runs sr
      ON (rr.kind IS NULL OR sr.kind IS NULL OR lower(rr.kind) = lower(sr.kind))
     AND (rr.model IS NULL OR sr.model IS NULL OR rr.model = sr.model)
     AND rr.run_id <> sr.stats_run_id
),
chosen AS (
    SELECT q.run_id, q.request_id, p.stats_run_id,
           q.t0 - p.offset_s AS a_s, q.t0 - p.offset_s + q.life_s AS f_s
    FROM req q JOIN pairs p ON p.run_id = q.run_id
    WHERE p.offset_s IS NOT NULL AND q.t0 - p.offset_s BETWEEN p.lo AND p.hi
    QUALIFY count(*) OVER (PARTITION BY q.run_id, q.request_id) = 1
),
per_engine_req AS (
    SELECT c.*, e.engine, e.k
    FROM chosen c JOIN (SELECT DISTINCT stats_run_id, engine, k FROM samples) e
      ON e.stats_run_id = c.stats_run_id
),
-- running sums and counts of the non-NULL values, per engine in time order: the samples in
-- (arrival, finish] are the difference of two ASOF lookups (no range join)
cum AS (
    SELECT *,
           coalesce(sum(running) OVER w, 0) AS s_run, count(running) OVER w AS n_run,
           coalesce(sum(waiting) OVER w, 0) AS s_wait, count(waiting) OVER w AS n_wait,
           coalesce(sum(kv) OVER w, 0) AS s_kv, count(kv) OVER w AS n_kv,
           coalesce(sum(hit) OVER w, 0) AS s_hit, count(hit) OVER w AS n_hit,
           count(*) OVER w AS n_all
    FROM samples
    WINDOW w AS (PARTITION BY k ORDER BY ts_s ROWS UNBOUNDED PRECEDING)
),
at_arrival AS (  -- the sample in force at arrival: the last one at or before it
    SELECT c.run_id, c.request_id, c.stats_run_id, c.engine, c.f_s, a.*
        EXCLUDE (stats_run_id, engine, ts_s)
    FROM per_engine_req c ASOF JOIN cum a ON a.k = c.k AND c.a_s >= a.ts_s
),
spans AS (
    SELECT a.run_id, a.request_id, a.stats_run_id, a.engine,
           (coalesce(a.running, 0) + f.s_run - a.s_run)
               / nullif((a.running IS NOT NULL)::INT + f.n_run - a.n_run, 0) AS running,
           (coalesce(a.waiting, 0) + f.s_wait - a.s_wait)
               / nullif((a.waiting IS NOT NULL)::INT + f.n_wait - a.n_wait, 0) AS waiting,
           (coalesce(a.kv, 0) + f.s_kv - a.s_kv)
               / nullif((a.kv IS NOT NULL)::INT + f.n_kv - a.n_kv, 0) AS kv,
           (coalesce(a.hit, 0) + f.s_hit - a.s_hit)
               / nullif((a.hit IS NOT NULL)::INT + f.n_hit - a.n_hit, 0) AS hit,
           1 + f.n_all - a.n_all AS n
    FROM at_arrival a ASOF JOIN cum f ON f.k = a.k AND a.f_s >= f.ts_s
),
per_engine AS (SELECT * FROM spans)
SELECT run_id, request_id, any_value(stats_run_id) AS stats_run_id,
       sum(running) AS engine_running, sum(waiting) AS engine_waiting,
       avg(kv) AS engine_kv_usage, avg(hit) AS engine_prefix_hit_rate,
       sum(n) AS engine_samples
FROM per_engine
GROUP BY run_id, request_id
