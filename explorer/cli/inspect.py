"""Describe trace and eval files: detected format, runs, rows loaded / skipped, column mapping, metric summary.

trace-explorer inspect FILE ... [--json]

Exit status 0 when every file loaded, 1 when any failed (the good ones are still reported),
2 on an internal error. Messages name the file and, where known, the line and field.
"""
from __future__ import annotations

import json
import sys


def add_arguments(parser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="trace or eval files / folders")
    parser.add_argument("--json", action="store_true",
                        help='print one JSON object {"files": [...]} instead of text')


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, int):
        return str(x)
    return f"{x:.4g}" if abs(x) < 1e5 else f"{x:.6g}"


def render_text(doc: dict) -> str:
    """The human-readable form of an inspect document."""
    out = []
    for f in doc["files"]:
        if f.get("error"):
            out.append(f"FAILED {f['error']}")
            out.append("")
            continue
        out.append(f"{f['path']}")
        out.append(f"  format: {f['format']} ({f['kind']})   runs: {', '.join(f['runs']) or '-'}")
        out.append(f"  rows: {f['rows_loaded']} loaded, {f['rows_skipped']} skipped")
        for why in f["skipped_reasons"][:5]:
            out.append(f"    skipped {why}")
        if f["columns"]:
            out.append("  columns:")
            for src, dst in f["columns"].items():
                out.append(f"    {src} -> {dst}")
        if f["metrics"]:
            what = "engine stats" if f["kind"] == "stats" else "requests without error"
            out.append(f"  {'metric (' + what + ')':34s} {'n':>7s} {'mean':>10s} "
                       f"{'p50':>10s} {'p90':>10s} {'p99':>10s}")
            for m, s in f["metrics"].items():
                out.append(f"    {m:32s} {s['n']:7d} {_fmt(s['mean']):>10s} {_fmt(s['p50']):>10s} "
                           f"{_fmt(s['p90']):>10s} {_fmt(s['p99']):>10s}")
        for e in f.get("evals", []):
            out.append(f"  eval {e['eval_id']}: model {e['model'] or '-'}, {e['cases']} cases, "
                       f"{e['correct']} correct")
            for c in e["clusters"]:
                out.append(f"    cluster {c['name'] or '(none)'}: {c['badcases']} badcases, "
                           f"{c['bound']} bound")
        out.append("")
    n, bad = len(doc["files"]), [f for f in doc["files"] if f.get("error")]
    summary = f"{n} input(s): {n - len(bad)} loaded, {len(bad)} failed"
    if bad:
        summary += " (" + ", ".join(f["path"] for f in bad) + ")"
    out.append(summary)
    if doc.get("prepare_error"):
        out.append(f"warning: {doc['prepare_error']}")
    return "\n".join(out)


def run(args) -> int:
    try:
        from explorer.core.inspect import inspect_paths
        result = inspect_paths(args.files)
        doc = result.to_dict()
        if args.json:
            print(json.dumps(doc, indent=2, ensure_ascii=False, default=str))
        else:
            print(render_text(doc))
        for f in result.failed:
            print(f"trace-explorer inspect: {f['error']}", file=sys.stderr)
        return 1 if result.failed else 0
    except Exception as e:  # never a traceback for the user
        print(f"trace-explorer inspect: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
