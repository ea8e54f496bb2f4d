-- Purpose: before recording a rename to $new, forget any earlier rename away from $new (the
--          user now uses that name) and rows that map a name to itself.
-- Params:  $new VARCHAR
-- Returns: nothing (deletes from cluster_names)
DELETE FROM cluster_names WHERE cluster = $new OR cluster = display_name
