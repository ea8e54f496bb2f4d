"""Benchmark of issue 35: the conclusion on generated datasets whose truth is known, per kind of
tests/dgp.py (workload confounding, Simpson, planted effects, versions, what-if).

    .venv/bin/python bench/workload_dgp.py [--n 30] [--seed 0] [--kinds a,b] [--scale 1.0]

Per kind, `--n` datasets (seeds seed..seed+n-1) at the kind's full size (tests/dgp.py SIZES,
scaled by --scale), and the rates with 95% Wilson intervals: named (at least one module named,
or for versions a regression flagged), found (one of the truth's modules / regressions), wrong
(a module or regression outside the truth's), covers (the what-if interval holds the true
effect), and for the planted cluster the noise clusters beside it named. Targets (issue 35):
nothing blamed on workload or Simpson data in >= 90%, planted effects found in >= 95% with extra
modules in <= 5%, what-if coverage >= 90%. Prints a Markdown table (docs/workload-adjustment.md).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.dgp import DEFAULT_SIZE, KINDS, SIZES, score  # noqa: E402


def wilson(k: int, n: int) -> str:
    from statsmodels.stats.proportion import proportion_confint
    if n == 0:
        return "-"
    lo, hi = proportion_confint(k, n, method="wilson")
    return f"{k}/{n} ({k / n:.0%}, {lo:.0%}-{hi:.0%})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    rows = []
    t0 = time.perf_counter()
    for kind in a.kinds.split(","):
        t = time.perf_counter()
        size = int(SIZES.get(kind, DEFAULT_SIZE) * a.scale)
        rs = [score(kind, a.seed + i, size) for i in range(a.n)]

        def rate(key):
            vals = [r[key] for r in rs if r.get(key) is not None]
            return wilson(sum(map(bool, vals)), len(vals))
        extra = {k: rate(k) for k in ("named_B", "named_C") if k in rs[0]}
        rows.append((kind, size, rate("named"), rate("found"), rate("wrong"), rate("covers"),
                     ", ".join(f"{k[-1]}: {v}" for k, v in extra.items())))
        print(f"{kind}: {time.perf_counter() - t:.0f} s", *rows[-1][2:], file=sys.stderr,
              flush=True)
    print("| kind | cases | named a module | found | wrong modules | interval covers the truth "
          "| noise clusters beside it named |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) if x != "-" else "–" for x in r) + " |")
    print(f"\n({time.perf_counter() - t0:.0f} s, {a.n} datasets per kind, seeds {a.seed}-"
          f"{a.seed + a.n - 1})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
