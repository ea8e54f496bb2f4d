"""The product against the pandas notebook, side by side (run on demand, not a test).

    .venv/bin/python bench/vs_notebook.py [--rows 1000000,10000000] [--repeat 3]
                                          [--data DIR] [--anchor DIR] [--floor]

On the same generated files (../shared/bench/make_scale_data.py DIR/<N> N: requests.parquet
and cases.csv, N requests and N/10 cases; generated once and kept under --data), it runs, one
process at a time and alternating (notebook, product, notebook, product, ...):
  - notebook: ../shared/bench/pandas_notebook.py DIR  (the anchor)
  - product:  trace-explorer report requests.parquet cases.csv --format json --no-whatif
              --no-replay (the notebook's analyses: no what-if, no KV-cache replay; --replay
              keeps the replay section, whose capacity sweep replays 20,000 requests)
  - floor (--floor): ../shared/bench/duckdb_floor.py DIR  (the same analysis by hand in DuckDB)
Each run is a fresh process: wall time from spawn to exit, peak memory = the child's maximum
resident set (os.wait4 rusage; whole process, imports included). Prints, per size, the median
of each and the ratios product / notebook (of the medians, and the median of the per-pair
ratios), with the load average. Targets: 1M wall <= 0.6x; 10M wall <= 0.4x, peak <= 0.5x.
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

ROOT = Path(__file__).resolve().parent.parent


def _anchor_dir() -> Path:
    for p in (ROOT.parent / "shared" / "bench", ROOT.parent.parent / "shared" / "bench"):
        if (p / "pandas_notebook.py").exists():
            return p
    return ROOT.parent / "shared" / "bench"


def run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one child process; raises when it fails."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {err[-2000:]}")
    return wall, ru.ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", default=str(ROOT.parent / "bench-data"),
                    help="folder for the generated files (kept; outside the repository)")
    ap.add_argument("--anchor", default=str(_anchor_dir()),
                    help="folder holding make_scale_data.py and pandas_notebook.py")
    ap.add_argument("--floor", action="store_true", help="also run duckdb_floor.py")
    ap.add_argument("--replay", action="store_true",
                    help="keep the report's replay section (the notebook has none)")
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
                            str(d / "cases.csv"), "--format", "json", "--no-whatif",
                            "--out", out] + ([] if a.replay else ["--no-replay"])}
        if a.floor:
            cmds["floor"] = [sys.executable, str(anchor / "duckdb_floor.py"), str(d)]
        runs = {k: [] for k in cmds}
        loads = []
        for _ in range(a.repeat):
            for k, cmd in cmds.items():
                runs[k].append(run(cmd, env))
                print(f"  {n:,} {k}: {runs[k][-1][0]:.2f} s, {runs[k][-1][1]:.0f} MiB "
                      f"(load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
            loads.append(os.getloadavg()[0])
        med = {k: (statistics.median(w for w, _ in v), statistics.median(m for _, m in v))
               for k, v in runs.items()}
        pair_w = statistics.median(p[0] / b[0] for p, b in zip(runs["product"], runs["notebook"]))
        pair_m = statistics.median(p[1] / b[1] for p, b in zip(runs["product"], runs["notebook"]))
        row = {"rows": n, "repeat": a.repeat, "load_avg": round(statistics.median(loads), 2),
               **{f"{k}_s": round(w, 2) for k, (w, _) in med.items()},
               **{f"{k}_mib": round(m) for k, (_, m) in med.items()},
               "wall_ratio": round(med["product"][0] / med["notebook"][0], 3),
               "peak_ratio": round(med["product"][1] / med["notebook"][1], 3),
               "wall_ratio_pairs": round(pair_w, 3), "peak_ratio_pairs": round(pair_m, 3),
               "runs": {k: [[round(w, 2), round(m)] for w, m in v] for k, v in runs.items()}}
        results.append(row)
        print(f"{n:>10,} requests: product {row['product_s']:.2f} s / {row['product_mib']} MiB, "
              f"notebook {row['notebook_s']:.2f} s / {row['notebook_mib']} MiB -> wall "
              f"{row['wall_ratio']:.2f}x, peak {row['peak_ratio']:.2f}x "
              f"(pairs {pair_w:.2f}x / {pair_m:.2f}x; load {row['load_avg']})", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
