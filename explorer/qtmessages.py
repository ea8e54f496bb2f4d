"""Qt's message handler with the messages that say nothing to the user filtered out, shared by
the app (explorer.app) and the offscreen report renderer (explorer.reporting), so neither
imports the other."""
from __future__ import annotations

import sys
import threading

# Qt messages that say nothing to the user: the offscreen platform (screenshots, reports, CI)
# warns on every dock / window it cannot size-hint.
_QT_NOISE = ("This plugin does not support propagateSizeHints()",)
_previous_qt_handler = None


_in_handler = threading.local()


def _qt_messages(mode, context, message: str) -> None:
    if message in _QT_NOISE:
        return
    if _previous_qt_handler is None or getattr(_in_handler, "on", False):
        # no handler before ours, or the one before forwards back to us: print it once
        print(message, file=sys.stderr)
        return
    _in_handler.on = True
    try:
        _previous_qt_handler(mode, context, message)
    finally:
        _in_handler.on = False


def filter_qt_noise() -> None:
    """Put the _QT_NOISE filter first in line for Qt's messages (every other message goes on
    to the handler that was there before, or to stderr)."""
    global _previous_qt_handler
    from PySide6.QtCore import qInstallMessageHandler
    prev = qInstallMessageHandler(_qt_messages)
    if prev is not _qt_messages:
        _previous_qt_handler = prev
