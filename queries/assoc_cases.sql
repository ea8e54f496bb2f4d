-- Purpose: stage the cases to bind (temp table _assoc_cases), with normalised keys.
--          norm_id: the request id trimmed, lower-cased, without a leading chatcmpl-,
--          cmpl-, req- or request- (separator - _ or :) and, for ids of 18+ characters,
--          without vLLM's trailing per-prompt "-0"; model_key: the model name after its
--          last '/', lower-cased, letters and digits only; run_hint: cases.extra->>'run_id'
--          (a case that knows which run served it only binds inside that run).
-- Params:  none
-- Returns: (creates) _assoc_cases(ck BIGINT, case_id, eval_id, request_id, norm_id,
--          prompt_hash, prompt_tokens, timestamp_s, model_key, run_hint)
CREATE OR REPLACE TEMP TABLE _assoc_cases AS
WITH c AS (
    SELECT c.case_id, c.eval_id,
           nullif(trim(c.request_id), '') AS request_id,
           c.prompt_hash, c.prompt_tokens, c.timestamp_s,
           nullif(lower(regexp_replace(regexp_replace(coalesce(c.model, e.model), '^.*/', ''),
                                       '[^A-Za-z0-9]', '', 'g')), '') AS model_key,
           CASE WHEN c.extra IS NOT NULL AND c.extra LIKE '%run_id%'
                THEN json_extract_string(c.extra, '$.run_id') END AS run_hint
    FROM cases c LEFT JOIN evals e USING (eval_id)
), n AS (
    SELECT *, regexp_replace(lower(request_id), '^(chatcmpl|cmpl|req|request)[-_:]', '') AS n0
    FROM c
)
SELECT row_number() OVER (ORDER BY case_id) AS ck, case_id, eval_id, request_id,
       CASE WHEN length(n0) >= 18 AND n0 LIKE '%-0' THEN left(n0, length(n0) - 2) ELSE n0 END AS norm_id,
       prompt_hash, prompt_tokens, timestamp_s, model_key, run_hint
FROM n
