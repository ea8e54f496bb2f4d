"""The what-if estimates of the last cohorts, remembered. run_whatif is seeded: the same frame
content with the same arguments gives the same result, so the report export, the What-if panel
and a cohort visited again share one estimate instead of refitting DoWhy (seconds) each time.
A bounded LRU (cachetools) keyed by the language, the frame's content hash and the arguments; progress and
cancelled callbacks are not part of the key; a run that raises (cancelled, no data) is not
kept."""
from __future__ import annotations

import hashlib
import threading
from typing import Any, Callable

import cachetools
import numpy as np
import pandas as pd

SIZE = 8  # estimates kept (a few cohorts, each with a scenario or two)
_CACHE: cachetools.LRUCache = cachetools.LRUCache(maxsize=SIZE)
_LOCK = threading.Lock()
CALLBACKS = ("progress", "cancelled")


def frame_key(frame: pd.DataFrame) -> str:
    """A hash of the frame's columns, shape, index and values."""
    h = hashlib.sha1(repr((tuple(frame.columns), frame.shape)).encode())
    h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return h.hexdigest()


def _arg_key(v: Any):
    if isinstance(v, pd.Series):
        return ("series", frame_key(v.to_frame()))
    if isinstance(v, np.ndarray):
        return ("array", v.shape, str(v.dtype), hashlib.sha1(v.tobytes()).hexdigest())
    if isinstance(v, dict):
        return tuple(sorted((str(k), _arg_key(x)) for k, x in v.items()))
    return repr(v)


def remembered(run: Callable[..., Any], frame: pd.DataFrame, **kwargs) -> Any:
    """run(frame, **kwargs) (run: whatif.run_whatif, or a stand-in), or the result of an
    earlier call with the same run, frame content and arguments."""
    from ...i18n import language  # results carry translated sentences: one entry per language
    key = (id(run), language(), frame_key(frame),
           tuple(sorted((k, _arg_key(v)) for k, v in kwargs.items() if k not in CALLBACKS)))
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    res = run(frame, **kwargs)
    with _LOCK:
        _CACHE[key] = res
    return res


def forget() -> None:
    """Drop every remembered estimate."""
    with _LOCK:
        _CACHE.clear()
