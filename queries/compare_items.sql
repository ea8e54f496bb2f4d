-- Purpose: the eval items that the item-by-item run comparison pairs: every case with a known
--          correctness, the request it is bound to (the case_best_link view) and that
--          request's engine state.
-- Params:  none
-- Returns: case_id, eval_id, model, benchmark, prompt_hash, correct, run_id, request_id,
--          kv_cache_hit_rate, num_preemptions, batch_size, queue_ms
SELECT c.case_id, c.eval_id, c.model, c.benchmark, c.prompt_hash, c.correct,
       l.run_id, l.request_id, q.kv_cache_hit_rate, q.num_preemptions, q.batch_size, q.queue_ms
FROM cases c
LEFT JOIN case_best_link l ON l.case_id = c.case_id
LEFT JOIN requests q ON q.run_id = l.run_id AND q.request_id = l.request_id
WHERE c.correct IS NOT NULL
ORDER BY c.eval_id, c.case_id
