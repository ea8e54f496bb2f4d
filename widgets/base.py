"""Base of every panel: subscribes to the Session, shows either its content or a plain message
saying why there is nothing to show (nothing loaded, no data for this analysis, an error), and
never lets an exception in painting escape (it is shown inside the panel instead)."""
from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QMimeData, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QStackedWidget, QVBoxLayout, QWidget

from explorer.core import bus
from explorer.core.bus import Failure
from explorer.widgets import palette
from explorer.widgets.flow import FlowLayout
from explorer.core.i18n import _

log = logging.getLogger(__name__)


class JobControls:
    """For panels that run long jobs of their own (replay, what-if): they own a QProgressBar
    `progress` and a Cancel button `cancel_button`; connect the busy and idle signals of their
    Session.panel_jobs to _busy and _idle."""

    def _busy(self, _label: str, done: int, total: int) -> None:
        self.progress.setVisible(True)
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(done)

    def _idle(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)


class SelectionLine:
    """For panels that state the selection's own figure in one coloured line above their content
    (SLA, Versions): make the line with _selection_line() and say what it reads in
    selection_text() ('' hides it)."""

    def _selection_line(self) -> QLabel:
        self.selection: dict | None = None
        self.sel_label = QLabel()
        self.sel_label.setWordWrap(True)
        self.sel_label.setStyleSheet(f"color: {palette.SELECTED}; font-weight: 600;")
        self.sel_label.hide()
        return self.sel_label

    def show_selection(self, selection: dict | None) -> None:
        self.selection = selection
        text = self.selection_text()
        self.sel_label.setText(text)
        self.sel_label.setVisible(bool(text))

    def selection_text(self) -> str:
        return ""


def off_screen(widget: QWidget) -> bool:
    """True for a widget of a shown window that nobody sees: a tab behind another (Qt keeps
    those 'visible', off screen) or a closed dock. A widget on its own (a report's picture,
    a test) or in a window not shown yet is not off screen: it paints at once."""
    win = QWidget.window(widget)  # not widget.window(): a panel may name a child `window`
    return win is not widget and win.isVisible() and widget.visibleRegion().isEmpty()


def watch_dock(widget: QWidget, slot) -> bool:
    """Connect slot(visible) to the visibilityChanged of the dock holding `widget` (a tab
    brought to front is not shown again: its dock says so). False when it has no dock yet."""
    dock = widget.parentWidget()
    while dock is not None and not hasattr(dock, "visibilityChanged"):
        dock = dock.parentWidget()
    if dock is None:
        return False
    dock.visibilityChanged.connect(slot)
    return True


class Panel(QWidget):
    """A dockable view of one topic of the results bus (explorer/core/bus.py).

    Subclasses set `topic` (bus.SECTION[key] for a section of the registry, or a view such as
    bus.FRAME) and implement paint(value) -> None | str (a str is a message shown instead of
    the content, e.g. "no value of TPOT in this cohort"); value is what the bus carries as a
    panel paints it (bus.view: a section's report-JSON view)."""

    topic: bus.Topic | None = None
    chart = False  # draws a figure: Ctrl+C copies its picture beside its data
    wrap_controls = False  # a row of controls too long for a laptop's panel wraps to a 2nd line

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.value: Any = None
        self.stale = False  # a result arrived while off screen: painted when shown
        self._lazy_hooked = False
        self._stack = QStackedWidget(self)
        self.body = QWidget()
        self._msg = QLabel(_("Nothing loaded yet.\nDrop eval and trace files or folders on the "
                             "window, or use File > Open files… (Ctrl+O)."))
        self._msg.setObjectName("panelMessage")
        self._msg.setTextFormat(Qt.TextFormat.PlainText)  # messages quote file names and values
        self._msg_error = False
        self._msg.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._msg.setWordWrap(True)
        self._msg.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._stack.addWidget(self._msg)
        self._stack.addWidget(self.body)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        # controls that stay visible when a message is shown; a long row wraps (wrap_controls)
        self.top = FlowLayout() if self.wrap_controls else QHBoxLayout()
        self.top.setContentsMargins(4, 2, 4, 0)
        lay.addLayout(self.top)
        lay.addWidget(self._stack)
        for text, slot in ((_("Copy as image"), self.copy_image),
                           (_("Save image…"), self.save_image)):
            a = QAction(text, self)
            a.triggered.connect(slot)
            self.addAction(a)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        session.resultsChanged.connect(self.on_results)

    key = ""  # the topic's name (a section's key), derived: Session.ask / computing, file names

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        cls.key = cls.topic.name if cls.topic is not None else ""

    # -- data in ----------------------------------------------------------------------------
    def on_results(self, update: bus.Update) -> None:
        if self.topic is not None and self.topic in update:
            self.show_result(update[self.topic])
        if bus.SELECTION in update:
            sel = update[bus.SELECTION]
            self.show_selection(sel if isinstance(sel, dict) else None)

    def show_selection(self, selection: dict | None) -> None:
        """The current selection's analysis (Session "selection" payload), None when nothing
        is selected: panels that recompute or locate the selection override this."""

    def selection_name(self) -> str:
        """'tree node 3' / 'heatmap cell (2, 5)': what is selected and in which view."""
        return self.session.selection_label or _("the selection")

    def show_result(self, value: Any) -> None:
        """Paint `value` (a report-JSON section, a Failure, or None) or say why not. When
        painting raised, the message says so in place and paint_error keeps the exception
        (the report renderer leaves such a picture out and says why). A panel of a shown
        window that is off screen (a tab behind another, a closed dock) only keeps the value:
        it paints when shown, or when ensure_painted() is called. A bus.Published is painted
        by its view (the report-JSON form)."""
        self.value = bus.view(value)
        self.paint_error = None
        self.stale = self.off_screen()
        if not self.stale:
            self._ask()
            self._paint_value()

    def _ask(self) -> None:
        """A section the session deferred (its tab was behind another) is computed now
        (Session.ask; it does nothing for one computed or being computed)."""
        ask = getattr(self.session, "ask", None)
        if self.key and ask is not None:
            ask(self.key)

    def off_screen(self) -> bool:
        """True for a panel of a shown window that nobody sees (off_screen)."""
        return off_screen(self)

    def ensure_painted(self) -> None:
        """Paint the value now if it arrived while off screen: call before reading the content
        of a panel that may not have been shown (Copy, report pictures, tests). A section the
        session deferred is asked for (Session.ask): it arrives, and paints, when computed."""
        self._ask()
        if self.stale:
            self.stale = False
            self._paint_value()

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        if not self._lazy_hooked:
            self._lazy_hooked = watch_dock(self, self._dock_visible)
        # after the layout places it: a tab behind another stays off screen
        QTimer.singleShot(0, self._dock_visible)

    def _dock_visible(self, visible: bool | None = None) -> None:
        """The dock's visibilityChanged (its tab came to front), or a check after showEvent."""
        if visible if visible is not None else not self.off_screen():
            self.ensure_painted()

    def _paint_value(self) -> None:
        """show_result's painting of self.value."""
        value = self.value
        for i in range(self.top.count()):  # controls make sense once something is loaded
            w = self.top.itemAt(i).widget()
            if w is not None and not (w.property("busyOnly") and value is not None):
                w.setVisible(value is not None)
        if value is None:
            computing = getattr(self.session, "computing", None)
            if self.key and computing is not None and computing(self.key):
                self.show_message(_("Analysing…"))  # a deferred section, asked for
            else:
                self.show_message(self._msg.text() if self._stack.currentIndex() == 0 else
                                  _("Nothing to show yet."))
            return
        if isinstance(value, Failure):
            self.show_message(value.message, error=not value.nodata)
            return
        if isinstance(value, dict) and value.get("status") in ("no_data", "error", "cancelled") \
                and "reason" in value:
            self.show_message(str(value["reason"]), error=value["status"] == "error")
            return
        try:
            msg = self.paint(value)
        except Exception as e:  # noqa: BLE001 - shown in place, never crashes the window
            log.exception("painting %s failed", type(self).__name__)
            self.paint_error = e
            self.show_message(_("Could not draw this panel: {error}").format(
                    error=str(e)), error=True)
            return
        if msg:
            self.show_message(msg)
        else:
            self._stack.setCurrentIndex(1)

    def paint(self, value: Any) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def show_message(self, text: str, error: bool = False) -> None:
        self._msg.setText(text)
        if error != self._msg_error:  # an error reads in the warning colour
            self._msg_error = error
            self._msg.setStyleSheet("color: #B34700;" if error else "")
        self._stack.setCurrentIndex(0)

    def message(self) -> str | None:
        """The message shown instead of the content, or None when the content is shown."""
        return self._msg.text() if self._stack.currentIndex() == 0 else None

    # -- data out ---------------------------------------------------------------------------
    def copy_text(self) -> str:
        """What Edit > Copy puts on the clipboard when this panel has focus."""
        return self.message() or ""

    def copy_mime(self) -> QMimeData:
        """Edit > Copy (Ctrl+C): copy_text() (tables as TSV, full text) and, for a chart that is
        shown, its picture too (a paste into a document takes the picture, into a sheet the data)."""
        return copy_mime(self)

    def copy_image(self) -> None:
        QGuiApplication.clipboard().setPixmap(self.grab())

    def save_image(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(self, _("Save image"), f"{self.key or 'panel'}.png",
                                              _("PNG image (*.png)"))
        if path:
            self.grab().save(path)


def copy_mime(widget) -> QMimeData:
    """The clipboard content of a panel (a Panel or a panel of its own kind, such as the
    Timeline): text from copy_text(), the picture of charts (chart = True) as image data."""
    if hasattr(widget, "ensure_painted"):
        widget.ensure_painted()
    mime = QMimeData()
    text = widget.copy_text() if hasattr(widget, "copy_text") else ""
    if text:
        mime.setText(text)
    showing = getattr(widget, "message", lambda: None)() is None
    if getattr(widget, "chart", False) and showing and widget.isVisible():
        mime.setImageData(widget.grab().toImage())
    return mime
