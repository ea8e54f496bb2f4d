-- Purpose: per run, the aggregates the run comparison recomputes from the successful requests
--          (error IS NULL): mean / median / p90 / p99 of TTFT, TPOT and E2E (quantile_cont is
--          numpy's linear interpolation, as vLLM's and SGLang's bench serving compute pNN),
--          counts, token sums, median lengths, and the span from the first arrival to the last
--          finish (the duration that throughputs divide by when none is published).
-- Params:  $run_ids VARCHAR[]
-- Returns: run_id, n, ttft_ms_{mean,median,p90,p99}, tpot_ms_*, e2e_ms_*, prompt_tokens_sum,
--          completion_tokens_sum, input_len, output_len (medians), span_s, n_failed, n_good
--          (successful requests within $ttft_slo_ms and $tpot_slo_ms: vLLM's --goodput)
WITH q AS (SELECT * FROM requests WHERE list_contains($run_ids, run_id))
SELECT run_id,
       count(*) FILTER (WHERE error IS NULL) AS n,
       count(*) FILTER (WHERE error IS NOT NULL) AS n_failed,
       avg(ttft_ms) FILTER (WHERE error IS NULL) AS ttft_ms_mean,
       quantile_cont(ttft_ms, 0.5) FILTER (WHERE error IS NULL) AS ttft_ms_median,
       quantile_cont(ttft_ms, 0.9) FILTER (WHERE error IS NULL) AS ttft_ms_p90,
       quantile_cont(ttft_ms, 0.99) FILTER (WHERE error IS NULL) AS ttft_ms_p99,
       avg(tpot_ms) FILTER (WHERE error IS NULL) AS tpot_ms_mean,
       quantile_cont(tpot_ms, 0.5) FILTER (WHERE error IS NULL) AS tpot_ms_median,
       quantile_cont(tpot_ms, 0.9) FILTER (WHERE error IS NULL) AS tpot_ms_p90,
       quantile_cont(tpot_ms, 0.99) FILTER (WHERE error IS NULL) AS tpot_ms_p99,
       avg(e2e_ms) FILTER (WHERE error IS NULL) AS e2e_ms_mean,
       quantile_cont(e2e_ms, 0.5) FILTER (WHERE error IS NULL) AS e2e_ms_median,
       quantile_cont(e2e_ms, 0.9) FILTER (WHERE error IS NULL) AS e2e_ms_p90,
       quantile_cont(e2e_ms, 0.99) FILTER (WHERE error IS NULL) AS e2e_ms_p99,
       sum(prompt_tokens) FILTER (WHERE error IS NULL) AS prompt_tokens_sum,
       sum(completion_tokens) FILTER (WHERE error IS NULL) AS completion_tokens_sum,
       quantile_cont(prompt_tokens, 0.5) FILTER (WHERE error IS NULL) AS input_len,
       quantile_cont(completion_tokens, 0.5) FILTER (WHERE error IS NULL) AS output_len,
       max(arrival_s + e2e_ms / 1000.0) - min(arrival_s) AS span_s,
       count(*) FILTER (WHERE error IS NULL AND ttft_ms <= $ttft_slo_ms
                        AND coalesce(tpot_ms, 0) <= $tpot_slo_ms) AS n_good
FROM q
GROUP BY run_id
