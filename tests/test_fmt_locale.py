"""fmt writes digits in the reader's locale through Babel's number symbols (issue 32, Deliver 5:
Babel for locale-aware numbers): English and Simplified Chinese read the same signs, so every
writer's text is the one Python's format specs give (recomputed here, independently of fmt);
for a locale with other signs, fmt.localized agrees with Babel's own format_decimal."""
import random
from decimal import Decimal

import pytest
from babel.numbers import format_decimal

from explorer.core import fmt, i18n


@pytest.fixture(params=["en", "zh_CN"])
def lang(request):
    before = i18n.language()
    i18n.set_language(request.param)
    yield request.param
    i18n.set_language(before)


def _values(n=400, seed=7):
    rng = random.Random(seed)
    out = [0.0, -0.0, 0.5, 2.5, 0.125, 2.675, 99.97, 100.0, 1904.25, -1904.25, 1e-4, 3.2e12]
    out += [rng.uniform(-1, 1) * 10 ** rng.randint(-4, 7) for _ in range(n)]
    return out


def test_english_and_chinese_read_pythons_format_specs(lang):
    for x in _values():
        assert fmt.count(round(x)) == f"{int(round(x)):,}"
        assert fmt.pct(x) == f"{x:+.1f}%"
        assert fmt.pct(x, signed=False) == f"{x:.1f}%"
        s = f"{x:+.2f}"
        assert fmt.signed(x) == (s[1:] if float(s) == 0 else s)
        if abs(x) >= 100 and abs(x) < 1e12:
            assert fmt.num(x, unit="") == f"{x:,.0f}"
            assert fmt.num(x, unit="ms") == f"{x:,.0f} ms"
        if 0 <= x <= 1:
            assert fmt.pval(x) == ("< 0.001" if x < 0.001 else f"{x:.3f}")
    assert fmt.ratio(9, 3588) == "9/3,588 (<1%)"
    assert fmt.num(18.31, "tpot_ms") == "18.3 ms/token"


@pytest.mark.parametrize("locale", ["de_DE", "fr_FR", "en", "zh_CN"])
def test_localized_agrees_with_babels_format_decimal(locale):
    for x in _values(200, seed=11):
        if abs(x) >= 1e12:
            continue
        for decimals in (0, 1, 3):
            python = f"{x:,.{decimals}f}"
            if float(python.replace(",", "")) == 0:
                continue  # Babel writes a rounded-away negative as "-0", Python too: not compared
            pattern = "#,##0" + ("." + "0" * decimals if decimals else "")
            babel = format_decimal(Decimal(python.replace(",", "")), format=pattern,
                                   locale=locale)
            assert fmt.localized(python, locale) == babel, (x, decimals, locale)
    assert fmt.localized("1,904.2", "de_DE") == "1.904,2"
