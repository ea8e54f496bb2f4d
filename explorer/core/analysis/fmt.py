"""Number formatting shared by the conclusion narrative and the Markdown report."""
from __future__ import annotations

import math

from ..i18n import _


def fmt_num(x, unit: str = "") -> str:
    """3 significant digits or so ("0.312", "18.3", "1904"); "n/a" for None / NaN; a unit is
    appended after a space."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    a = abs(x)
    if a == 0:
        s = "0"
    elif a >= 100:
        s = f"{x:.0f}"
    elif a >= 10:
        s = f"{x:.1f}"
    elif a >= 1:
        s = f"{x:.2f}"
    else:
        s = f"{x:.3g}"
    return f"{s} {unit}" if unit else s


def fmt_p(p) -> str:
    """A p-value: "< 0.001" below 0.001, else 3 decimals; "n/a" for None."""
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def fmt_pct(x, signed: bool = True) -> str:
    """A percentage: "+12.3%" ("n/a" for None)."""
    if x is None:
        return "n/a"
    return f"{x:+.1f}%" if signed else f"{x:.1f}%"


def fmt_share(x) -> str:
    """A share 0..1 as a percentage: "42%" ("n/a" for None)."""
    if x is None:
        return "n/a"
    return f"{x * 100:.0f}%" if x * 100 >= 10 or x == 0 else f"{x * 100:.1f}%"


def fmt_interval(lo, hi, decimals: int = 2, sep: str = " to ") -> str:
    """An interval "0.36 to 0.38" with enough decimals that its ends differ (never "0.37 to
    0.37": up to 3 more decimals, then "0.37, zero width"); "n/a" when an end is missing."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return "n/a"
    for d in range(decimals, decimals + 4):
        a, b = f"{lo:.{d}f}", f"{hi:.{d}f}"
        if a != b:
            return f"{a}{sep}{b}"
    return _("{value}, zero width").format(value=f"{lo:.{decimals}f}")
