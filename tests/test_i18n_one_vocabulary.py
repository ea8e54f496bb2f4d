"""The window's two catalogues (the core's explorer.po through `_()`, the widgets' .ts through
Qt's `tr()`) read one vocabulary (issue 32, Deliver 5): an English word both translate reads the
same in Chinese in both, but where the two mean different things (a verb on a button, a noun in
the core; a panel's name against a button's), listed below with why. Before this test the two
disagreed on "concurrency" (并发 / 并发数), "Value" (值 / 数值) and the Runs table's "Run" column
(运行, where GLOSSARY-zh keeps run in Latin letters)."""
import xml.etree.ElementTree as ET
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
I18N = ROOT / "resources" / "i18n"
# (English, widget context) -> why its Chinese differs from the core's
DIFFERENT_MEANINGS = {
    ("Run", "ReplayPanel"): "a button (to run, 运行); the core's Run is a run (kept as Run)",
    ("Run", "WhatIfPanel"): "a button (to run, 运行); the core's Run is a run (kept as Run)",
    ("Compare", "ComparePanel"): "a button (to compare, 对比); the core's is the panel 运行对比",
    ("Compare", "ComparisonPanel"): "a label (compare: 对比); the core's is the panel 运行对比",
}


def _core() -> dict[str, set[str]]:
    with open(I18N / "zh_CN" / "LC_MESSAGES" / "explorer.po", "rb") as fh:
        cat = read_po(fh, locale="zh_CN")
    out: dict[str, set[str]] = {}
    for m in cat:
        if m.id and isinstance(m.id, str) and m.string:
            out.setdefault(m.id, set()).add(m.string)
    return out


def _widgets():
    root = ET.parse(I18N / "trace_explorer_zh_CN.ts").getroot()
    for ctx in root.iter("context"):
        for msg in ctx.iter("message"):
            yield msg.findtext("source"), ctx.findtext("name"), msg.find("translation").text


def test_a_word_both_catalogues_translate_reads_the_same():
    core = _core()
    shared = [(src, ctx, tr) for src, ctx, tr in _widgets() if src in core]
    assert len(shared) >= 30  # the catalogues were read (41 shared entries on 2026-12-03)
    differ = {(src, ctx): (tr, sorted(core[src])) for src, ctx, tr in shared
              if tr not in core[src] and (src, ctx) not in DIFFERENT_MEANINGS}
    assert not differ, differ
    stale = [k for k in DIFFERENT_MEANINGS
             if not any((src, ctx) == k and tr not in core[src] for src, ctx, tr in shared)]
    assert not stale, f"these now read the same or are gone: drop them {stale}"
