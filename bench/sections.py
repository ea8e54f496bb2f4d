"""Each section of the default `report` on its own: wall seconds and peak resident memory over
what the report holds before it, one process per section: run on demand, not a test.

    .venv/bin/python bench/sections.py DIR [--sections heatmap,sla] [--repeat 1] [--profile]

DIR holds requests.parquet and cases.csv of ../shared/bench/make_scale_data.py. Each child does
what `trace-explorer report DIR/requests.parquet DIR/cases.csv` does before its sections
(Store.load_paths, pipeline.prepare, the default cluster's cohort, its frame with the columns
the report's sections read), computes the sections the measured one needs (conclusion: cohort,
comparison, tree, versions; strata: comparison), waits 2 s (the allocator returns what it
freed), then reads VmRSS, resets VmHWM (/proc/self/clear_refs) and computes the one section
with the report's params (tree depth 3, the what-if's defaults, the replay's default
scenario). Printed per section, with the 1-minute load average at its start: wall seconds,
CPU seconds, VmRSS before, the peak (VmHWM) minus VmRSS before, and DuckDB's own largest
memory while it ran (duckdb_memory(), sampled every 50 ms on a cursor of its own: total and
the tag that held most), so what remains of the peak is Python's (pandas frames, numpy).
--profile: the section under cProfile, the 25 costliest functions by cumulative time.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import cProfile, io, json, os, pstats, resource, sys, threading, time
sys.path.insert(0, ROOT)
from explorer.core.store import Store
from explorer.core import pipeline, sections
from explorer.core.analysis import Cohort, cohort_frame
from explorer.cli.report import _resolve_cluster


def kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1])


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


store = Store()
store.load_paths([os.path.join(DIR, "requests.parquet"), os.path.join(DIR, "cases.csv")])
pipeline.prepare(store)
cohort = Cohort(_resolve_cluster(store, None), "same-category")
params = {"tree": {"max_depth": 3, "min_samples_leaf": None}, "whatif": {}}
keys = sections.keys()
cols = sections.frame_columns(params, keys)
frame = cohort_frame(store, cohort, cached=False,
                     columns=None if cols is None else cols + ("run_id",))
r = sections.Run(store, cohort, params, None, frame, False)
sec = sections.BY_KEY[KEY]
for k in sec.needs:
    r.results[k] = sections.compute(sections.BY_KEY[k], r)
time.sleep(2)
load = os.getloadavg()[0]
before = kb("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
peak_db, peak_tag, stop = [0], [("", 0)], threading.Event()
cur = store.con.cursor()


def sample():
    while not stop.is_set():
        rows = cur.execute("SELECT tag, memory_usage_bytes FROM duckdb_memory()").fetchall()
        total = sum(b for _t, b in rows)
        if total > peak_db[0]:
            peak_db[0] = total
        top = max(rows, key=lambda x: x[1])
        if top[1] > peak_tag[0][1]:
            peak_tag[0] = top
        stop.wait(0.05)


th = threading.Thread(target=sample, daemon=True)
th.start()
prof = cProfile.Profile() if PROFILE else None
c0, t0 = cpu(), time.perf_counter()
if prof:
    prof.enable()
res = sections.compute(sec, r)
if prof:
    prof.disable()
wall, cpu_s = time.perf_counter() - t0, cpu() - c0
stop.set()
th.join()
status = getattr(res, "kind", None) or (res.get("status") if isinstance(res, dict) else "ok")
out = {"section": KEY, "load": load, "wall_s": wall, "cpu_s": cpu_s, "rss_before_mb": before / 1024,
       "peak_delta_mb": (kb("VmHWM") - before) / 1024, "duckdb_peak_mb": peak_db[0] / 2**20,
       "duckdb_top_tag": [peak_tag[0][0], peak_tag[0][1] / 2**20], "status": status}
if prof:
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
    out["profile"] = s.getvalue()
print("RESULT " + json.dumps(out))
"""

DEFAULT = ("cohort", "comparison", "tree", "heatmap", "versions", "sla", "sla_diagnosis", "whatif",
           "conclusion", "engine", "replay", "clusters", "runs", "run_versions", "compare",
           "timeline")


def child(data: str, key: str, profile: bool) -> dict:
    code = (f"ROOT = {str(ROOT)!r}\nDIR = {data!r}\nKEY = {key!r}\nPROFILE = {profile!r}\n"
            + CHILD)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if p.returncode or not line:
        raise SystemExit(f"{key}: child failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(line[-1][7:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--sections", default=",".join(DEFAULT))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    print(f"{'section':<14} {'load':>5} {'wall s':>8} {'cpu s':>8} {'rss MB':>8} {'peak+ MB':>9} "
          f"{'duckdb MB':>9}  top tag")
    for _i in range(a.repeat):
        for key in a.sections.split(","):
            o = child(a.data, key, a.profile)
            print(f"{key:<14} {o['load']:5.2f} {o['wall_s']:8.2f} {o['cpu_s']:8.2f} "
                  f"{o['rss_before_mb']:8.0f} {o['peak_delta_mb']:9.0f} {o['duckdb_peak_mb']:9.0f}  "
                  f"{o['duckdb_top_tag'][0]} {o['duckdb_top_tag'][1]:.0f} MB  ({o['status']})",
                  flush=True)
            if a.profile:
                print(o["profile"], flush=True)


if __name__ == "__main__":
    main()
