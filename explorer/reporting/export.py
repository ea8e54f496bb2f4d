"""File > Export Report: the same bundle as `trace-explorer report`, written by a child process.

Qt widgets may only be built on the UI thread, and painting a dozen panels takes seconds, so the
window neither renders on its worker thread nor blocks its UI thread: the worker saves the
session to a temporary .duckdb file and runs `python -m explorer.reporting.export` on it (its
own offscreen QApplication), reading progress lines and killing it on Cancel.

Child protocol (stdout, one line each): "progress DONE TOTAL TEXT", then "written PATH"; or
"error TEXT" (one line for the user; the child's traceback goes to the error log, never to
the dialog).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from explorer.core import errlog
from explorer.core.errors import Cancelled, ReportIncomplete, TraceExplorerError


class ExportFailed(TraceExplorerError):
    """The export did not complete; the message is one line for the user, naming the output
    folder and where the details went (the error log)."""


def export_report(store, cohort, out_dir: str | Path, formats: Sequence[str] | None = None,
                  whatif: dict | None = None,
                  progress: Callable[[int, int, str], None] | None = None,
                  cancelled: Callable[[], bool] | None = None,
                  whatif_result: dict | None = None) -> list[Path]:
    """Write the report bundle of `cohort` (analysis.Cohort) to out_dir in a child process.

    Runs on a worker thread (it uses the store only to save a copy). formats: default every
    available format; whatif: run_whatif keyword arguments (the What-if panel's report_args(),
    JSON-able) so the report shows the user's scenario; whatif_result: that scenario's finished
    result (WhatIfResult.to_dict(), the panel's report_result()), which the child then shows
    as it is instead of importing DoWhy and estimating again. Returns the files written.
    Raises errors.Cancelled (the child was killed), or ExportFailed (one line naming out_dir; the child's output goes
    to the error log) when it fails."""
    from explorer.core.report import available_formats

    formats = list(formats or available_formats())
    tmp = Path(tempfile.mkdtemp(prefix="trace-explorer-export-"))
    try:
        db = tmp / "session.duckdb"
        store.save_as(db)
        cmd = [sys.executable, "-m", "explorer.reporting.export", str(db),
               "--out", str(Path(out_dir).resolve()),
               "--cohort", json.dumps(cohort.to_dict()), "--format", ",".join(formats)]
        if whatif:
            cmd += ["--whatif", json.dumps(whatif)]
        if whatif_result:
            ready = tmp / "whatif.json"
            ready.write_text(json.dumps(whatif_result), encoding="utf-8")
            cmd += ["--whatif-result", str(ready)]
        # the child imports the very package this process runs: a checkout goes on PYTHONPATH;
        # an installed package is found anyway (site-packages must not go ahead of the stdlib)
        import site

        import explorer
        root = str(Path(explorer.__file__).resolve().parent.parent)
        sites = {str(Path(p).resolve()) for p in site.getsitepackages() + [site.getusersitepackages()]}
        extra = [] if root in sites else [root]
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
                   PYTHONPATH=os.pathsep.join(extra + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        # cwd: the temporary folder, so that an explorer/ folder in the user's working
        # directory cannot shadow the installed package (python -m puts cwd first on sys.path)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, cwd=tmp)
        written: list[Path] = []
        said: str | None = None
        for line in proc.stdout:
            if cancelled and cancelled():
                proc.kill()
                proc.wait()
                raise Cancelled("report export cancelled")
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "progress" and progress:
                done, total, text = (rest.split(" ", 2) + ["", ""])[:3]
                progress(int(done), int(total), text)
            elif kind == "written":
                written.append(Path(rest))
            elif kind == "error":
                said = rest
        err = proc.stderr.read()
        if proc.wait() != 0:
            if said is None:  # the child died without a word (killed, crashed): log its output
                where = errlog.record(RuntimeError(err.strip()[-20000:] or "no output"),
                                      f"report export child, exit {proc.returncode}")
                said = f"the report writer stopped (exit {proc.returncode}; {where})"
            raise ExportFailed(f"{out_dir}: report export failed: {said}")
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


#: steps of the window's bar per report section (the child's progress lines)
PER_SECTION = 100


class _Ready:
    """A what-if result computed by the window: build_report takes it as it is (to_dict)."""

    def __init__(self, d: dict):
        self._d = d

    def to_dict(self) -> dict:
        return self._d


def main(argv: list[str] | None = None) -> int:
    """The child: open the saved session, build and write the report, print progress."""
    ap = argparse.ArgumentParser(prog="python -m explorer.reporting.export")
    ap.add_argument("session")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cohort", default="{}", help="analysis.Cohort.to_dict() as JSON")
    ap.add_argument("--format", default="json,md,png,svg,html,pdf")
    ap.add_argument("--whatif", default=None, help="run_whatif keyword arguments as JSON")
    ap.add_argument("--whatif-result", default=None,
                    help="a JSON file holding the scenario's finished result (to_dict)")
    args = ap.parse_args(argv)
    from explorer.core.analysis import Cohort
    from explorer.core.report import write_report
    from explorer.core.selection import from_dict
    from explorer.core.store import Store

    spec = json.loads(args.cohort)
    sel = spec.get("selection")
    cohort = Cohort(cluster=spec.get("cluster"), control=spec.get("control") or "same-category",
                    selection=from_dict(sel) if sel else None,
                    **({"eval_id": spec["eval_id"]} if spec.get("eval_id") else {}))
    store = Store.open(args.session)

    # each section is PER_SECTION steps of the bar, so a long section's own progress (the
    # replay's seconds of its budget) moves it inside its share, never backwards
    at = [0, 1]

    def progress(done, total, text=""):
        at[:] = [int(done), max(1, int(total))]
        print(f"progress {at[0] * PER_SECTION} {at[1] * PER_SECTION} {text}", flush=True)

    def detail(key, done, total, text):
        from explorer.core.i18n import _
        from explorer.core.sections import TITLES
        share = min(PER_SECTION - 1, int(PER_SECTION * done / max(1, total)))
        line = f"{_(TITLES.get(key, key))}: {text}".replace("\n", " ").replace("\r", " ")
        print(f"progress {at[0] * PER_SECTION + share} {at[1] * PER_SECTION} {line}", flush=True)

    whatif = json.loads(args.whatif) if args.whatif else None
    if args.whatif_result:
        whatif = _Ready(json.loads(Path(args.whatif_result).read_text(encoding="utf-8")))
    for path in write_report(store, cohort, args.out, args.format.split(","), whatif=whatif,
                             progress=progress, detail=detail):
        print(f"written {path}", flush=True)
    return 0


def child(argv: list[str] | None = None) -> int:
    """main(), saying any failure in one "error" line (details to the error log)."""
    try:
        return main(argv)
    except SystemExit:
        raise
    except OSError as e:  # a full disk, a folder not writable: the user's own folder named
        where = errlog.record(e, "report export child")
        print(f"error cannot write {e.filename or 'the report'}: {e.strerror or e} ({where})",
              flush=True)
    except ReportIncomplete as e:  # its message names the pictures missing and the log
        print(f"error {e}", flush=True)
    except BaseException as e:  # noqa: BLE001 - one line for the dialog, the rest to the log
        where = errlog.record(e, "report export child")
        print(f"error {errlog.describe(e)} ({where})", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(child())
