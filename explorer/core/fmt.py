"""The one way numbers are written for the user: the panels, the painters (app and report
pictures), report.md, report.html, the conclusion's sentences and the command line all format
through these functions, so one value reads the same everywhere ("0.25%" of badcases is "<1%"
in the Clusters panel, in report.md and on the command line alike). Metric display names and
units live beside it in explorer.core.names (LABELS, label, unit). Qt-free.

Rules: a missing value (None, NaN, not a number) is MISSING; numbers carry their metric's unit
("18.3 ms/token"); rates in [0, 1] read with 2 decimals ("0.31"); p-values print as "< 0.001"
below that; shares of a whole are whole percents that never round a non-zero share to "0%" or
a share short of the whole to "100%"; percent changes are signed with one decimal ("-56.9%").
Digits are rounded by Python's format specs (correctly rounded, half to even) and written with
the reader's locale's decimal, group, minus and plus signs from Babel's CLDR data (`localized`):
English and Simplified Chinese share ".", ",", "-" and "+", so the text of both is the same.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from .i18n import _, language
from .names import unit as metric_unit

MISSING = "–"  # an en dash: a number that is not there (None, NaN)


@lru_cache(maxsize=8)
def _symbols(lang: str) -> dict[int, str]:
    """The str.translate table from a format spec's ASCII signs to `lang`'s (Babel)."""
    from babel.numbers import (get_decimal_symbol, get_group_symbol, get_minus_sign_symbol,
                               get_plus_sign_symbol)
    signs = {".": get_decimal_symbol(lang), ",": get_group_symbol(lang),
             "-": get_minus_sign_symbol(lang), "+": get_plus_sign_symbol(lang)}
    return str.maketrans({k: v for k, v in signs.items() if k != v})


def localized(number: str, lang: str | None = None) -> str:
    """A number written by a Python format spec ("1,904.2", "-0.31", "+1.90", "1.2e-05") with
    the decimal, group, minus and plus signs of `lang` (default: the reader's language), as
    Babel's locale data has them: localized("1,904.2", "de_DE") -> "1.904,2"."""
    table = _symbols(lang or language())
    return number.translate(table) if table else number


def by_spec(v: Any, spec: str) -> str:
    """`v` written by a Python format spec ("," ".1f" "+.3g" ",.0f") with the reader's signs
    (localized): how a panel writes a number that none of the writers below fits (counts in a
    sentence, a setting, an axis tick); format(v, spec) in English and Chinese."""
    return localized(format(v, spec))


def is_missing(v: Any) -> bool:
    """None, NaN or something that is not a number."""
    if v is None:
        return True
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return True


def _is_rate(metric: str | None) -> bool:
    return bool(metric) and (metric == "kv_cache_hit_rate" or metric.endswith("_rate"))


def num(v: Any, metric: str | None = None, digits: int = 3, *, unit: str | None = None,
        whole_decimals: int = 0) -> str:
    """A value with `digits` significant digits ("0.312", "18.3", "1,904") and its unit: the
    metric's (explorer.core.names.unit), or `unit` when given. A rate metric (…_rate) reads
    with digits - 1 decimals (2 by default); very large or very small magnitudes in
    scientific notation; MISSING when missing. A magnitude of 100 or more is written whole,
    with `whole_decimals` decimals (interval's extra digits: "1,904.2")."""
    if is_missing(v):
        return MISSING
    x = float(v)
    if _is_rate(metric):
        s = f"{x:.{digits - 1}f}"
    elif x != 0 and (abs(x) >= 1e12 or abs(x) < 1e-3):
        s = f"{x:.{digits - 1}e}"
    else:
        s = f"{x:.{digits}g}"
        if "e" in s or abs(x) >= 100:  # 99.97 with 3 digits is "1e+02": write it whole
            s = f"{x:,.{whole_decimals}f}"
    if s.startswith("-") and float(s.replace(",", "")) == 0:
        s = s[1:]  # -0.0001 rounded is "0", not "-0"
    s = localized(s)
    u = unit if unit is not None else (metric_unit(metric) if metric else "")
    if u == "tokens" and s in ("1", "-1"):
        u = "token"   # "1 token" (HELM's one-token answers read "1 tokens")
    return f"{s} {u}" if u else s


def signed(v: Any, digits: int = 2) -> str:
    """An effect size with its sign: signed(0.34) -> "+0.34", signed(-1.9) -> "-1.90"; zero
    unsigned ("0.00")."""
    if is_missing(v):
        return MISSING
    s = f"{float(v):+.{digits}f}"
    return localized(s[1:] if float(s) == 0 else s)


def pct(v: Any, signed: bool = True, digits: int = 1) -> str:
    """A percentage already in percent: pct(-56.94) -> "-56.9%" (unsigned: "56.9%")."""
    if is_missing(v):
        return MISSING
    return localized(f"{float(v):+.{digits}f}%" if signed else f"{float(v):.{digits}f}%")


def share(v: Any) -> str:
    """A fraction in [0, 1] as a whole percentage: share(0.913) -> "91%"; a share that is not
    zero (or not whole) never rounds to "0%" ("100%"): share(0.0025) -> "<1%",
    share(0.997) -> ">99%"."""
    if is_missing(v):
        return MISSING
    v = float(v)
    text = f"{100 * v:.0f}"
    if v > 0 and text == "0":
        return "<1%"
    if v < 1 and text == "100":
        return ">99%"
    return f"{text}%"


def pval(p: Any) -> str:
    """A p-value: "< 0.001" below 0.001, else 3 decimals."""
    if is_missing(p):
        return MISSING
    p = float(p)
    return localized("< 0.001" if p < 0.001 else f"{p:.3f}")


def count(n: Any) -> str:
    """A whole count with thousands separated ("1,204")."""
    return MISSING if is_missing(n) else localized(f"{int(n):,}")


def ratio(k: Any, n: Any) -> str:
    """'21/23 (91%)', '9/3,588 (<1%)' (thousands separated, the share as share() gives it)."""
    if is_missing(k) or is_missing(n):
        return MISSING
    k, n = int(k), int(n)
    return f"{count(k)}/{count(n)} ({share(k / n)})" if n else f"{count(k)}/{count(n)}"


def significant(row: dict, alpha: float = 0.05) -> bool:
    """A comparison row is significant when its BH-adjusted p (else raw p) is below alpha."""
    p = row.get("p_adjusted")
    if is_missing(p):
        p = row.get("p_value")
    return not is_missing(p) and float(p) < alpha


# -- the cells of a comparison row (report JSON `comparison`), shared by the Comparison panel,
#    its HTML table and report.md ---------------------------------------------------------------
def mean_cell(row: dict, key: str) -> str:
    """A group's mean: a share for a yes/no signal ("12%"), else the number with its unit."""
    v = row.get(key)
    return share(v) if row.get("kind") == "categorical" else num(v, str(row.get("metric")))


def effect_cell(row: dict) -> str:
    """Cohen's d with its sign ("+1.90"), or the odds ratio of a yes/no signal ("OR 2.10")."""
    d = row.get("cohens_d")
    if row.get("kind") == "categorical" and is_missing(d) and not is_missing(row.get("odds_ratio")):
        return f"OR {localized(format(float(row['odds_ratio']), '.2f'))}"
    return signed(d)


def rank_cell(row: dict) -> str:
    """The rank-biserial r with its DeLong interval where defined: "+0.34 [+0.28, +0.40]"."""
    v = row.get("rank_biserial")
    if is_missing(v):
        return MISSING
    lo, hi = row.get("rank_biserial_ci_low"), row.get("rank_biserial_ci_high")
    ci = "" if is_missing(lo) or is_missing(hi) else f" [{signed(lo)}, {signed(hi)}]"
    return signed(v) + ci


def n_cell(row: dict) -> str:
    """'50 / 150': cases with a value in each group."""
    return f"{count(row.get('n_bad'))} / {count(row.get('n_control'))}"


def interval(lo: Any, hi: Any, decimals: int = 2, metric: str | None = None) -> str:
    """An interval "0.36 to 0.38" whose ends never read alike: up to 3 more digits than
    usual (decimals after a value written whole: "1,904.2 ms") until they differ ("0.371 to
    0.375", never "0.37 to 0.37"), else "0.37, zero width" (equal ends) or "0.37, narrower
    than the last digit shown"; MISSING when an end is missing.

    The ends read with `decimals` decimals, or, with `metric`, as num(v, metric) writes them,
    unit included ("18.3 ms to 19.1 ms"; a rate metric with 2 decimals)."""
    if is_missing(lo) or is_missing(hi) or not (math.isfinite(float(lo)) and math.isfinite(float(hi))):
        return MISSING
    for more in range(4):
        a, b = _end(lo, metric, decimals, more), _end(hi, metric, decimals, more)
        if a != b:
            return _("{lo} to {hi}").format(lo=a, hi=b)
    value = _end(lo, metric, decimals, 0)
    if float(lo) == float(hi):
        return _("{value}, zero width").format(value=value)
    return _("{value}, narrower than the last digit shown").format(value=value)


def _end(v: Any, metric: str | None, decimals: int, more: int) -> str:
    """One end of an interval with `more` digits than usual (interval)."""
    if not metric:
        return localized(f"{float(v):.{decimals + more}f}")
    return num(v, metric, digits=3 + more, whole_decimals=more)  # 1,904 -> 1,904.2 -> 1,904.23
