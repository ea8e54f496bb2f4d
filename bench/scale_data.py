"""The generated scale files the side-by-side benchmarks share (vs_notebook, dashboard,
cohort_memory): ../shared/bench/make_scale_data.py writes N requests and N/10 cases under
DATA/<N>, once; they stay outside the repository."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def anchor_dir() -> Path:
    """../shared/bench (beside the clone, or one level further up from a worktree)."""
    for p in (ROOT.parent / "shared" / "bench", ROOT.parent.parent / "shared" / "bench"):
        if (p / "make_scale_data.py").exists():
            return p
    return ROOT.parent / "shared" / "bench"


def scale_files(data: str | Path, n: int, anchor: Path | None = None) -> list[str]:
    """[requests.parquet, cases.csv] of n requests under data/<n>, generated when missing."""
    d = Path(data) / str(n)
    if not (d / "cases.csv").exists():
        subprocess.run([sys.executable, str((anchor or anchor_dir()) / "make_scale_data.py"),
                        str(d), str(n)], check=True, stdout=subprocess.DEVNULL)
    return [str(d / "requests.parquet"), str(d / "cases.csv")]
