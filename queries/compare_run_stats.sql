-- Purpose: per run, the aggregates the run comparison recomputes from the successful requests
--          (error IS NULL): mean / median / p90 / p99 of TTFT, TPOT and E2E (quantile_cont is
--          numpy's linear interpolation, as vLLM's and SGLang's bench serving compute pNN),
--          counts, token sums, median lengths, and the span from the first arrival to the last
--          finish (the duration that throughputs divide by when none is published).
--          One list-form quantile_cont(x, [q, ...]) per column, not one call per quantile:
--          each call holds every value of its column (20M rows: +498 MB / 13.4 s against
--          +1,185 MB / 30.6 s for 11 calls; docs/performance.md). Lists index from 1; the
--          Spark translation writes percentile(x, array(...)) and [0]-based indexes (SQLGlot).
-- Params:  $run_ids VARCHAR[]
-- Returns: run_id, n, ttft_ms_{mean,median,p90,p99}, tpot_ms_*, e2e_ms_*, prompt_tokens_sum,
--          completion_tokens_sum, input_len, output_len (medians), span_s, n_failed, n_good
--          (successful requests within $ttft_slo_ms and $tpot_slo_ms: vLLM's --goodput)
WITH q AS (SELECT * FROM requests WHERE list_contains($run_ids, run_id)),
s AS (
    SELECT run_id,
           count(*) FILTER (WHERE error IS NULL) AS n,
           count(*) FILTER (WHERE error IS NOT NULL) AS n_failed,
           avg(ttft_ms) FILTER (WHERE error IS NULL) AS ttft_ms_mean,
           quantile_cont(ttft_ms, [0.5, 0.9, 0.99]) FILTER (WHERE error IS NULL) AS ttft_q,
           avg(tpot_ms) FILTER (WHERE error IS NULL) AS tpot_ms_mean,
           quantile_cont(tpot_ms, [0.5, 0.9, 0.99]) FILTER (WHERE error IS NULL) AS tpot_q,
           avg(e2e_ms) FILTER (WHERE error IS NULL) AS e2e_ms_mean,
           quantile_cont(e2e_ms, [0.5, 0.9, 0.99]) FILTER (WHERE error IS NULL) AS e2e_q,
           sum(prompt_tokens) FILTER (WHERE error IS NULL) AS prompt_tokens_sum,
           sum(completion_tokens) FILTER (WHERE error IS NULL) AS completion_tokens_sum,
           quantile_cont(prompt_tokens, 0.5) FILTER (WHERE error IS NULL) AS input_len,
           quantile_cont(completion_tokens, 0.5) FILTER (WHERE error IS NULL) AS output_len,
           max(arrival_s + e2e_ms / 1000.0) - min(arrival_s) AS span_s,
           count(*) FILTER (WHERE error IS NULL AND ttft_ms <= $ttft_slo_ms
                            AND coalesce(tpot_ms, 0) <= $tpot_slo_ms) AS n_good
    FROM q
    GROUP BY run_id
)
SELECT run_id, n, n_failed,
       ttft_ms_mean, ttft_q[1] AS ttft_ms_median, ttft_q[2] AS ttft_ms_p90, ttft_q[3] AS ttft_ms_p99,
       tpot_ms_mean, tpot_q[1] AS tpot_ms_median, tpot_q[2] AS tpot_ms_p90, tpot_q[3] AS tpot_ms_p99,
       e2e_ms_mean, e2e_q[1] AS e2e_ms_median, e2e_q[2] AS e2e_ms_p90, e2e_q[3] AS e2e_ms_p99,
       prompt_tokens_sum, completion_tokens_sum, input_len, output_len, span_s, n_good
FROM s
