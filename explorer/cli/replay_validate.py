"""The out-of-sample modes of `trace-explorer replay` (issue 34):

  replay TARGET --calibrate-from SOURCE [--replicas N] [--routing round-robin|random] [--json]
      fit the step time on SOURCE's observed TTFT / TPOT, replay TARGET's arrivals with it and
      report `calibration` against TARGET's observations (label "out-of-sample"), each metric
      with the interval that the parameters SOURCE cannot identify leave open.
  replay --validate FOLDER [--group NAME] [--mode low-high|loo|both] [--replicas N]
         [--routing ...] [--json]
      every ladder of runs in FOLDER (runs that vary one setting: request rate, concurrency,
      max_num_seqs): fit on the lowest setting, predict each higher one (low-high, default),
      or hold each setting out in turn and predict it from the others' fits (loo,
      replay/loo.py); the error of mean and P90 TTFT, TPOT, E2E and of throughput per held-out
      setting, and their medians.

Exit status 0, 1 when a file cannot be read or no ladder is found, 2 on bad settings.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.errors import InputError, NoData
from explorer.core.i18n import _

ROWS = ("ttft_ms", "tpot_ms", "e2e_ms")


def _load_one(store, path: Path) -> str:
    """Load one file into the store, return its first run id (InputError when it has none)."""
    if not path.is_file():
        raise InputError(path, _("no such file") if not path.exists() else
                         _("is a folder: name one trace file"))
    rep = store.load_file(path)
    if rep.error:
        raise InputError(path, rep.error)
    if not rep.run_ids:
        raise InputError(path, _("holds no trace run to replay"))
    return rep.run_ids[0]


def _pct(x, sign: bool = True) -> str:
    return "-" if x is None else (f"{100 * x:+.1f}%" if sign else f"{100 * x:.1f}%")


def _print_prediction(p: dict) -> None:
    for m in ROWS:
        if m not in p:
            continue
        s = p[m]
        lo, hi = s.get("interval", (s["replayed"], s["replayed"]))
        print(_("  {metric}: observed {obs:.1f} ms, replayed {rep:.1f} ms ({err}); P90 {po:.1f} "
                "-> {pr:.1f} ms ({perr}); interval [{lo:.1f}, {hi:.1f}] ms").format(
                    metric=m.split("_")[0].upper(), obs=s["observed"], rep=s["replayed"],
                    err=_pct(s["error"]), po=s["p90_observed"], pr=s["p90_replayed"],
                    perr=_pct(s["p90_error"]), lo=lo, hi=hi))
    if "throughput" in p:
        t = p["throughput"]
        print(_("  throughput: observed {obs:.1f} tok/s, replayed {rep:.1f} tok/s ({err})").format(
            obs=t["observed"], rep=t["replayed"], err=_pct(t["error"])))


def _print_fit(f: dict) -> None:
    cal = f["calibration"]
    print(_("  fitted on {run} (in-sample: TTFT {t}, TPOT {p}); {n} replicas, {r} routing").format(
        run=f["source_run"], t=_pct((cal.get("ttft_ms") or {}).get("error")),
        p=_pct((cal.get("tpot_ms") or {}).get("error")), n=f["replicas"], r=f["routing"]))
    if f.get("deployment"):
        d = f["deployment"]
        print(_("  replicas and routing: the deployment's published ones ({router}; {source})")
              .format(router=_(d["router"]), source=d["source"]))
    for u in f["unidentified"]:
        print(_("  not identified: {reason}; the interval spans it").format(reason=u["reason"]))


def calibrate_from(args, cfg) -> int:
    """replay TARGET --calibrate-from SOURCE."""
    from ..core.replay.validate import fit, predict
    from ..core.store import Store

    store = Store()
    try:
        src = _load_one(store, Path(args.calibrate_from))
        tgt = _load_one(store, Path(args.file))
        f = fit(store, src, cfg, replicas=args.replicas, routing=args.routing)
        p = predict(f, store, tgt)
    except (InputError, NoData) as e:
        print(_("trace-explorer replay: {x}").format(x=e), file=sys.stderr)
        return 1
    except ValueError as e:
        print(_("trace-explorer replay: {x}").format(x=e), file=sys.stderr)
        return 2
    finally:
        store.close()
    doc = {"file": str(args.file), "calibrate_from": str(args.calibrate_from),
           "config": f.config.to_dict(), "fit": f.to_dict(), "calibration": p}
    if args.json:
        print(json.dumps(doc, indent=1, default=float))
        return 0
    print(_("{target}: replayed with the step time fitted on {source} (out-of-sample)").format(
        target=args.file, source=args.calibrate_from))
    _print_fit(doc["fit"])
    _print_prediction(p)
    return 0


def validate_folder(args, cfg) -> int:
    """replay --validate FOLDER."""
    from ..core.replay.loo import validators
    from ..core.replay.validate import ladders
    from ..core.store import Store

    folder = Path(args.validate)
    if not folder.is_dir():
        print(_("trace-explorer replay: {x}").format(
            x=InputError(folder, _("not a folder: --validate takes a folder of runs"))),
            file=sys.stderr)
        return 1
    store = Store()
    try:
        for p in sorted(folder.iterdir()):
            if p.is_file() and not p.name.startswith("."):
                rep = store.load_file(p)
                if rep.error:
                    print(_("trace-explorer replay: warning: {x} (skipped)").format(x=rep.error),
                          file=sys.stderr)
        groups = [args.group] if args.group else sorted(ladders(store))
        results = []
        mode = getattr(args, "mode", None) or "low-high"
        runs = [f for _m, f in validators(mode)]
        for g, run in ((g, r) for g in groups for r in runs):
            try:
                results.append(run(store, cfg, g, replicas=args.replicas, routing=args.routing))
            except NoData as e:
                if args.group:
                    raise
                print(_("trace-explorer replay: warning: {x}").format(x=e), file=sys.stderr)
        if not results:
            raise NoData(_("{folder}: no ladder of runs to validate on").format(folder=folder))
    except (InputError, NoData) as e:
        print(_("trace-explorer replay: {x}").format(x=e), file=sys.stderr)
        return 1
    except ValueError as e:
        print(_("trace-explorer replay: {x}").format(x=e), file=sys.stderr)
        return 2
    finally:
        store.close()
    if args.json:
        print(json.dumps({"folder": str(folder), "config": cfg.to_dict(),
                          "validations": results}, indent=1, default=float))
        return 0
    for v in results:
        if v.get("mode") == "leave-one-out":
            f = v["fit"]
            print(_("{group}: {label} (each setting predicted from the other {n} settings' "
                    "fits; {k} replicas, {r} routing)").format(
                        group=v["group"], label=v["label"], n=len(v["held_out"]) - 1,
                        k=f["replicas"] or _("fitted"), r=f["routing"]))
        else:
            print(_("{group}: {label} (fit at {key} = {v:g}, predicting {n} higher "
                    "settings)").format(group=v["group"], label=v["label"],
                                        key=v["setting_key"], v=v["fit"]["setting"],
                                        n=len(v["held_out"])))
            _print_fit(v["fit"])
        print("  " + "\t".join([v["setting_key"], "TTFT", "P90 TTFT", "TPOT", "P90 TPOT", "E2E",
                                "P90 E2E", _("throughput")]))
        for h in v["held_out"]:
            cells = [f"{h['setting']:g}"]
            for m in ROWS:
                s = h.get(m) or {}
                cells += [_pct(s.get("error")), _pct(s.get("p90_error"))]
            cells.append(_pct((h.get("throughput") or {}).get("error")))
            print("  " + "\t".join(cells))
        med = v["median_abs_error"]
        print(_("  median |error|: TTFT {t}, TPOT {p}, E2E {e}, throughput {x}").format(
            t=_pct(med["ttft_ms"], False), p=_pct(med["tpot_ms"], False),
            e=_pct(med["e2e_ms"], False), x=_pct(med["throughput"], False)))
    return 0
