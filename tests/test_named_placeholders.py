"""Placeholders are named format fields ("{run}", "{n}") that translators read, never Qt's
positional "%1" filled by .replace (the widgets kept those from the Qt Linguist days)."""
from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
PO = ROOT / "resources" / "i18n" / "zh_CN" / "LC_MESSAGES" / "explorer.po"


def test_no_positional_placeholder_in_the_catalogue():
    with PO.open("rb") as f:
        cat = read_po(f)
    ids = [i for m in cat if m.id for i in (m.id if isinstance(m.id, tuple) else (m.id,))]
    assert ids and not [i for i in ids if re.search(r"%\d", i)]


def test_no_code_fills_a_positional_placeholder():
    found = [f"{p.relative_to(ROOT)}:{n}" for d in ("explorer", "widgets")
             for p in sorted((ROOT / d).rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"""\.replace\(\s*["']%\d""", line)]
    assert not found, found


def test_named_fields_of_each_translation_are_those_of_its_english():
    with PO.open("rb") as f:
        cat = read_po(f)
    for m in cat:
        if not m.id or isinstance(m.id, tuple) or not m.string:
            continue
        en = set(re.findall(r"\{(\w+)", m.id))
        zh = set(re.findall(r"\{(\w+)", m.string))
        assert zh <= en, (m.id, m.string)  # a name the code does not pass would raise KeyError
