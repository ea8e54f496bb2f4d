-- Purpose: one row per case with its best binding (lowest level, then highest score) and the
--          bound request's engine metrics; the row view that case selections and cohorts use.
--          The best link is queries/case_best_link.sql, included (this query runs in the
--          warehouse engine when the requests live there, which has no case_best_link view).
-- Params:  none
-- Returns: case_id, eval_id, model, benchmark, category, cluster, correct, badcase (0/1),
--          run_id, request_id, level, score, engine_version, arrival_s, kv_cache_hit_rate,
--          num_preemptions, tpot_ms, batch_size, ttft_ms, queue_ms, e2e_ms, prefill_ms,
--          decode_ms, cached_prompt_tokens, finish_reason, error, tenant (NULL when unbound),
--          prompt_tokens / completion_tokens (the request's counts, else the case's own),
--          case_prompt_tokens, case_completion_tokens, prompt_chars, prediction_chars,
--          engine_running, engine_waiting, engine_kv_usage, engine_prefix_hit_rate (the engine's
--          state over the bound request's lifetime: queries/request_engine_context.sql)
WITH link AS (
-- include: case_best_link
),
ectx AS (
-- include: request_engine_context
)
SELECT c.case_id, c.eval_id, c.model, c.benchmark, c.category, c.cluster, c.correct,
       CASE WHEN c.correct THEN 0 WHEN NOT c.correct THEN 1 END AS badcase,
       l.run_id, l.request_id, l.level, l.score, ru.engine_version,
       r.arrival_s, r.kv_cache_hit_rate, r.num_preemptions, r.tpot_ms, r.batch_size, r.ttft_ms,
       r.queue_ms, r.e2e_ms, r.prefill_ms, r.decode_ms, r.cached_prompt_tokens,
       r.finish_reason, r.error, r.tenant,
       coalesce(r.prompt_tokens, c.prompt_tokens) AS prompt_tokens,
       coalesce(r.completion_tokens, c.completion_tokens) AS completion_tokens,
       c.prompt_tokens AS case_prompt_tokens, c.completion_tokens AS case_completion_tokens,
       length(c.prompt) AS prompt_chars, length(c.prediction) AS prediction_chars,
       ec.engine_running, ec.engine_waiting, ec.engine_kv_usage, ec.engine_prefix_hit_rate
FROM cases c
LEFT JOIN link l ON l.case_id = c.case_id
LEFT JOIN requests r ON r.run_id = l.run_id AND r.request_id = l.request_id
LEFT JOIN runs ru ON ru.run_id = l.run_id
LEFT JOIN ectx ec ON ec.run_id = l.run_id AND ec.request_id = l.request_id
