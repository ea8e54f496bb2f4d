"""Write the analysis report (report.json, report.md, ...) of eval and trace files, no display.

    trace-explorer report (FILE ... | --demo) [--cluster NAME] [--control same-category|all-correct]
                          [--eval EVAL_ID|MODEL]
                          [--out DIR] [--format json,md,html,pdf,png,svg]
                          [--treatment M --outcome M --set M=V --graph FILE]
                          [--replay-blocks N --replay-eviction P --replay-max-num-seqs N]

The `replay` section replays the cohort's time window at the observed engine settings and under
a scenario (default: 4x the observed KV blocks; the --replay-* options set it instead) and
predicts how many of its badcases would remain (explorer.core.replay.badcases).

Exit status: 0 when the report is written and every input loaded; 1 when some input failed to
load (the report is still written from the others), nothing could be loaded or the report
could not be written (the previous one is then as it was); 2 for a usage error (unknown
cluster, format not available, bad --set / --sla / --graph, a value out of its range); 3 when
the memory ran out; 130 / 143 when interrupted by Ctrl-C / SIGTERM (nothing half-written).

The files are written as a bundle (explorer.core.atomic.Bundle): staged inside --out, moved into
place once every one is whole; only the files the previous report wrote (its manifest
.trace-explorer-report.json) are ever replaced or removed.
"""
from __future__ import annotations

import argparse
import sys
import time
from explorer.core.fmt import share
from explorer.core.i18n import _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from explorer.cli import types
    from explorer.core.analysis.causal_graph import KNOWN_NODES
    from explorer.core.schema import REQUEST_METRICS
    parser.add_argument("files", nargs="*", type=types.path,
                        help=_("trace and eval files or folders to load"))
    parser.add_argument("--demo", action="store_true", help=_("use the bundled simulated demo workload"))
    parser.add_argument("--cluster", metavar="NAME",
                        help=_("badcase cluster to explain (default: the largest cluster)"))
    parser.add_argument("--control", choices=("same-category", "all-correct", "outside-cluster"),
                        default="same-category",
                        help=_("control group: correct cases of the same category (default), all "
                               "correct cases, or every case of the same category outside the "
                               "cluster (correct ones and other clusters' badcases)"))
    parser.add_argument("--eval", metavar="EVAL_ID", dest="eval_id", default=None,
                        help=_("analyse one eval only: its eval id, or its model name (or a "
                             "unique part of it, e.g. 8B); default: every loaded eval pooled"))
    parser.add_argument("--out", metavar="DIR", default="report", type=types.path, help=_("output folder (default ./report)"))
    parser.add_argument("--format", default="json,md",
                        help=_("comma-separated formats: json, md, html, pdf, png, svg (default json,md)"))
    parser.add_argument("--treatment", metavar="M",
                        type=types.metric(REQUEST_METRICS, _("treatment metric")), help=_("what-if treatment metric (default kv_cache_hit_rate)"))
    parser.add_argument("--outcome", metavar="M",
                        type=types.metric(KNOWN_NODES, _("outcome")), help=_("what-if outcome (default badcase)"))
    parser.add_argument("--set", metavar="M=V", dest="set_value",
                        help=_("what-if scenario: set metric M to value V for the badcases"))
    parser.add_argument("--graph", metavar="FILE", type=types.path, help=_("causal graph (DOT or GML) for the what-if"))
    parser.add_argument("--sla", metavar="M=V", action="append", default=None,
                        help=_("SLA threshold, repeatable (default ttft_ms=500 and tpot_ms=50)"))
    parser.add_argument("--sla-window", metavar="S", default=None, type=types.number(above=0),
                        help=_("SLA over time: window length in seconds (default 60)"))
    parser.add_argument("--error-budget", metavar="F", default=None, type=types.number(0, 1),
                        help=_("SLA over time: a window's error budget, a share (default 0.005)"))
    parser.add_argument("--max-depth", type=types.integer(1, 32), default=3, help=_("decision tree depth (default 3)"))
    parser.add_argument("--min-samples-leaf", type=types.integer(1), default=None,
                        help=_("decision tree: minimum cases per leaf (default max(5, 1%% of cases))"))
    parser.add_argument("--no-whatif", action="store_true", help=_("skip the causal what-if section"))
    from explorer.core.replay.model import EVICTION_POLICIES
    parser.add_argument("--replay-blocks", metavar="N",
                        help=_("replay scenario: KV-cache blocks (num_gpu_blocks; 0 or inf = "
                               "infinite); default 4x the observed run's"))
    parser.add_argument("--replay-eviction", choices=EVICTION_POLICIES,
                        help=_("replay scenario: prefix-cache eviction policy"))
    parser.add_argument("--replay-max-num-seqs", type=types.integer(1, 1 << 20), metavar="N",
                        help=_("replay scenario: running requests at most"))
    parser.add_argument("--no-replay", action="store_true",
                        help=_("skip the replay section (KV-cache simulation of the run)"))
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
    parser.add_argument("--timings", action="store_true",
                        help=_("print the wall time of loading, of each section and of writing "
                               "to stderr"))
    wh = parser.add_argument_group(_("warehouse (the requests stay in a Spark Connect server; "
                                     "needs pip install 'trace-explorer[spark]')"))
    wh.add_argument("--warehouse", metavar="URL",
                    help=_("sc://host:port of a Spark Connect server, or spark:local to start one "
                           "here; FILES are then the eval cases"))
    wh.add_argument("--requests-table", metavar="TABLE",
                    help=_("table or view with the request columns, or parquet:PATH (file, folder "
                           "or glob)"))
    wh.add_argument("--requests-columns", metavar="CANON=SRC,...",
                    help=_("map table columns to request columns (default: the generic loaders' "
                           "alias table, e.g. ttft_s -> ttft_ms)"))


def _err(msg: str) -> None:
    print(_("trace-explorer report: {msg}").format(msg=msg), file=sys.stderr)


def _pair(text: str, what: str, sla: bool = False) -> tuple[str, float]:
    """(metric, value) of --set / --sla METRIC=VALUE: a known metric, a finite value in the
    metric's range (an SLA threshold above 0). Raises ValueError saying what is allowed."""
    from explorer.cli.types import metric_value
    from explorer.core.formats._common import range_rules
    from explorer.core.schema import REQUEST_METRICS
    return metric_value(text, what, REQUEST_METRICS, range_rules, positive=sla)


def _whatif_args(args) -> dict | bool:
    if args.no_whatif:
        return False
    out: dict = {}
    if args.treatment:
        out["treatment"] = args.treatment
    if args.outcome:
        out["outcome"] = args.outcome
    if args.set_value:
        m, v = _pair(args.set_value, "--set")
        if args.treatment and m != args.treatment:
            raise ValueError(_("--set names {x} but --treatment is {treatment}").format(x=m, treatment=args.treatment))
        out["treatment"] = m
        out["set_value"] = v
    if args.graph:  # read capped (not /dev/zero whole) and checked (acyclic, known nodes) here
        from explorer.cli.types import read_capped
        from explorer.core.analysis.causal_graph import parse_graph
        from explorer.core.errors import InputError
        text = read_capped(args.graph)
        try:
            parse_graph(text, source=args.graph)
        except InputError as e:
            raise ValueError(str(e)) from None
        out["graph_text"] = text
    return out


def _replay_args(args) -> dict | None:
    """The replay section's scenario (EngineConfig changes) from --replay-*, None when none is
    given (the section's default). Raises ValueError on a bad value."""
    out: dict = {}
    blocks = getattr(args, "replay_blocks", None)
    if blocks is not None:
        t = str(blocks).strip().lower()
        if t in ("inf", "infinite", "none", "0"):
            out["num_gpu_blocks"] = None
        elif t.isdigit():
            out["num_gpu_blocks"] = int(t)
        else:
            raise ValueError(f"--replay-blocks expects a block count or 'inf', not {blocks!r}")
    if getattr(args, "replay_eviction", None):
        out["eviction"] = args.replay_eviction
    seqs = getattr(args, "replay_max_num_seqs", None)
    if seqs is not None:
        if seqs < 1:
            raise ValueError(f"--replay-max-num-seqs must be at least 1, not {seqs}")
        out["max_num_seqs"] = seqs
    return out or None


def _resolve_eval(store, name: str | None) -> str | None:
    """The eval id `name` designates: an eval id, a model name, or a case-insensitive part of
    exactly one eval id / model. Raises ValueError listing the evals otherwise."""
    if name is None:
        return None
    rows = store.con.execute("SELECT DISTINCT eval_id, model FROM cases WHERE eval_id IS NOT NULL "
                             "ORDER BY eval_id").fetchall()
    for test in (lambda e, m: e == name, lambda e, m: m == name,
                 lambda e, m: name.lower() in e.lower() or name.lower() in (m or "").lower()):
        hits = sorted({e for e, m in rows if test(e, m)})
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ValueError(_("--eval {name!r} matches several evals: {x}").format(name=name, x=', '.join(hits)))
    listed = ", ".join(sorted({e for e, _ in rows})[:20]) or "none (no eval is loaded)"
    raise ValueError(_("no eval matches {name!r}; evals: {listed}").format(name=name, listed=listed))


def _resolve_cluster(store, name: str | None, eval_id: str | None = None) -> str | None:
    from explorer.core.analysis import default_cluster

    if name is None:
        return default_cluster(store, eval_id=eval_id)
    rows = store.con.execute("SELECT DISTINCT cluster FROM cases WHERE cluster IS NOT NULL "
                             "AND ($e IS NULL OR eval_id = $e)", {"e": eval_id}).fetchall()
    names = {r[0] for r in rows}
    if name in names:
        return name
    hit = store.con.execute("SELECT cluster FROM cluster_names WHERE display_name = ?", [name]).fetchall()
    if hit and hit[0][0] in names:
        return hit[0][0]
    listed = ", ".join(sorted(names)[:20]) or "none (no badcase has a cluster)"
    raise ValueError(_("no badcase cluster named {name!r}; clusters: {listed}").format(name=name, listed=listed))


def _load(store, args, bind: bool = True) -> tuple[int, int]:
    """Load inputs; returns (loaded, failed) counts. Prints one line per input to stderr.
    bind=False: no binding here (a warehouse binds in the engine)."""
    loaded = failed = 0
    if args.demo:
        from explorer.demo import load_demo
        reports = load_demo(store)
    else:
        reports = []
    if args.files:
        from explorer.cli.progress import LoadProgress
        with LoadProgress(store) as shown:  # a progress line when stderr is a terminal
            reports = list(reports) + list(store.load_paths(args.files, progress=shown))
        from explorer.core.runs import apply_version_overrides
        for msg in apply_version_overrides(store, args.version_overrides):
            _err(msg)
        from explorer.core import errlog, pipeline
        try:
            res = pipeline.prepare(store) if bind else None  # bind after the last file
        except Exception as e:  # noqa: BLE001 - the report is still written, unbound
            _err(_("binding cases to requests failed: {x} "
                 "({x2})").format(x=errlog.describe(e), x2=errlog.record(e, 'binding cases to requests')))
        else:
            _print_bound(res)
    from explorer.core.escape import terminal  # a name's line break or ESC shown, not acted on
    for r in reports:
        if r.error:
            failed += 1
            _err(_("failed: {error}").format(error=terminal(r.error)))
        elif r.skipped_file:
            print(_("ignored {path}: {skipped_file}").format(
                path=terminal(r.path), skipped_file=terminal(r.skipped_file)), file=sys.stderr)
        else:
            loaded += 1
            print(_("loaded {path}: {format}, {rows} rows").format(
                path=terminal(r.path), format=r.format, rows=r.rows_loaded)
                + (_(", {n} skipped").format(n=r.rows_skipped) if r.rows_skipped else ""), file=sys.stderr)
    return loaded, failed


def _print_bound(res) -> None:
    if res is not None and res.total:
        print((_("bound {bound:,} of {total:,} case to trace requests") if res.total == 1 else
               _("bound {bound:,} of {total:,} cases to trace requests")).format(
                   bound=res.bound, total=res.total)
              + (f" ({share(res.rate)})" if res.rate is not None else ""), file=sys.stderr)


def _open_warehouse(store, args):
    """The WarehouseStore for --warehouse (cases bound in the engine), or raises
    WarehouseUnavailable / WarehouseError / ValueError with a message for the user."""
    from explorer.core.warehouse import open_warehouse, parse_columns, redact_url
    if not args.requests_table:
        raise ValueError("--warehouse needs --requests-table TABLE (a table or view, or "
                         "parquet:PATH)")
    n = store.count("requests")
    if n:
        _err(_("--warehouse: the {n:,} requests of the trace files given are not used; the "
             "requests come from {requests_table}").format(n=n, requests_table=args.requests_table))
        from explorer.core.inplace_session import clear
        clear(store)
    steps = {"connect": _("starting a local Spark Connect server ...")
             if args.warehouse == "spark:local"
             else _("connecting to {warehouse} ...").format(warehouse=redact_url(args.warehouse)),
             "bind": _("binding the eval cases to the warehouse requests ...")}
    ws = open_warehouse(store, args.warehouse, args.requests_table,
                        parse_columns(args.requests_columns),
                        progress=lambda step: print(steps[step], file=sys.stderr))
    _print_bound(ws.binding)
    return ws


class _Timer:
    """Wall-clock seconds per phase, printed to stderr as "timing <phase> <s>" lines."""

    def __init__(self, on: bool):
        self.on = on
        self.t = time.perf_counter()
        self.start = self.t
        self.phase = None

    def mark(self, phase: str | None) -> None:
        now = time.perf_counter()
        if self.on and self.phase is not None:
            print(_("timing {phase:<12} {x:6.2f} s").format(phase=self.phase, x=now - self.t), file=sys.stderr)
        self.t, self.phase = now, phase

    def progress(self, done: int, total: int, section: str) -> None:
        self.mark("write" if section == "done" else section)

    def total(self) -> None:
        self.mark(None)
        if self.on:
            print(_("timing {x:<12} {x2:6.2f} s").format(x='total', x2=time.perf_counter() - self.start),
                  file=sys.stderr)


def _load_renderer(formats) -> None:
    """Import the Qt renderer (it registers its formats with explorer.core.report) when a
    format beyond json / md is asked for; a failed import is recorded for check_formats."""
    from explorer.core import report as core_report
    if not {f.strip().lower() for f in formats} - set(core_report.OWN_FORMATS):
        return
    try:
        import explorer.reporting  # noqa: F401 - registers the renderer
    except ImportError as e:
        core_report.renderer_failed("explorer.reporting", e)


def run(args) -> int:
    from explorer.core.analysis import Cohort
    from explorer.core.errors import ReportIncomplete, TraceExplorerError
    from explorer.core.report import FormatUnavailable, check_formats, write_report
    from explorer.core.store import Store

    if not args.files and not args.demo:
        _err(_("give eval / trace files to analyse, or --demo"))
        return 2
    try:
        from explorer.cli import engine_version_overrides
        args.version_overrides = engine_version_overrides(args)
        formats = args.format.split(",")
        _load_renderer(formats)
        formats = check_formats(formats)
        whatif = _whatif_args(args)
        params: dict = {"tree": {"max_depth": args.max_depth,
                                 "min_samples_leaf": args.min_samples_leaf}}
        scenario = _replay_args(args)
        from explorer.core.memory import set_limit
        set_limit(getattr(args, "memory_limit", None))  # a bad size: exit 2, said why
        from explorer.core.inplace import set_mode
        set_mode(getattr(args, "in_place", None))
        if getattr(args, "no_replay", False):
            params["replay"] = False
        elif scenario:
            params["replay"] = scenario
        if args.sla:
            params["sla"] = {"thresholds": dict(_pair(s, "--sla", sla=True) for s in args.sla)}
        if args.sla_window is not None or args.error_budget is not None:
            from explorer.core.analysis.sla_windows import window_params
            over = {"window_s": args.sla_window, "error_budget": args.error_budget}
            window_params({**params.get("sla", {}), **over})  # a bad value: exit 2, said why
            params["sla"] = {**params.get("sla", {}), **{k: v for k, v in over.items() if v is not None}}
    except (ValueError, FormatUnavailable) as e:
        _err(str(e))
        return 2
    timer = _Timer(getattr(args, "timings", False))
    timer.mark("load")
    from explorer.core.preload import preload
    importing = preload()  # scipy.stats / sklearn.tree beside the load (DuckDB frees the GIL)
    store = local = Store()
    warehouse = getattr(args, "warehouse", None)
    try:
        loaded, failed = _load(store, args, bind=not warehouse)
        if loaded == 0:
            _err(_("nothing could be loaded"))
            return 1
        if warehouse:
            timer.mark("warehouse")
            try:
                store = _open_warehouse(local, args)
            except TraceExplorerError as e:
                _err(_("warehouse: {x}").format(x=e))
                return 1
        timer.mark("cohort_frame")
        eval_id = _resolve_eval(store, getattr(args, "eval_id", None))
        cluster = _resolve_cluster(store, args.cluster, eval_id)
        cohort = Cohort(cluster, args.control, eval_id=eval_id)
        from explorer.cli.progress import ReportProgress
        from explorer.core.interrupt import signalled  # a signal a section swallowed
        shown = ReportProgress()  # a progress line when stderr is a terminal

        def progress(done: int, total: int, key: str) -> None:
            if timer.on:  # its "timing ..." line on a row of its own
                shown.close()
            timer.progress(done, total, key)
            shown.section(done, total, key)
        try:
            written = write_report(store, cohort, args.out, formats, params=params,
                                   whatif=whatif, progress=progress, cached=False,
                                   cancelled=signalled, detail=shown.detail)
        finally:
            shown.close()
        timer.total()
    except (ValueError, FormatUnavailable) as e:
        _err(str(e))
        return 2
    except OSError as e:  # nothing half-written: the previous report is as it was
        from explorer.core.atomic import describe_os_error
        _err(_("{out}: cannot write the report ({x})").format(out=args.out,
                                                              x=describe_os_error(e)))
        return 1
    except ReportIncomplete as e:  # a picture could not be drawn: the rest was written
        for p in e.written:
            print(p)
        _err(str(e))
        return 1
    except TraceExplorerError as e:  # e.g. the warehouse went away mid-report
        from explorer.core.interrupt import signalled
        if signalled():  # Cancelled before the next section: "interrupted" (explorer.__main__)
            raise KeyboardInterrupt() from e
        _err(str(e))
        return 1
    finally:
        if store is not local:
            store.close()
        local.close()
        importing.join()
    for p in written:
        print(p)
    return 1 if failed else 0
