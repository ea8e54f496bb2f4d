"""`trace-explorer replay FILE --what-if --max-num-seqs N ...`: what other engine settings
would have done to this trace.

A plain `replay FILE --max-num-seqs N` takes the settings given as the ones the trace was
served with and fits the step time there, so its means reproduce the observed ones by
construction. --what-if asks the other question, as the report's replay section does: the step
time (and replicas) are fitted at the settings the trace WAS served with (the run's recorded
settings, then its known deployment's, deployments.KNOWN, else vLLM's defaults, each named
with its source), then the same arrivals are replayed with only the settings given on the
command line changed. Printed: both replays side by side (hit rate, preemptions, mean TTFT /
TPOT / queue / E2E), the scenario's change against the observed-settings replay, and which
error applies (replay.validate.error_status: validated out of sample when the store holds a
ladder of runs of this configuration, else "not validated" with the reason)."""
from __future__ import annotations

import json
import sys
import unicodedata
from dataclasses import replace
from pathlib import Path

from ..core.errors import InputError, NoData
from ..core.i18n import N_, _, ngettext

#: the summary fields compared, in the order printed: (key, label, unit)
COMPARED = (("hit_rate", N_("prefix-cache hit rate"), "%"),
            ("preemptions", N_("preemptions"), ""),
            ("ttft_ms_mean", N_("TTFT mean"), "ms"),
            ("tpot_ms_mean", N_("TPOT mean"), "ms/token"),
            ("queue_ms_mean", N_("queue mean"), "ms"),
            ("e2e_ms_mean", N_("E2E mean"), "ms"))
#: where an observed setting comes from
SOURCES = {"recorded": N_("recorded by the run"), "deployment": N_("the deployment's"),
           "default": N_("vLLM's default, assumed"),
           "unknown": N_("not known: taken as infinite")}


def observed_engine(store, run_id: str):
    """(EngineConfig, {field: source}, deployment) the trace was served with: the run's
    recorded settings (badcases.observed_settings), its known deployment's engine facts
    (badcases.engine_of), else EngineConfig's defaults (vLLM's); an unknown KV capacity is
    infinite (None) and said so by its source."""
    from ..core.replay.badcases import SETTINGS, engine_of, observed_settings
    from ..core.replay.model import EngineConfig
    recorded = observed_settings(store, run_id)
    cfg, dep = engine_of(store, run_id, recorded)
    default = EngineConfig()
    sources = {k: "recorded" if k in recorded else
               "deployment" if getattr(cfg, k) != getattr(default, k) else
               "unknown" if k == "num_gpu_blocks" else "default" for k in SETTINGS}
    return cfg, sources, dep


def what_if(args, path: Path, changes: dict) -> int:
    """The --what-if replay of FILE with `changes` (cli.replay.given_settings); exit status 0,
    1 when the file cannot be read or records no latency to fit on, 2 on bad settings."""
    from ..core.replay import requests_from_store
    from ..core.replay.calibrate import calibrate_run
    from ..core.replay.io import summary_jsonable
    from ..core.replay.replicas import simulate_replicas
    from ..core.replay.validate import error_status
    from .replay_input import check_trace_path, is_mooncake, open_trace_store

    def fail(msg, code):
        print(_("trace-explorer replay: {x}").format(x=msg), file=sys.stderr)
        return code

    if not changes:
        return fail(_("--what-if needs at least one setting to change (--blocks, --kv-gb, "
                      "--max-num-seqs, --max-num-batched-tokens, --block-size, --eviction)"), 2)
    warnings: list[str] = []
    try:
        check_trace_path(path)
        if is_mooncake(path):
            raise InputError(path, _("a Mooncake trace records no latencies and no settings "
                                     "to compare against: replay it without --what-if"))
        store, run_id = open_trace_store(path, warnings)
    except (InputError, NoData) as e:
        return fail(e, 1)
    try:
        observed, sources, dep = observed_engine(store, run_id)
        replicas = args.replicas or dep.get("replicas")
        routing = args.routing or dep.get("routing") or "round-robin"
        trace = requests_from_store(store, run_id)
        cal = calibrate_run(store, run_id, observed, trace=trace, fixed_replicas=replicas,
                            routing=routing)
        if "ttft_ms" not in cal.after and "tpot_ms" not in cal.after:
            return fail(InputError(path, _("records no TTFT or TPOT: a what-if fits the step "
                                           "time on them")), 1)
        fitted = replace(observed, **cal.params)
        scenario = replace(fitted, **changes)
        try:
            scenario.validate()
        except ValueError as e:
            return fail(_("{path}: {x}").format(path=path, x=e), 2)
        runs = {name: summary_jsonable(simulate_replicas(trace, c, cal.replicas,
                                                         routing=cal.routing).summary)
                for name, c in (("observed", fitted), ("scenario", scenario))}
        applies = error_status(store, run_id, scenario, replicas=cal.replicas,
                               routing=cal.routing)
    except ValueError as e:
        return fail(_("{path}: {x}").format(path=path, x=e), 2)
    finally:
        store.close()
    for w in warnings:
        print(_("trace-explorer replay: warning: {w} (skipped)").format(w=w), file=sys.stderr)
    doc = {"file": str(path), "run_id": run_id, "what_if": True,
           "observed_config": observed.to_dict(), "observed_sources": sources,
           "scenario_config": scenario.to_dict(), "changes": changes,
           "label": scenario.label(), "replicas": cal.replicas, "routing": cal.routing,
           "observed": runs["observed"], "scenario": runs["scenario"],
           "change": change_of(runs["observed"], runs["scenario"]),
           "calibration": cal.to_dict(), "error_applies": applies,
           "skipped_lines": len(warnings)}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        for line in text_lines(doc):
            print(line)
    return 0


def change_of(observed: dict, scenario: dict) -> dict:
    """{key: {observed, scenario, ratio}} of the COMPARED fields (ratio = scenario / observed
    - 1, None when the observed value is missing or zero)."""
    out = {}
    for key, _label, _unit in COMPARED:
        a, b = observed.get(key), scenario.get(key)
        ratio = (b / a - 1) if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and a else None
        out[key] = {"observed": a, "scenario": b, "ratio": ratio}
    return out


def text_lines(doc: dict) -> list[str]:
    """The what-if for a reader: the settings changed (each with its observed value and
    source), the two replays side by side, the calibration and the error that applies."""
    from ..core import fmt
    obs, src = doc["observed_config"], doc["observed_sources"]
    changed = [_("{name} {new} (observed {old}, {source})").format(
        name=k.replace("_", "-"), new=_value(doc["scenario_config"][k]),
        old=_value(obs[k]), source=_(SOURCES[src.get(k, "default")]))
        for k in doc["changes"]]
    lines = [_("{path}: what if {changes}").format(path=doc["file"], changes="; ".join(changed)),
             ngettext("  step time fitted at the observed settings ({n} requests, {replicas} "
                      "replica, {routing} routing), then the same arrivals replayed with only "
                      "the settings above changed",
                      "  step time fitted at the observed settings ({n} requests, {replicas} "
                      "replicas, {routing} routing), then the same arrivals replayed with only "
                      "the settings above changed", doc["replicas"]).format(
                 n=fmt.count(doc["observed"]["requests"]), replicas=doc["replicas"],
                 routing=doc["routing"])]
    cal = doc["calibration"]
    for m, label in (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT")):
        if m in cal:
            lines.append(_("  calibration {metric}: observed mean {observed}, replayed at the "
                           "observed settings {replayed} ({error})").format(
                metric=label, observed=fmt.num(cal[m]["observed"], m),
                replayed=fmt.num(cal[m]["replayed"], m), error=fmt.pct(100 * cal[m]["error"])))
    if cal.get("warning"):
        lines.append(_("  WARNING: {warning}").format(warning=cal["warning"]))
    lines.append(_row("", _("observed settings"), _("what-if"), _("change")))
    for key, label, unit in COMPARED:
        c = doc["change"][key]
        lines.append(_row(_(label), _cell(c["observed"], unit), _cell(c["scenario"], unit),
                          fmt.pct(100 * c["ratio"]) if c["ratio"] is not None else fmt.MISSING))
    ea = doc["error_applies"]
    lines.append(_("  error that applies: {text}").format(text=ea["text"])
                 + (_(" ({reason})").format(reason=ea["reason"]) if ea.get("reason") else ""))
    return lines


#: the side-by-side table's column widths in terminal cells
WIDTHS = (24, 17, 17, 10)


def _row(*cells: str) -> str:
    """One line of the side-by-side table: the first cell left-aligned, the others right,
    padded by terminal width (a CJK character takes two cells), so zh_CN lines up too."""
    def width(t: str) -> int:
        return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in t)
    out = [cells[0] + " " * max(0, WIDTHS[0] - width(cells[0]))]
    out += [" " * max(0, w - width(c)) + c for c, w in zip(cells[1:], WIDTHS[1:])]
    return "  " + "".join(out)


def _value(v) -> str:
    from ..core import fmt
    if v is None:
        return _("infinite")
    return fmt.count(v) if isinstance(v, int) and not isinstance(v, bool) else str(v).upper()


def _cell(v, unit: str) -> str:
    from ..core import fmt
    if unit == "%":
        return fmt.MISSING if v is None else fmt.pct(100 * v, signed=False)
    if unit == "":
        return fmt.count(v)
    return fmt.num(v, unit=unit)
