"""Decision tree as a node-link drawing on a QGraphicsScene (report JSON `tree`).

Nodes are boxes coloured by error rate (white -> badcase vermillion) with condition, n and
error rate; the riskiest branch (root to the leaf with the highest error rate) is drawn with a
thick outline; the baseline error rate is written above the root."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem

from widgets import palette

from .common import is_missing, label, num, share

NODE_W, NODE_H, GAP_X, GAP_Y = 170, 58, 16, 46


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
        return "all cases"
    op = "≤" if node.get("side") == "le" else ">"
    f = parent["feature"]
    return f"{label(f, False)} {op} {num(parent['threshold'], f)}"


def layout(tree: dict) -> dict:
    """node id -> (x, y) top-left, leaves spread left to right, parents centred."""
    kids = children(tree.get("nodes") or [])
    roots = kids.get(None, [])
    pos: dict = {}
    cursor = [0.0]

    def place(node, depth):
        ch = kids.get(node["id"], [])
        if not ch:
            x = cursor[0]
            cursor[0] += NODE_W + GAP_X
        else:
            xs = [place(c, depth + 1) for c in ch]
            x = (xs[0] + xs[-1]) / 2
        pos[node["id"]] = (x, depth * (NODE_H + GAP_Y))
        return x
    for r in roots:
        place(r, 0)
    return pos


def paint_tree(scene: QGraphicsScene, tree: dict | None, font: QFont | None = None) -> dict:
    """Draw `tree` onto `scene` (cleared first). Returns {node_id: QGraphicsRectItem}; each item
    has data(0) = node id. An empty tree draws nothing and returns {}."""
    scene.clear()
    tree = tree or {}
    nodes = tree.get("nodes") or []
    if not nodes:
        return {}
    byid = {n["id"]: n for n in nodes}
    pos = layout(tree)
    risky = set(riskiest_path(tree))
    font = font or QFont()
    small = QFont(font)
    small.setPointSizeF(max(font.pointSizeF() - 1, 7))
    items = {}
    edge_pen = QPen(QColor(palette.MUTED), 1.2)
    risky_pen = QPen(QColor(palette.BAD), 3)
    for n in nodes:
        p = byid.get(n.get("parent"))
        if p is None or n["id"] not in pos or p["id"] not in pos:
            continue
        (x0, y0), (x1, y1) = pos[p["id"]], pos[n["id"]]
        on = n["id"] in risky and p["id"] in risky
        scene.addLine(x0 + NODE_W / 2, y0 + NODE_H, x1 + NODE_W / 2, y1, risky_pen if on else edge_pen)
    for n in nodes:
        if n["id"] not in pos:
            continue
        x, y = pos[n["id"]]
        rect = QGraphicsRectItem(QRectF(x, y, NODE_W, NODE_H))
        rect.setBrush(QBrush(palette.error_rate_colour(n.get("error_rate"))))
        rect.setPen(QPen(QColor(palette.BAD if n["id"] in risky else palette.MUTED),
                         3 if n["id"] in risky else 1))
        rect.setData(0, n["id"])
        rect.setCursor(Qt.CursorShape.PointingHandCursor)
        er = n.get("error_rate")
        rect.setToolTip(f"node {n['id']}: {condition(n, byid.get(n.get('parent')))}\n"
                        f"n = {n.get('n')}, error rate = {share(er)}"
                        + ("\nriskiest branch" if n["id"] in risky else "") + "\nclick to select these cases")
        scene.addItem(rect)
        dark = not is_missing(er) and float(er) > 0.6
        for i, (text, f) in enumerate(((condition(n, byid.get(n.get("parent"))), font),
                                       (f"n={n.get('n', '–')}  err {share(er)}", small))):
            t = QGraphicsSimpleTextItem(_elide(text, 24), rect)
            t.setFont(f)
            t.setBrush(QColor("white" if dark else palette.TEXT))
            w = t.boundingRect().width()
            t.setPos(x + (NODE_W - w) / 2, y + 8 + i * 22)
        items[n["id"]] = rect
    base = tree.get("baseline_error_rate")
    depth = tree.get("max_depth")
    cap = QGraphicsSimpleTextItem(f"baseline error rate {share(base)}   max_depth {depth if depth is not None else '–'}"
                                  "   ▮ riskiest branch (thick outline)")
    cap.setFont(small)
    cap.setBrush(QColor(palette.MUTED))
    cap.setPos(0, -24)
    scene.addItem(cap)
    return items


def _elide(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
