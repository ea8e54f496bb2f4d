"""What-if painters (report JSON `whatif`: treatment, outcome, common_causes, estimate, ci_low,
ci_high, refutations [{name, label, new_effect, p_value, verdict, why}], scenario {set,
predicted_outcome, ci_low, ci_high}, observed_outcome, assumptions, warnings, n, n_selected):
the causal graph drawn on a QGraphicsScene, the observed-vs-predicted interval on a pyqtgraph
plot, and the headline / refutation rows as text. Used by widgets/whatif.py and the reports."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsScene

from explorer.core.fmt import by_spec
from explorer.core.escape import qt_plain_tip
from explorer.widgets import palette

from .common import interval, is_missing, label, num
from explorer.core.i18n import _

NODE_W, NODE_H, GAP_X, GAP_Y = 128.0, 30.0, 14.0, 46.0


def outcome_name(outcome: str | None) -> str:
    """'error rate' for badcase, 'SLA attainment' for sla_met, else the metric's label."""
    if outcome == "badcase":
        return _("error rate")
    if outcome == "sla_met":
        return _("SLA attainment")
    return label(outcome or "outcome")


def _metric(outcome: str | None) -> str | None:
    """The metric an outcome's values read as (num); None for the error rate and SLA
    attainment, which read with 2 decimals."""
    return None if outcome in ("badcase", "sla_met") else outcome


def _val(v: Any, outcome: str | None) -> str:
    if _metric(outcome) is None:
        return "–" if is_missing(v) else by_spec(float(v), '.2f')
    return num(v, outcome)


def headline(w: dict | None) -> str:
    """'error rate of the 23 cases in the scenario: 1.00 observed -> 0.62 predicted (95% CI 0.55 to
    0.70) with KV-cache hit rate = 0.67'; '' without a scenario."""
    w = w or {}
    sc = w.get("scenario") or {}
    if not sc:
        return ""
    out = w.get("outcome")
    what = ", ".join(f"{label(k, False)} = {num(v, k)}" for k, v in (sc.get("set") or {}).items())
    n = w.get("n_selected")
    who = (_(" of the {n:,} case{x} in the scenario").format(n=int(n), x='s' if int(n) != 1 else '')
           if not is_missing(n) else "")
    ci = _("95% CI {interval}").format(interval=interval(
        sc.get("ci_low"), sc.get("ci_high"), metric=_metric(out)))   # never "0.37 to 0.37"
    return (_("{out}{who}: {observed_outcome} observed → "
            "{predicted_outcome} predicted ({ci}) with {what}").format(
                    out=outcome_name(out), who=who,
                    observed_outcome=_val(w.get('observed_outcome'), out),
                    predicted_outcome=_val(sc.get('predicted_outcome'), out), ci=ci, what=what))


def signed(v) -> str:
    """An effect with its sign ("+0.12", "-0.3"); an exact zero is "0" (an interval end of
    exactly 0 is a bound of the model, e.g. cases that all failed cannot fail more, not a clip
    of "+0"); "–" when missing."""
    if is_missing(v):
        return "–"
    return "0" if float(v) == 0 else by_spec(float(v), '+.3g')


def effect_line(w: dict | None) -> str:
    """'effect -0.38 (95% CI -0.45 to -0.30), adjusted for prompt tokens, batch size'."""
    w = w or {}
    if is_missing(w.get("estimate")):
        return ""
    f = signed
    adj = ", ".join(label(c, False) for c in w.get("common_causes") or []) or _("nothing")
    return (_("effect on {outcome}: {estimate} (95% CI "
            "{ci_low} to {ci_high}); adjusted for {adj}").format(
                    outcome=outcome_name(w.get('outcome')), estimate=f(w.get('estimate')),
                    ci_low=f(w.get('ci_low')), ci_high=f(w.get('ci_high')), adj=adj))


def refutation_rows(w: dict | None) -> list[tuple[str, str, str, str]]:
    """(refuter, new effect, verdict, why) per refutation."""
    rows = []
    for r in (w or {}).get("refutations") or []:
        if not isinstance(r, dict):
            continue
        ne = r.get("new_effect")
        rows.append((str(r.get("label") or r.get("name") or ""),
                     signed(ne),
                     str(r.get("verdict") or "–"), str(r.get("why") or "")))
    return rows


def summary(w: dict | None) -> str:
    """Plain text of the whole result (Edit > Copy, the report's alt text)."""
    w = w or {}
    lines = [headline(w), effect_line(w)]
    lines += [f"{a}: {b} – {c} ({d})" for a, b, c, d in refutation_rows(w)]
    lines += [_("Assumes: {a}").format(a=a) for a in w.get("assumptions") or []]
    lines += [_("Note: {x}").format(x=x) for x in w.get("warnings") or []]
    return "\n".join(x for x in lines if x)


def paint_interval(plot: pg.PlotItem, w: dict | None) -> str | None:
    """Observed and predicted outcome of the selected cases, the prediction with its interval,
    as two horizontal bars. Returns a message instead when there is nothing to draw."""
    plot.clear()
    w = w or {}
    sc = w.get("scenario") or {}
    obs, pred = w.get("observed_outcome"), sc.get("predicted_outcome")
    if is_missing(obs) or is_missing(pred):
        return _("no scenario result")
    lo, hi = sc.get("ci_low"), sc.get("ci_high")
    plot.hideAxis("left")
    plot.showGrid(x=True, y=False, alpha=0.3)
    plot.setLabel("bottom", outcome_name(w.get("outcome")))
    ys = [1.0, 0.0]
    for y, v, colour in ((ys[0], float(obs), palette.BAD), (ys[1], float(pred), palette.ACCENT)):
        plot.addItem(pg.BarGraphItem(x0=[0], y=[y], height=0.5, width=[v],
                                     brush=palette.qcolor(colour, 170), pen=pg.mkPen(colour)))
    if not (is_missing(lo) or is_missing(hi)):
        # numpy arrays: ErrorBarItem given lists crashes pyqtgraph 0.14 when it paints
        plot.addItem(pg.ErrorBarItem(x=np.array([float(pred)]), y=np.array([ys[1]]),
                                     left=np.array([float(pred) - float(lo)]),
                                     right=np.array([float(hi) - float(pred)]), beam=0.2,
                                     pen=pg.mkPen(palette.TEXT, width=2)))
    for y, text in ((ys[0], _("observed {outcome}").format(outcome=_val(obs, w.get('outcome')))),
                    (ys[1], _("predicted {outcome}").format(outcome=_val(pred, w.get('outcome'))))):
        t = pg.TextItem(text, color=palette.TEXT, anchor=(0, 0.5))
        t.setPos(0, y + 0.42)
        plot.addItem(t)
    xs = [0.0, float(obs), float(pred)] + [float(x) for x in (lo, hi) if not is_missing(x)]
    plot.setXRange(min(xs), max(xs) * 1.05 if max(xs) > 0 else 1.0)
    plot.setYRange(-0.5, 1.9)
    return None


# ---- the causal graph ----------------------------------------------------------------------------

def graph_layout(nodes, edges) -> dict[str, tuple[float, float]]:
    """Layered top-to-bottom layout: a node's row is the length of the longest path reaching
    it; nodes of a row are placed in order of their parents' mean position (fewer crossings),
    each row centred. Returns {node: (x, y)} of the node's top-left corner, in scene units."""
    parents: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        parents.setdefault(b, []).append(a)
        parents.setdefault(a, [])
    layer: dict[str, int] = {}

    def depth(n, seen=()):
        if n not in layer:
            layer[n] = 0 if not parents[n] or n in seen else \
                1 + max(depth(p, seen + (n,)) for p in parents[n])
        return layer[n]
    for n in parents:
        depth(n)
    cols: dict[int, list[str]] = {}
    for n in parents:
        cols.setdefault(layer[n], []).append(n)
    row: dict[str, float] = {}
    pos = {}
    for c in sorted(cols):
        members = cols[c]
        if c:
            members.sort(key=lambda n: (sum(row[p] for p in parents[n]) / len(parents[n]))
                         if parents[n] else 0.0)
        off = -(len(members) - 1) / 2          # centre the row on x = 0
        for i, n in enumerate(members):
            row[n] = i + off
            pos[n] = ((i + off) * (NODE_W + GAP_X), c * (NODE_H + GAP_Y))
    return pos


def _arrow(scene: QGraphicsScene, a: QPointF, b: QPointF, pen: QPen) -> None:
    path = QPainterPath(a)
    dy = (b.y() - a.y()) / 2
    path.cubicTo(QPointF(a.x(), a.y() + dy), QPointF(b.x(), b.y() - dy), b)
    scene.addPath(path, pen)
    size = 8.0   # the curve ends vertically (its last control point is straight above b)
    p1 = QPointF(b.x() - size * math.sin(0.45), b.y() - size * math.cos(0.45))
    p2 = QPointF(b.x() + size * math.sin(0.45), b.y() - size * math.cos(0.45))
    solid = QPen(pen)
    solid.setStyle(Qt.PenStyle.SolidLine)
    scene.addPolygon(QPolygonF([b, p1, p2]), solid, QBrush(pen.color()))


def paint_graph(scene: QGraphicsScene, nodes, edges, latent=(), unobserved=(),
                treatment: str | None = None, outcome: str | None = None,
                adjust=()) -> dict[str, Any]:
    """Draw a causal graph: boxes per node (treatment in the selection colour, outcome in the
    badcase colour, the adjustment set outlined in green, latent / unobserved nodes dashed and
    grey), curved arrows per edge. Returns {node: rect item}."""
    scene.clear()
    pos = graph_layout(list(nodes), list(edges))
    latent, unobserved, adjust = set(latent), set(unobserved), set(adjust)
    font = QFont()
    font.setPointSizeF(8.5)
    edge_pen = QPen(QColor(palette.MUTED), 1.3)
    items = {}
    for a, b in edges:
        if a in pos and b in pos:
            ax, ay = pos[a]
            bx, by = pos[b]
            strong = (a == treatment and b == outcome)
            pen = QPen(QColor(palette.SELECTED if strong else palette.MUTED), 2.4 if strong else 1.3)
            if a in latent | unobserved:
                pen.setStyle(Qt.PenStyle.DashLine)
            if by > ay:
                _arrow(scene, QPointF(ax + NODE_W / 2, ay + NODE_H), QPointF(bx + NODE_W / 2, by), pen)
            else:  # same row (cannot happen in a layered DAG): straight line
                scene.addLine(ax + NODE_W, ay + NODE_H / 2, bx, by + NODE_H / 2, edge_pen)
    for n, (x, y) in pos.items():
        hidden = n in latent or n in unobserved
        fill = QColor(palette.BACKGROUND)
        border = QColor(palette.NEUTRAL if hidden else palette.TEXT)
        width = 1.2
        if n == treatment:
            fill, border, width = palette.qcolor(palette.SELECTED, 60), QColor(palette.SELECTED), 2.5
        elif n == outcome:
            fill, border, width = palette.qcolor(palette.BAD, 50), QColor(palette.BAD), 2.5
        elif n in adjust:
            fill, border, width = palette.qcolor(palette.ACCENT, 35), QColor(palette.ACCENT), 2.0
        pen = QPen(border, width)
        if hidden:
            pen.setStyle(Qt.PenStyle.DashLine)
        rect = scene.addRect(QRectF(x, y, NODE_W, NODE_H), pen, QBrush(fill))
        rect.setData(0, n)
        rect.setToolTip(qt_plain_tip(n + (_(" (not observed)") if hidden else "")))
        text = scene.addSimpleText({"badcase": "badcase", "sla_met": _("SLA met")}.get(n, label(n, False)), font)
        text.setBrush(QColor(palette.MUTED if hidden else palette.TEXT))
        br = text.boundingRect()
        text.setPos(x + (NODE_W - br.width()) / 2, y + (NODE_H - br.height()) / 2)
        items[n] = rect
    return items
