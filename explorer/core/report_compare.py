"""The run comparison in words and tables: compare.md (the `compare` command) and the
report's `compare` section in Markdown. One row per metric of each pair; a pair of two
workloads says that they differ and how, and flags nothing."""
from __future__ import annotations

from typing import Any

from .escape import md
from .i18n import N_, _

MD_MAX_PAIRS = 40
MD_STATS = {("ttft_ms", "mean"), ("ttft_ms", "median"), ("ttft_ms", "p99"),
            ("tpot_ms", "mean"), ("tpot_ms", "median"), ("tpot_ms", "p99"),
            ("e2e_ms", "mean"), ("e2e_ms", "median"), ("itl_ms", "mean"),
            ("request_throughput", "value"), ("output_throughput", "value"),
            ("request_goodput", "value")}


def num(x: Any, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}g}" if abs(x) < 1e6 else f"{x:,.0f}"


def pval(p: Any) -> str:
    from .fmt import pval as f
    return f(p)


STAT_WORDS = {"mean": N_("mean"), "median": N_("median")}  # p90, p99, ... read alike


def metric_name(m: dict) -> str:
    """The metric's id and its statistic, the statistic's word in the reader's language."""
    stat = m["stat"]
    return m["metric"] if stat == "value" else f"{m['metric']} {_(STAT_WORDS.get(stat, stat))}"


def verdict(m: dict, same: bool) -> str:
    """The cell that says what the comparison concludes for one metric."""
    if not same:
        return _("workloads differ")
    if m.get("regression"):
        return _("REGRESSION")
    if m.get("beyond_noise") is None:
        ch = m.get("change")
        if ch in ("higher", "lower"):
            return (_("higher (spread unknown)") if ch == "higher"
                    else _("lower (spread unknown)"))
        return _("spread unknown")
    return _("beyond noise") if m["beyond_noise"] else _("within noise")


def interval(m: dict) -> str:
    if m.get("ci_low") is None:
        return "n/a"
    return f"[{num(m['ci_low'])}, {num(m['ci_high'])}]"


def pct(x: Any) -> str:
    return "n/a" if x is None else f"{x:+.1f} %"


def items_rows(it: dict) -> list[tuple[str, str]]:
    """The item-by-item table of a pair: (what, value) rows (compare.md and the HTML)."""
    def acc(a):
        return "n/a" if a[0] is None else f"{a[0]:.3f} [{a[1]:.3f}, {a[2]:.3f}]"
    d = it["difference"]
    return [(_("paired items"), f"{it['paired']:,}"), (_("both right"), str(it["both_right"])),
            (_("only A right"), str(it["a_only_right"])),
            (_("only B right"), str(it["b_only_right"])),
            (_("both wrong"), str(it["both_wrong"])),
            (_("exact McNemar p"), pval(it["mcnemar_p"])),
            (_("accuracy A (Wilson 95 %)"), acc(it["accuracy_a"])),
            (_("accuracy B (Wilson 95 %)"), acc(it["accuracy_b"])),
            (_("B - A (paired bootstrap 95 %)"),
             "n/a" if d[0] is None else f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]")]


def md_items(it: dict) -> str:
    from .mdtable import _table
    rows = items_rows(it)
    out = [_table((_("Items"), _("Value")), rows)]
    out += [f"- **{md(w)}**" for w in it.get("warnings") or []]
    for s in (it.get("engine_state") or {}).values():
        if s.get("sentence"):
            out.append(f"- {md(s['sentence'])}")
    return "\n\n".join(out)


METRIC_HEADS = (N_("Metric"), N_("A"), N_("B"), N_("Change"), N_("B - A (95 %)"), N_("p"),
                N_("Verdict"))


def metric_rows(p: dict) -> list[tuple]:
    """A pair's metrics table (METRIC_HEADS), the MD_STATS ones (compare.md and the HTML)."""
    return [(metric_name(m), num(m["a"]), num(m["b"]), pct(m["diff_pct"]), interval(m),
             pval(m["p_value"]), verdict(m, p["same_workload"]))
            for m in p.get("metrics") or [] if (m["metric"], m["stat"]) in MD_STATS]


def items_seen(it: dict | None, seen: set | None) -> bool:
    """Whether these paired items were already shown (a run pair and its evals' pair answer the
    same items: the table is shown once, the second pair refers to it)."""
    if not it or seen is None:
        return False
    key = tuple(it.get(k) for k in ("paired", "both_right", "a_only_right", "b_only_right",
                                    "both_wrong"))
    if key in seen:
        return True
    seen.add(key)
    return False


def md_pair(p: dict, seen: set | None = None) -> str:
    from .mdtable import _table
    head = f"**{md(p['a'])} → {md(p['b'])}**"
    lines = [head, ""]
    if p.get("kind") == "runs":
        lines.append(_("Workload: {a}").format(a=md(p["workload_a"])) if p["same_workload"]
                     else _("Workloads: A {a}; B {b}").format(a=md(p["workload_a"]),
                                                              b=md(p["workload_b"])))
    lines += [f"- {md(n)}" for n in p.get("notes") or []]
    rows = metric_rows(p)
    if rows:
        lines += ["", _table([_(h) for h in METRIC_HEADS], rows)]
    if p.get("items"):
        lines += ["", _("The same paired items as above.") if items_seen(p["items"], seen)
                  else md_items(p["items"])]
    return "\n".join(lines)


SUMMARY = ("ttft_ms", "mean")


def summary_rows(pairs: list) -> list[tuple]:
    """One row per pair: A, B, what differs, mean TTFT change with its interval, the verdict
    (accuracy and McNemar p for eval pairs). Shared by compare.md and the HTML."""
    rows = []
    for p in pairs:
        m = next((m for m in p.get("metrics") or [] if (m["metric"], m["stat"]) == SUMMARY), None)
        it = p.get("items")
        if m is not None:
            cells = (pct(m["diff_pct"]), interval(m), verdict(m, p["same_workload"]))
        elif it:
            d = it["difference"]
            cells = (_("accuracy {d:+.3f}").format(d=d[0]) if d[0] is not None else "n/a",
                     "n/a" if d[1] is None else f"[{d[1]:+.3f}, {d[2]:+.3f}]",
                     _("McNemar p {p}").format(p=pval(it["mcnemar_p"])))
        else:
            cells = ("n/a", "n/a", "")
        rows.append((p["a"], p["b"], ", ".join(p.get("differs_in") or [p.get("kind", "")]),
                     *cells))
    return rows


SUMMARY_HEADS = (N_("A"), N_("B"), N_("Differs in"), N_("Mean TTFT change"), N_("B - A (95 %)"),
                 N_("Verdict"))


def md_summary(pairs: list) -> str:
    from .mdtable import _table
    return _table([_(h) for h in SUMMARY_HEADS], summary_rows(pairs[:200]))


def md_compare(doc: dict) -> str:
    """The `compare` result (analysis.runcompare.compare_runs) as Markdown."""
    from .mdtable import _table
    out = [_("{n} runs in {w} workloads; {p} pairs compared.").format(
        n=len(doc.get("runs") or []), w=len(doc.get("workloads") or []),
        p=len(doc.get("pairs") or []))]
    ws = doc.get("workloads") or []
    if ws:
        out.append(_table((_("Workload"), _("Description"), _("Runs")),
                          [(w["id"], w["description"], str(len(w["runs"]))) for w in ws[:30]]))
    for u in doc.get("unmatched") or []:
        out.append(f"- {md(u['sentence'])}")
    pairs = doc.get("pairs") or []
    if len(pairs) > 1:
        out.append(md_summary(pairs))
    seen: set = set()
    out += [md_pair(p, seen) for p in pairs[:MD_MAX_PAIRS]]
    if len(pairs) > MD_MAX_PAIRS:
        out.append(_("_({n} more pairs in compare.json.)_").format(n=len(pairs) - MD_MAX_PAIRS))
    for sw in doc.get("sweeps") or []:
        front = set(sw["pareto"]["front"])
        keys = ("ttft_ms median", "tpot_ms median", "e2e_ms median", "output_throughput value")
        rows = [(num(pt["x"]), pt["label"] or pt["run_id"],
                 *[num(pt["values"].get(k)) for k in keys],
                 "*" if pt["run_id"] in front else "") for pt in sw["points"]]
        out.append(_("**Sweep of {setting}**: {name}").format(setting=sw["setting"],
                                                             name=md(sw["name"])))
        out.append(_table((sw["setting"], _("Run"), *keys, _("Pareto")), rows))
    return "\n\n".join(out)
