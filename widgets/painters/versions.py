"""Engine-version comparison (report JSON `versions`: values, changes, accuracy): a table of
per-version values with change % and regression flags, and a bar chart of change %."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer.core.escape import html_text
from explorer.widgets import palette

from .common import is_missing, label, num, pct, pval
from explorer.core.i18n import N_, _

HEADERS = [N_("Benchmark"), N_("Metric"), N_("From"), N_("To"), N_("From value"), N_("To value"), N_("Change"), "p", N_("Flag")]


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
        flag = _("▼ regression") if reg else (_("▲ improvement") if c.get("direction") == "better" else
                                           _("workload differs") if c.get("workload_differs") else
                                           _(c.get("reason") or "") if c.get("reason") else "")
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
        return _("No engine version recorded in the loaded traces (runs.engine_version is empty).")
    if not _changes(versions):
        vs = {v.get("engine_version") for v in _values(versions)}
        if len(vs) < 2:
            return None  # values shown; the panel adds "only one version"
    return None


def short_benchmark(name, width: int = 22) -> str:
    """A benchmark name short enough for a tick label: its last path part, middle-elided
    ("ps_experiment…_0.3.0")."""
    t = str(name or "–").rstrip("/").rsplit("/", 1)[-1]
    if len(t) <= width:
        return t
    keep = width - 1
    return t[: keep - keep // 2] + "…" + t[len(t) - keep // 2:]


def _summary(versions) -> list[dict]:
    if isinstance(versions, dict):
        return [r for r in versions.get("summary") or [] if not is_missing(r.get("median_change_pct"))]
    return []


def chart_rows(versions) -> tuple[list[dict], str]:
    """What the bar chart shows: (bars, axis title). Each bar: label, value (change %), lo / hi
    (whisker, or None), regression (bool), tip. When some (metric, version pair) was compared
    on several benchmarks, one bar per pair from `summary` (median change, whiskers min..max
    over the benchmarks); else one bar per change, labelled with its (shortened) benchmark
    when there are several."""
    summ = _summary(versions)
    if summ and any(int(r.get("benchmarks") or 0) > 1 for r in summ):
        bars = []
        for r in summ:
            nb = int(r.get("benchmarks") or 0)
            bars.append({
                "label": _("{metric} {from_version}→{to_version}"
                         " ({nb} benchmark{x})").format(metric=label(r['metric'], False), from_version=r.get('from_version'), to_version=r.get('to_version'), nb=nb, x='s' if nb != 1 else ''),
                "value": float(r["median_change_pct"]),
                "lo": None if is_missing(r.get("min_change_pct")) else float(r["min_change_pct"]),
                "hi": None if is_missing(r.get("max_change_pct")) else float(r["max_change_pct"]),
                "regression": bool(r.get("regressions")),
                "tip": _("{regressions} regression(s), {significant} significant "
                       "of {nb} benchmark(s); min adjusted p {min_p_adjusted}").format(regressions=r.get('regressions', 0), significant=r.get('significant', 0), nb=nb, min_p_adjusted=pval(r.get('min_p_adjusted')))})
        return bars, _("median change over the benchmarks (%), whiskers min – max")
    ch = [c for c in _changes(versions) if not is_missing(c.get("change_pct"))]
    several = len({c.get("benchmark") for c in ch}) > 1
    bars = [{"label": f"{label(c['metric'], False)} {c.get('from_version')}→{c.get('to_version')}"
                      + (f" · {short_benchmark(c.get('benchmark'))}" if several else ""),
             "value": float(c["change_pct"]), "lo": None, "hi": None,
             "regression": bool(c.get("regression")),
             "tip": f"{c.get('benchmark')}: p = {pval(c.get('p_value'))}"} for c in ch]
    return bars, _("change between versions (%)")


def paint_versions(plot: pg.PlotItem, versions) -> str | None:
    """Bar chart of change % (regressions in the badcase colour), one bar per (metric,
    version pair) summarised over the benchmarks, or per change with its benchmark in the
    label (chart_rows). Returns a message instead of drawing when there is no change."""
    plot.clear()
    bars, title = chart_rows(versions)
    if not bars:
        return _("Only one engine version per benchmark: nothing to compare across versions.")
    y = np.arange(len(bars))
    vals = np.array([b["value"] for b in bars])
    brushes = [pg.mkBrush(palette.BAD if b["regression"] else palette.NEUTRAL) for b in bars]
    plot.addItem(pg.BarGraphItem(x0=np.zeros(len(bars)), y=y, width=vals, height=0.6,
                                 brushes=brushes, pen=pg.mkPen(None)))
    wh = [(i, b) for i, b in enumerate(bars) if b["lo"] is not None and b["hi"] is not None]
    if wh:
        idx = np.array([i for i, _ in wh], dtype=float)
        mid = np.array([b["value"] for _, b in wh])
        plot.addItem(pg.ErrorBarItem(x=mid, y=idx, left=mid - np.array([b["lo"] for _, b in wh]),
                                     right=np.array([b["hi"] for _, b in wh]) - mid, beam=0.2,
                                     pen=pg.mkPen(palette.MUTED, width=1.2)))
    plot.getAxis("left").setTicks([[(i, b["label"]) for i, b in enumerate(bars)]])
    plot.setLabel("bottom", title)
    plot.addItem(pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen(palette.MUTED)))
    plot.showGrid(x=True, alpha=0.25)
    plot.invertY(True)
    plot.enableAutoRange()
    return None


# columns whose cells never break inside (a version "0.2.\n1", "+66.\n1%", a value "10.6 ms/\ntoken"):
# they get their width; the benchmark, metric and flag wrap at spaces, and the flag (its reasons
# are sentences) is held to a third of the table so the others keep their words whole
WHOLE = (2, 3, 4, 5, 6, 7)
FLAG = 8


def _td(tag: str, col: int, text: str) -> str:
    keep = (" style='white-space:nowrap'" if col in WHOLE else
            " width='30%'" if col == FLAG else "")
    return f"<{tag}{keep}>{html_text(text)}</{tag}>"


def versions_html(versions) -> str:
    """HTML table (reports); regression rows get class 'regression'. When every row is of one
    benchmark, its name is said once above the table instead of in a column: a path without
    spaces ("ps_experiment/naive/0.5") in a column squeezed by the others breaks inside a word."""
    rows = versions_rows(versions)
    benchmarks = {cells[0] for cells, _reg in rows}
    cols = range(1 if len(benchmarks) == 1 else 0, len(HEADERS))
    above = ""
    if len(benchmarks) == 1:
        above = "<p>" + html_text(_("Benchmark: {name}").format(name=next(iter(benchmarks)))) + "</p>"
    head = "".join(_td("th", i, _(HEADERS[i])) for i in cols)
    body = "".join(f"<tr{' class=regression' if reg else ''}>"
                   + "".join(_td("td", i, cells[i]) for i in cols) + "</tr>"
                   for cells, reg in rows)
    return f"{above}<table class='versions'><tr>{head}</tr>{body}</table>"
