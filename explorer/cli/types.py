"""Option values checked at the edge: argparse `type=` callables that accept only what the
option can mean and say what is allowed otherwise (argparse prints "argument --X: <message>"
and exits 2). Finite numbers only (NaN, inf and 1e309 are refused), whole numbers within a
range, known metric names, non-empty paths; METRIC=VALUE pairs (--set, --sla) through
metric_value."""
from __future__ import annotations

import argparse
import math
from typing import Callable, Iterable

from explorer.core.i18n import _

# what the file reads of a causal graph at most (a graph of the metrics is a few KiB; /dev/zero
# or a mistaken multi-GB file must not be read whole)
MAX_GRAPH_BYTES = 1 << 20


def _bounds(lo, hi) -> str:
    if lo is not None and hi is not None:
        return _("from {lo} to {hi}").format(lo=lo, hi=hi)
    if lo is not None:
        return _("at least {lo}").format(lo=lo)
    return _("at most {hi}").format(hi=hi)


def integer(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """A whole number within [lo, hi]."""
    def parse(text: str) -> int:
        try:
            n = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(_("expected a whole number {bounds}, not {x!r}").format(
                bounds=_bounds(lo, hi), x=text)) from None
        if (lo is not None and n < lo) or (hi is not None and n > hi):
            raise argparse.ArgumentTypeError(_("must be a whole number {bounds}, not {n}").format(
                bounds=_bounds(lo, hi), n=n))
        return n
    parse.__name__ = "integer"
    return parse


def finite(text: str, what: str = "") -> float:
    """text as a finite number; ValueError saying so for NaN, inf, 1e309 or words."""
    try:
        v = float(text)
    except (ValueError, TypeError):
        raise ValueError(_("{what}{x!r} is not a number").format(what=what, x=text)) from None
    if not math.isfinite(v):
        raise ValueError(_("{what}{x!r} is not a finite number (NaN, infinity and values beyond "
                           "1.8e308 mean nothing here)").format(what=what, x=text))
    return v


def number(lo: float | None = None, hi: float | None = None,
           above: float | None = None) -> Callable[[str], float]:
    """A finite number within [lo, hi] (above: strictly greater than that)."""
    def parse(text: str) -> float:
        try:
            v = finite(text.strip())
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if above is not None and not v > above:
            raise argparse.ArgumentTypeError(_("must be a number above {x}, not {v:g}").format(
                x=above, v=v))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(_("must be a number {bounds}, not {v:g}").format(
                bounds=_bounds(lo, hi), v=v))
        return v
    parse.__name__ = "number"
    return parse


def path(text: str) -> str:
    """A path that is not empty ("" would mean the current folder to the file walk)."""
    if not text or not text.strip():
        raise argparse.ArgumentTypeError(_("an empty path names no file (give a file or folder, "
                                           "or '.' for the current folder)"))
    return text


def metric(known: Iterable[str], what: str) -> Callable[[str], str]:
    """One of the `known` metric names."""
    names = sorted(set(known))

    def parse(text: str) -> str:
        t = text.strip()
        if t not in names:
            import difflib
            close = difflib.get_close_matches(t, names, n=1)
            hint = _(" (did you mean {x}?)").format(x=close[0]) if close else ""
            raise argparse.ArgumentTypeError(_("unknown {what} {x!r}{hint}; known: {names}").format(
                what=what, x=text, hint=hint, names=", ".join(names)))
        return t
    parse.__name__ = "metric"
    return parse


def metric_value(text: str, option: str, known: Iterable[str],
                 ranges: Callable[[str], list[tuple[float | None, float | None, str]]],
                 positive: bool = False) -> tuple[str, float]:
    """(metric, value) of "METRIC=VALUE": a known metric, a finite value within the metric's
    value range (ranges(metric) -> [(low, high, why)]); positive: strictly above 0 (an SLA
    threshold). Raises ValueError saying what is allowed."""
    if "=" not in text:
        raise ValueError(_("{what} must look like METRIC=VALUE, not {text!r}").format(
            what=option, text=text))
    k, v = (s.strip() for s in text.split("=", 1))
    try:
        m = metric(known, _("metric"))(k)
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"{option} {text!r}: {e}") from None
    x = finite(v, f"{option} {text!r}: ")
    if positive and not x > 0:
        raise ValueError(_("{what} {text!r}: the threshold must be above 0 (a request cannot "
                           "take less than no time)").format(what=option, text=text))
    for lo, hi, why in ranges(m):
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            raise ValueError(_("{what} {text!r}: {why}; {metric} takes values {bounds}").format(
                what=option, text=text, why=why, metric=m, bounds=_bounds(lo, hi)))
    return m, x


def read_capped(file: str, limit: int = MAX_GRAPH_BYTES) -> str:
    """The text of a small file (a causal graph), read to at most `limit` bytes: a larger one
    (or a device such as /dev/zero) is refused, never read whole. Raises ValueError."""
    import os
    import stat
    try:
        st = os.stat(file)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(_("{f}: not a regular file (a device, FIFO or folder is not a "
                               "causal graph)").format(f=file))
        with open(file, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise ValueError(_("{f}: cannot read the causal graph ({x})").format(
            f=file, x=e.strerror or e)) from None
    if len(data) > limit:
        raise ValueError(_("{f}: larger than {n} KiB: not a causal graph of metrics (not read "
                           "further)").format(f=file, n=limit >> 10))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(_("{f}: not UTF-8 text (byte {b})").format(f=file, b=e.start)) from None
