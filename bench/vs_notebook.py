"""The product against the pandas notebook, side by side (run on demand, not a test).

    .venv/bin/python bench/vs_notebook.py [--rows 1000000,10000000] [--repeat 3]
                                          [--data DIR] [--anchor DIR] [--floor]
                                          [--replay | --default]

On the same generated files (../shared/bench/make_scale_data.py DIR/<N> N: requests.parquet
and cases.csv, N requests and N/10 cases; generated once and kept under --data), it runs, one
process at a time and alternating (notebook, product, notebook, product, ...):
  - notebook: ../shared/bench/pandas_notebook.py DIR  (the anchor)
  - product:  trace-explorer report requests.parquet cases.csv --format json --no-whatif
              --no-replay (the notebook's analyses: no what-if, no KV-cache replay; --replay
              keeps the replay section, whose capacity sweep replays 20,000 requests;
              --default runs the report as a user does, what-if and replay included)
  - floor (--floor): ../shared/bench/duckdb_floor.py DIR  (the same analysis by hand in DuckDB)
Each run is a fresh process: wall time from spawn to exit, CPU time = the child's user + system
seconds (os.wait4 rusage, the same figure as resource.getrusage(RUSAGE_CHILDREN) grows by; all
its threads, DuckDB's included), peak memory = the child's maximum resident set (whole process,
imports included), and the 1-minute load average when it ended. On a shared machine the wall
time of a process grows with the load while its CPU time barely does, so the CPU ratio is the
one to judge a change by under load. Prints, per size, the median of each and the ratios
product / notebook (of the medians, and the median of the per-pair ratios), with the load
average. Targets: 1M wall <= 0.6x; 10M wall <= 0.4x, peak <= 0.5x.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scale_data import anchor_dir

ROOT = Path(__file__).resolve().parent.parent


def run(cmd: list[str], env: dict) -> tuple[float, float, float, float]:
    """(wall seconds, CPU seconds (user + system), peak RSS MiB, 1-minute load average at exit)
    of one child process; raises when it fails."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {err[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", default=str(ROOT.parent / "bench-data"),
                    help="folder for the generated files (kept; outside the repository)")
    ap.add_argument("--anchor", default=str(anchor_dir()),
                    help="folder holding make_scale_data.py and pandas_notebook.py")
    ap.add_argument("--floor", action="store_true", help="also run duckdb_floor.py")
    ap.add_argument("--replay", action="store_true",
                    help="keep the report's replay section (the notebook has none)")
    ap.add_argument("--default", action="store_true",
                    help="the default report, as users run it (what-if and replay included)")
    a = ap.parse_args()
    anchor = Path(a.anchor)
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    results = []
    for n in (int(x) for x in a.rows.split(",")):
        d = Path(a.data) / str(n)
        if not (d / "cases.csv").exists():
            subprocess.run([sys.executable, str(anchor / "make_scale_data.py"), str(d), str(n)],
                           check=True, stdout=subprocess.DEVNULL)
        out = tempfile.mkdtemp(prefix="vs_notebook_")
        cmds = {"notebook": [sys.executable, str(anchor / "pandas_notebook.py"), str(d)],
                "product": [sys.executable, "-m", "explorer", "report", str(d / "requests.parquet"),
                            str(d / "cases.csv"), "--format", "json", "--out", out]
                + ([] if a.default else ["--no-whatif"])
                + ([] if a.replay or a.default else ["--no-replay"])}
        if a.floor:
            cmds["floor"] = [sys.executable, str(anchor / "duckdb_floor.py"), str(d)]
        runs = {k: [] for k in cmds}
        loads = []
        for _ in range(a.repeat):
            for k, cmd in cmds.items():
                runs[k].append(run(cmd, env))
                w, c, m, ld = runs[k][-1]
                print(f"  {n:,} {k}: {w:.2f} s wall, {c:.2f} s CPU, {m:.0f} MiB (load {ld:.1f})",
                      file=sys.stderr, flush=True)
                loads.append(ld)
        med = {k: tuple(statistics.median(r[i] for r in v) for i in range(3))
               for k, v in runs.items()}

        def pairs(i: int) -> float:
            return statistics.median(p[i] / b[i] for p, b in zip(runs["product"], runs["notebook"]))

        row = {"rows": n, "repeat": a.repeat, "load_avg": round(statistics.median(loads), 2),
               "load_range": [round(min(loads), 2), round(max(loads), 2)],
               **{f"{k}_s": round(w, 2) for k, (w, _, _) in med.items()},
               **{f"{k}_cpu_s": round(c, 2) for k, (_, c, _) in med.items()},
               **{f"{k}_mib": round(m) for k, (_, _, m) in med.items()},
               "wall_ratio": round(med["product"][0] / med["notebook"][0], 3),
               "cpu_ratio": round(med["product"][1] / med["notebook"][1], 3),
               "peak_ratio": round(med["product"][2] / med["notebook"][2], 3),
               "wall_ratio_pairs": round(pairs(0), 3), "cpu_ratio_pairs": round(pairs(1), 3),
               "peak_ratio_pairs": round(pairs(2), 3),
               "runs": {k: [[round(w, 2), round(c, 2), round(m), round(ld, 2)]
                            for w, c, m, ld in v] for k, v in runs.items()}}
        results.append(row)
        print(f"{n:>10,} requests: product {row['product_s']:.2f} s wall / "
              f"{row['product_cpu_s']:.2f} s CPU / {row['product_mib']} MiB, notebook "
              f"{row['notebook_s']:.2f} s / {row['notebook_cpu_s']:.2f} s / "
              f"{row['notebook_mib']} MiB -> wall {row['wall_ratio']:.2f}x, CPU "
              f"{row['cpu_ratio']:.2f}x, peak {row['peak_ratio']:.2f}x (pairs "
              f"{row['wall_ratio_pairs']:.2f}x / {row['cpu_ratio_pairs']:.2f}x / "
              f"{row['peak_ratio_pairs']:.2f}x; load {row['load_avg']}, "
              f"{row['load_range'][0]}-{row['load_range'][1]})", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
