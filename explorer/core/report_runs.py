"""The report's `runs` and `run_versions` sections: building (from explorer.core.runs and
analysis.run_versions) and Markdown. Published numbers are written as the benchmarks print
them (2 decimals), counts as integers."""
from __future__ import annotations

from typing import Any

from .errors import NoData
from .escape import md
from explorer.core.i18n import _

# the published statistics shown per run in Markdown (report.json has every one)
SHOWN = (("requests", "completed"), ("requests", "failed"), ("ttft_ms", "mean"),
         ("ttft_ms", "median"), ("ttft_ms", "p99"), ("tpot_ms", "mean"), ("tpot_ms", "median"),
         ("tpot_ms", "p99"), ("itl_ms", "mean"), ("e2e_ms", "mean"),
         ("request_throughput", "value"), ("output_throughput", "value"))
MD_MAX_RUNS = 20


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


def md_runs(runs: list) -> str:
    from .report import _table
    shown = [r for r in runs if r.get("published") or r.get("flags")]
    rest = len(runs) - len(shown)
    parts = []
    if not shown:
        return (_("{n_runs} run{x} loaded; none published "
                "aggregates (every number comes from the request rows).").format(n_runs=len(runs), x='s' if len(runs) != 1 else ''))
    for r in shown[:MD_MAX_RUNS]:
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
        parts.append(_("{rest} other run{x} published no aggregates.").format(rest=rest, x='s' if rest != 1 else ''))
    return "\n\n".join(parts)


def md_run_versions(v: dict) -> str:
    from .report import _Raw, _table
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
