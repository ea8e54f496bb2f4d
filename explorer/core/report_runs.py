"""The report's `runs` and `run_versions` sections: building (from explorer.core.runs and
analysis.run_versions) and Markdown. Published numbers are written as the benchmarks print
them (2 decimals), counts as integers."""
from __future__ import annotations

from typing import Any

from .errors import NoData
from .escape import md

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
        return (f"{len(runs)} run{'s' if len(runs) != 1 else ''} loaded; none published "
                "aggregates (every number comes from the request rows).")
    for r in shown[:MD_MAX_RUNS]:
        ver = r.get("engine_version") or "unknown version"
        src = f" ({md(r['version_source'])})" if r.get("version_source") else ""
        head = (f"**{md(r.get('label') or r['run_id'])}**: {md(r.get('engine') or 'engine?')} "
                f"{md(ver)}{src}, from `{md(r.get('source_path') or '')}`"
                f" ({md(r.get('format') or '')})")
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
            heads = ("Published", "Published value", "Recomputed from the requests")
            if not rec:
                rows = [r_[:2] for r_ in rows]
                heads = heads[:2]
            lines.append("\n" + _table(heads, rows))
        parts.append("\n".join(lines))
    if len(shown) > MD_MAX_RUNS:
        parts.append(f"_({len(shown) - MD_MAX_RUNS} more runs with published results in "
                     "report.json.)_")
    if rest:
        parts.append(f"{rest} other run{'s' if rest != 1 else ''} published no aggregates.")
    return "\n\n".join(parts)


def md_run_versions(v: dict) -> str:
    from .report import _Raw, _table
    ch = v.get("changes") or []
    regs = sum(bool(c.get("regression")) for c in ch)
    head = (f"Published aggregates compared version after version ({len(ch)} changes, "
            f"{regs} flagged as regressions: the bad direction and at least "
            f"{v.get('min_change_pct', 5):g} %; one number per version, so nothing is tested "
            "for significance).")
    rows = [(f"{c.get('engine') or ''} {c.get('benchmark') or ''}".strip(),
             _name(c["metric"], c["stat"]), f"{c['from_version']} → {c['to_version']}",
             fmt_published(c["from_value"], c.get("unit")), fmt_published(c["to_value"], c.get("unit")),
             "n/a" if c.get("change_pct") is None else f"{c['change_pct']:+.1f} %",
             _Raw("**REGRESSION**") if c.get("regression") else "") for c in ch[:30]]
    return head + "\n\n" + _table(("Engine / benchmark", "Metric", "Versions", "Old", "New",
                                   "Change", "Flag"), rows)
