-- Purpose: rename a badcase cluster on the cases (merging into `new` if it exists).
-- Params:  $old VARCHAR, $new VARCHAR
-- Returns: nothing (updates cases.cluster)
UPDATE cases SET cluster = $new WHERE cluster = $old
