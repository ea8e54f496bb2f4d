"""Compare runs A/B, like with like, item by item, against run-to-run noise; writes compare.json.

    trace-explorer compare FILE ... [--baseline RUN] [--runs RUN,RUN,...] [--out DIR]
                           [--format json,md,html,png]

compare.json is DESIGN "Comparing runs" (explorer.core.analysis.runcompare.compare_runs);
compare.md and compare.html the same in words and tables; png draws each sweep as curves and
its Pareto view (needs Qt, offscreen is enough).

Exit status: 0 when written and every input loaded; 1 when some input failed to load (the
comparison is still written from the others), nothing could be loaded, or nothing could be
compared; 2 for a usage error (unknown run, format).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from explorer.core.i18n import _

FORMATS = ("json", "md", "html", "png")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help=_("result, trace and eval files or folders to compare"))
    parser.add_argument("--baseline", metavar="RUN",
                        help=_("compare this run (its run id) with every other run"))
    parser.add_argument("--runs", metavar="RUN,RUN,...",
                        help=_("compare only these runs (comma-separated run ids)"))
    parser.add_argument("--out", metavar="DIR", default="compare",
                        help=_("output folder (default ./compare)"))
    parser.add_argument("--format", default="json,md",
                        help=_("comma-separated formats: json, md, html, png (default json,md)"))
    from explorer.cli import add_engine_version_argument
    add_engine_version_argument(parser)


def _err(msg: str) -> None:
    print(_("trace-explorer compare: {msg}").format(msg=msg), file=sys.stderr)


def write(doc: dict, out: Path, formats: list[str]) -> list[Path]:
    """Write compare.<format> for each format; returns the paths."""
    from explorer.core.atomic import write_text
    from explorer.core.report import finite_doc
    out.mkdir(parents=True, exist_ok=True)
    doc, _bad = finite_doc(doc)
    written = []
    if "json" in formats:
        written.append(write_text(out / "compare.json", json.dumps(
            doc, indent=2, ensure_ascii=False, allow_nan=False, default=str)))
    if "md" in formats:
        from explorer.core.report_compare import md_compare
        written.append(write_text(out / "compare.md", "# " + _("Runs compared") + "\n\n"
                                  + md_compare(doc) + "\n"))
    if "html" in formats:
        from explorer.reporting.html import compare_document
        written.append(write_text(out / "compare.html", compare_document(doc)))
    if "png" in formats:
        from explorer.widgets.painters.compare import save_sweeps
        written += save_sweeps(doc, out)
    return written


def run(args) -> int:
    from explorer.cli import engine_version_overrides
    from explorer.cli.report import _print_bound
    from explorer.core.analysis.runcompare import compare_runs
    from explorer.core.errors import NoData
    from explorer.core.store import Store
    try:
        overrides = engine_version_overrides(args)
    except ValueError as e:
        _err(str(e))
        return 2
    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        _err(_("unknown format {x}; choose from {formats}").format(
            x=", ".join(bad), formats=", ".join(FORMATS)))
        return 2
    params: dict = {}
    if args.baseline:
        params["baseline"] = args.baseline
    if args.runs:
        params["runs"] = [r.strip() for r in args.runs.split(",") if r.strip()]
    store = Store()
    try:
        reports = list(store.load_paths(args.files))
        from explorer.core.runs import apply_version_overrides
        for msg in apply_version_overrides(store, overrides):
            _err(msg)
        failed = 0
        for r in reports:
            if r.error:
                failed += 1
                _err(_("failed: {error}").format(error=r.error))
        if failed == len(reports):
            _err(_("nothing could be loaded"))
            return 1
        from explorer.core import pipeline
        _print_bound(pipeline.prepare(store))
        try:
            doc = compare_runs(store, params)
        except ValueError as e:
            _err(str(e))
            return 2
        except NoData as e:
            _err(str(e))
            return 1
        try:
            written = write(doc, Path(args.out), formats)
        except OSError as e:
            _err(_("{out}: cannot write ({x})").format(out=args.out, x=e))
            return 1
    finally:
        store.close()
    for p in written:
        print(p)
    return 1 if failed else 0
