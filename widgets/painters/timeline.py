"""Painters of a request's timeline (explorer.core.timeline), shared by the Timeline panel and
the report (issue 7): the same functions draw the app's panel and the report's image.

Inputs are plain data: `tl` is Timeline.to_dict(), `nb` is the neighbours() DataFrame.

    make_plots(layout) -> fig; paint_figure(fig, tl, nb=None, control=None) -> fig
    build_figure(layout, tl, nb=None, control=None) = both: fills a pg.GraphicsLayout with: "timeline" (phases + events, ms from arrival; the
        control request on a second row in compare mode), "itl" (inter-token gaps against token
        time, gaps above the run's p99 marked, preempted gaps shaded; x-linked to the timeline),
        "swimlane" (neighbours in flight, s from arrival) and "concurrency" (requests in flight)
    paint_phases / paint_events / paint_itl / paint_swimlane / paint_concurrency: the pieces
    pack_lanes(starts, ends) -> lane per interval;  hit_* -> the thing under the mouse
    describe_phase / describe_event / describe_token / describe_neighbour -> hover text
    render_png(path, tl, nb=None, control=None, size=(1400, 900)) -> path (needs a QApplication)
"""
from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer.core.fmt import by_spec
from explorer.core.escape import html_text
from explorer.core.i18n import N_, _

# Okabe & Ito colour-blind safe palette, the same hexes as widgets/palette.py
BAD, CONTROL, SELECTED, NEUTRAL = "#D55E00", "#0072B2", "#CC79A7", "#999999"
PHASE_COLOURS = {"queued": "#E69F00", "prefill": "#56B4E9", "decode": "#009E73",
                 "preempted": "#D55E00", "unsplit": "#BBBBBB"}
EVENT_SYMBOLS = {"arrived": "t1", "queued": "s", "scheduled": "d", "first_token": "star",
                 "preempted": "x", "resumed": "+", "finished": "t", "error": "o"}
BAR_H = 0.6


# phase and event kinds and trace sources shown through _(kind), marked for extraction
_KINDS = (N_("queued"), N_("prefill"),
          N_("decode"), N_("preempted"),
          N_("unsplit"), N_("arrived"),
          N_("scheduled"), N_("first_token"),
          N_("resumed"), N_("finished"),
          N_("error"), N_("events"),
          N_("derived"), N_("first token"))


def _fmt(v: Any, unit: str = "ms", digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    x = float(v)
    s = by_spec(x, ',.0f') if abs(x) >= 1000 else by_spec(x, f".{digits}g")
    if x == 1 and unit in ("tokens", "requests"):  # "1 token", "1 request"
        unit = unit[:-1]
    return f"{s} {unit}".strip()


# -- hover text ----------------------------------------------------------------------------------
def describe_phase(p: dict) -> str:
    s = _("{phase}: {start} → {end} ({duration})").format(phase=_(p["kind"]),
                                                          start=_fmt(p["start_ms"]),
                                                          end=_fmt(p["end_ms"]),
                                                          duration=_fmt(p["end_ms"] - p["start_ms"]))
    return s + (f" — {p['note']}" if p.get("note") else "")


def describe_event(e: dict) -> str:
    s = f"{_(e['kind'])} @ {_fmt(e['t_ms'])}"
    if e.get("detail"):
        s += f" — {e['detail']}"
    return s + (" " + _("(derived)") if e.get("derived") else "")


def describe_token(tl: dict, i: int) -> str:
    it = tl["itl"]
    s = _("token {token}: ITL {itl} at {at}").format(token=str(it["token_index"][i]),
                                                     itl=_fmt(it["itl_ms"][i]),
                                                     at=_fmt(it["t_ms"][i]))
    if it["above_p99"][i]:
        s += " — " + _("above the run's p99 ({p99})").format(p99=_fmt(tl["run_p99_itl_ms"]))
    return s


def describe_neighbour(r: dict) -> str:
    bad = r.get("is_badcase")
    tag = _("badcase") if bad is True else _("bound, correct") if bad is False else _("unbound")
    parts = [f"{r['request_id']} ({tag})",
             _("{start} s → {end} s").format(start=by_spec(r['start_s'], '+.3f'),
                                             end=by_spec(r['end_s'], '+.3f')),
             _("in flight at its start: {n}").format(n=str(r.get("concurrency")))]
    for col, unit, name in (("e2e_ms", "ms", "E2E"), ("tpot_ms", "ms/token", "TPOT"),
                            ("prompt_tokens", "tokens", _("prompt")),
                            ("completion_tokens", "tokens", _("output")),
                            ("batch_size", "requests", _("batch")),
                            ("num_preemptions", "", _("preemptions")),
                            ("kv_cache_hit_rate", "", _("KV-cache hit rate"))):
        v = r.get(col)
        if v is not None and not (isinstance(v, float) and math.isnan(v)) and v is not pd.NA:
            parts.append(f"{name} {_fmt(v, unit)}")
    return " · ".join(parts)


# -- geometry -------------------------------------------------------------------------------------
def pack_lanes(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Greedy interval-graph colouring: in start order, each interval takes the lowest lane
    free at its start (a lane frees when its last interval ended strictly before). Uses the
    fewest lanes possible; O(n log n) with two heaps. Returns one lane (0-based) per interval,
    in input order."""
    order = np.argsort(starts, kind="stable")
    busy: list[tuple[float, int]] = []   # (end, lane)
    free: list[int] = []                 # lanes whose interval has ended
    lanes = np.zeros(len(starts), dtype=int)
    n_lanes = 0
    for i in order:
        s0 = starts[i]
        while busy and busy[0][0] < s0:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane, n_lanes = n_lanes, n_lanes + 1
        lanes[i] = lane
        heapq.heappush(busy, (ends[i], lane))
    return lanes


def hit_phase(tl: dict, x_ms: float, y: float, row: float = 0.0) -> dict | None:
    if abs(y - row) > BAR_H / 2:
        return None
    for p in tl["phases"]:
        if p["start_ms"] <= x_ms <= p["end_ms"]:
            return p
    return None


def hit_event(tl: dict, x_ms: float, tol_ms: float) -> dict | None:
    best = min(tl["events"], key=lambda e: abs(e["t_ms"] - x_ms), default=None)
    return best if best is not None and abs(best["t_ms"] - x_ms) <= tol_ms else None


def hit_token(tl: dict, x_ms: float, tol_ms: float) -> int | None:
    t = np.asarray(tl["itl"]["t_ms"])
    if not len(t):
        return None
    i = int(np.argmin(np.abs(t - x_ms)))
    return i if abs(t[i] - x_ms) <= tol_ms else None


def hit_neighbour(nb: pd.DataFrame, lanes: np.ndarray, x_s: float, y: float) -> int | None:
    """Row position of the neighbour drawn under (x_s, y) in the swimlane, or None."""
    if nb is None or not len(nb):
        return None
    lane = round(y) - 1  # lane 0 of the neighbours is drawn at y = 1 (the request is at y = 0)
    m = np.flatnonzero((lanes == lane) & (nb["start_s"].to_numpy() <= x_s)
                       & (nb["end_s"].to_numpy() >= x_s) & (abs(y - round(y)) <= BAR_H / 2))
    return int(m[0]) if len(m) else None


# -- painting -------------------------------------------------------------------------------------
def _bars(plot: pg.PlotItem, x0, width, y, colours: list[str], pen=None) -> list:
    """Horizontal bars, one BarGraphItem per colour: a single-colour item paints with one
    drawRects call (fast for thousands of bars, and it avoids the per-bar fillRect path that
    crashes PySide6 6.12 on Python 3.11 after many repaints)."""
    x0, width, y = (np.asarray(a, float) for a in (x0, width, y))
    items = []
    for c in dict.fromkeys(colours):
        m = np.array([k == c for k in colours])
        item = pg.BarGraphItem(x0=x0[m], width=width[m], y=y[m], height=BAR_H, brush=pg.mkBrush(c),
                               pen=pen if pen is not None else pg.mkPen(None))
        plot.addItem(item)
        items.append(item)
    return items


def paint_phases(plot: pg.PlotItem, tl: dict, row: float = 0.0) -> list:
    """Phases as coloured horizontal bars on `row` (x = ms from arrival)."""
    ph = tl["phases"]
    if not ph:
        return []
    return _bars(plot, [p["start_ms"] for p in ph], [p["end_ms"] - p["start_ms"] for p in ph],
                 [row] * len(ph), [PHASE_COLOURS.get(p["kind"], NEUTRAL) for p in ph],
                 pen=pg.mkPen("#FFFFFF", width=1))


def paint_events(plot: pg.PlotItem, tl: dict, row: float = 0.0) -> pg.ScatterPlotItem:
    """Events as markers above the phase bar (hollow when derived from the requests row)."""
    ev = tl["events"]
    sc = pg.ScatterPlotItem(
        x=[e["t_ms"] for e in ev], y=[row + BAR_H / 2 + 0.12] * len(ev),
        symbol=[EVENT_SYMBOLS.get(e["kind"], "h") for e in ev], size=11,
        brush=[pg.mkBrush("#FFFFFF" if e["derived"] else "#222222") for e in ev],
        pen=pg.mkPen("#222222", width=1.2), data=list(range(len(ev))))
    plot.addItem(sc)
    return sc


def paint_itl(plot: pg.PlotItem, tl: dict, colour: str = CONTROL,
              shade_preemptions: bool = True, name: str | None = None) -> list:
    """ITL (ms) against token time (ms from arrival): a line with dots, gaps above the run's
    p99 as large vermillion dots, the p99 as a dashed line, preempted gaps shaded."""
    items: list = []
    it = tl["itl"]
    x, y = np.asarray(it["t_ms"], float), np.asarray(it["itl_ms"], float)
    if shade_preemptions:
        for p in tl["preemptions"]:
            reg = pg.LinearRegionItem((p["start_ms"], max(p["end_ms"], p["start_ms"] + 1e-3)),
                                      movable=False, brush=pg.mkBrush(213, 94, 0, 50),
                                      pen=pg.mkPen(BAD, width=1))
            plot.addItem(reg)
            items.append(reg)
    if len(x):
        line = plot.plot(x, y, pen=pg.mkPen(colour, width=1), symbol="o", symbolSize=3,
                         symbolBrush=colour, symbolPen=None, name=name)
        items.append(line)
        hi = np.asarray(it["above_p99"], bool)
        if hi.any():
            sc = pg.ScatterPlotItem(x=x[hi], y=y[hi], size=9, brush=pg.mkBrush(BAD),
                                    pen=pg.mkPen("#222222"), symbol="o")
            plot.addItem(sc)
            items.append(sc)
    p99 = tl.get("run_p99_itl_ms")
    if p99 is not None:
        ln = pg.InfiniteLine(pos=p99, angle=0, pen=pg.mkPen(BAD, style=Qt.PenStyle.DashLine),
                             label=_("run p99 {p99}").format(p99=_fmt(p99)),
                             labelOpts={"position": 0.02, "color": BAD, "anchors": [(0, 0), (0, 0)]})
        plot.addItem(ln)
        items.append(ln)
    return items


def paint_swimlane(plot: pg.PlotItem, nb: pd.DataFrame | None, tl: dict) -> np.ndarray:
    """The request (y = 0, purple) and its neighbours packed in lanes (y >= 1), x in s from the
    request's arrival; badcases vermillion, bound correct blue, unbound grey. Returns lanes."""
    end_s = (tl["end_ms"] or 0.0) / 1000.0
    plot.addItem(pg.BarGraphItem(x0=[0.0], width=[max(end_s, 1e-3)], y=[0], height=BAR_H,
                                 brush=pg.mkBrush(SELECTED), pen=pg.mkPen("#222222")))
    if nb is None or not len(nb):
        return np.zeros(0, dtype=int)
    s, e = nb["start_s"].to_numpy(float), nb["end_s"].to_numpy(float)
    lanes = pack_lanes(s, e)
    bad = nb["is_badcase"]
    colours = [BAD if b is True else CONTROL if b is False else NEUTRAL
               for b in (None if pd.isna(v) else bool(v) for v in bad)]
    _bars(plot, s, np.maximum(e - s, 1e-3), lanes + 1, colours)
    return lanes


def concurrency_steps(nb: pd.DataFrame | None, tl: dict) -> tuple[np.ndarray, np.ndarray]:
    """(t_s, in_flight) step series over the window: requests in flight (the selected one
    included) after each start / end, t in s from the request's arrival."""
    s = [0.0] + ([] if nb is None else list(nb["start_s"]))
    e = [(tl["end_ms"] or 0.0) / 1000.0] + ([] if nb is None else list(nb["end_s"]))
    t = np.r_[s, e]
    d = np.r_[np.ones(len(s)), -np.ones(len(e))]
    order = np.lexsort((-d, t))  # a start before an end at the same instant
    return t[order], np.cumsum(d[order])


def paint_concurrency(plot: pg.PlotItem, nb: pd.DataFrame | None, tl: dict):
    t, n = concurrency_steps(nb, tl)
    if not len(t):
        return None
    return plot.plot(np.r_[t, t[-1]], n, stepMode="center", pen=pg.mkPen("#444444"))


def _title(tl: dict, who: str) -> str:
    m = tl.get("metrics", {})
    # ids come from the trace file: escaped, since a LabelItem renders HTML
    ident = [f"<b>{html_text(who)} {html_text(str(tl['request_id']))}</b>",
             html_text(_("run {run}").format(run=str(tl["run_id"]))),
             _("source: {source}").format(source=_(tl["source"]))]
    bits = []
    for k, unit, name in (("ttft_ms", "ms", "TTFT"), ("tpot_ms", "ms/token", "TPOT"),
                          ("e2e_ms", "ms", "E2E"), ("num_preemptions", "", _("preemptions"))):
        if m.get(k) is not None:
            bits.append(f"{name} {_fmt(m[k], unit)}")
    # two short lines: one long line would set the figure's minimum width past the dock's
    return " · ".join(ident) + ("<br>" + " · ".join(bits) if bits else "")


# the event markers as characters, for the key line above the plot (pyqtgraph's symbols)
EVENT_GLYPHS = {"t1": "▲", "s": "■", "d": "◆", "star": "★", "x": "✕", "+": "+", "t": "▼", "o": "●"}


def legend_html(phases: list[str], kinds: list[str]) -> str:
    """The key of the request's row as one line above its plot (a legend inside the plot hid
    the markers under it and was clipped on the left in a narrow dock): phase colours, then
    event markers, with their names in words ("first token", not first_token)."""
    parts = [f'<span style="color:{PHASE_COLOURS[k]}">&#9632;</span> {html_text(_(k.replace("_", " ")))}'
             for k in phases]
    parts += [f'<span style="color:#222222">{EVENT_GLYPHS.get(EVENT_SYMBOLS[k], "•")}</span> '
              f'{html_text(_(k.replace("_", " ")))}' for k in kinds]
    return "&nbsp; ".join(parts)


def make_plots(layout: pg.GraphicsLayout) -> dict[str, Any]:
    """Create the figure's title and four plots in `layout` (cleared first); paint_figure then
    fills them, as often as needed. Returns {"title": LabelItem, "timeline", "itl",
    "swimlane", "concurrency": PlotItem}."""
    layout.clear()
    pg.setConfigOptions(antialias=True)
    title = layout.addLabel("", row=0, col=0, size="9pt")
    top = layout.addPlot(row=1, col=0)
    top.setLabel("bottom", _("time from arrival (ms)"))
    top.showGrid(x=True, alpha=0.2)
    top.setMouseEnabled(y=False)
    itl = layout.addPlot(row=2, col=0)
    itl.setLabel("left", _("ITL (ms)"))
    itl.setLabel("bottom", _("token time from arrival (ms)"))
    itl.setXLink(top)
    itl.showGrid(x=True, y=True, alpha=0.2)
    lanes = layout.addPlot(row=3, col=0)
    lanes.setLabel("left", _("requests in flight"))
    lanes.setLabel("bottom", _("time from this request's arrival (s)"))
    lanes.getAxis("left").setTicks([[(0, _("this"))]])
    lanes.invertY(True)
    lanes.setMouseEnabled(y=True)  # many lanes: the wheel zooms into them too
    lanes.setTitle("  ".join(f'<span style="color:{c}">&#9632;</span> {t}' for c, t in
                             ((SELECTED, _("this request")), (BAD, _("badcase")),
                              (CONTROL, _("bound, correct")), (NEUTRAL, _("unbound")))),
                   size="8pt", color="#444444")
    conc = layout.addPlot(row=4, col=0)
    conc.setLabel("left", _("concurrency"))
    conc.setXLink(lanes)
    conc.setMouseEnabled(y=False)
    for p in (top, itl, lanes, conc):
        p.getAxis("left").setWidth(95)
        for side in ("left", "bottom"):  # the unit is in the label: no "(x0.001)" scaling
            p.getAxis(side).enableAutoSIPrefix(False)
    return {"title": title, "timeline": top, "itl": itl, "swimlane": lanes, "concurrency": conc,
            "layout": layout}


def paint_figure(fig: dict[str, Any], tl: dict, nb: pd.DataFrame | None = None,
                 control: dict | None = None) -> dict[str, Any]:
    """Clear the plots of make_plots() and draw one request (and, in compare mode, the
    typical control on a second row of the same time axis). Adds "lanes" (swimlane lane of
    each neighbour row) and "events" (ScatterPlotItem) to `fig` and returns it."""
    top, itl, lanes_plot, conc = fig["timeline"], fig["itl"], fig["swimlane"], fig["concurrency"]
    for p in (top, itl, lanes_plot, conc):
        p.clear()
        p.enableAutoRange()
    title = _title(tl, _("badcase") if control is not None else _("request"))
    if control is not None:
        title += "<br>" + _title(control, _("typical control"))
    fig["title"].setText(title, size="9pt")
    paint_phases(top, tl, 0.0)
    fig["events"] = paint_events(top, tl, 0.0)
    ticks = [(0.0, _("badcase") if control is not None else _("this request"))]
    if control is not None:
        paint_phases(top, control, 1.0)
        paint_events(top, control, 1.0)
        ticks.append((1.0, _("typical control")))
    top.getAxis("left").setTicks([ticks])
    top.setYRange(-0.5, len(ticks) - 1 + 0.9, padding=0)  # room for the markers above the bar
    shown = [tl] + ([control] if control is not None else [])
    phases = [k for k in PHASE_COLOURS if any(p["kind"] == k for t in shown for p in t["phases"])]
    kinds = [k for k in EVENT_SYMBOLS if any(e["kind"] == k for t in shown for e in t["events"])]
    if fig.get("legend_kinds") != (phases, kinds):
        fig["legend_kinds"] = (phases, kinds)
        top.setTitle(legend_html(phases, kinds), size="8pt", color="#444444")
    if control is not None:
        if itl.legend is None:
            itl.addLegend(offset=(-5, 2), labelTextSize="8pt", brush=pg.mkBrush(255, 255, 255, 220))
        itl.legend.clear()
        itl.legend.setColumnCount(2)
    else:
        if itl.legend is not None:
            itl.legend.clear()
    paint_itl(itl, tl, colour=BAD if control is not None else CONTROL,
              name=_("badcase ITL (shaded: its preempted gaps)") if control is not None else None)
    if control is not None:
        paint_itl(itl, {**control, "run_p99_itl_ms": None}, colour=CONTROL, shade_preemptions=False,
                  name=_("typical control ITL"))
    has_itl = bool(tl["itl"]["t_ms"]) or bool(control and control["itl"]["t_ms"])
    itl.getAxis("left").setTicks(None if has_itl else [[]])
    if not has_itl:
        itl.setYRange(0, 1, padding=0)
        msg = pg.TextItem(_("no per-token latencies in this trace") + (
            "; " + _("preempted gaps shaded") if tl["preemptions"] else ""), color="#666666",
            anchor=(0, 0.5))
        msg.setPos(0, 0.5)
        itl.addItem(msg)
    ends = [0.0] + [v for t in shown for v in
                    ([t["end_ms"]] if t["end_ms"] is not None else []) + list(t["itl"]["t_ms"][-1:])
                    + [p["end_ms"] for p in t["phases"]]]
    fig["x_range_ms"] = (0.0, max(ends) or 1.0)
    top.setXRange(*fig["x_range_ms"], padding=0.02)  # arrival at the left edge, always
    itl.enableAutoRange(x=False)
    fig["lanes"] = paint_swimlane(lanes_plot, nb, tl)
    paint_concurrency(conc, nb, tl)
    ci = fig["layout"].layout
    for r, f in ((1, 3 if control is not None else 2), (2, 3 if has_itl else 1), (3, 4), (4, 1)):
        ci.setRowStretchFactor(r, f)
    return fig


def build_figure(layout: pg.GraphicsLayout, tl: dict, nb: pd.DataFrame | None = None,
                 control: dict | None = None) -> dict[str, Any]:
    """make_plots + paint_figure in one call (the report's entry point)."""
    return paint_figure(make_plots(layout), tl, nb, control)


def render_png(path: str, tl: dict, nb: pd.DataFrame | None = None, control: dict | None = None,
               size: tuple[int, int] = (1400, 900)) -> str:
    """Draw the figure offscreen and save it as PNG (for the report bundle). Needs a
    QApplication (QT_QPA_PLATFORM=offscreen works)."""
    w = pg.GraphicsLayoutWidget()
    w.setBackground("w")
    w.resize(*size)
    build_figure(w.ci, tl, nb, control)
    w.grab().save(str(path))
    w.deleteLater()
    return str(path)
