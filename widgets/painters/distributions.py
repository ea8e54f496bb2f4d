"""Distribution of one metric, badcases vs control overlaid (histogram or ECDF), drawn onto a
pyqtgraph PlotItem. Means and the Mann-Whitney U p-value go into the legend; selected cases are
drawn as a rug in the selection colour."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer.core.escape import html_text
from explorer.widgets import palette

from .common import label, num, pval
from explorer.core.i18n import _

MAX_BINS = 40


def clean(values) -> np.ndarray:
    """Finite float values of a sequence/Series (NaN, None, inf dropped)."""
    a = np.asarray(values if values is not None else [], dtype=float).ravel()
    return a[np.isfinite(a)]


def bin_edges(bad: np.ndarray, control: np.ndarray) -> np.ndarray:
    """Common histogram edges for both groups (numpy 'auto', at most MAX_BINS bins)."""
    both = np.concatenate([bad, control])
    if both.size == 0:
        return np.array([0.0, 1.0])
    lo, hi = float(both.min()), float(both.max())
    if lo == hi:
        return np.array([lo - 0.5, hi + 0.5])
    edges = np.histogram_bin_edges(both, bins="auto")
    if len(edges) - 1 > MAX_BINS:
        edges = np.linspace(lo, hi, MAX_BINS + 1)
    return edges


def ecdf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x, y of the empirical CDF as a step function (y = fraction of values <= x)."""
    x = np.sort(a)
    y = np.arange(1, len(x) + 1) / len(x)
    return np.concatenate([[x[0]], x]), np.concatenate([[0.0], y])


def paint_distribution(plot: pg.PlotItem, bad, control, metric: str, mode: str = "hist",
                       stats: dict | None = None, highlight=None) -> str | None:
    """Draw both groups of `metric` onto `plot` (cleared first).

    bad, control: values (NaN ignored); mode: "hist" (density, common bins) or "ecdf";
    stats: the comparison row of this metric (p_adjusted, p_value) for the legend;
    highlight: values of the selected cases (rug). Returns a message instead of drawing when
    neither group has a value (the caller shows it)."""
    plot.clear()
    if plot.legend is not None:
        plot.legend.clear()
    else:
        plot.addLegend(offset=(-10, 10), labelTextSize="9pt")
    b, c = clean(bad), clean(control)
    if b.size == 0 and c.size == 0:
        return _("No {metric} value in this cohort (no bound request records it).").format(metric=label(metric, False))
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setLabel("bottom", label(metric))
    if mode == "ecdf":
        plot.setLabel("left", "fraction of cases ≤ x")
    else:
        plot.setLabel("left", _("density"))
    edges = bin_edges(b, c)
    for vals, colour, name in ((c, palette.CONTROL, _("Control")), (b, palette.BAD, _("Badcase"))):
        if vals.size == 0:
            continue
        legend = _("{name} (n={size}, mean {mean})").format(name=name, size=vals.size, mean=num(vals.mean(), metric))
        pen = pg.mkPen(colour, width=2)
        if mode == "ecdf":
            plot.plot(*_steps(*ecdf(vals)), pen=pen, name=legend)
        else:
            h, _edges = np.histogram(vals, bins=edges, density=True)
            plot.plot(edges, h, stepMode="center", pen=pen, fillLevel=0,
                      brush=palette.qcolor(colour, 70), name=legend)
        line = pg.InfiniteLine(pos=float(vals.mean()), angle=90,
                               pen=pg.mkPen(colour, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        plot.addItem(line)
    if stats:
        p = stats.get("p_adjusted", stats.get("p_value"))
        plot.legend.addItem(pg.PlotDataItem(pen=None),
                            html_text(_("Mann-Whitney U p adj. {x}").format(x=_rel(pval(p)))))
    h = clean(highlight)
    if h.size:
        ymax = 1.0 if mode == "ecdf" else plot.viewRange()[1][1] or 1.0
        rug = pg.ScatterPlotItem(h, np.full(h.size, -0.03 * ymax), symbol="t1", size=9,
                                 pen=pg.mkPen(palette.SELECTED), brush=pg.mkBrush(palette.SELECTED),
                                 name=f"Selected (n={h.size})")
        plot.addItem(rug)  # named: the legend lists it
    plot.enableAutoRange()
    return None


def _rel(p: str) -> str:
    return p if p.startswith("<") else f"= {p}"


def _steps(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Right-continuous step line through (x, y) points."""
    xs = np.repeat(x, 2)[1:]
    ys = np.repeat(y, 2)[:-1]
    return xs, ys
