"""What a session without eval cases can answer, said first (issue 33): with no badcase to
explain, the window opens on what the traces show — the runs, and the engine versions compared
on the same benchmarks (versions.compare_versions' summary: per metric the benchmarks compared,
how many regressed and the median change) — never on sentences about badcases that do not exist.

    trace_findings(meta, versions) -> list[str]

meta: the session's counts (runs, requests, cases); versions: the report JSON's `versions`
section (VersionsResult.to_dict()) or None. Qt-free, pure."""
from __future__ import annotations

from .. import fmt
from ..i18n import _
from ..names import label, plural


def trace_findings(meta: dict, versions: dict | None, most: int = 3) -> list[str]:
    """The sentences, most telling first (see the module doc)."""
    out = [_("No eval cases are loaded, so no badcase is analysed; what the traces show: {runs} "
             "with {requests}.").format(runs=plural(int(meta.get("runs") or 0), "run"),
                                         requests=plural(int(meta.get("requests") or 0), "request"))]
    v = versions if isinstance(versions, dict) and "summary" in versions else {}
    rows = sorted((r for r in v.get("summary") or [] if r.get("regressions")),
                  key=lambda r: (-r["regressions"], -(abs(r.get("median_change_pct") or 0))))
    for r in rows[:most]:
        out.append(_("{metric} regressed from {a} to {b} on {k} of {n} benchmarks compared "
                     "(median change {median}, from {lo} to {hi}).").format(
            metric=label(r["metric"], False), a=r["from_version"], b=r["to_version"],
            k=fmt.count(r["regressions"]), n=fmt.count(r["benchmarks"]),
            median=fmt.pct(r.get("median_change_pct")), lo=fmt.pct(r.get("min_change_pct")),
            hi=fmt.pct(r.get("max_change_pct"))))
    if v and not rows and v.get("summary"):
        out.append(_("No metric regressed between the engine versions on the benchmarks "
                     "compared."))
    one = v.get("single_version") or []
    if one:
        out.append((_("{n} was run on one release only and is not compared between versions.")
                    if len(one) == 1 else
                    _("{n} were run on one release only and are not compared between versions."))
                   .format(n=plural(len(one), "benchmark")))
    out += list(v.get("notes") or [])
    return out
