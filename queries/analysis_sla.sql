-- Purpose: SLA attainment and goodput overall and by run, engine version, eval category and
--          tenant, in one scan (GROUPING SETS).
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
-- Params:  $t0, $t1, ... DOUBLE (thresholds), $eval_id VARCHAR (only with the eval filter)
-- Returns: dim ('all' | 'run' | 'version' | 'category' | 'tenant'), key, n (judged), n_met,
--          n_unjudged, share (n_met / n), goodput_rps, goodput_tps, span_s
WITH cat AS (
    SELECT l.run_id, l.request_id, min(c.category) AS category
    FROM case_links l JOIN cases c ON c.case_id = l.case_id
    WHERE true __EVAL__
    GROUP BY l.run_id, l.request_id
),
rq AS (
    SELECT * FROM requests __RUNS__
),
j AS (
    -- one pass over the requests: per (run, category, tenant), then the grouping sets below
    -- run over these few rows, not over every request four times (10M requests: 1.6 s before)
    SELECT r.run_id, cat.category, r.tenant,
           count(*) FILTER (WHERE __JUDGED__) AS n,
           count(*) FILTER (WHERE __JUDGED__ AND __MET__) AS n_met,
           count(*) FILTER (WHERE NOT __JUDGED__) AS n_unjudged,
           sum(r.completion_tokens) FILTER (WHERE __JUDGED__ AND __MET__) AS tok_met
    FROM rq r
    LEFT JOIN cat ON cat.run_id = r.run_id AND cat.request_id = r.request_id
    GROUP BY ALL
),
span AS (
    SELECT run_id,
           max(arrival_s + coalesce(e2e_ms, 0) / 1000.0) - min(arrival_s) AS span_s
    FROM rq GROUP BY run_id
),
g AS (
    SELECT CASE WHEN grouping(engine_version) = 0 THEN 'version'
                WHEN grouping(category) = 0 THEN 'category'
                WHEN grouping(tenant) = 0 THEN 'tenant' ELSE 'run' END AS dim,
           coalesce(engine_version, category, tenant) AS key, j.run_id,
           CAST(sum(n) AS BIGINT) AS n,
           CAST(sum(n_met) AS BIGINT) AS n_met,
           CAST(sum(n_unjudged) AS BIGINT) AS n_unjudged,
           coalesce(sum(tok_met), 0) AS tok_met
    FROM j LEFT JOIN runs ru ON ru.run_id = j.run_id
    GROUP BY GROUPING SETS ((j.run_id), (j.run_id, engine_version), (j.run_id, category),
                            (j.run_id, tenant))
),
k AS (
    SELECT dim, CASE WHEN dim = 'run' THEN g.run_id ELSE key END AS key, g.run_id, n, n_met,
           n_unjudged, tok_met
    FROM g
    UNION ALL
    SELECT 'all', 'all', run_id, n, n_met, n_unjudged, tok_met FROM g WHERE dim = 'run'
)
SELECT k.dim, k.key, sum(n) AS n, sum(n_met) AS n_met, sum(n_unjudged) AS n_unjudged,
       sum(n_met) / nullif(sum(n), 0) AS share,
       sum(n_met) / nullif(sum(span.span_s), 0) AS goodput_rps,
       sum(tok_met) / nullif(sum(span.span_s), 0) AS goodput_tps,
       sum(span.span_s) AS span_s
FROM k LEFT JOIN span ON span.run_id = k.run_id
GROUP BY k.dim, k.key
ORDER BY k.dim, k.key NULLS LAST
