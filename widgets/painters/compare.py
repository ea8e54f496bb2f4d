"""The run comparison drawn (compare.json, DESIGN "Comparing runs"): HTML tables of the pairs
(compare.html, the report's `compare` section, the window's Compare view) and each sweep as
curves of its metrics against the swept setting, every sweep of that setting on shared axes,
beside the Pareto view (output throughput against median E2E, the front joined). One painter for
the window and the images of the reports."""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg

from explorer.core.escape import html_text as esc
from explorer.core.i18n import _
from explorer.core.report_compare import (
    MD_MAX_PAIRS,
    METRIC_HEADS,
    items_rows,
    items_seen,
    metric_rows,
)
from explorer.widgets import palette

COLOURS = (palette.CONTROL, palette.BAD, palette.ACCENT, palette.WARN, palette.SELECTED,
           palette.NEUTRAL, "#56B4E9", "#F0E442", palette.TEXT)
CURVES = ("ttft_ms median", "tpot_ms median", "e2e_ms median", "output_throughput value")


def by_setting(sweeps: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for sw in sweeps or []:
        out.setdefault(sw["setting"], []).append(sw)
    return out


def pen(i: int):
    """The i-th sweep's pen: a colour, dashed on the second round of colours."""
    from PySide6.QtCore import Qt
    style = Qt.PenStyle.SolidLine if i < len(COLOURS) else Qt.PenStyle.DashLine
    return pg.mkPen(COLOURS[i % len(COLOURS)], width=2, style=style)


def plot_curves(plot, sweeps: list[dict], metric: str) -> int:
    """Draw `metric` against the swept setting, one line per sweep; the points drawn."""
    plot.clear()
    n = 0
    for i, sw in enumerate(sweeps):
        pts = [(p["x"], p["values"].get(metric)) for p in sw["points"]
               if p["values"].get(metric) is not None]
        if not pts:
            continue
        c = COLOURS[i % len(COLOURS)]
        plot.plot([x for x, _y in pts], [y for _x, y in pts], pen=pen(i),
                  symbol="o", symbolSize=5, symbolBrush=c, name=sw["name"])
        n += len(pts)
    plot.setTitle(metric, size="9pt")
    plot.setLabel("bottom", sweeps[0]["setting"] if sweeps else "")
    plot.showGrid(x=True, y=True, alpha=0.3)
    return n


def plot_pareto(plot, sweeps: list[dict]) -> int:
    """Each sweep's runs as points (throughput, latency), its Pareto front joined."""
    plot.clear()
    n = 0
    for i, sw in enumerate(sweeps):
        par = sw["pareto"]
        xk, yk = par["x_metric"], par["y_metric"]
        pts = [(p["values"].get(xk), p["values"].get(yk), p["run_id"]) for p in sw["points"]]
        pts = [p for p in pts if p[0] is not None and p[1] is not None]
        if not pts:
            continue
        c = COLOURS[i % len(COLOURS)]
        plot.plot([p[0] for p in pts], [p[1] for p in pts], pen=None, symbol="o",
                  symbolSize=6, symbolBrush=palette.qcolor(c, 110), symbolPen=c)
        front = sorted((p for p in pts if p[2] in set(par["front"])), key=lambda p: p[0])
        plot.plot([p[0] for p in front], [p[1] for p in front], pen=pen(i))
        n += len(pts)
        plot.setLabel("bottom", xk)
        plot.setLabel("left", yk)
    plot.setTitle(_("Pareto: throughput against latency"), size="9pt")
    plot.showGrid(x=True, y=True, alpha=0.3)
    return n


def sweep_layout(sweeps: list[dict]):
    """A GraphicsLayoutWidget with the curves of CURVES and the Pareto view of these sweeps."""
    w = pg.GraphicsLayoutWidget()
    w.setBackground("w")
    first = None
    for i, metric in enumerate(CURVES):
        plot = w.addPlot(row=i // 3, col=i % 3)
        plot_curves(plot, sweeps, metric)
        first = first or plot
    plot_pareto(w.addPlot(row=1, col=2), sweeps)
    legend = pg.LegendItem(labelTextSize="8pt", labelTextColor=palette.TEXT)
    w.addItem(legend, row=1, col=1)
    for item in first.listDataItems():  # one legend for every plot, in its own cell
        legend.addItem(item, item.name())
    return w


def save_sweeps(doc: dict, out: Path) -> list[Path]:
    """compare_sweep_<setting>.png per swept setting (offscreen Qt)."""
    from PySide6.QtCore import QSize
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from explorer.reporting.images import ensure_app, save_png, settle
    ensure_app()
    written = []
    for setting, sws in by_setting(doc.get("sweeps") or []).items():
        w = QWidget()  # QGraphicsView.render takes other arguments than QWidget.render
        QVBoxLayout(w).addWidget(sweep_layout(sws))
        settle(w, QSize(1500, 800))
        written.append(save_png(w, Path(out) / f"compare_sweep_{setting}.png", dpr=1.0))
        w.close()
        w.deleteLater()
    return written


def _table(heads, rows) -> str:
    return ("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in heads) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
            + "</table>")


def pair_html(p: dict, seen: set | None = None) -> str:
    out = [f"<h3>{esc(p['a'])} → {esc(p['b'])}</h3>"]
    if p.get("kind") == "runs":
        w = (_("Workload: {a}").format(a=p["workload_a"]) if p["same_workload"] else
             _("Workloads: A {a}; B {b}").format(a=p["workload_a"], b=p["workload_b"]))
        out.append(f"<p class='sub'>{esc(w)}</p>")
    out += [f"<p class='why'>{esc(n)}</p>" for n in p.get("notes") or []]
    rows = metric_rows(p)
    if rows:
        out.append(_table([_(h) for h in METRIC_HEADS], rows))
    it = p.get("items")
    if it and items_seen(it, seen):
        same = _("The same paired items as above.")
        out.append(f"<p>{esc(same)}</p>")
    elif it:
        out.append(_table((_("Items"), _("Value")), items_rows(it)))
        out += [f"<p style='color:{palette.WARN}'><b>{esc(w)}</b></p>"
                for w in it.get("warnings") or []]
        out += [f"<p>{esc(s['sentence'])}</p>" for s in (it.get("engine_state") or {}).values()
                if s.get("sentence")]
    return "".join(out)


REPORT_MAX_PAIRS = 4  # the report's HTML / PDF: the first pairs, the rest in report.json


def compare_html(doc: dict, max_pairs: int = MD_MAX_PAIRS) -> str:
    """The comparison's tables (a fragment: the report's section and the Compare view), the
    first `max_pairs` pairs in full and the count of the others."""
    head = _("{n} runs in {w} workloads; {p} pairs compared.").format(
        n=len(doc.get("runs") or []), w=len(doc.get("workloads") or []),
        p=len(doc.get("pairs") or []))
    out = [f"<p>{esc(head)}</p>"]
    ws = doc.get("workloads") or []
    if ws:
        out.append(_table((_("Workload"), _("Description"), _("Runs")),
                          [(w["id"], w["description"], len(w["runs"])) for w in ws[:30]]))
    out += [f"<p>{esc(u['sentence'])}</p>" for u in doc.get("unmatched") or []]
    pairs = doc.get("pairs") or []
    seen: set = set()
    out += [pair_html(p, seen) for p in pairs[:max_pairs]]
    if len(pairs) > max_pairs:
        more = _("{n} more pairs in the JSON.").format(n=len(pairs) - max_pairs)
        out.append(f"<p>{esc(more)}</p>")
    return "".join(out)

