"""Qt-free core: the DuckDB store, input formats, association and analyses.

Nothing under this package may import Qt (PySide6, pyqtgraph); tests/test_core_is_qt_free.py
checks it.
"""
