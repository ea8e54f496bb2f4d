-- Purpose: set the cluster of the cases listed in the registered frame _cluster_assign
--          (auto clustering).
-- Params:  none (reads _cluster_assign(case_id VARCHAR, cluster VARCHAR))
-- Returns: nothing (updates cases.cluster)
UPDATE cases SET cluster = a.cluster
FROM _cluster_assign a
WHERE cases.case_id = a.case_id
