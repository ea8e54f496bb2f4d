"""What every painter (app and reports) shares: the one vocabulary of the core, numbers
(explorer.core.fmt) and metric names (explorer.core.names), re-exported so painters
and panels import them from one place; and the shortening of names with a long common prefix.
"""
from __future__ import annotations

from explorer.core.fmt import (  # noqa: F401 - the one number vocabulary
    MISSING, count, interval, is_missing, num, pct, pval, ratio, share, significant, signed)
from explorer.core.names import LABELS, label, unit  # noqa: F401 - the one display-name table


def common_prefix_len(names: list[str], least: int = 8, seps: str = "-_ /:.") -> int:
    """Length of the prefix every name shares (cut at a separator), when it is at least
    `least` characters and every name goes on past it; else 0. "ori_mmlu-high_school_maths" and
    "ori_mmlu-college_maths" show as "…high_school_maths" and "…college_maths". seps: the
    characters a cut may follow (file names leave out "." so "0.1.csv" stays whole)."""
    if len(names) < 2:
        return 0
    import os.path
    pre = os.path.commonprefix(names)
    cut = max((pre.rfind(ch) + 1 for ch in seps), default=0)
    if cut < least or any(len(n) <= cut for n in names):
        return 0
    return cut
