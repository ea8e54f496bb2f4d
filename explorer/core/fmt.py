"""Number formatting shared by the conclusion narrative and the Markdown report."""
from __future__ import annotations

import math


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
