-- Purpose: the badcases to cluster by text, of one eval or of all.
-- Params:  $eval_id VARCHAR (NULL = every eval)
-- Returns: case_id, text (prompt and prediction joined by a newline; '' when both missing)
SELECT case_id, concat_ws(chr(10), prompt, prediction) AS text
FROM cases
WHERE correct IS false AND ($eval_id IS NULL OR eval_id = $eval_id)
ORDER BY case_id
