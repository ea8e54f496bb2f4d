"""The What-if panel's causal-graph column: the drawing (GraphView; widgets.painters.whatif's
paint_graph draws into its scene) above the editor of the graph's DOT / GML text (GraphEditor),
which checks the text as the user types and says what is wrong and on which line. Used by
widgets/whatif.py; the panel keeps the graph in use, applies it and keeps it with the session.
"""
from __future__ import annotations

from typing import Callable, Iterable

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont, QTextCursor, QTextFormat
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPlainTextEdit, QPushButton,
                               QTextEdit, QVBoxLayout, QWidget)

from explorer.core.analysis.causal_graph import default_graph_text, parse_graph
from explorer.core.errors import InputError
from explorer.widgets import palette
from explorer.widgets.zoomview import ZoomView
from explorer.core.i18n import _


class GraphView(ZoomView):
    """The causal graph's view (widgets.zoomview): fitted, never magnified beyond 1.2x, its
    8.5 pt labels never shown below 9 pt (pan by dragging, Ctrl+wheel zooms)."""
    font_pt = 8.5
    max_scale = 1.2


class GraphEditor(QWidget):
    """GraphEditor(text, known, applied): the causal graph's DOT / GML text, validated 300 ms
    after the last key (parse_graph: the message, the line highlighted), with "Default graph"
    (resources/causal_graph.dot) and "Apply graph" (enabled for a valid text that differs from
    applied(); the owner connects apply_button.clicked).

    known(): the data's column names (nodes parse_graph checks against), or None; applied():
    the text of the graph in use.
    """

    def __init__(self, text: str, known: Callable[[], Iterable[str] | None],
                 applied: Callable[[], str], parent=None):
        super().__init__(parent)
        self._known, self._applied = known, applied
        self.editor = QPlainTextEdit()
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono.setPointSizeF(9)
        self.editor.setFont(mono)
        self.editor.setPlainText(text)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.graph_status = QLabel()
        self.graph_status.setWordWrap(True)
        self.apply_button = QPushButton(_("Apply graph"))
        self.apply_button.setEnabled(False)
        self.default_button = QPushButton(_("Default graph"))
        self._validate_timer = QTimer(self, singleShot=True, interval=300)
        self._validate_timer.timeout.connect(self.validate)
        self.editor.textChanged.connect(self._validate_timer.start)
        self.default_button.clicked.connect(lambda: self.editor.setPlainText(default_graph_text()))
        el = QVBoxLayout(self)
        el.setContentsMargins(0, 0, 0, 0)
        el.addWidget(self.editor, 1)
        row = QHBoxLayout()
        row.addWidget(self.graph_status, 1)
        row.addWidget(self.default_button)
        row.addWidget(self.apply_button)
        el.addLayout(row)

    def validate(self) -> bool:
        """Check the editor's text; say what is wrong and where (the line is highlighted)."""
        text = self.editor.toPlainText()
        known = self._known()
        try:
            g = parse_graph(text, source=_("graph"), known=known)
        except InputError as e:
            self.graph_status.setText(e.message if e.line is None else
                                      _("line {line}: {message}").format(
                                              line=str(e.line), message=e.message))
            self.graph_status.setStyleSheet(f"color: {palette.BAD};")
            self._mark_line(e.line)
            self.apply_button.setEnabled(False)
            return False
        self._mark_line(None)
        self.graph_status.setText(_("Valid: {nodes} nodes, {edges} edges, acyclic.").format(
                nodes=str(len(g.nodes)), edges=str(len(g.edges))))
        self.graph_status.setStyleSheet(f"color: {palette.ACCENT};")
        self.apply_button.setEnabled(text != self._applied())
        return True

    def _mark_line(self, line: int | None) -> None:
        if line is None:
            self.editor.setExtraSelections([])
            return
        sel = QTextEdit.ExtraSelection()
        sel.format.setBackground(palette.qcolor(palette.BAD, 50))
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        block = self.editor.document().findBlockByNumber(max(line - 1, 0))
        sel.cursor = QTextCursor(block)
        self.editor.setExtraSelections([sel])
