"""Import the analyses' heavy libraries on a background thread while the inputs load.

`import scipy.stats` costs about a second of CPU (every distribution class is built at import)
and sklearn.tree half of that; the analyses import them on first use, after the load. The load
runs in DuckDB, which releases the GIL, so importing them beside it hides most of that time
(issue 17: the comparison section took 3.0 s at 1M requests, mostly this import). A submodule
cannot be imported alone: `from scipy.stats import mannwhitneyu` runs scipy/stats/__init__.py
whatever the name asked for.

    t = preload()          # before the load
    ...
    t.join()               # before exiting (a thread must not be cut off mid-import)
"""
from __future__ import annotations

import threading

# Imported by name, not through importlib: the layers test lets the core import by string only
# its own format readers.


def _import_all() -> None:
    try:
        import scipy.stats  # noqa: F401 - the comparison, the tree's hold-out test, versions
        import sklearn.tree  # noqa: F401 - the decision tree
    except Exception:  # noqa: BLE001 - the analysis that needs it reports the failure
        return


_STARTED: list = []
_LOCK = threading.Lock()


def preload() -> threading.Thread:
    """Start importing scipy.stats, then sklearn.tree, on a background thread and return it;
    a later call returns the first call's thread (a process imports them once). A module
    another thread asks for meanwhile waits for the import in progress (Python's per-module
    import lock), so nothing runs twice or half-initialised."""
    with _LOCK:
        if not _STARTED:
            t = threading.Thread(target=_import_all, name="preload-imports")
            t.start()
            _STARTED.append(t)
        return _STARTED[0]
