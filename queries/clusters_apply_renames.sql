-- Purpose: apply the session's cluster renames (cluster_names: old name -> display name) to
--          cases that still carry an old name, e.g. cases loaded after the rename.
-- Params:  none
-- Returns: nothing (updates cases.cluster)
UPDATE cases SET cluster = n.display_name
FROM cluster_names n
WHERE cases.cluster = n.cluster AND n.display_name IS NOT NULL AND n.display_name <> n.cluster
