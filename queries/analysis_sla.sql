-- Purpose: SLA attainment and goodput overall and by run, engine version, eval category and
--          tenant.
--          A request is judged when it errored (a failure) or has every thresholded metric;
--          it meets the SLA when it did not error and every metric is within its threshold.
--          The caller replaces __JUDGED__ and __MET__ with boolean expressions over `r`, built
--          from quote_ident-ed column names and $t0, $t1, ... threshold parameters.
--          Goodput = met requests (or their completion tokens) per second of the group's runs,
--          a run lasting from its first arrival to its last completion (arrival_s + e2e_ms).
--          The caller replaces __EVAL__ with "" (every run) or, for one eval, with
--          "AND c.eval_id = $eval_id" and __RUNS__ with "" or
--          "WHERE run_id IN (SELECT DISTINCT run_id FROM cat)": only the runs holding a request
--          bound to a case of that eval, and the categories of that eval's cases (a constant
--          "$eval_id IS NULL OR ..." made every report scan the links twice: 0.33 -> 0.48 s on
--          1M requests).
--          Every request is counted once per (run, tenant), with its run's span, without a
--          join; only the requests a case is bound to are joined to their category, reading
--          `requests` directly so DuckDB filters the scan by the join's keys (a LEFT JOIN of
--          every request to the categories, grouped by run, category and tenant in GROUPING
--          SETS, and a second scan for the spans: 0.53 s CPU at 1M requests; 0.44 s this
--          way). Requests bound to no case, or only to cases without a category, have no
--          category row: jc joins only the categorised requests of `cat` (the caller drops NULL
--          keys of category and tenant, so a NULL category row was computed for nothing; with
--          no category at all the build side is empty and the scan of every request for jc is
--          skipped: 10M requests, 1M bound, 2.2 -> 0.55 s CPU).
-- Params:  $t0, $t1, ... DOUBLE (thresholds), $eval_id VARCHAR (only with the eval filter)
-- Returns: dim ('all' | 'run' | 'version' | 'category' | 'tenant'), key, n (judged), n_met,
--          n_unjudged, share (n_met / n), goodput_rps, goodput_tps, span_s
WITH cat AS (
    SELECT l.run_id, l.request_id, min(c.category) AS category
    FROM case_links l JOIN cases c ON c.case_id = l.case_id
    WHERE true __EVAL__
    GROUP BY l.run_id, l.request_id
),
jt AS (  -- one pass over the requests: per (run, tenant), with the run's first arrival and last completion
    SELECT r.run_id, r.tenant,
           count(*) FILTER (WHERE __JUDGED__) AS n,
           count(*) FILTER (WHERE __JUDGED__ AND __MET__) AS n_met,
           count(*) FILTER (WHERE NOT __JUDGED__) AS n_unjudged,
           sum(r.completion_tokens) FILTER (WHERE __JUDGED__ AND __MET__) AS tok_met,
           min(r.arrival_s) AS first_s, max(r.arrival_s + coalesce(r.e2e_ms, 0) / 1000.0) AS last_s
    FROM (SELECT * FROM requests __RUNS__) r
    GROUP BY r.run_id, r.tenant
),
jc AS (  -- the requests bound to a case, per (run, category)
    SELECT r.run_id, cat.category,
           count(*) FILTER (WHERE __JUDGED__) AS n,
           count(*) FILTER (WHERE __JUDGED__ AND __MET__) AS n_met,
           count(*) FILTER (WHERE NOT __JUDGED__) AS n_unjudged,
           sum(r.completion_tokens) FILTER (WHERE __JUDGED__ AND __MET__) AS tok_met
    FROM (SELECT * FROM requests __RUNS__) r
    JOIN (SELECT * FROM cat WHERE category IS NOT NULL) cat
      ON cat.run_id = r.run_id AND cat.request_id = r.request_id
    GROUP BY r.run_id, cat.category
),
span AS (
    SELECT run_id, max(last_s) - min(first_s) AS span_s FROM jt GROUP BY run_id
),
k AS (
    SELECT 'run' AS dim, jt.run_id AS key, jt.run_id, CAST(sum(n) AS BIGINT) AS n,
           CAST(sum(n_met) AS BIGINT) AS n_met, CAST(sum(n_unjudged) AS BIGINT) AS n_unjudged,
           coalesce(sum(tok_met), 0) AS tok_met
    FROM jt GROUP BY jt.run_id
    UNION ALL
    SELECT 'version', ru.engine_version, jt.run_id, CAST(sum(n) AS BIGINT),
           CAST(sum(n_met) AS BIGINT), CAST(sum(n_unjudged) AS BIGINT), coalesce(sum(tok_met), 0)
    FROM jt LEFT JOIN runs ru ON ru.run_id = jt.run_id GROUP BY jt.run_id, ru.engine_version
    UNION ALL
    SELECT 'tenant', jt.tenant, jt.run_id, CAST(sum(n) AS BIGINT), CAST(sum(n_met) AS BIGINT),
           CAST(sum(n_unjudged) AS BIGINT), coalesce(sum(tok_met), 0)
    FROM jt GROUP BY jt.run_id, jt.tenant
    UNION ALL
    SELECT 'category', jc.category, jc.run_id, CAST(sum(n) AS BIGINT),
           CAST(sum(n_met) AS BIGINT), CAST(sum(n_unjudged) AS BIGINT), coalesce(sum(tok_met), 0)
    FROM jc GROUP BY jc.run_id, jc.category
),
ka AS (
    SELECT * FROM k
    UNION ALL
    SELECT 'all', 'all', run_id, n, n_met, n_unjudged, tok_met FROM k WHERE dim = 'run'
)
SELECT ka.dim, ka.key, sum(n) AS n, sum(n_met) AS n_met, sum(n_unjudged) AS n_unjudged,
       sum(n_met) / nullif(sum(n), 0) AS share,
       sum(n_met) / nullif(sum(span.span_s), 0) AS goodput_rps,
       sum(tok_met) / nullif(sum(span.span_s), 0) AS goodput_tps,
       sum(span.span_s) AS span_s
FROM ka LEFT JOIN span ON span.run_id = ka.run_id
GROUP BY ka.dim, ka.key
ORDER BY ka.dim, ka.key NULLS LAST
