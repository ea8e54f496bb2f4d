"""Test helper: record which threads use a store's DuckDB connection (a connection used by two
threads at once raises or returns another call's result; the UI thread must not use it)."""
from __future__ import annotations

import threading
from contextlib import contextmanager


@contextmanager
def connection_threads(store):
    """While inside, every use of store.con appends the calling thread's ident to the yielded
    list; the real connection is put back on exit."""
    real, used = store.con, []

    class Recorder:
        def __getattr__(self, name):
            used.append(threading.get_ident())
            return getattr(real, name)
    store.con = Recorder()
    try:
        yield used
    finally:
        store.con = real
