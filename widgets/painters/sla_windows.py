"""SLA attainment over time (report JSON `sla.windows` / `sla.diagnosis`): per window the share of
its requests meeting the SLA (a line per run), the failing windows marked, the violation periods
shaded; x is minutes from the first window of the runs drawn (from each run's own first window
when the runs lie far apart in time)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer.widgets import palette
from explorer.core.i18n import _

MAX_RUNS = 12


def origin(windows: list[dict]) -> float:
    """The x axis' zero: the earliest window start."""
    return min(float(w["start_s"]) for w in windows)


def run_origins(windows: list[dict], squeeze: float = 20.0) -> dict | None:
    """{run: its own first window start} when the runs lie far apart in time (the whole span
    over `squeeze` times the longest run: two releases benchmarked weeks apart drew each run as
    a vertical line at 0 and 75,000 minutes); None when one common axis reads well."""
    span: dict = {}
    for w in windows:
        lo, hi = span.get(w["run_id"], (float("inf"), float("-inf")))
        span[w["run_id"]] = (min(lo, float(w["start_s"])), max(hi, float(w["end_s"])))
    if len(span) < 2:
        return None
    longest = max(hi - lo for lo, hi in span.values())
    whole = max(hi for _lo, hi in span.values()) - min(lo for lo, _hi in span.values())
    if longest <= 0 or whole <= squeeze * longest:
        return None
    return {r: lo for r, (lo, _hi) in span.items()}


def legend_names(runs: list) -> dict:
    """run id -> the fewest trailing ':'-parts that tell it from the other runs drawn
    ("naive_output_0.5" twice becomes "0.2.1:naive_output_0.5" and "0.3.0:naive_output_0.5")."""
    parts = {r: str(r).split(":") for r in runs}
    for k in range(1, max((len(p) for p in parts.values()), default=1) + 1):
        names = {r: ":".join(p[-k:]) for r, p in parts.items()}
        if len(set(names.values())) == len(names):
            return names
    return {r: str(r) for r in runs}


def paint_sla_windows(plot: pg.PlotItem, value: dict | None) -> tuple[str | None, list]:
    """Draw `value` (the sla_diagnosis section, or the report's sla with windows and diagnosis).
    Returns (a message instead of a picture or None, the shaded periods as (region item,
    period dict)) so the panel can make them clickable."""
    plot.clear()
    wins = (value or {}).get("windows") or []
    if not wins:
        return _("No SLA window: no request has an arrival time."), []
    t0 = origin(wins)
    every = sorted({w["run_id"] for w in wins}, key=lambda r: min(w["start_s"] for w in wins
                                                                if w["run_id"] == r))
    runs = every[:MAX_RUNS]
    own = run_origins(wins)
    zero = (lambda run: own[run]) if own else (lambda _run: t0)
    names = legend_names(runs)
    if plot.legend is not None:
        plot.legend.clear()
    elif len(runs) > 1:
        plot.addLegend(offset=(-10, 10), labelTextSize="8pt")
    colours = [palette.CONTROL, palette.ACCENT, palette.WARN, palette.MUTED, palette.SELECTED, palette.TEXT]
    for i, run in enumerate(runs):
        part = [w for w in wins if w["run_id"] == run and w.get("attainment") is not None]
        if not part:
            continue
        x = np.array([(w["start_s"] + w["end_s"]) / 2 - zero(run) for w in part]) / 60
        y = np.array([100 * w["attainment"] for w in part])
        # every other run dashed: two runs with the same attainment (aibrix's two releases,
        # 12% then 0%) drew one line exactly over the other
        style = pg.QtCore.Qt.PenStyle.DashLine if i % 2 else pg.QtCore.Qt.PenStyle.SolidLine
        plot.plot(x, y, pen=pg.mkPen(colours[i % len(colours)], width=2 + (i % 2), style=style),
                  name=names[run])
        bad = np.array([w.get("met") is False for w in part])
        if bad.any():
            plot.plot(x[bad], y[bad], pen=None, symbol="x", symbolSize=9,
                      symbolPen=pg.mkPen(palette.BAD, width=2))
    regions = []
    for p in ((value or {}).get("diagnosis") or {}).get("violations") or []:
        if p.get("isolated") or p["run_id"] not in runs:
            continue
        z = zero(p["run_id"])
        r = pg.LinearRegionItem(values=((p["start_s"] - z) / 60, (p["end_s"] - z) / 60),
                                brush=pg.mkBrush(palette.qcolor(palette.BAD, 50)), movable=False)
        r.setZValue(-10)
        plot.addItem(r)
        regions.append((r, p))
    tgt = (((value or {}).get("diagnosis") or {}).get("params") or {}).get("target")
    if tgt is not None:
        plot.addLine(y=100 * float(tgt), pen=pg.mkPen(palette.NEUTRAL, style=pg.QtCore.Qt.PenStyle.DashLine))
    plot.setLabel("bottom", _("minutes from each run's first window") if own
                  else _("minutes from the first window"))
    plot.setLabel("left", _("requests meeting the SLA (%)"))
    plot.setYRange(0, 100, padding=0.02)
    plot.showGrid(x=True, y=True, alpha=0.25)
    title = _("SLA attainment per window; shaded: violation periods (click one to select its requests)")
    if len(every) > len(runs):
        title += " " + _("(the first {shown} of {n} runs; every window is in report.json)").format(
            shown=len(runs), n=len(every))
    plot.setTitle(title, size="9pt")
    return None, regions
