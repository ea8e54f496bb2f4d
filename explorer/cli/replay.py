"""Replay an arrival trace through the engine model under other KV-cache and scheduler settings.

trace-explorer replay FILE --blocks N [--eviction lru|lfu|fifo|s3fifo] [--block-size 16]
                      [--max-num-seqs 256] [--max-num-batched-tokens 8192] [--json]
trace-explorer replay FILE --what-if --max-num-seqs N ... (fit at the observed settings, replay
                      at these: replay_whatif.py)
trace-explorer replay TARGET --calibrate-from SOURCE ... (out of sample: replay_validate.py)
trace-explorer replay --validate FOLDER [--group NAME] [--mode low-high|loo|both] [--replicas N] [--routing connection]

FILE is a Mooncake trace (timestamp, input_length, output_length, hash_ids) or any trace file
Trace Explorer loads that has arrival times and prompt lengths (its first run is replayed;
without hash ids no prompt shares a prefix). --blocks 0 or "inf" means an infinite cache;
--kv-gb with --bytes-per-token gives the capacity in GB instead; without either, a run of a
deployment replay/deployments.py knows takes its pods' KV capacity (and, always, their vLLM
scheduler and KV read per decode step: the model --validate checks).
Prints the summary, led by the prefix-cache hit rate as vLLM defines it (prefix_cache_hits /
prefix_cache_queries in tokens over first queries; preempted requests' re-queries counted apart,
as vLLM's PrefixCacheStats does); hit_rate_blocks, the older per-attempt block count, which a
small thrashing cache inflates, follows it. With --json: one JSON object with requests,
hit_rate, hit_rate_preempted, prefix_cache {requests, queries, hits, preempted_requests,
preempted_queries, preempted_hits}, hit_rate_blocks, hit_rate_per_request, hit_rate_tokens, preemptions,
ttft_ms_mean, tpot_ms_mean, prefix_information (false, hit rates null and a "note" when the
trace has no hash_ids), skipped_lines, ...
When the trace records observed latencies (TTFT, TPOT), the replay is first calibrated on them
at the settings given (taken as the observed ones; explorer.core.replay.calibrate): the step
time, and where the trace lacks batch sizes the number of engine replicas the arrivals were
spread over, are fitted so the replay reproduces the observed mean TTFT and TPOT; `calibration`
in the JSON is {ttft_ms: {observed, replayed, error, p90_*}, tpot_ms: {...}, before: {...},
step_time, scales, replicas, dropped, reasons, warning} with error = replayed / observed - 1, and
a WARNING line says when an error stays above 25%. Requests the replay leaves out (errored ones,
without a prompt length) are counted with their reason (`dropped`). --timing default skips the
fit and reports the default step time's errors.
Bad lines (e.g. the cut last line of a truncated file) are skipped with a warning naming
FILE:LINE on stderr, as `inspect` skips them. FILE must be one file (a folder is refused with
the list of its trace files).
Exit status 0 on success (also with skipped lines), 1 when the file cannot be read or holds no
usable request (the message names the file, line and field), 2 on bad settings.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from ..core.errors import InputError, NoData
from ..core.replay.compare import NO_PREFIX, calibration_lines, hit_rate_lines
from ..core.replay.model import EVICTION_POLICIES, EngineConfig
from .replay_input import check_trace_path, given_settings, is_mooncake, open_trace_store
from explorer.core.i18n import N_, _, ngettext


def _blocks(text: str) -> int | str:
    """A block count, or "inf" (also for 0): argparse must not see None, its default."""
    t = text.strip().lower()
    if t in ("inf", "infinite", "none", "0"):
        return "inf"
    try:
        n = int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a block count or 'inf', got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("the block count must be >= 0 (0 = infinite)")
    return n


# tokens per KV block at most: vLLM's block sizes go to 128 (CacheConfig.block_size); a block
# beyond a few thousand tokens means nothing and made the replay's block hashing run for minutes
MAX_BLOCK_SIZE = 4096


def add_arguments(parser) -> None:
    from explorer.cli import types
    parser.add_argument("file", metavar="FILE", type=types.path, nargs="?",
                        help=_("arrival trace (Mooncake JSONL or any loadable trace)"))
    cap = parser.add_mutually_exclusive_group()
    cap.add_argument("--blocks", type=_blocks, metavar="N",
                     help=_("KV-cache capacity in blocks (vLLM num_gpu_blocks); 0 or inf = infinite; "
                            "omitted: the deployment's when published"))
    cap.add_argument("--kv-gb", type=types.number(above=0, hi=1e6), metavar="GB",
                     help=_("KV-cache capacity in GB (1e9 bytes); needs --bytes-per-token"))
    parser.add_argument("--bytes-per-token", type=types.number(above=0, hi=1 << 30),
                        default=131072, metavar="B",
                        help=_("KV bytes per token for --kv-gb (default 131072: Llama-3.1-8B, "
                             "fp16, 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes)"))
    parser.add_argument("--eviction", choices=EVICTION_POLICIES,
                        help=_("prefix-cache eviction policy (default lru, vLLM's)"))
    parser.add_argument("--block-size", type=types.integer(1, MAX_BLOCK_SIZE), metavar="T",
                        help=_("tokens per KV block, 1 to {n} (default 16; vLLM offers 8, 16, 32, "
                               "64, 128)").format(n=MAX_BLOCK_SIZE))
    parser.add_argument("--max-num-seqs", type=types.integer(1, 1 << 20), metavar="N",
                        help=_("running requests at most (default 256)"))
    parser.add_argument("--max-num-batched-tokens", type=types.integer(1, 1 << 24), metavar="N",
                        help=_("tokens per engine step, chunked-prefill budget (default 8192)"))
    parser.add_argument("--timing", choices=("auto", "default"), default="auto",
                        help=_("auto (default): calibrate the step time (and replicas) on the "
                             "trace's observed TTFT and TPOT when it has them; default: the "
                             "SGLang-calibrated default, its errors reported, not corrected"))
    parser.add_argument("--calibrate-from", type=types.path, metavar="SOURCE",
                        help=_("fit the step time on SOURCE's observed latencies and replay FILE's "
                               "arrivals with it: the errors against FILE are out of sample"))
    parser.add_argument("--validate", type=types.path, metavar="FOLDER",
                        help=_("fit on the lowest setting of each ladder of runs in FOLDER (request "
                               "rate, concurrency, ...) and report the error at each higher one"))
    parser.add_argument("--group", metavar="NAME",
                        help=_("with --validate: only this ladder (its configuration name)"))
    from ..core.replay.loo import MODE_CHOICES  # the one list of validation modes
    parser.add_argument("--mode", choices=MODE_CHOICES, default=MODE_CHOICES[0],
                        help=_("with --validate: fit on the lowest setting and predict the "
                               "higher ones (low-high), leave each setting out in turn (loo), "
                               "or both"))
    parser.add_argument("--replicas", type=types.integer(1, 1024), metavar="N",
                        help=_("engine replicas behind the trace, when known (default: fitted)"))
    parser.add_argument("--routing", choices=("round-robin", "random", "connection"),
                        help=_("how arrivals reach the replicas: round-robin, random per "
                               "request, or per keep-alive connection (a Kubernetes Service); "
                               "default: the deployment's when published, else round-robin"))
    parser.add_argument("--what-if", action="store_true",
                        help=_("fit the step time at the settings the trace was served with "
                               "(recorded, the deployment's, else vLLM's defaults) and replay "
                               "it with only the settings given changed: both side by side"))
    parser.add_argument("--json", action="store_true", help=_("print one JSON object"))


def _load(path: Path, warnings: list[str], cfg, fit: bool = True, replicas: int | None = None,
          routing: str | None = None, auto_blocks: bool = False):
    """(trace requests, CalibrationResult or None, why, cfg) of FILE: the calibration of the
    replay at `cfg` (taken as the observed settings) on the trace's observed latencies, None
    with the reason in `why` when the trace records none; lines or rows skipped are appended to
    `warnings` ("FILE:LINE: reason"). A run of a deployment deployments.KNOWN lists gets its
    engine facts (scheduler, KV read, and with auto_blocks its KV capacity) as the validation
    does (deployments.with_kv_read), in the returned cfg. Raises InputError (a folder: replay
    takes one file), ValueError when auto_blocks finds no capacity."""
    from ..core.replay import read_mooncake, requests_from_store
    from ..core.replay.calibrate import calibrate_run

    check_trace_path(path)
    if path.is_file():
        if is_mooncake(path):
            skipped: list = []
            trace = read_mooncake(path, skipped=skipped)
            warnings.extend(str(e) for e in skipped)
            if auto_blocks:
                raise ValueError(_(BLOCKS_REQUIRED))
            return trace, None, _("a Mooncake trace records arrival times, lengths and hash "
                                  "ids, no latencies"), cfg
    store, run_id = open_trace_store(path, warnings)
    try:
        trace = requests_from_store(store, run_id)
        from ..core.replay.deployments import deployment_of, with_kv_read
        dep = deployment_of(store, run_id) or {}   # a published fact, not a fit
        replicas = replicas or dep.get("replicas")
        routing = routing or dep.get("routing") or "round-robin"
        cfg = with_kv_read(dep, cfg, capacity=auto_blocks)   # the model the validation uses
        if auto_blocks and cfg.num_gpu_blocks is None:
            raise ValueError(_(BLOCKS_REQUIRED))
        cal = calibrate_run(store, run_id, cfg, trace=trace, fit=fit,
                            fixed_replicas=replicas, routing=routing)
        if "ttft_ms" not in cal.after and "tpot_ms" not in cal.after:
            return trace, None, _("the trace records no TTFT or TPOT"), cfg
        return trace, cal, None, cfg
    finally:
        store.close()


MAX_WARNINGS = 10


def _error_applies(cal, fitted: bool) -> dict:
    """Which error applies to a replay at the settings given (issue 34): its calibration's own,
    in-sample, when it was fitted on this trace; else not validated (the model's default step
    time, --timing default: its errors against the trace are shown, nothing was fitted).
    --calibrate-from and --validate give out-of-sample errors."""
    from ..core.replay.validate import in_sample
    if cal is not None and fitted:
        return in_sample()
    return {"kind": "not validated", "text": _("not validated")}


BLOCKS_REQUIRED = N_("--blocks N or --kv-gb GB is required (the KV-cache capacity; --blocks "
                      "inf for an infinite cache) unless the trace's deployment is known")


def _config(args) -> EngineConfig:
    """The engine settings the command line asks for (ValueError when they are invalid).
    Without --blocks and --kv-gb the capacity is the deployment's (_load), else required."""
    cfg = EngineConfig(**given_settings(args))
    cfg.validate()
    return cfg


def run(args) -> int:
    path = Path(args.file or ".")
    if not args.file and not args.validate:
        print(_("trace-explorer replay: FILE is required (or --validate FOLDER)"), file=sys.stderr)
        return 2
    try:
        cfg = _config(args)
    except ValueError as e:
        print(_("trace-explorer replay: {x}").format(x=e), file=sys.stderr)
        return 2
    from . import replay_validate
    if args.validate:
        if args.file or args.calibrate_from or args.what_if:
            print(_("trace-explorer replay: --validate takes a folder, not FILE, "
                    "--calibrate-from or --what-if"), file=sys.stderr)
            return 2
        return replay_validate.validate_folder(args, cfg)
    if args.what_if:
        if args.calibrate_from or args.timing != "auto":
            print(_("trace-explorer replay: --what-if fits the step time itself: not with "
                    "--calibrate-from or --timing default"), file=sys.stderr)
            return 2
        from .replay_whatif import what_if
        return what_if(args, path, given_settings(args))
    if args.calibrate_from:
        return replay_validate.calibrate_from(args, cfg)
    warnings: list[str] = []
    try:
        trace, cal, why, cfg = _load(path, warnings, cfg, fit=args.timing == "auto",
                                     replicas=args.replicas, routing=args.routing,
                                     auto_blocks=args.blocks is None and args.kv_gb is None)
    except (InputError, NoData) as e:
        print(_("trace-explorer replay: {x}").format(x=e), file=sys.stderr)
        return 1
    except ValueError as e:
        print(_("trace-explorer replay: {path}: {x}").format(path=path, x=e), file=sys.stderr)
        return 2
    for w in warnings[:MAX_WARNINGS]:
        print(_("trace-explorer replay: warning: {w} (skipped)").format(w=w), file=sys.stderr)
    if len(warnings) > MAX_WARNINGS:
        x = len(warnings) - MAX_WARNINGS
        print(ngettext("trace-explorer replay: warning: {x} more bad line skipped",
                       "trace-explorer replay: warning: {x} more bad lines skipped", x).format(x=x),
              file=sys.stderr)
    from ..core.replay.calibrate import DEFAULT_START
    note = _("not calibrated: {why}").format(why=why) if why else None
    timing = (_("{start}: {why}").format(start=_(DEFAULT_START), why=why)
              if cal is None else cal.step_time())
    replicas, routing = args.replicas or 1, args.routing or "round-robin"
    if cal is not None:
        cfg = replace(cfg, **cal.params)
        replicas, routing = cal.replicas, cal.routing
    from ..core.replay.io import summary_jsonable
    from ..core.replay.replicas import simulate_replicas

    t0 = time.perf_counter()
    try:
        res = simulate_replicas(trace, cfg, replicas, routing=routing)
    except ValueError as e:
        print(_("trace-explorer replay: {path}: {x}").format(path=path, x=e), file=sys.stderr)
        return 2
    summary = summary_jsonable(res.summary)
    summary["replay_wall_s"] = round(time.perf_counter() - t0, 3)
    dropped = cal.dropped if cal is not None else {}
    doc = {"file": str(path), "config": cfg.to_dict(), "label": cfg.label(), "timing": timing,
           "skipped_lines": len(warnings), **summary,
           "calibration": cal.to_dict() if cal is not None else None,
           "dropped": dropped, "replicas": replicas,
           "error_applies": _error_applies(cal, args.timing == "auto")}
    if cal is None:
        doc["calibration_note"] = note
    if not summary.get("prefix_information", True):
        doc["note"] = NO_PREFIX
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        _print_text(path, cfg, summary, res, warnings, dropped, cal, note, timing,
                    doc["error_applies"]["text"])
        if cal is not None and args.timing == "auto":
            print(_("  note: the step time was fitted at these settings, taken as the ones the "
                    "trace was served with, so the replayed means reproduce the observed ones; "
                    "to ask what other settings would do, add --what-if (fitted at the "
                    "served settings, replayed at these)"))
    return 0


def _print_text(path, cfg, s: dict, res, warnings: list, dropped: dict, cal, note: str,
                timing: str, applies: str) -> None:
    """The replay's summary for a reader: requests, hit rates, preemptions, rejections, the
    means, the calibration and the step time."""
    def f(x, unit="", pct=False):
        if x is None:
            return "-"
        return f"{100 * x:.1f}%" if pct else f"{x:.1f}{unit}"

    n_drop = sum(dropped.values())
    print(_("{path}: {n} requests replayed").format(path=path, n=s["requests"])
          + (_(" of {total}").format(total=s["requests"] + n_drop) if n_drop else "") + f" ({cfg.label()})"
          + (ngettext(", {n} bad line skipped", ", {n} bad lines skipped",
                      len(warnings)).format(n=len(warnings)) if warnings else ""))
    for why, k in dropped.items():
        print(_("  dropped {x}: {why}").format(x=k, why=why))
    if cal is not None and cal.warning:
        print(_("  WARNING: {warning}").format(warning=cal.warning))

    for line in hit_rate_lines(s):
        print(_("  {line}").format(line=line))
    print(_("  preemptions: {preemptions}   evicted blocks: {evicted_blocks}   "
          "rejected: {rejected}").format(preemptions=s['preemptions'], evicted_blocks=s['evicted_blocks'], rejected=s['rejected']))
    bad = res.requests[res.requests["error"].notna()]
    for rid, err in bad[["request_id", "error"]].head(3).itertuples(index=False):
        print(_("    rejected request {rid}: {err}").format(rid=rid, err=err))
    if len(bad) > 3:
        print(_("    ... and {x} more rejected").format(x=len(bad) - 3))
    print(_("  TTFT mean {ttft_ms_mean}   TPOT mean {tpot_ms_mean}"
          "   queue mean {queue_ms_mean}   E2E mean {e2e_ms_mean}").format(ttft_ms_mean=f(s['ttft_ms_mean'], ' ms'), tpot_ms_mean=f(s['tpot_ms_mean'], ' ms/token'), queue_ms_mean=f(s['queue_ms_mean'], ' ms'), e2e_ms_mean=f(s['e2e_ms_mean'], ' ms')))
    for line in calibration_lines(cal.to_dict() if cal is not None else None, note):
        if not line.startswith("step time:"):
            print(_("  {line}").format(line=line))
    print(_("  step time: {timing}").format(timing=timing))
    print(_("  error that applies: {text}").format(text=applies))
    print(_("  simulated {steps} engine steps in {replay_wall_s:.2f} s").format(steps=s['steps'], replay_wall_s=s['replay_wall_s']))

