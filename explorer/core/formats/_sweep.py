"""The folders `vllm bench sweep serve` writes, read as their runs once each.

Layout (vllm/benchmarks/sweep/serve.py: _get_comb_base_path, _get_comb_run_path, run_comb,
run_combs): EXPERIMENT/<SERVE-…-BENCH-… combination>/run=N.json (one `vllm bench serve`
result each, with run_number and the swept parameters added), summary.json (the list of that
combination's run=N results, written once all ran), warmup.json (run_number -1, when
--warmup-num-prompts is set), run=N.failure.json ({run_number, error_type, error, ...} with
--continue-on-error); EXPERIMENT/summary.csv (every combination's runs, one row each).

In a folder the run=N.json files are the runs (one file, one run, its own provenance); the
other files repeat them or are not measured runs, so pass_over() names them with the reason
(the folder walk lists them as ignored). A summary.json or summary.csv named on its own still
loads (vllm_bench reads the list; a CSV of aggregates is no request table).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

RUN_FILE = re.compile(r"^run=(-?\d+)\.json$")
FAILURE_FILE = re.compile(r"^run=(-?\d+)\.failure\.json$")


def _run_files(folder: Path) -> list[str]:
    try:
        return sorted((p.name for p in folder.iterdir() if RUN_FILE.match(p.name)),
                      key=lambda n: int(RUN_FILE.match(n).group(1)))
    except OSError:
        return []


def _names(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def pass_over(path: Path) -> str | None:
    """Why a file found in a `vllm bench sweep` folder is not loaded, or None (load it)."""
    name, folder = path.name, path.parent
    if name == "summary.json":
        runs = _run_files(folder)
        if runs:
            return (f"the `vllm bench sweep` summary of this combination: its runs load from "
                    f"{_names(runs)} beside it (not loaded twice)")
    elif name == "warmup.json" and (_run_files(folder) or (folder / "summary.json").exists()):
        return "the warm-up run of a `vllm bench sweep` combination (run_number -1), not measured"
    elif FAILURE_FILE.match(name):
        return f"a failed run of a `vllm bench sweep` combination ({_failure(path)})"
    elif name == "summary.csv":
        subs = [d.name for d in _subfolders(folder) if _run_files(d)]
        if subs:
            return (f"the `vllm bench sweep` summary table of this experiment: its runs load "
                    f"from the run=N.json files of {_names(subs)}")
    return None


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted(d for d in folder.iterdir() if d.is_dir())
    except OSError:
        return []


def _failure(path: Path) -> str:
    """'run 2: RuntimeError: server died' from a run=N.failure.json (or what is readable)."""
    n = FAILURE_FILE.match(path.name).group(1)
    try:
        obj = json.loads(path.read_text(encoding="utf-8-sig", errors="replace")[:100_000])
    except (OSError, ValueError):
        return f"run {n}"
    if not isinstance(obj, dict):
        return f"run {n}"
    err = ": ".join(str(obj[k]) for k in ("error_type", "error") if obj.get(k))
    return f"run {n}: {err[:300]}" if err else f"run {n}"

