"""Decision tree as a node-link drawing on a QGraphicsScene (report JSON `tree`).

Nodes are boxes coloured by error rate (white -> badcase vermillion) with condition, n and
error rate; the riskiest branch (root to the leaf with the highest error rate) is drawn with a
thick outline; the baseline error rate is written above the root."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem

from explorer.core.escape import qt_plain_tip
from explorer.core.names import condition_text
from explorer.widgets import palette

from .common import is_missing, num, share
from explorer.core.i18n import _

NODE_W, NODE_H, GAP_X, GAP_Y = 170, 58, 16, 46
MAX_NODE_W = 230  # wider labels wrap to two lines (name / comparison) instead
PAD = 14


def children(nodes: list[dict]) -> dict:
    """parent id -> [child nodes], 'le' side first."""
    out: dict = {}
    for n in nodes:
        out.setdefault(n.get("parent"), []).append(n)
    for v in out.values():
        v.sort(key=lambda n: 0 if n.get("side") == "le" else 1)
    return out


def riskiest_path(tree: dict) -> list:
    """Node ids from the root to the riskiest leaf (tree['riskiest'] when given, else the leaf
    with the highest error rate, larger n first on ties)."""
    nodes = {n["id"]: n for n in tree.get("nodes") or []}
    leaves = [n for n in nodes.values() if n.get("is_leaf") and not is_missing(n.get("error_rate"))]
    target = tree.get("riskiest_leaf", tree.get("riskiest"))
    if target not in nodes:
        if not leaves:
            return []
        target = max(leaves, key=lambda n: (float(n["error_rate"]), n.get("n") or 0))["id"]
    path = []
    while target in nodes:
        path.append(target)
        target = nodes[target].get("parent")
    return path[::-1]


def condition(node: dict, parent: dict | None) -> str:
    """The edge condition leading to `node`: 'TPOT (ms/token) > 18.3'."""
    if parent is None or is_missing(parent.get("threshold")) or not parent.get("feature"):
        return _("all cases")
    op = "≤" if node.get("side") == "le" else ">"
    return condition_text(parent["feature"], op, float(parent["threshold"]), num)


def node_lines(text: str, fm: QFontMetricsF, max_w: float) -> list[str]:
    """The condition on one line when it fits in max_w, else two: the metric name, then the
    comparison ("scheduling delay" / "≤ 5,670 ms"), and a name still too wide splits before its
    bracket (three lines); elided only if a line still overflows."""
    if fm.horizontalAdvance(text) <= max_w:
        return [text]
    for op in (" ≤ ", " > ", " < "):
        if op in text:
            head, _, tail = text.rpartition(op)
            lines = [head, op.strip() + " " + tail]
            break
    else:
        lines = [text]
    for bracket in ("（", " ("):  # "批大小（batch size）": the glossary's bracket on a line of its own
        if fm.horizontalAdvance(lines[0]) > max_w and bracket in lines[0]:
            name, _, rest = lines[0].partition(bracket)
            lines[:1] = [name, bracket.strip() + rest]
            break
    return [fm.elidedText(ln, Qt.TextElideMode.ElideRight, max_w) for ln in lines]


def node_size(tree: dict, font: QFont | None = None, max_w: float = MAX_NODE_W) -> tuple[float, float, int]:
    """(width, height, condition lines) of every node box: wide enough for the widest
    condition (at most max_w, then two lines)."""
    font = font or QFont()
    fm = QFontMetricsF(font)
    nodes = tree.get("nodes") or []
    byid = {n["id"]: n for n in nodes}
    texts = [condition(n, byid.get(n.get("parent"))) for n in nodes]
    widest = max((fm.horizontalAdvance(t) for t in texts), default=0.0)
    w = min(max(min(NODE_W, max_w), widest + 2 * PAD), max_w)
    lines = max((len(node_lines(t, fm, w - 2 * PAD)) for t in texts), default=1)
    line_h = fm.height()
    h = max(NODE_H, 8 + lines * line_h + 4 + fm.height() + 8)
    return w, h, lines


def layout(tree: dict, size: tuple[float, float] | None = None, horizontal: bool = False) -> dict:
    """node id -> (x, y) top-left, leaves spread left to right, parents centred; horizontal:
    the root on the left, depth to the right, leaves stacked top to bottom (a page's width
    then holds the depth, not the leaves: the print layout).
    size: (node width, node height), default (NODE_W, NODE_H)."""
    node_w, node_h = size or (NODE_W, NODE_H)
    kids = children(tree.get("nodes") or [])
    roots = kids.get(None, [])
    pos: dict = {}
    cursor = [0.0]

    def place(node, depth):
        ch = kids.get(node["id"], [])
        if not ch:
            x = cursor[0]
            cursor[0] += (node_h + GAP_X) if horizontal else (node_w + GAP_X)
        else:
            xs = [place(c, depth + 1) for c in ch]
            x = (xs[0] + xs[-1]) / 2
        pos[node["id"]] = (depth * (node_w + GAP_Y), x) if horizontal else (x, depth * (node_h + GAP_Y))
        return x
    for r in roots:
        place(r, 0)
    return pos


def paint_tree(scene: QGraphicsScene, tree: dict | None, font: QFont | None = None,
               horizontal: bool = False, max_node_w: float = MAX_NODE_W) -> dict:
    """Draw `tree` onto `scene` (cleared first). Returns {node_id: QGraphicsRectItem}; each item
    has data(0) = node id. An empty tree draws nothing and returns {}. horizontal / max_node_w:
    the print layout (depth left to right, conditions on two lines in narrower boxes)."""
    scene.clear()
    tree = tree or {}
    nodes = tree.get("nodes") or []
    if not nodes:
        return {}
    byid = {n["id"]: n for n in nodes}
    font = font or QFont()
    small = QFont(font)
    small.setPointSizeF(max(font.pointSizeF() - 1, 7))
    fm = QFontMetricsF(font)
    node_w, node_h, _gap = node_size(tree, font, max_node_w)
    pos = layout(tree, (node_w, node_h), horizontal)
    risky = set(riskiest_path(tree))
    items = {}
    edge_pen = QPen(QColor(palette.MUTED), 1.2)
    risky_pen = QPen(QColor(palette.BAD), 3)
    for n in nodes:
        p = byid.get(n.get("parent"))
        if p is None or n["id"] not in pos or p["id"] not in pos:
            continue
        (x0, y0), (x1, y1) = pos[p["id"]], pos[n["id"]]
        on = n["id"] in risky and p["id"] in risky
        if horizontal:
            scene.addLine(x0 + node_w, y0 + node_h / 2, x1, y1 + node_h / 2, risky_pen if on else edge_pen)
        else:
            scene.addLine(x0 + node_w / 2, y0 + node_h, x1 + node_w / 2, y1, risky_pen if on else edge_pen)
    for n in nodes:
        if n["id"] not in pos:
            continue
        x, y = pos[n["id"]]
        rect = QGraphicsRectItem(QRectF(x, y, node_w, node_h))
        rect.setBrush(QBrush(palette.error_rate_colour(n.get("error_rate"))))
        rect.setPen(QPen(QColor(palette.BAD if n["id"] in risky else palette.MUTED),
                         3 if n["id"] in risky else 1))
        rect.setData(0, n["id"])
        rect.setCursor(Qt.CursorShape.PointingHandCursor)
        er = n.get("error_rate")
        rect.setToolTip(qt_plain_tip(
            _("node {id}: {parent}\n"
            "n = {n}, error rate = {er}").format(id=n['id'], parent=condition(n, byid.get(n.get('parent'))), n=n.get('n'), er=share(er))
            + (_("\nriskiest branch") if n["id"] in risky else "") + _("\nclick to select these cases")))
        scene.addItem(rect)
        dark = not is_missing(er) and float(er) > 0.6
        lines = [(ln, font) for ln in node_lines(condition(n, byid.get(n.get("parent"))), fm,
                                                  node_w - 2 * PAD)]
        lines.append((_("n={n}  err {er}").format(n=n.get('n', '–'), er=share(er)), small))
        ty = y + (node_h - len(lines[:-1]) * fm.height() - QFontMetricsF(small).height() - 4) / 2
        for i, (text, f) in enumerate(lines):
            t = QGraphicsSimpleTextItem(text, rect)
            t.setFont(f)
            t.setBrush(QColor("white" if dark else palette.TEXT))
            w = t.boundingRect().width()
            t.setPos(x + (node_w - w) / 2, ty)
            ty += QFontMetricsF(f).height() + (4 if i == len(lines) - 2 else 0)
        items[n["id"]] = rect
    base = tree.get("baseline_error_rate")
    depth = tree.get("max_depth")
    cap = QGraphicsSimpleTextItem(_("baseline error rate {base}   max_depth {x}"
                                  "   ▮ riskiest branch (thick outline)").format(base=share(base), x=depth if depth is not None else '–'))
    cap.setFont(small)
    cap.setBrush(QColor(palette.MUTED))
    cap.setPos(0, -24)
    scene.addItem(cap)
    return items


def tree_tsv(tree: dict | None) -> str:
    """The tree as TSV, one node a row (the full condition, never elided): node, parent,
    condition, cases, badcases, error rate, leaf."""
    nodes = (tree or {}).get("nodes") or []
    byid = {n["id"]: n for n in nodes}
    lines = [_("node\tparent\tcondition\tcases\tbadcases\terror rate\tleaf")]
    for n in nodes:
        rate = n.get("error_rate")
        lines.append("\t".join(str(x) for x in (
            n["id"], "" if n.get("parent") is None else n["parent"],
            condition(n, byid.get(n.get("parent"))), n.get("n", ""), n.get("n_bad", ""),
            "" if rate is None else f"{rate:.4f}", "yes" if n.get("is_leaf") else "no")))
    return "\n".join(lines)
