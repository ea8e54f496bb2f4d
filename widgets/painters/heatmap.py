"""Heatmap (report JSON `heatmap`: x_edges, y_edges, values[y][x], null for empty cells) drawn
onto a pyqtgraph PlotItem as an ImageItem in data coordinates, with a colour bar and axis labels
in units."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer.core.fmt import by_spec
from explorer.widgets import palette

from .common import label, num, share
from explorer.core.i18n import _


def grid(heatmap: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x_edges, y_edges, values as float array [y, x] with NaN for empty cells)."""
    xe = np.asarray(heatmap.get("x_edges") or [], dtype=float)
    ye = np.asarray(heatmap.get("y_edges") or [], dtype=float)
    raw = heatmap.get("values") or []
    v = np.array([[np.nan if c is None else c for c in row] for row in raw], dtype=float) \
        if raw else np.zeros((0, 0))
    return xe, ye, v


def counts(heatmap: dict) -> np.ndarray | None:
    """Cell counts [y, x] when the result carries them ('counts' or 'n'), else None."""
    c = heatmap.get("counts", heatmap.get("n"))
    if not c:
        return None
    return np.array([[0 if x is None else x for x in row] for row in c], dtype=float)


def cell_at(heatmap: dict, x: float, y: float) -> tuple[int, int] | None:
    """(ix, iy) of the cell holding the data point (x, y), or None outside the grid."""
    xe, ye, v = grid(heatmap)
    if len(xe) < 2 or len(ye) < 2:
        return None
    ix = int(np.searchsorted(xe, x, side="right") - 1)
    iy = int(np.searchsorted(ye, y, side="right") - 1)
    if 0 <= ix < len(xe) - 1 and 0 <= iy < len(ye) - 1:
        return ix, iy
    return None


def case_grid(heatmap: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(cases [y, x], badcases [y, x]) of the cohort per cell ('case_cells': [ix, iy, n,
    n_bad] rows, see analysis.selected.cell_counts), or None when the result has none."""
    rows = heatmap.get("case_cells")
    xe, ye, _ = grid(heatmap)
    if rows is None or len(xe) < 2 or len(ye) < 2:
        return None
    n = np.zeros((len(ye) - 1, len(xe) - 1))
    nb = np.zeros_like(n)
    for ix, iy, k, kb in rows:
        n[iy, ix], nb[iy, ix] = k, kb
    return n, nb


def share_view(heatmap: dict) -> dict:
    """The heatmap coloured by the badcase share of the cohort's cases in each cell (empty
    where no cohort case falls) instead of the mean value metric."""
    g = case_grid(heatmap)
    if g is None:
        return {**heatmap, "values": []}
    n, nb = g
    values = [[None if n[j, i] == 0 else float(nb[j, i] / n[j, i]) for i in range(n.shape[1])]
              for j in range(n.shape[0])]
    return {**heatmap, "values": values, "value_metric": "badcase_share", "colour": "share"}


def paint_heatmap(plot: pg.PlotItem, heatmap: dict | None) -> str | None:
    """Draw the heatmap onto `plot` (cleared first). Non-uniform bins are drawn cell by cell
    positions-true via a rect per image (the image spans [x0, xN] x [y0, yN]; cells are
    resampled onto the finest uniform grid when edges are uneven). Returns a message instead of
    drawing when there is nothing to show."""
    plot.clear()
    bar = getattr(plot, "_te_colorbar", None)  # one colour bar per plot, reused
    if bar is not None:
        bar.setVisible(False)
    heatmap = heatmap or {}
    xe, ye, v = grid(heatmap)
    if v.size == 0 or len(xe) < 2 or len(ye) < 2 or not np.isfinite(v).any():
        if heatmap.get("colour") == "share" or heatmap.get("case_cells") is not None and not v.size:
            return _("No case of the cohort is bound to a request in these cells: no badcase share to show.")
        return _("No cell of the heatmap has a value (the cohort's requests lack these metrics).")
    img = _uniform(xe, ye, v)
    finite = v[np.isfinite(v)]
    lo, hi = float(finite.min()), float(finite.max())
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    image = pg.ImageItem(img.T)  # ImageItem wants [x, y]
    image.setRect(float(xe[0]), float(ye[0]), float(xe[-1] - xe[0]), float(ye[-1] - ye[0]))
    cmap = pg.colormap.get(palette.HEATMAP_COLORMAP)
    image.setLookupTable(cmap.getLookupTable(nPts=256))
    image.setLevels((lo, hi))
    plot.addItem(image)
    xm, ym, vm = heatmap.get("x_metric", "x"), heatmap.get("y_metric", "y"), heatmap.get("value_metric", "value")
    plot.setLabel("bottom", label(xm))
    plot.setLabel("left", label(ym))
    by_share = heatmap.get("colour") == "share"
    if by_share:
        lo, hi = 0.0, max(hi, 1e-9)
        image.setLevels((lo, hi))
    plot.setTitle(_("badcase share of the cohort's cases per cell") if by_share else _("mean {vm} per cell").format(
            vm=label(vm)),
                  size="10pt")
    if bar is None:
        bar = pg.ColorBarItem(values=(lo, hi), colorMap=cmap, label=label(vm), interactive=False, width=14)
        bar.setImageItem(image, insert_in=plot)
        plot._te_colorbar = bar
    else:
        bar.setImageItem(image)
        bar.setLevels((lo, hi))
        # the title sits on the bar's left axis (ColorBarItem's `label`), not on its value axis
        bar.getAxis("bottom" if bar.horizontal else "left").setLabel(label(vm))
        bar.setVisible(True)
    plot.getViewBox().setLimits()
    plot.getViewBox().autoRange(padding=0.02)
    return None


def _uniform(xe: np.ndarray, ye: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Resample values on uneven edges onto a uniform grid so the image matches the axes."""
    def even(e):
        d = np.diff(e)
        return np.allclose(d, d[0], rtol=1e-6)
    if even(xe) and even(ye):
        return v
    nx = min(max(len(xe) - 1, int((xe[-1] - xe[0]) / max(np.diff(xe).min(), 1e-12))), 400)
    ny = min(max(len(ye) - 1, int((ye[-1] - ye[0]) / max(np.diff(ye).min(), 1e-12))), 400)
    xc = xe[0] + (np.arange(nx) + 0.5) * (xe[-1] - xe[0]) / nx
    yc = ye[0] + (np.arange(ny) + 0.5) * (ye[-1] - ye[0]) / ny
    ix = np.clip(np.searchsorted(xe, xc, side="right") - 1, 0, len(xe) - 2)
    iy = np.clip(np.searchsorted(ye, yc, side="right") - 1, 0, len(ye) - 2)
    return v[np.ix_(iy, ix)]


def cell_text(heatmap: dict, ix: int, iy: int) -> str:
    """Tooltip text of one cell: its ranges, mean value and n."""
    xe, ye, v = grid(heatmap)
    xm, ym, vm = heatmap.get("x_metric", "x"), heatmap.get("y_metric", "y"), heatmap.get("value_metric", "value")
    c = counts(heatmap)
    what = _("time windows") if heatmap.get("level") == "window" else "requests"
    n = "–" if c is None else by_spec(int(c[iy, ix]), ',')
    value = (_("badcase share = {x}").format(x=share(v[iy, ix])) if heatmap.get("colour") == "share" else
             _("mean {vm} = {x}").format(vm=label(vm, False), x=num(v[iy, ix], vm)))
    text = (f"{label(xm, False)} {num(xe[ix], xm)} – {num(xe[ix + 1], xm)}\n"
            f"{label(ym, False)} {num(ye[iy], ym)} – {num(ye[iy + 1], ym)}\n"
            f"{value}\n{what}: {n}")
    g = case_grid(heatmap)
    if g is not None:
        k, kb = int(g[0][iy, ix]), int(g[1][iy, ix])
        text += _("\ncohort cases: {x:,} ({kb:,} badcase{x2})").format(
                x=k, kb=kb, x2='s' if kb != 1 else '')
    return text


def heatmap_tsv(heatmap: dict | None) -> str:
    """The heatmap as TSV: one row per cell with data (x range, y range, value, count, the
    cohort's cases and badcases in it), raw numbers for a spreadsheet."""
    hm = heatmap or {}
    xe, ye, v = grid(hm)
    c, g = counts(hm), case_grid(hm)
    xm, ym = hm.get("x_metric", "x"), hm.get("y_metric", "y")
    vm = "badcase_share" if hm.get("colour") == "share" else hm.get("value_metric", "value")
    head = [_("{xm} from").format(xm=xm), f"{xm} to", _("{ym} from").format(ym=ym), f"{ym} to", vm,
            "windows" if hm.get("level") == "window" else "requests"]
    lines = ["\t".join(head + ([_("cohort cases"), _("cohort badcases")] if g is not None else []))]
    for iy in range(v.shape[0]):
        for ix in range(v.shape[1]):
            n = 0 if c is None else int(c[iy, ix])
            if not n and not np.isfinite(v[iy, ix]):
                continue
            row = [f"{xe[ix]:g}", f"{xe[ix + 1]:g}", f"{ye[iy]:g}", f"{ye[iy + 1]:g}",
                   "" if not np.isfinite(v[iy, ix]) else f"{v[iy, ix]:g}", str(n)]
            if g is not None:
                row += [str(int(g[0][iy, ix])), str(int(g[1][iy, ix]))]
            lines.append("\t".join(row))
    return "\n".join(lines)
