"""Capacity sweeps of the Replay panel (report JSON `replay.sweeps`: [{run_id, rows:
[{num_gpu_blocks, hit_rate, preemptions, rejected, prefix_information}], monotone}]): the
first-query hit rate (left axis) and the preemptions (right axis, dashed) against the KV-cache
capacity on a log axis, one colour per run; decade ticks labelled "10k", "1M"."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer.core.fmt import by_spec
from explorer.widgets import palette

COLOURS = (palette.CONTROL, palette.BAD, palette.ACCENT, palette.WARN, palette.SELECTED,
           palette.NEUTRAL)


def short_count(v: float) -> str:
    """10000 -> '10k', 2500000 -> '2.5M' (axis labels)."""
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{by_spec(v / div, 'g')}{suf}"
    return by_spec(v, 'g')


def log_ticks(lo: float, hi: float) -> list[list[tuple[float, str]]]:
    """pyqtgraph ticks (in log10 units) for a log axis from lo to hi: labelled decades, and
    unlabelled 2..9 x decade minor ticks; a range within one decade labels its ends too."""
    d0, d1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    major = [(float(d), short_count(10.0 ** d)) for d in range(d0, d1 + 1)
             if lo <= 10.0 ** d <= hi]
    minor = [(math.log10(k * 10.0 ** d), "") for d in range(d0, d1 + 1) for k in range(2, 10)
             if lo <= k * 10.0 ** d <= hi]
    if len(major) < 2:   # too few decades to read the axis: label the ends as well
        major += [(math.log10(v), short_count(float(f"{v:.2g}"))) for v in (lo, hi)]
    return [major, minor]


def plot_sweeps(plot, pre_view, sweeps: list[dict], hit_name: str, pre_name: str) -> list[dict]:
    """Clear `plot` (log-x PlotItem) and `pre_view` (the right-axis ViewBox) and draw each
    sweep's hit rate (solid, unless the trace has no hash ids) and preemptions (dashed), one
    colour per sweep; legend names get the run id when there are several. Returns the drawn
    rows per sweep ([] for a sweep without rows)."""
    plot.clear()
    pre_view.clear()
    if plot.legend is not None:
        plot.legend.clear()
    else:
        plot.addLegend(offset=(10, 10))
    drawn, xs = [], []
    for i, sw in enumerate(sweeps):
        rows = [r for r in sw.get("rows") or [] if r.get("num_gpu_blocks")]
        drawn.append(rows)
        if not rows:
            continue
        colour = COLOURS[i % len(COLOURS)]
        tag = f" ({sw.get('run_id')})" if len(sweeps) > 1 else ""
        x = [float(r["num_gpu_blocks"]) for r in rows]
        xs += x
        if rows[0].get("prefix_information", True):
            hit = [float("nan") if r.get("hit_rate") is None else r["hit_rate"] for r in rows]
            plot.plot(x, hit, pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=6,
                      symbolBrush=colour, name=hit_name + tag)
        curve = pg.PlotDataItem([math.log10(v) for v in x], [float(r["preemptions"]) for r in rows],
                                pen=pg.mkPen(colour, width=2, style=Qt.PenStyle.DashLine),
                                symbol="t", symbolSize=6, symbolBrush=colour)
        pre_view.addItem(curve)
        plot.legend.addItem(curve, pre_name + tag)
    if xs:
        plot.getAxis("bottom").setTicks(log_ticks(min(xs), max(xs)))
    pre_view.setGeometry(plot.vb.sceneBoundingRect())
    return drawn
