-- Purpose: stage each run's model (temp table _assoc_runs), normalised like
--          _assoc_cases.model_key: the name after its last '/', lower-cased, letters and
--          digits only.
-- Params:  none
-- Returns: (creates) _assoc_runs(run_id VARCHAR, model_key VARCHAR)
CREATE OR REPLACE TEMP TABLE _assoc_runs AS
SELECT run_id,
       nullif(lower(regexp_replace(regexp_replace(model, '^.*/', ''), '[^A-Za-z0-9]', '', 'g')),
              '') AS model_key
FROM runs
