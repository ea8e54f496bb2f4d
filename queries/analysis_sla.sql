-- Purpose: SLA attainment and goodput grouped by a key (run, version, category or tenant).
--          A request is judged when it errored (a failure) or has every thresholded metric;
--          it meets the SLA when it did not error and every metric is within its threshold.
--          The caller replaces __JUDGED__ and __MET__ with boolean expressions built from
--          quoted column names and $t0, $t1, ... threshold parameters, and __KEY__ with the
--          grouping expression over `j` (j.run_id, j.engine_version, j.category, j.tenant).
--          Goodput = met requests (or their completion tokens) per second of the group's runs,
--          a run lasting from its first arrival to its last completion (arrival_s + e2e_ms).
-- Params:  $t0, $t1, ... DOUBLE (thresholds)
-- Returns: key, n (judged), n_met, n_unjudged, share (n_met / n), goodput_rps, goodput_tps,
--          span_s
WITH cat AS (
    SELECT l.run_id, l.request_id, min(c.category) AS category
    FROM case_links l JOIN cases c ON c.case_id = l.case_id
    GROUP BY l.run_id, l.request_id
),
j AS (
    SELECT r.run_id, r.request_id, ru.engine_version, cat.category, r.tenant,
           r.completion_tokens, __JUDGED__ AS judged, __MET__ AS met
    FROM requests r
    LEFT JOIN runs ru ON ru.run_id = r.run_id
    LEFT JOIN cat ON cat.run_id = r.run_id AND cat.request_id = r.request_id
),
span AS (
    SELECT run_id,
           max(arrival_s + coalesce(e2e_ms, 0) / 1000.0) - min(arrival_s) AS span_s
    FROM requests GROUP BY run_id
),
g AS (
    SELECT __KEY__ AS key, j.run_id,
           count(*) FILTER (WHERE judged) AS n,
           count(*) FILTER (WHERE judged AND met) AS n_met,
           count(*) FILTER (WHERE NOT judged) AS n_unjudged,
           coalesce(sum(completion_tokens) FILTER (WHERE judged AND met), 0) AS tok_met
    FROM j GROUP BY ALL
)
SELECT g.key, sum(n) AS n, sum(n_met) AS n_met, sum(n_unjudged) AS n_unjudged,
       sum(n_met) / nullif(sum(n), 0) AS share,
       sum(n_met) / nullif(sum(span.span_s), 0) AS goodput_rps,
       sum(tok_met) / nullif(sum(span.span_s), 0) AS goodput_tps,
       sum(span.span_s) AS span_s
FROM g LEFT JOIN span ON span.run_id = g.run_id
GROUP BY g.key
ORDER BY g.key NULLS LAST
