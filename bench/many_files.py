"""Many-small-files benchmark (run on demand, not a test): dropping a folder of N small request
tables on the app (Store().load_paths([folder])).

    .venv/bin/python bench/many_files.py [--files 5000] [--rows 20] [--kinds csv,jsonl]
                                         [--mode batch,per-file] [--repeat 1] [--keep DIR]

Generates N small trace files in a temp folder (deleted afterwards unless --keep): canonical
column names (request_id, arrival_s, prompt_tokens, completion_tokens, ttft_ms, tpot_ms,
e2e_ms, finish_reason), `--rows` rows each, the kinds alternating (a_00000.csv,
a_00001.jsonl, ...). Then, in a fresh subprocess per mode, times one load_paths call on the
folder (imports and opening the Store excluded; best of --repeat):
  - batch:    the default (files of one format and header read together, Store.BATCH_*)
  - per-file: Store.BATCH_MIN_FILES set above N (every file read on its own, as before)
and prints files, rows loaded, seconds, files/s and the ratio.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
mode, folder, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
from explorer.core.store import Store
import explorer.core.formats as F
F.all_formats()
if mode == "per-file":
    Store.BATCH_MIN_FILES = 10**9
best = None
for _ in range(repeat):
    s = Store()
    t0 = time.perf_counter()
    reports = s.load_paths([folder])
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
    failed = [r.error for r in reports if r.error]
    rows = s.count("requests")
    s.close()
print(json.dumps({{"seconds": best, "files": len(reports), "failed": failed[:3],
                  "rows": rows}}))
"""


def generate(folder: Path, files: int, rows: int, kinds: list[str]) -> None:
    cols = ["request_id", "arrival_s", "prompt_tokens", "completion_tokens", "ttft_ms",
            "tpot_ms", "e2e_ms", "finish_reason"]
    for f in range(files):
        kind = kinds[f % len(kinds)]
        recs = [{"request_id": f"f{f}-r{i}", "arrival_s": 1.7e9 + f + i / 10,
                 "prompt_tokens": 100 + (f * 7 + i) % 900, "completion_tokens": 10 + i,
                 "ttft_ms": 20.0 + (f + i) % 50, "tpot_ms": 8.0 + i % 5,
                 "e2e_ms": 300.0 + 3 * i, "finish_reason": "stop"} for i in range(rows)]
        path = folder / f"a_{f:05d}.{kind}"
        if kind == "csv":
            path.write_text(",".join(cols) + "\n" + "".join(
                ",".join(str(r[c]) for c in cols) + "\n" for r in recs))
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--rows", type=int, default=20)
    ap.add_argument("--kinds", default="csv,jsonl")
    ap.add_argument("--mode", default="batch,per-file")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--keep", help="generate into this folder and keep it")
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="te-many-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        folder = tmp / "many"
        if not folder.exists():
            folder.mkdir()
            generate(folder, args.files, args.rows, args.kinds.split(","))
        results = {}
        for mode in args.mode.split(","):
            out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), mode,
                                  str(folder), str(args.repeat)],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results[mode] = r
            print(f"{mode:9s} {r['files']} files, {r['rows']} rows, {r['seconds']:.1f} s, "
                  f"{r['files'] / r['seconds']:.0f} files/s, failed: {r['failed'] or 'none'}")
        if len(results) == 2 and all(results.values()):
            a, b = (results[m]["seconds"] for m in args.mode.split(","))
            print(f"ratio {args.mode.split(',')[1]} / {args.mode.split(',')[0]}: {b / a:.1f}x")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
