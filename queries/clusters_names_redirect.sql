-- Purpose: earlier renames that ended at $old now end at $new (no chains a -> b -> c).
-- Params:  $old VARCHAR, $new VARCHAR
-- Returns: nothing (updates cluster_names)
UPDATE cluster_names SET display_name = $new WHERE display_name = $old
