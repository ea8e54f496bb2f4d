"""Engine-version comparison (report JSON `versions`: values, changes, accuracy): a table of
per-version values with change % and regression flags, and a bar chart of change %."""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg

from widgets import palette

from .common import is_missing, label, num, pct, pval

HEADERS = ["Benchmark", "Metric", "From", "To", "From value", "To value", "Change", "p", "Flag"]


def _changes(versions) -> list[dict]:
    if isinstance(versions, dict):
        return list(versions.get("changes") or [])
    return []


def _values(versions) -> list[dict]:
    if isinstance(versions, dict):
        return list(versions.get("values") or [])
    return list(versions or [])


def versions_rows(versions) -> list[tuple[list[str], bool]]:
    """(cells in HEADERS order, is_regression) per change; without changes (one version only)
    one row per value: benchmark, metric, version, value (n)."""
    out = []
    for c in _changes(versions):
        m = str(c.get("metric", "?"))
        reg = bool(c.get("regression"))
        flag = "▼ regression" if reg else ("▲ improvement" if c.get("direction") == "better" else
                                           (c.get("reason") or ""))
        out.append(([str(c.get("benchmark") or "–"), label(m), str(c.get("from_version", "–")),
                     str(c.get("to_version", "–")), num(c.get("from_value"), m),
                     num(c.get("to_value"), m), pct(c.get("change_pct")), pval(c.get("p_value")),
                     flag], reg))
    if not out:
        for v in _values(versions):
            m = str(v.get("metric", "?"))
            n = v.get("n")
            out.append(([str(v.get("benchmark") or "–"), label(m), str(v.get("engine_version", "–")),
                         "", num(v.get("value"), m) + ("" if is_missing(n) else f" (n={int(n)})"),
                         "", "", "", ""], False))
    return out


def empty_reason(versions) -> str | None:
    """Why there is nothing to compare, or None."""
    if not _changes(versions) and not _values(versions):
        return "No engine version recorded in the loaded traces (runs.engine_version is empty)."
    if not _changes(versions):
        vs = {v.get("engine_version") for v in _values(versions)}
        if len(vs) < 2:
            return None  # values shown; the panel adds "only one version"
    return None


def paint_versions(plot: pg.PlotItem, versions) -> str | None:
    """Bar chart of change % per metric (regressions in the badcase colour). Returns a message
    instead of drawing when there is no change to show."""
    plot.clear()
    ch = [c for c in _changes(versions) if not is_missing(c.get("change_pct"))]
    if not ch:
        return "Only one engine version per benchmark: nothing to compare across versions."
    y = np.arange(len(ch))
    vals = np.array([float(c["change_pct"]) for c in ch])
    brushes = [pg.mkBrush(palette.BAD if c.get("regression") else palette.NEUTRAL) for c in ch]
    bars = pg.BarGraphItem(x0=np.zeros(len(ch)), y=y, width=vals, height=0.6, brushes=brushes,
                           pen=pg.mkPen(None))
    plot.addItem(bars)
    ticks = [(i, f"{label(c['metric'], False)} {c.get('from_version')}→{c.get('to_version')}")
             for i, c in enumerate(ch)]
    plot.getAxis("left").setTicks([ticks])
    plot.setLabel("bottom", "change between versions (%)")
    plot.addItem(pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen(palette.MUTED)))
    plot.showGrid(x=True, alpha=0.25)
    plot.invertY(True)
    plot.enableAutoRange()
    return None


def versions_html(versions) -> str:
    """HTML table (reports); regression rows get class 'regression'."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    body = "".join(f"<tr{' class=regression' if reg else ''}>"
                   + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
                   for cells, reg in versions_rows(versions))
    return f"<table class='versions'><tr>{head}</tr>{body}</table>"
