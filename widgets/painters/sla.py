"""SLA attainment (report JSON `sla`: thresholds {metric: max}, attainment {share, n, n_met,
n_unjudged, goodput_rps, goodput_tps}, by {run|version|category|tenant: [{key, share, ...}]}):
a summary line and horizontal bars of attainment per group."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer.core.fmt import by_spec
from explorer.core.analysis.sla import REPORT_GROUPS, for_cohort_runs
from explorer.core.escape import html_text
from explorer.widgets import palette

from .common import is_missing, label, num, share
from explorer.core.i18n import _

GROUP_ORDER = ("version", "run", "category", "tenant")
MAX_BARS = 14
ROW_PX = 18       # a bar's row: one tick label's line with a little air (labels never overlap)
LABEL_CHARS = 28  # a tick label longer than this is middle-elided (the report table has it whole)


def summary(sla: dict | None) -> str:
    """'SLA TTFT ≤ 500 ms, TPOT ≤ 50 ms/token: 91% of 1,024 requests met (goodput 3.2 req/s)'."""
    sla = sla or {}
    th = sla.get("thresholds") or {}
    att = sla.get("attainment") or {}
    conds = ", ".join(f"{label(m, False)} ≤ {num(v, m)}" for m, v in th.items()) or _("no threshold")
    n = att.get("n")
    parts = [_("SLA {conds}: {share} of "
             "{x} requests met").format(conds=conds, share=share(att.get('share')),
                                        x='–' if is_missing(n) else by_spec(int(n), ","))]
    if not is_missing(att.get("n_unjudged")) and att.get("n_unjudged"):
        parts.append(_("{n_unjudged:,} not judged (metric missing)").format(
                n_unjudged=int(att['n_unjudged'])))
    if not is_missing(att.get("goodput_rps")):
        parts.append(_("goodput {goodput_rps:.2f} req/s").format(
                goodput_rps=float(att['goodput_rps'])))
    if not is_missing(att.get("goodput_tps")):
        parts.append(_("{goodput_tps:,.0f} tokens/s").format(goodput_tps=float(att['goodput_tps'])))
    return "; ".join(parts)


def group_rows(sla: dict | None) -> list[tuple[str, str, float | None, int | None]]:
    """(grouping, key, share, n) for every group of every grouping, in GROUP_ORDER."""
    by = (sla or {}).get("by") or {}
    order = [g for g in GROUP_ORDER if g in by] + [g for g in by if g not in GROUP_ORDER]
    out = []
    for g in order:
        for r in by.get(g) or []:
            s = r.get("share")
            key = r.get("key")
            key = _("(no {group})").format(group=_(g)) if key is None or (isinstance(key, float) and key != key) else str(key)
            out.append((g, key, None if is_missing(s) else float(s),
                        None if is_missing(r.get("n")) else int(r["n"])))
    return out


def bar_rows(sla: dict | None, limit: int = MAX_BARS) -> tuple[list, int]:
    """The rows worth a bar: all requests first, then every grouping with 2+ groups, the
    smallest groupings first, at most `limit` bars (the worst-attaining groups of a large
    grouping are kept). Returns (rows, number of groups left out)."""
    att = (sla or {}).get("attainment") or {}
    rows = []
    if not is_missing(att.get("share")):
        rows.append(("all", _("all requests"), float(att["share"]),
                     None if is_missing(att.get("n")) else int(att["n"])))
    groups: dict[str, list] = {}
    for r in group_rows(sla):
        if r[2] is not None:
            groups.setdefault(r[0], []).append(r)
    left_out = 0
    for g in sorted((g for g in groups if len(groups[g]) > 1), key=lambda g: len(groups[g])):
        room = limit - len(rows)
        part = groups[g]
        if len(part) > room:
            part = sorted(part, key=lambda r: r[2])[:max(room, 0)]
        left_out += len(groups[g]) - len(part)
        rows += part
    return rows, left_out


def bars_that_fit(height_px: int | None) -> int:
    """How many bars a plot of height_px shows without its tick labels overlapping (ROW_PX a
    row, ~70 px for the title and the axis): at least 3 (all requests and one grouping of two),
    at most MAX_BARS; MAX_BARS when the height is not known yet."""
    if not height_px or height_px <= 0:
        return MAX_BARS
    return max(3, min(MAX_BARS, (int(height_px) - 70) // ROW_PX))


def tick_label(group: str, key: str, n: int | None) -> str:
    """'run: aibrix:0.2.1:naive_output_0.5 (n=55)', the key middle-elided to LABEL_CHARS."""
    if len(key) > LABEL_CHARS:
        keep = LABEL_CHARS - 1
        key = key[: keep - keep // 2] + "…" + key[len(key) - keep // 2:]
    text = key if group == "all" else f"{_(group)}: {key}"
    return text + ("" if n is None else f" (n={by_spec(n, ',')})")


def paint_sla(plot: pg.PlotItem, sla: dict | None, limit: int = MAX_BARS) -> str | None:
    """Horizontal bars of attainment (0-100 %) per group (at most `limit`; see bar_rows and
    bars_that_fit). Returns a message instead of drawing when no request could be judged."""
    plot.clear()
    rows, left_out = bar_rows(sla, limit)
    if not rows:
        return _("No request could be judged against the SLA (TTFT / TPOT missing in the traces).")
    plot.setTitle(_("{shown} of {n} groups shown (all in the report table)").format(
        shown=len(rows), n=len(rows) + left_out) if left_out else None, size="9pt")
    y = np.arange(len(rows))
    vals = np.array([100 * r[2] for r in rows])
    plot.addItem(pg.BarGraphItem(x0=np.zeros(len(rows)), y=y, width=vals, height=0.6,
                                 brush=pg.mkBrush(palette.ACCENT), pen=pg.mkPen(None)))
    plot.addItem(pg.BarGraphItem(x0=vals, y=y, width=100 - vals, height=0.6,
                                 brush=pg.mkBrush(palette.qcolor(palette.BAD, 90)), pen=pg.mkPen(None)))
    plot.getAxis("left").setTicks([[(i, tick_label(g, k, n)) for i, (g, k, _s, n) in enumerate(rows)]])
    plot.setLabel("bottom", _("requests meeting the SLA (%)"))
    plot.setXRange(0, 100, padding=0.02)
    plot.invertY(True)
    plot.showGrid(x=True, alpha=0.25)
    return None


def sla_html(sla: dict | None, runs=None, with_summary: bool = True) -> str:
    """Summary and the table by version, run, category, tenant (the REPORT_GROUPS largest
    groups of each, the rest counted); with `runs` only the runs that served the cohort get a
    row, the others one sentence (for_cohort_runs, as report.md)."""
    sla, rest = for_cohort_runs(sla or {}, runs)
    rows, cut = [], []
    by: dict[str, list] = {}
    for r in group_rows(sla):
        by.setdefault(r[0], []).append(r)
    for g, part in by.items():
        if len(part) > REPORT_GROUPS:
            cut.append(_("{group}: the {shown} largest of {n:,} groups").format(
                group=_(g), shown=REPORT_GROUPS, n=len(part)))
            part = sorted(part, key=lambda r: -(r[3] or 0))[:REPORT_GROUPS]
        rows += part
    body = "".join(f"<tr><td>{html_text(_(g))}</td><td>{html_text(k)}</td><td>{share(s)}</td>"
                   f"<td>{'–' if n is None else by_spec(n, ',')}</td></tr>" for g, k, s, n in rows)
    heads = "".join(f"<th>{html_text(h)}</th>" for h in (_("By"), _("Group"), _("Attained"), "n"))
    notes = [rest] if rest else []
    if cut:
        notes.append(_("Shown: {groups}; every group is in report.json.").format(
            groups="; ".join(cut)))
    head = f"<p>{html_text(summary(sla))}</p>" if with_summary else ""  # else in the picture
    return (f"{head}<table class='sla'><tr>{heads}</tr>{body}</table>"
            + "".join(f"<p class='why'>{html_text(x)}</p>" for x in notes))
