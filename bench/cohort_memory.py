"""The window's memory while clicking through clusters, and a saved session reopened: run on
demand, not a test.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/cohort_memory.py [--requests 1000000]
                                 [--clusters 4] [--repeat 1] [--data DIR] [--session FILE]

The files are ../shared/bench/make_scale_data.py's (requests.parquet and cases.csv, under --data,
as bench/dashboard.py uses them). Each repeat is a fresh interpreter that shows the main window
(offscreen) and loads the two files (MainWindow.load, what a drop does), or with --session FILE
opens a session saved from them (Session.open_session, File > Open Session; FILE is written first
when missing, by Store.load_paths + pipeline.prepare + Store.save_as; keep it outside the repository).
Then it chooses --clusters clusters (not the one chosen at load) one after another (first visits), then each again
in the same order (revisits), each time running the event loop until the Session has published
the cohort's conclusion and no job is pending.
Printed: resident memory (VmRSS) after the load or open and the seconds it took; the peak
(VmHWM, reset after the load) while clicking; resident memory at the end; median first-visit and
revisit seconds; the bytes of the cohort frames the Session keeps (pandas memory_usage(deep=True));
the 1-minute load average.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from scale_data import scale_files

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, ROOT)
from PySide6.QtCore import QSettings
from explorer.app import make_app
from explorer.core import bus
from explorer.session import Session
from explorer.widgets.mainwindow import MainWindow

def status(field):  # kB -> MiB
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024

app = make_app()
session = Session()
win = MainWindow(session, QSettings(os.devnull, QSettings.Format.IniFormat))
win.show()
app.processEvents()
seen = []
session.resultsChanged.connect(lambda u: seen.append(bus.SECTION["conclusion"] in u))

def settle(t0):
    while not any(seen) or session.runner.pending():
        app.processEvents()
        time.sleep(0.001)
        if time.perf_counter() - t0 > 1800:
            raise SystemExit("no conclusion after 30 minutes")
    app.processEvents()
    return time.perf_counter() - t0

seen.clear()
t0 = time.perf_counter()
if SESSION:
    session.open_session(SESSION)
else:
    win.load(PATHS)
open_s = settle(t0)
rss_open = status("VmRSS")
with open("/proc/self/clear_refs", "w") as fh:  # VmHWM from here on: the clicks' peak
    fh.write("5")
names = [c["name"] for c in session.data["clusters"] if c["name"] != session.cluster][:CLUSTERS]
first, again = [], []
for rnd in (first, again):
    for n in names:
        seen.clear()
        t = time.perf_counter()
        session.set_cluster(n)
        rnd.append(settle(t))
frames = getattr(session, "_frames", None)  # the frames kept apart from the results, or in them
kept = [v[0] for v in frames.values()] if frames is not None else \
    [p[0].get("frame") for k, p in session._cache.items() if k[0] == "cohort-results"]
import pandas as pd
kept_mib = sum(int(f.memory_usage(deep=True).sum()) for f in kept
               if isinstance(f, pd.DataFrame)) / 2**20
print(json.dumps({"open_s": open_s, "rss_open_mib": rss_open, "peak_mib": status("VmHWM"),
                  "rss_end_mib": status("VmRSS"), "first_s": first, "again_s": again,
                  "frames_kept": len(kept), "frames_mib": kept_mib, "errors": session.errors,
                  "load_avg": os.getloadavg()[0]}))
os._exit(0)
"""


def _saved_session(d: Path, out: Path) -> Path:
    """`out`, a session of the two files under d: loaded, bound and saved (when missing)."""
    if not out.exists():
        sys.path.insert(0, str(ROOT))
        from explorer.core.pipeline import prepare
        from explorer.core.store import Store
        s = Store()
        s.load_paths([str(d / "requests.parquet"), str(d / "cases.csv")])
        prepare(s)
        s.save_as(out)
        s.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--clusters", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--data", default=str(ROOT.parent / "bench-data"),
                    help="folder of the generated files (kept; outside the repository)")
    ap.add_argument("--session", metavar="FILE",
                    help="open this saved session of the files (written first when missing) "
                         "instead of loading them")
    a = ap.parse_args()
    d = Path(a.data) / str(a.requests)
    paths = scale_files(a.data, a.requests)
    session = str(_saved_session(d, Path(a.session))) if a.session else None
    code = CHILD.replace("ROOT", repr(str(ROOT))).replace("PATHS", repr(paths)).replace(
        "SESSION", repr(session)).replace("CLUSTERS", str(a.clusters))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    rows = []
    for i in range(a.repeat):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(r)
        print(f"  {a.requests:,} {'open' if session else 'load'} {i + 1}: {r['open_s']:.2f} s, "
              f"RSS {r['rss_open_mib']:.0f} MiB; clicking {a.clusters} clusters twice: peak "
              f"{r['peak_mib']:.0f} MiB, end {r['rss_end_mib']:.0f} MiB; first visits "
              f"{', '.join(f'{x:.2f}' for x in r['first_s'])} s, revisits "
              f"{', '.join(f'{x:.3f}' for x in r['again_s'])} s; frames kept {r['frames_kept']} "
              f"({r['frames_mib']:.0f} MiB); load {r['load_avg']:.1f}"
              + (f"; errors: {r['errors']}" if r["errors"] else ""), file=sys.stderr, flush=True)
    med = {k: round(statistics.median(r[k] for r in rows), 3)
           for k in ("open_s", "rss_open_mib", "peak_mib", "rss_end_mib", "frames_mib", "load_avg")}
    med["first_s"] = round(statistics.median(x for r in rows for x in r["first_s"]), 3)
    med["again_s"] = round(statistics.median(x for r in rows for x in r["again_s"]), 3)
    print(json.dumps({"requests": a.requests, "session": bool(session), "clusters": a.clusters,
                      "repeat": a.repeat, **med}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
