"""The report's `runs` and `run_versions` sections: building (from explorer.core.runs and
analysis.run_versions) and Markdown. Published numbers are written as the benchmarks print
them (2 decimals), counts as integers."""
from __future__ import annotations

from typing import Any

from .errors import NoData
from .escape import md
from explorer.core.i18n import N_, _, ngettext

# the published statistics shown per run in Markdown (report.json has every one)
SHOWN = (("requests", "completed"), ("requests", "failed"), ("ttft_ms", "mean"),
         ("ttft_ms", "median"), ("ttft_ms", "p99"), ("tpot_ms", "mean"), ("tpot_ms", "median"),
         ("tpot_ms", "p99"), ("itl_ms", "mean"), ("e2e_ms", "mean"),
         ("request_throughput", "value"), ("output_throughput", "value"))
MD_MAX_RUNS = 20
# the overview table's columns: one row per run, so a sweep's runs read side by side
OVERVIEW = (("requests", "completed", "Completed"), ("requests", "failed", "Failed"),
            ("ttft_ms", "mean", "Mean TTFT (ms)"), ("ttft_ms", "median", "Median TTFT (ms)"),
            ("ttft_ms", "p99", "P99 TTFT (ms)"), ("tpot_ms", "mean", "Mean TPOT (ms)"),
            ("itl_ms", "mean", "Mean ITL (ms)"), ("e2e_ms", "mean", "Mean E2E (ms)"),
            ("output_throughput", "value", "Output (tok/s)"))
NO_SUCCESS = N_("no successful request")


def runs_section(store) -> list[dict]:
    """DESIGN `runs`: explorer.core.runs.overview."""
    from .runs import overview
    return overview(store)


def run_versions_section(store) -> dict:
    """analysis.run_versions.compare_run_versions, or {"status": "no_data", "reason"}."""
    from .analysis.run_versions import compare_run_versions
    try:
        return compare_run_versions(store)
    except NoData as e:
        return {"status": "no_data", "reason": str(e)}


def fmt_published(value: Any, unit: str | None) -> str:
    """A published value as the benchmarks print it: counts whole, the rest to 2 decimals."""
    if value is None or value != value:
        return "n/a"
    if unit in ("requests", "tokens") and float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}" + (f" {unit}" if unit else "")


def _name(m: str, s: str) -> str:
    return f"{m} {s}" if s != "value" else m


def overview(runs: list) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) of the runs' overview: per run its label, engine and version, the
    headline published numbers (OVERVIEW; a column no run published is left out, a cell the
    run did not publish is 'n/a') and its flag. Shared by report.md and report.html."""
    pubs = [{(p["metric"], p["stat"]): p for p in r.get("published") or []} for r in runs]
    cols = [c for c in OVERVIEW if any(c[:2] in p for p in pubs)]
    heads = [_("Run"), _("Engine")] + [c[2] for c in cols] + [_("Flag")]
    rows = []
    for r, pub in zip(runs, pubs):
        # the unit is in the header: cells hold the number as the benchmark prints it
        cells = [fmt_published(pub[c[:2]]["value"], pub[c[:2]]["unit"]
                               if pub[c[:2]]["unit"] in ("requests", "tokens") else None)
                 if c[:2] in pub else "n/a" for c in cols]
        flag = (_(NO_SUCCESS) if r.get("no_success")
                else ngettext("{n} note below", "{n} notes below", len(r["flags"])).format(
                    n=len(r["flags"])) if r.get("flags") else "")
        engine = " ".join(x for x in (r.get("engine"), r.get("engine_version")) if x)
        rows.append([r.get("label") or r["run_id"], engine or "–"] + cells + [flag])
    return heads, rows


def md_runs(runs: list) -> str:
    from .mdtable import _table
    shown = [r for r in runs if r.get("published") or r.get("flags")]
    rest = len(runs) - len(shown)
    if not shown:
        return none_published(len(runs))
    heads, rows = overview(shown[:MD_MAX_RUNS])
    parts = [_table(heads, rows)]
    # below: each run with more to say (a flag, or numbers recomputed from its requests)
    for r in shown[:MD_MAX_RUNS]:
        if not r.get("flags") and not r.get("recomputed"):
            continue
        ver = r.get("engine_version") or _("unknown version")
        src = f" ({md(r['version_source'])})" if r.get("version_source") else ""
        head = (_("**{label}**: {engine} "
                "{ver}{src}, from `{source_path}`"
                " ({format})").format(label=md(r.get('label') or r['run_id']), engine=md(r.get('engine') or _('engine?')), ver=md(ver), src=src, source_path=md(r.get('source_path') or ''), format=md(r.get('format') or '')))
        lines = [head]
        lines += [f"- **{md(f)}**" for f in r.get("flags") or []]
        pub = {(p["metric"], p["stat"]): p for p in r.get("published") or []}
        rec = {(p["metric"], p["stat"]): p for p in r.get("recomputed") or []}
        rows = []
        for key in SHOWN:
            if key not in pub:
                continue
            p = pub[key]
            c = rec.get(key)
            again = "" if c is None else (c.get("note") or fmt_published(c["recomputed"], p["unit"]))
            rows.append((_name(*key), fmt_published(p["value"], p["unit"]), again))
        if rows:
            heads = (_("Published"), _("Published value"), _("Recomputed from the requests"))
            if not rec:
                rows = [r_[:2] for r_ in rows]
                heads = heads[:2]
            lines.append("\n" + _table(heads, rows))
        parts.append("\n".join(lines))
    if len(shown) > MD_MAX_RUNS:
        parts.append(_("_({x} more runs with published results in "
                     "report.json.)_").format(x=len(shown) - MD_MAX_RUNS))
    if rest:
        parts.append(others_unpublished(rest))
    return "\n\n".join(parts)


def none_published(n_runs: int) -> str:
    """The runs section when no run published aggregates (report.md and report.html)."""
    return (_("{n_runs} run{x} loaded; none published "
              "aggregates (every number comes from the request rows).").format(
                  n_runs=f"{n_runs:,}", x='s' if n_runs != 1 else ''))


def others_unpublished(rest: int) -> str:
    """The line after the runs that published aggregates (report.md and report.html)."""
    return _("{rest} other run{x} published no aggregates.").format(
        rest=f"{rest:,}", x='s' if rest != 1 else '')


def md_run_versions(v: dict) -> str:
    from .mdtable import _Raw, _table
    ch = v.get("changes") or []
    regs = sum(bool(c.get("regression")) for c in ch)
    head = (_("Published aggregates compared version after version ({n_ch} changes, "
            "{regs} flagged as regressions: the bad direction and at least "
            "{min_change_pct:g} %; one number per version, so nothing is tested "
            "for significance).").format(n_ch=len(ch), regs=regs, min_change_pct=v.get('min_change_pct', 5)))
    rows = [(f"{c.get('engine') or ''} {c.get('benchmark') or ''}".strip(),
             _name(c["metric"], c["stat"]), f"{c['from_version']} → {c['to_version']}",
             fmt_published(c["from_value"], c.get("unit")), fmt_published(c["to_value"], c.get("unit")),
             "n/a" if c.get("change_pct") is None else f"{c['change_pct']:+.1f} %",
             _Raw(_("**REGRESSION**")) if c.get("regression") else "") for c in ch[:30]]
    return head + "\n\n" + _table((_("Engine / benchmark"), _("Metric"), _("Versions"), _("Old"), _("New"),
                                   _("Change"), _("Flag")), rows)
