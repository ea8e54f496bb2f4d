-- Purpose: give every badcase without a cluster its category as cluster ('uncategorised'
--          when it has none); a cluster from the input (or an earlier rename / auto
--          clustering) is left alone.
-- Params:  $fallback VARCHAR (the name for badcases without a category)
-- Returns: nothing (updates cases.cluster)
UPDATE cases SET cluster = coalesce(nullif(trim(category), ''), $fallback)
WHERE correct IS false AND cluster IS NULL
