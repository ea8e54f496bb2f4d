"""Engine statistics (report JSON `engine`: runs [{run_id, clock, engines [{engine, samples,
<col>_mean / _max, series {ts_s, running, waiting, kv_usage_gpu, prefix_cache_hit_rate, ...}}],
server}], request_context): counter tracks over time, one line per stats run and engine, a
summary line and the per-engine table of the HTML report."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer.core.fmt import by_spec
from explorer.core.escape import html_text
from explorer.widgets import palette

from .common import is_missing
from explorer.core.i18n import _

# (series key, track title, scale shown, unit): fractions are drawn in percent
TRACKS = (("running", "running", 1.0, ""), ("waiting", "waiting", 1.0, ""),
          ("kv_usage_gpu", "KV usage", 100.0, "%"),
          ("prefix_cache_hit_rate", "prefix hit", 100.0, "%"))
COLOURS = (palette.CONTROL, palette.BAD, palette.ACCENT, palette.WARN, palette.SELECTED,
           palette.NEUTRAL)


STYLES = (pg.QtCore.Qt.PenStyle.SolidLine, pg.QtCore.Qt.PenStyle.DashLine,
          pg.QtCore.Qt.PenStyle.DotLine, pg.QtCore.Qt.PenStyle.DashDotLine)


def lines(value: dict | None) -> list[tuple[str, np.ndarray, dict, tuple[int, int]]]:
    """(legend name, x seconds, {track: y array}, (run index, engine index)) for every engine
    of every stats run. x counts from the run's first sample (sample number when the scrape
    has no timestamps)."""
    out = []
    for ri, run in enumerate((value or {}).get("runs") or []):
        engines = run.get("engines") or []
        firsts = [t for g in engines for t in (g.get("series") or {}).get("ts_s") or []
                  if not is_missing(t)]
        t0 = min(firsts) if firsts else 0.0
        for ei, g in enumerate(engines):
            s = g.get("series") or {}
            ts = s.get("ts_s") or []
            x = (np.array([np.nan if is_missing(t) else t - t0 for t in ts], float) if firsts
                 else np.arange(len(ts), dtype=float))
            ys = {k: np.array([np.nan if is_missing(v) else v for v in s[k]], float)
                  for k, *_ in TRACKS if k in s and len(s[k]) == len(ts)}
            name = str(run.get("run_id", "")).split(":", 1)[-1]
            if len(engines) > 1 or g.get("engine"):
                name += _(" · engine {engine}").format(engine=g.get('engine') or '–')
            out.append((name, x, ys, (ri, ei)))
    return out


def paint_engine(layout: pg.GraphicsLayoutWidget, value: dict | None) -> str | None:
    """One plot per track that has data, stacked, sharing the time axis. Returns a message
    instead of drawing when no series has a value."""
    layout.clear()
    data = lines(value)
    tracks = [t for t in TRACKS
              if any(np.isfinite(ys.get(t[0], np.array([]))).any() for _, _, ys, _ in data)]
    if not tracks:
        return _("The loaded engine statistics have no running / waiting / KV-cache values to draw.")
    first = None
    for row, (key, title, scale, unit) in enumerate(tracks):
        p = layout.addPlot(row=row, col=0)
        p.showGrid(x=True, y=True, alpha=0.25)
        p.setLabel("left", title + (f" ({unit})" if unit else ""))
        p.setMouseEnabled(y=False)
        p.getAxis("left").setWidth(62)
        if unit == "%":
            p.setYRange(0, 100, padding=0.05)
        if row == 0:
            p.addLegend(offset=(-10, 5))
        if first is None:
            first = p
        else:
            p.setXLink(first)
        for name, x, ys, (ri, ei) in data:
            y = ys.get(key)
            if y is None or not np.isfinite(y).any():
                continue
            # colour = the stats run, line style = its engine (data-parallel ranks that log the
            # same numbers stay visible on top of each other)
            colour = COLOURS[ri % len(COLOURS)]
            pen = pg.mkPen(colour, width=2, style=STYLES[ei % len(STYLES)])
            p.plot(x, y * scale, pen=pen, symbol="o", symbolSize=4, symbolBrush=colour,
                   name=name if row == 0 else None, stepMode=None, connect="finite")
        if row == len(tracks) - 1:
            p.setLabel("bottom", "seconds since the first sample")
    return None


def summary(value: dict | None) -> str:
    """'2 stats runs, 3 engines; x: server peak 212 running over 2 engines; 40 of 40 bound
    requests have the engine's state over their lifetime'."""
    value = value or {}
    runs = value.get("runs") or []
    n_eng = sum(len(r.get("engines") or []) for r in runs)
    parts = [_("{n_runs} stats run{x}, {n_eng} engine{x2}").format(
            n_runs=len(runs), x='s' if len(runs) != 1 else '', n_eng=n_eng,
            x2='s' if n_eng != 1 else '')]
    for r in runs:
        sv = r.get("server") or {}
        if (sv.get("engines") or 0) > 1 and not is_missing(sv.get("peak_running")):
            parts.append(_("{run_id}: server peak "
                         "{peak_running:,} running over {engines} engines").format(
                                 run_id=str(r.get('run_id')).split(':', 1)[-1],
                                 peak_running=int(sv['peak_running']), engines=sv['engines']))
    ctx = value.get("request_context") or {}
    n = ctx.get("bound_requests")
    if not is_missing(n) and n and not is_missing(ctx.get("with_context")):
        parts.append(_("{with_context:,} of {n:,} bound requests have the "
                     "engine's state over their lifetime").format(
                             with_context=int(ctx['with_context']), n=int(n)))
    return "; ".join(parts)


def _cell(x, pct: bool = False) -> str:
    if is_missing(x):
        return "–"
    x = float(x)
    if pct:
        return f"{by_spec(x * 100, '.1f')}%"
    return by_spec(int(x), ',') if x.is_integer() else by_spec(x, ',.1f')


def engine_html(value: dict | None) -> str:
    """The per-engine summary table (every text escaped)."""
    esc = html_text
    rows = []
    for r in (value or {}).get("runs") or []:
        for g in r.get("engines") or []:
            rows.append("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in (
                str(r.get("run_id")), g.get("engine") or "–", g.get("samples"),
                f"{_cell(g.get('running_mean'))} / {_cell(g.get('running_max'))}",
                f"{_cell(g.get('waiting_mean'))} / {_cell(g.get('waiting_max'))}",
                f"{_cell(g.get('kv_usage_gpu_mean'), True)} / {_cell(g.get('kv_usage_gpu_max'), True)}",
                _cell(g.get("prefix_cache_hit_rate_mean"), True), _cell(g.get("gen_tps_mean")))) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in (_("stats run"), _("engine"), _("samples"),
                                             _("running mean / max"), _("waiting mean / max"),
                                             _("KV usage mean / max"), _("prefix hit mean"),
                                             _("gen tok/s mean")))
    what = _("engine settings (vllm:cache_config_info)")
    settings = "".join(
        f"<p class='sub'>{esc(str(r.get('run_id')))}: {esc(what)}: "
        + esc(", ".join(f"{k} = {v}" for k, v in r["settings"].items())) + "</p>"
        for r in (value or {}).get("runs") or [] if r.get("settings"))
    return (f"<p>{esc(summary(value))}</p>{settings}<table><tr>{head}</tr>{''.join(rows)}</table>")
