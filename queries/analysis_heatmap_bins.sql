-- Purpose: bin points (x, y) on equal-width edges and average a value per cell; the points
--          come from a CTE `pts(x, y, v)` the caller binds (request-level heatmap).
--          Cell index ix = floor((x - $x0) / $dx) clamped to [0, $nx - 1] (the last bin holds
--          its upper edge); the same for y.
-- Params:  $x0, $dx, $nx, $y0, $dy, $ny (DOUBLE / INTEGER; dx, dy > 0)
-- Returns: ix, iy, n (points in the cell), value (mean v over points with v; NULL if none)
SELECT least(greatest(CAST(floor((x - $x0) / $dx) AS BIGINT), 0), $nx - 1) AS ix,
       least(greatest(CAST(floor((y - $y0) / $dy) AS BIGINT), 0), $ny - 1) AS iy,
       count(*) AS n, avg(v) AS value
FROM pts
WHERE x IS NOT NULL AND y IS NOT NULL AND isfinite(x) AND isfinite(y)
GROUP BY ALL
