"""The report's `runs` section (report_runs.runs_section: explorer.core.runs.overview, whose
recomputed statistics are queries/compare_run_stats.sql) before / after a change of that query,
side by side, each in its own process: run on demand, not a test.

    .venv/bin/python bench/run_stats.py --before OLD.sql [--requests 10000000] [--data DIR]
                                        [--parquet FILE] [--repeat 1]

OLD.sql is the query to compare against the tree's own, e.g. the per-quantile form of
8cb3e74: `git show 8cb3e74:queries/compare_run_stats.sql > /tmp/old.sql`. The requests are
../shared/bench/make_scale_data.py's (requests.parquet under DIR/<N>, generated when missing;
or --parquet FILE), copied into an in-memory Store (the product's memory_limit and allocator
settings) under their two runs, then compacted as after a load. Per process: VmRSS before the
section (3 s after the load, once the allocator has returned what it freed), the section's peak
(VmHWM, reset just before it) and that peak minus VmRSS before, and the section's wall seconds.
Both forms must give the same section: every quantile and count exactly, the means (avg, which
the query did not change) to 1e-12, as DuckDB's parallel sums differ in the last digits from one
run of the same query to the next; the pairs alternate.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

from files_in_place import MAPPING
from scale_data import scale_files

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
ROOT, SQL, PARQUET, MAPPING = json.loads(sys.argv[1])
sys.path.insert(0, ROOT)
import explorer.core.store as store_mod
from explorer.core.store import Store
from explorer.core.report_runs import runs_section

def status(field):  # kB -> MB
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024

if SQL:  # the query under comparison instead of the tree's queries/compare_run_stats.sql
    text, orig = open(SQL, encoding="utf-8").read(), store_mod.load_query
    store_mod.load_query = lambda name: text if name == "compare_run_stats" else orig(name)
s = Store()
t0 = time.perf_counter()
s.con.execute("INSERT INTO requests BY NAME SELECT " + MAPPING + " FROM read_parquet(?)", [PARQUET])
for run, ver in s.con.execute("SELECT run_id, any_value(engine_version) FROM read_parquet(?) "
                              "GROUP BY run_id ORDER BY run_id", [PARQUET]).fetchall():
    s.add_run(run, engine="vllm", engine_version=ver, label=run, benchmark="random")
s.compact(force=True)
load_s = time.perf_counter() - t0
time.sleep(3)  # the allocator's background threads return what the load freed
rss0 = status("VmRSS")
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
t = time.perf_counter()
runs = runs_section(s)
wall = time.perf_counter() - t
peak = status("VmHWM")
vals = {r["run_id"]: sorted((x["metric"], x["stat"], x["value"]) for x in r["recomputed_all"])
        for r in runs}
print(json.dumps({"load_s": load_s, "rss_before_mb": rss0, "peak_mb": peak,
                  "peak_delta_mb": peak - rss0,
                  "wall_s": wall, "n": s.count("requests"), "values": vals}))
"""


def child(parquet: str, sql: str | None) -> dict:
    args = json.dumps([str(ROOT), sql, parquet, MAPPING])
    out = subprocess.run([sys.executable, "-c", CHILD, args], check=True, capture_output=True,
                         text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def _same(a: dict, b: dict) -> bool:
    """Every run's statistics equal: exactly, but for the means (to 1e-12, summation order)."""
    if set(a) != set(b):
        return False
    for run in a:
        if [x[:2] for x in a[run]] != [y[:2] for y in b[run]]:
            return False
        for (m, st, x), (_, _, y) in zip(a[run], b[run]):
            if not (x == y or (st == "mean" and math.isclose(x, y, rel_tol=1e-12))):
                return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the query text to compare against")
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--data", default="/tmp/te-bench-data")
    ap.add_argument("--parquet", help="a requests.parquet of make_scale_data.py's columns")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    parquet = a.parquet or scale_files(a.data, a.requests)[0]
    res = {"before": [], "after": []}
    for _ in range(a.repeat):
        res["before"].append(child(parquet, str(Path(a.before).resolve())))
        res["after"].append(child(parquet, None))
    first = res["before"][0]["values"]
    same = all(_same(r["values"], first) for rs in res.values() for r in rs)
    print(f"requests: {res['after'][0]['n']:,} ({parquet}); load {res['after'][0]['load_s']:.1f} s; "
          f"runs sections equal: {same}")
    fields = ("rss_before_mb", "peak_mb", "peak_delta_mb", "wall_s")
    print(f"{'':8s} {'RSS before MB':>14s} {'peak MB':>8s} {'peak +MB':>9s} {'wall s':>7s}"
          f"   (median of {a.repeat}; each: wall s / peak +MB)")
    for k, rs in res.items():
        med = {f: statistics.median(r[f] for r in rs) for f in fields}
        each = ", ".join(f"{r['wall_s']:.2f} / {r['peak_delta_mb']:.0f}" for r in rs)
        print(f"{k:8s} {med['rss_before_mb']:14.0f} {med['peak_mb']:8.0f} "
              f"{med['peak_delta_mb']:9.0f} {med['wall_s']:7.2f}   {each}")
    with open("/proc/loadavg") as fh:
        print("load average (1 min):", fh.read().split()[0])
    if not same:
        sys.exit("the two forms gave different runs sections")


if __name__ == "__main__":
    main()
