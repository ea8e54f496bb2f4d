"""Tuning constants of the what-if (run_whatif, whatif_scale and their refuters): simulation
and draw counts, interval level, fewest rows, spline knots, the data-subset share. Each one
changes results; the timings they were chosen for are bench/whatif.py's."""
from __future__ import annotations

#: Simulations per refuter (DoWhy's default is 100; 10 keeps estimate + 3 refuters on 50k rows
#: under 3 s on one core (bench/whatif.py) and is enough for a mean of the refuted estimate).
N_SIMULATIONS = 10
#: Coefficient draws of the parametric bootstrap interval.
N_DRAWS = 400
CONFIDENCE = 0.95
#: Fewest usable rows an estimate is attempted on.
MIN_ROWS = 30
#: Knots of the treatment's and of each adjustment variable's spline (see splines.spline_basis).
N_KNOTS_TREATMENT = 5
N_KNOTS_ADJUST = 4
#: Share of rows each data-subset refutation keeps.
SUBSET_FRACTION = 0.8
#: Most rows the refuters refit on: past it they run on a stratified random sample of this
#: size (refute.stratified_sample) with its own estimate and interval, and the result states
#: the sample and its error. Each refuter refits N_SIMULATIONS times, so on all ~900k cases of
#: a 10M-request cohort they took 64 s of the section's 70; 100k rows keep a 1M-request
#: cohort (~90k cases) on all rows.
REFUTE_ROWS = 100_000
