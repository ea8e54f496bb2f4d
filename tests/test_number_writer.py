"""One number writer: the panels, painters and the report renderer write a number shown to
a user through explorer.core.fmt (locale-aware: Babel's signs, fmt.localized), never with an
inline format spec (f"{x:.1f}", "%.2f" % x, format(x, ",")). What stays inline is a machine
format, listed below with why; a new inline spec fails here."""
from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# file -> inline specs kept, and why (machine formats: not a number read in a sentence)
MACHINE = {
    "widgets/timeline.py": (6, "Copy's TSV of a request's phases, events and tokens (a sheet "
                               "reads it: '%g', no group separator)"),
    "widgets/painters/heatmap.py": (5, "Copy's TSV of the heatmap's cells (bin edges, values)"),
    "widgets/distributions.py": (1, "Copy's TSV of the cohort's values"),
    "widgets/painters/tree.py": (1, "Copy's TSV of the tree's nodes (error rate, 4 decimals)"),
    "widgets/painters/replay.py": (1, "an axis tick rounded to 2 significant digits and read back "
                                      "as a float (float(f'{v:.2g}'))"),
    "widgets/replay.py": (1, "a Qt style sheet's colour ('color: %s;')"),
}


def inline_specs(path: Path) -> list[tuple[int, str]]:
    """The inline number formats of a source file: f-string fields with a format spec, '%'
    on a string literal, format(x, spec), and '{:spec}'.format(...)."""
    out = []
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.FormattedValue) and n.format_spec is not None:
            out.append((n.lineno, ast.unparse(n)))
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and \
                isinstance(n.left, ast.Constant) and isinstance(n.left.value, str):
            out.append((n.lineno, ast.unparse(n)[:60]))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "format" \
                and len(n.args) == 2:
            out.append((n.lineno, ast.unparse(n)[:60]))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr == "format" and isinstance(n.func.value, ast.Constant) and \
                isinstance(n.func.value.value, str) and \
                re.search(r"\{[^{}]*:[^{}]+\}", n.func.value.value):
            out.append((n.lineno, ast.unparse(n)[:60]))
    return out


def count(root: Path) -> Counter:
    files = sorted((root / "widgets").rglob("*.py")) + sorted((root / "explorer" / "reporting").rglob("*.py"))
    return Counter({str(p.relative_to(root)): len(inline_specs(p)) for p in files
                    if inline_specs(p)})


def test_numbers_shown_go_through_fmt():
    """Main before this change had 88 inline specs in widgets/ and explorer/reporting/."""
    found = count(ROOT)
    over = {f: n for f, n in found.items() if n > MACHINE.get(f, (0, ""))[0]}
    assert not over, ("write shown numbers with explorer.core.fmt (num, count, share, by_spec): "
                      + "; ".join(f"{f}: {n} inline ({inline_specs(ROOT / f)})" for f, n in over.items()))
    fewer = {f: n for f, (n, _why) in MACHINE.items() if found.get(f, 0) < n}
    assert not fewer, f"lower the allow-list: {fewer}"


def test_by_spec_is_format_with_the_readers_signs():
    from explorer.core import fmt
    from explorer.core.i18n import set_language, language
    before = language()
    try:
        for lang in ("en", "zh_CN"):
            set_language(lang)
            for v, spec in ((1234567, ","), (-0.3149, "+.3f"), (1904.25, ",.1f"), (0.000012, "g")):
                assert fmt.by_spec(v, spec) == format(v, spec)
    finally:
        set_language(before)
    assert fmt.localized(format(1904.25, ",.1f"), "de_DE") == "1.904,2"
    from babel.numbers import format_decimal
    assert fmt.localized(format(1904.25, ",.2f"), "de_DE") == format_decimal(1904.25, "#,##0.00", locale="de_DE")
