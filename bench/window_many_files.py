"""The window over a dropped folder of many small request tables (run on demand, not a test):
`trace-explorer FOLDER --screenshot PNG` timed from start to exit (imports, load, every panel's
result painted), in a fresh process per checkout.

    .venv/bin/python bench/window_many_files.py [--files 5000] [--rows 1] [--root DIR ...]

The folder is made by bench/many_files.py's generate (CSV only); --root: checkouts to time (default
this one), e.g. --root /work/main --root . for a before / after pair.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from many_files import generate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--rows", type=int, default=1)
    ap.add_argument("--root", action="append", help="a checkout to time (repeatable)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="te-window-many-"))
    try:
        folder = tmp / "many"
        folder.mkdir()
        generate(folder, args.files, args.rows, ["csv"])
        for root in args.root or [str(ROOT)]:
            env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(Path(root).resolve()),
                       XDG_STATE_HOME=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"))
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "explorer", str(folder), "--screenshot",
                                  str(tmp / "shot.png")], env=env, cwd=tmp, capture_output=True,
                                 text=True, timeout=900)
            dt = time.perf_counter() - t0
            print(f"{root}: {args.files} files x {args.rows} rows: {dt:.1f} s to every panel "
                  f"painted (exit {out.returncode})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
