"""Describe trace and eval files: detected format, runs, rows loaded / skipped, column mapping, metric summary.

trace-explorer inspect FILE ... [--json]

Exit status 0 when every file loaded, 1 when any failed (the good ones are still reported),
2 on an internal error. Messages name the file and, where known, the line and field.
"""
from __future__ import annotations

import json
import sys
from explorer.core.i18n import N_, _, ngettext

KINDS = (N_("trace"), N_("eval"), N_("stats"))  # LoadReport.kind, shown through _()


def add_arguments(parser) -> None:
    from explorer.cli.types import path
    parser.add_argument("files", nargs="+", metavar="FILE", type=path,
                        help=_("trace or eval files / folders"))
    from explorer.cli import add_engine_version_argument
    add_engine_version_argument(parser)
    from explorer.core.memory import ENV_LIMIT
    from explorer.core.inplace import MODES as IN_PLACE_MODES
    parser.add_argument("--in-place", choices=IN_PLACE_MODES, default=None,
                        help=_("large Parquet / CSV request files: read where they lie (a view, "
                               "not copied into the store): auto (default: from 1M rows or "
                               "128 MiB of CSV), always, never"))
    parser.add_argument("--memory-limit", metavar="SIZE",
                        help=_("DuckDB memory limit: a size (8GB) or a share of the RAM (40%%); "
                               "default {env}, else 50%% of the RAM; past it, work spills to disk"
                               ).format(env=ENV_LIMIT))
    parser.add_argument("--json", action="store_true",
                        help=_('print one JSON object {"files": [...]} instead of text'))


_UNITS = {"kv_cache_hit_rate": "fraction", "num_preemptions": "count", "queue_ms": "ms",
          "prefill_ms": "ms", "decode_ms": "ms", "tpot_ms": "ms/token", "ttft_ms": "ms",
          "e2e_ms": "ms", "batch_size": "requests", "prompt_tokens": "tokens",
          "completion_tokens": "tokens", "cached_prompt_tokens": "tokens",
          "running": "requests", "waiting": "requests", "swapped": "requests",
          "kv_usage_gpu": "fraction", "kv_usage_cpu": "fraction", "prompt_tps": "tokens/s",
          "gen_tps": "tokens/s", "prefix_cache_hit_rate": "fraction"}


def fmt_number(x) -> str:
    """One fixed-point format for every number of the text output: thousands separators, never
    scientific notation; decimals by magnitude (>= 1000: none, >= 100: 1, >= 1: 2, below 1: 3,
    below 0.001: 6). None -> "-"."""
    if x is None:
        return "-"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}"
    x = float(x)
    if x != x:
        return "-"
    a = abs(x)
    if x == 0:
        return "0"
    digits = 0 if a >= 1000 else 1 if a >= 100 else 2 if a >= 1 else 3 if a >= 0.001 else 6
    return f"{x:,.{digits}f}"


def _run_lines(r: dict) -> list[str]:
    """A run: who and which version (and where the version came from), its flags, and the
    aggregates it published (with the product's recomputation where there are requests)."""
    from explorer.core.report_runs import fmt_published
    ver = r.get("engine_version") or _("version unknown")
    src = f" [{r['version_source']}]" if r.get("version_source") else \
        " [" + _("no version in the file or its path; set one with --engine-version PATH=VERSION") + "]"
    out = ["  " + _("run {run_id}: {label} · {engine} {version}{source}").format(
        run_id=r["run_id"], label=r.get("label") or "-", engine=r.get("engine") or "-",
        version=ver, source=src)]
    out += [f"    !! {flag}" for flag in r.get("flags", [])]
    if r.get("published"):
        rec = {(x["metric"], x["stat"]): x for x in r.get("recomputed", [])}
        published, value, again = _("published"), _("value"), _("recomputed")
        out.append(f"    {published:34s} {value:>16s}" + (f" {again:>16s}" if rec else ""))
        for p in r["published"]:
            c = rec.get((p["metric"], p["stat"]))
            again = "" if c is None else (" " + (f"{'(' + c['note'] + ')'}" if c.get("note")
                                                 else f"{fmt_published(c['recomputed'], p['unit']):>16s}"))
            name = p["metric"] + ("" if p["stat"] == "value" else f" {p['stat']}")
            out.append(f"      {name:32s} {fmt_published(p['value'], p['unit']):>16s}{again}")
    return out


def render_text(doc: dict) -> str:
    """The human-readable form of an inspect document."""
    out = []
    for f in doc["files"]:
        if f.get("error"):
            out.append(_("FAILED {error}").format(error=f["error"]))
            out.append("")
            continue
        out.append(f"{f['path']}")
        out.append("  " + _("format: {format} ({kind})   runs: {runs}").format(
            format=f["format"], kind=_(f["kind"]) if f["kind"] else "-", runs=", ".join(f["runs"]) or "-"))
        out.append("  " + _("rows: {loaded} loaded, {skipped} skipped").format(
            loaded=fmt_number(f["rows_loaded"]), skipped=fmt_number(f["rows_skipped"])))
        for why in f["skipped_reasons"][:5]:
            out.append("    " + _("skipped {reason}").format(reason=why))
        if f["columns"]:
            out.append("  " + _("columns:"))
            for src, dst in f["columns"].items():
                out.append(f"    {src} -> {dst}")
        if f["metrics"]:
            what = _("engine stats") if f["kind"] == "stats" else _("requests without error")
            metric, unit, mean = _("metric ({what})").format(what=what), _("unit"), _("mean")
            out.append(f"  {metric:34s} {unit:>9s} {'n':>9s} {mean:>12s} "
                       f"{'p50':>12s} {'p90':>12s} {'p99':>12s}")
            for m, st in f["metrics"].items():
                out.append(f"    {m:32s} {_UNITS.get(m, ''):>9s} {fmt_number(st['n']):>9s} "
                           + " ".join(f"{fmt_number(st[k]):>12s}" for k in ("mean", "p50", "p90", "p99")))
        for r in f.get("run_details", []):
            out += _run_lines(r)
        for e in f.get("evals", []):
            out.append("  " + _("eval {eval_id}: model {model}, {cases} cases, {correct} correct").format(
                eval_id=e["eval_id"], model=e["model"] or "-", cases=fmt_number(e["cases"]),
                correct=fmt_number(e["correct"])))
            for c in e["clusters"]:
                out.append("    " + _("cluster {name}: {badcases} badcases, {bound} bound").format(
                    name=c["name"] or _("(none)"), badcases=fmt_number(c["badcases"]),
                    bound=fmt_number(c["bound"])))
        out.append("")
    ignored = doc.get("ignored") or []
    if ignored:
        out.append(ngettext("ignored {n} file:", "ignored {n} files:",
                            len(ignored)).format(n=len(ignored)))
        for g in ignored:
            out.append(f"  {g['path']}: {g['reason']}")
        out.append("")
    n, bad = len(doc["files"]), [f for f in doc["files"] if f.get("error")]
    summary = ngettext("{n} input: {loaded} loaded, {failed} failed",
                       "{n} inputs: {loaded} loaded, {failed} failed", n).format(
        n=n, loaded=n - len(bad), failed=len(bad))
    if ignored:
        summary += _(", {n} ignored").format(n=len(ignored))
    if bad:
        summary += _(" (failed: {paths})").format(paths=", ".join(f["path"] for f in bad))
    out.append(summary)
    for w in doc.get("warnings", []):
        out.append(_("warning: {warning}").format(warning=w))
    if doc.get("prepare_error"):
        out.append(_("warning: {warning}").format(warning=doc["prepare_error"]))
    return "\n".join(out)


def for_terminal(x):
    """doc with every string in it passed through escape.terminal (ESC sequences, other
    control characters and line breaks from names shown as \\xNN, bidi controls closed)."""
    from explorer.core.escape import terminal
    if isinstance(x, str):
        return terminal(x)
    if isinstance(x, dict):
        return {for_terminal(k): for_terminal(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [for_terminal(v) for v in x]
    return x


def run(args) -> int:
    try:
        from explorer.cli import engine_version_overrides
        overrides = engine_version_overrides(args)
        from explorer.core.memory import set_limit
        set_limit(getattr(args, "memory_limit", None))
        from explorer.core.inplace import set_mode
        set_mode(getattr(args, "in_place", None))
    except ValueError as e:
        print(_("trace-explorer inspect: {x}").format(x=e), file=sys.stderr)
        return 2
    try:
        from explorer.core.inspect import inspect_paths
        result = inspect_paths(args.files, version_overrides=overrides)
        doc = result.to_dict()
        from explorer.core.memory import spill_dir, wanted_limit
        doc["memory"] = {"memory_limit": wanted_limit(), "spill_directory": spill_dir()}
        if args.json:
            from explorer.core.escape import json_terminal  # valid JSON, nothing a terminal acts on
            print(json_terminal(json.dumps(doc, indent=2, ensure_ascii=False, default=str)))
        else:  # every value from the files shown, never acted on (escape.terminal)
            print(render_text(for_terminal(doc)))
            print(_("memory limit {limit} (spill to {dir})").format(
                limit=doc["memory"]["memory_limit"], dir=for_terminal(doc["memory"]["spill_directory"])))
        for f in result.failed:
            print(_("trace-explorer inspect: {error}").format(error=f['error']), file=sys.stderr)
        return 1 if result.failed else 0
    except Exception as e:  # never a traceback for the user: one line, details in the log
        from explorer.core.interrupt import check
        check()  # a failure caused by Ctrl-C / SIGTERM is the interruption
        from explorer.core import errlog
        where = errlog.record(e, "trace-explorer inspect " + " ".join(map(str, args.files)))
        print(_("trace-explorer inspect: internal error: {x} ({where})").format(x=errlog.describe(e), where=where),
              file=sys.stderr)
        return 2
