-- Purpose: record the rename $old -> $new with the session.
-- Params:  $old VARCHAR, $new VARCHAR
-- Returns: nothing (inserts or replaces a cluster_names row)
INSERT OR REPLACE INTO cluster_names (cluster, display_name) VALUES ($old, $new)
