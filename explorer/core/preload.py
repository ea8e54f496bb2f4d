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

import importlib
import threading

MODULES = ("scipy.stats", "sklearn.tree")


def _import_all(modules) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the analysis that needs it reports the failure
            return


_STARTED: dict = {}
_LOCK = threading.Lock()


def preload(modules=MODULES) -> threading.Thread:
    """Start importing `modules` (in order) on a background thread and return it; a second
    call for the same modules returns the first call's thread (a process imports them once).
    A module another thread asks for meanwhile waits for the import in progress (Python's
    per-module import lock), so nothing runs twice or half-initialised."""
    key = tuple(modules)
    with _LOCK:
        t = _STARTED.get(key)
        if t is None:
            t = _STARTED[key] = threading.Thread(target=_import_all, args=(key,),
                                                 name="preload-imports")
            t.start()
        return t
