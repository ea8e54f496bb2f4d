"""Number formatting and metric labels shared by every painter (app and reports).

Numbers carry their unit ("18.3 ms/token"); p-values print as "< 0.001" below that.
"""
from __future__ import annotations

import math
from typing import Any

from explorer.core.names import LABELS, label, unit  # noqa: F401 - the one display-name table


def is_missing(v: Any) -> bool:
    """None, NaN or something that is not a number."""
    if v is None:
        return True
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return True


def num(v: Any, metric: str | None = None, digits: int = 3) -> str:
    """A value with `digits` significant digits and the metric's unit; "–" when missing."""
    if is_missing(v):
        return "–"
    x = float(v)
    if metric == "kv_cache_hit_rate" or (metric or "").endswith("_rate"):
        s = f"{x:.2f}"
    elif x != 0 and (abs(x) >= 1e12 or abs(x) < 1e-3):
        s = f"{x:.{digits - 1}e}"
    elif abs(x) >= 100:
        s = f"{x:,.0f}"
    else:
        s = f"{x:.{digits}g}"
    u = unit(metric) if metric else ""
    return f"{s} {u}" if u else s


def pct(v: Any, signed: bool = True, digits: int = 1) -> str:
    """A percentage: pct(-56.94) -> "-56.9%" (the input is already in percent)."""
    if is_missing(v):
        return "–"
    return f"{float(v):+.{digits}f}%" if signed else f"{float(v):.{digits}f}%"


def share(v: Any) -> str:
    """A fraction in [0, 1] as a percentage: share(0.913) -> "91%"; a share that is not zero
    (or not whole) never rounds to "0%" ("100%"): share(0.0025) -> "<1%", share(0.997) -> ">99%"."""
    if is_missing(v):
        return "–"
    v = float(v)
    text = f"{100 * v:.0f}"
    if v > 0 and text == "0":
        return "<1%"
    if v < 1 and text == "100":
        return ">99%"
    return f"{text}%"


def pval(p: Any) -> str:
    """p-value text: "< 0.001" below 0.001, else 3 decimals."""
    if is_missing(p):
        return "–"
    p = float(p)
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def ratio(k: Any, n: Any) -> str:
    """'21/23 (91%)', '9/3,588 (<1%)' (thousands separated, the share as share() gives it)."""
    if is_missing(k) or is_missing(n):
        return "–"
    k, n = int(k), int(n)
    return f"{k:,}/{n:,} ({share(k / n)})" if n else f"{k:,}/{n:,}"


def significant(row: dict, alpha: float = 0.05) -> bool:
    """A comparison row is significant when its BH-adjusted p (else raw p) is below alpha."""
    p = row.get("p_adjusted")
    if is_missing(p):
        p = row.get("p_value")
    return not is_missing(p) and float(p) < alpha


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
