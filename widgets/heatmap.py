"""Heatmap: x bins x y bins, each cell the mean of a value metric (default TPOT x batch-size
entropy -> scheduling delay), colour bar, metric pickers, hover tooltip with the cell's n and
value; clicking a cell selects its requests: the cell is outlined and its requests are listed
under the map (double-click one to open it in the Timeline panel)."""
from __future__ import annotations

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QGraphicsRectItem, QHeaderView, QLabel,
                               QSplitter, QTableView, QToolTip, QVBoxLayout, QWidget)

from explorer.core.fmt import by_spec
from explorer.core import bus
from explorer.core.analysis.heatmap import DEFAULTS
from explorer.core.analysis.heatmap import WINDOW_METRICS as CHOICES  # the metrics it accepts
from explorer.core.escape import qt_plain_tip
from explorer.core.names import plural
from explorer.widgets import palette
from explorer.widgets.base import Panel
from explorer.widgets.painters.common import label, num
from explorer.widgets.painters.heatmap import (cell_at, cell_text, heatmap_tsv, paint_heatmap,
                                               share_view)
from explorer.widgets.tablemodel import KEY_ROLE, RowsModel, sortable
from explorer.core.i18n import N_, _, ngettext

REQUEST_HEADERS = (N_("run"), N_("request"), "TTFT", "TPOT",
                   N_("scheduling delay"), "E2E", N_("preemptions"),
                   N_("KV-cache hit rate"))
REQUEST_METRICS = ("ttft_ms", "tpot_ms", "queue_ms", "e2e_ms", "num_preemptions", "kv_cache_hit_rate")


class HeatmapPanel(Panel):
    topic = bus.SECTION["heatmap"]
    chart = True

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.boxes = {}
        top = self.top
        self.colour = QComboBox()  # colour by the mean value metric or by the badcase share
        self.colour.addItem(_("colour = mean of"), "mean")
        self.colour.addItem(_("colour = badcase share"), "share")
        self.colour.setToolTip(_("Colour each cell by the mean of a metric, or by the share "
                                 "of badcases among the cohort's cases whose requests fall in it"))
        self.colour.currentIndexChanged.connect(lambda _i: self._repaint())
        self.selection: dict | None = None
        self.occupied: list = []  # outlines of the cells the selection's requests fall in
        for name, text in (("x_metric", _("x")), ("y_metric", _("y")),
                           ("value_metric", None)):
            box = QComboBox()
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(8)
            for m in CHOICES:
                box.addItem(label(m), m)
            box.activated.connect(lambda _i, n=name, b=box: session.set_params("heatmap", **{n: b.currentData()}))
            top.addWidget(QLabel(text) if text else self.colour)
            top.addWidget(box, 1)
            self.boxes[name] = box
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.plot = self.glw.addPlot()
        self.plot.setMenuEnabled(False)
        self.glw.scene().sigMouseMoved.connect(self._hover)
        self.glw.scene().sigMouseClicked.connect(self._click)
        self.hint = QLabel(_("hover a cell for its n and value; click it to select its requests"))
        self.hint.setObjectName("muted")
        self.outline: QGraphicsRectItem | None = None
        # the selected cell's requests: double-click one to open it in the Timeline panel
        self.req_model = RowsModel([_(h) for h in REQUEST_HEADERS], self)
        self.req_view = QTableView()
        self.req_view.setModel(sortable(self.req_model, self))
        self.req_view.setSortingEnabled(True)
        self.req_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.req_view.verticalHeader().hide()
        self.req_view.verticalHeader().setDefaultSectionSize(20)
        self.req_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.req_view.doubleClicked.connect(self._open_request)
        self.req_caption = QLabel()
        self.req_caption.setObjectName("muted")
        self.req_caption.setWordWrap(True)
        self.req_box = QWidget()
        rl = QVBoxLayout(self.req_box)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.req_caption)
        rl.addWidget(self.req_view, 1)
        self.req_box.hide()
        split = self.split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.glw)
        split.addWidget(self.req_box)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split, 1)
        lay.addWidget(self.hint)
        session.selectionChanged.connect(self._mark_cell)
        session.selectionChanged.connect(self._follow_period)

    def show_result(self, value) -> None:
        # the pickers show the metrics asked for, also when the result is a "no data" reason
        self._set_pickers(value if isinstance(value, dict) else {})
        if isinstance(value, dict) and value.get("status") == "no_data" and "reason" in value:
            value = {**value, "reason": str(value["reason"]) + "\n"
                     + _("Choose metrics the loaded traces record above (e.g. TPOT and TTFT).")}
        super().show_result(value)

    def _set_pickers(self, hm: dict) -> None:
        asked = {**DEFAULTS, **(self.session.params.get("heatmap") or {})}
        for name, box in self.boxes.items():
            m = hm.get(name) or asked.get(name)
            if m and box.findData(m) < 0:
                box.addItem(label(m), m)
            if m:
                box.setCurrentIndex(box.findData(m))

    def shown(self) -> dict:
        """The heatmap as painted: by mean value, or by badcase share (painters.heatmap)."""
        hm = self.value if isinstance(self.value, dict) else {}
        return share_view(hm) if self.colour.currentData() == "share" and hm else hm

    def _repaint(self) -> None:
        if self.value is not None:
            self.show_result(self.value)

    def paint(self, hm) -> str | None:
        hm = self.shown() if hm else {}
        self.boxes["value_metric"].setEnabled(self.colour.currentData() != "share")
        self.outline = None  # plot.clear() in paint_heatmap removes it
        self.occupied = []
        msg = paint_heatmap(self.plot, hm)
        if msg is None:
            self._mark_cell()
            self._mark_selection()
        if msg:
            return msg + "\n" + _("Choose other metrics above.")
        if msg is None:
            facts = _("{level} level, n = {n}").format(level=_("window") if hm.get("level") == "window" else _("request"),
                                                       n="–" if hm.get("n_items") is None else by_spec(int(hm['n_items']), ','))
            if hm.get("periods"):
                facts += " · " + ngettext("restricted to {n} violation period", "restricted to {n} violation periods",
                                          len(hm["periods"])).format(n=len(hm["periods"]))
            self.hint.setText(facts if self._print else _(
                "{facts} · hover a cell for its counts and value; click it to select its requests").format(
                        facts=facts))
        return msg

    _print = False

    def set_print_layout(self, on: bool) -> None:
        """A report's picture: the caption says what the cells hold, not where to click."""
        self._print = on

    def on_results(self, update: bus.Update) -> None:
        super().on_results(update)
        if bus.SELECTED_REQUESTS in update:
            self._list_requests(update[bus.SELECTED_REQUESTS])

    def show_selection(self, selection: dict | None) -> None:
        self.selection = selection
        if isinstance(self.value, dict) and self.message() is None:
            self._mark_selection()

    def selected_cells(self) -> list:
        """[[ix, iy, n, n_bad], ...]: the cells the selection's cases fall in."""
        return list(((self.selection or {}).get("heatmap") or {}).get("cells") or [])

    def _mark_selection(self) -> None:
        """Outline every cell the selection occupies (dashed) with its number of selected cases."""
        for item in self.occupied:
            self.plot.removeItem(item)
        self.occupied = []
        hm = self.value if isinstance(self.value, dict) else {}
        xe, ye = hm.get("x_edges") or [], hm.get("y_edges") or []
        pen = pg.mkPen(palette.SELECTED, width=2, style=Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        for ix, iy, n, nb in self.selected_cells():
            if not (0 <= ix < len(xe) - 1 and 0 <= iy < len(ye) - 1):
                continue
            box = QGraphicsRectItem(QRectF(xe[ix], ye[iy], xe[ix + 1] - xe[ix], ye[iy + 1] - ye[iy]))
            box.setPen(pen)
            box.setZValue(15)
            box.setToolTip(_("Selected here: {cases}, {badcases}").format(
                    cases=plural(n, "case"), badcases=plural(nb, "badcase")))
            text = pg.TextItem(by_spec(n, ','), color=palette.TEXT, anchor=(0.5, 0.5), fill=pg.mkBrush(255, 255, 255, 200))
            text.setPos((xe[ix] + xe[ix + 1]) / 2, (ye[iy] + ye[iy + 1]) / 2)
            text.setZValue(16)
            for item in (box, text):
                self.plot.addItem(item, ignoreBounds=True)
                self.occupied.append(item)

    def _follow_period(self) -> None:
        """A violation period selected in the SLA panel (source ("sla_period", run, start, end))
        restricts the heatmap to it (param `periods`); a selection made elsewhere, or none,
        lifts it (a cell of the restricted heatmap keeps it)."""
        src = self.session.selection_source
        now = (self.session.params.get("heatmap") or {}).get("periods")
        if src and src[0] == "sla_period" and len(src) >= 4:
            want = [{"run_id": str(src[1]), "start_s": float(src[2]), "end_s": float(src[3])}]
        elif src and src[0] == "heatmap":
            return
        else:
            want = None
        if want != now:
            self.session.set_params("heatmap", periods=want)

    def _mark_cell(self) -> None:
        """Outline the selected cell (Session.selection_source ("heatmap", ix, iy)), if any."""
        src = self.session.selection_source
        hm = self.value if isinstance(self.value, dict) else {}
        xe, ye = hm.get("x_edges") or [], hm.get("y_edges") or []
        cell = src[1:] if src and src[0] == "heatmap" else None
        if cell is None or not (0 <= cell[0] < len(xe) - 1 and 0 <= cell[1] < len(ye) - 1):
            if self.outline is not None:
                self.outline.hide()
            if cell is None:
                self.req_box.hide()
            return
        ix, iy = cell
        rect = QRectF(xe[ix], ye[iy], xe[ix + 1] - xe[ix], ye[iy + 1] - ye[iy])
        if self.outline is None:
            self.outline = QGraphicsRectItem()
            pen = pg.mkPen(palette.SELECTED, width=3)
            pen.setCosmetic(True)
            self.outline.setPen(pen)
            self.outline.setZValue(20)
            self.plot.addItem(self.outline, ignoreBounds=True)
        self.outline.setRect(rect)
        self.outline.setToolTip(qt_plain_tip(cell_text(hm, ix, iy)))
        self.outline.show()

    def _list_requests(self, df) -> None:
        s = self.session
        if not isinstance(df, pd.DataFrame) or s.selection_source is None \
                or s.selection_source[0] != "heatmap":
            self.req_box.hide()
            return
        total = s.selected_requests if s.selected_requests is not None else len(df)
        ncases = len(s.selected_cases or ())
        rows, sort, keys = [], [], []
        for r in df.itertuples(index=False):
            rows.append([str(r.run_id), str(r.request_id)] + [num(getattr(r, m), m) for m in REQUEST_METRICS])
            sort.append([str(r.run_id), str(r.request_id)]
                        + [float("-inf") if pd.isna(getattr(r, m)) else float(getattr(r, m)) for m in REQUEST_METRICS])
            keys.append((str(r.run_id), str(r.request_id)))
        self.req_model.set_rows(rows, sort, keys)
        shown = "" if len(df) >= total else _(" (first {n} listed)").format(
                n=by_spec(len(df), ','))
        bound = (_("bound to {cases} of this cohort").format(cases=plural(ncases, "case"))
                 if ncases else _("none bound to a case of this cohort"))
        self.req_caption.setText(_("{requests} in {selection}{listed}, {bound} · double-click one to open its timeline").format(
                requests=plural(total, "request"), selection=s.selection_label, listed=shown,
                bound=bound))
        if not self.req_box.isVisibleTo(self):
            self.req_box.setVisible(True)
            h = max(self.split.height(), 300)
            self.split.setSizes([int(h * 0.6), h - int(h * 0.6)])  # the list gets room for rows

    def _open_request(self, index) -> None:
        key = index.siblingAtColumn(0).data(KEY_ROLE) if index.isValid() else None
        if key:
            self.session.open_request(*key)

    def _data_pos(self, scene_pos: QPointF):
        if not isinstance(self.value, dict) or not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.plot.getViewBox().mapSceneToView(scene_pos)
        return cell_at(self.value, p.x(), p.y())

    def _hover(self, scene_pos) -> None:
        cell = self._data_pos(scene_pos)
        if cell is None:
            QToolTip.hideText()
            return
        gp = self.glw.mapToGlobal(self.glw.mapFromScene(scene_pos))
        QToolTip.showText(gp, cell_text(self.shown(), *cell), self.glw)

    def _click(self, ev) -> None:
        cell = self._data_pos(ev.scenePos())
        if cell is not None:
            self.session.select_heatmap_cell(*cell)

    def copy_text(self) -> str:
        """Every cell with data as TSV (as coloured), then the selection's cells."""
        if not isinstance(self.value, dict) or self.message() is not None:
            return super().copy_text()
        text = heatmap_tsv(self.shown())
        cells = self.selected_cells()
        if cells:
            text += "\n\n" + _("{selection}: cells it occupies").format(
                    selection=self.selection_name()) + \
                "\nx cell\ty cell\tselected cases\tselected badcases\n" + \
                "\n".join("\t".join(str(v) for v in c) for c in cells)
        return text

    def cell_scene_pos(self, ix: int, iy: int) -> QPointF:
        """Scene position of the centre of cell (ix, iy) (tests)."""
        xe, ye = self.value["x_edges"], self.value["y_edges"]
        return self.plot.getViewBox().mapViewToScene(QPointF((xe[ix] + xe[ix + 1]) / 2,
                                                             (ye[iy] + ye[iy + 1]) / 2))
