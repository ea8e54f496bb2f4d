"""`trace-explorer report --demo --lang zh_CN`: Markdown, HTML and PDF whose headings, narrative
and suggestions are Chinese, with no English phrase left outside data (cluster names,
categories, file names, the badcases' own prompts), metric names and units."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from explorer.core import i18n
from tests.i18n_check import english_phrases, english_words

ZH = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def zh_report(tmp_path_factory):
    from explorer.__main__ import main
    out = tmp_path_factory.mktemp("zh-report")
    try:
        rc = main(["report", "--demo", "--lang", "zh_CN", "--format", "json,md,html,pdf,svg",
                   "--out", str(out)])
    finally:
        i18n.set_language("en")
        from PySide6.QtWidgets import QApplication
        if QApplication.instance() is not None:  # the renderer's translators back to English
            from explorer import translators
            translators.install("en")
    assert rc == 0
    return out


def _data(doc: dict) -> set[str]:
    """Strings that are data, not our text: cluster names, categories, eval / model / file
    names, as the report JSON records them."""
    out = set()
    for r in doc.get("clusters") or []:
        out.add(r["cluster"])
        out.update(r.get("categories") or [])
    for f in doc.get("inputs") or []:
        out.add(str(f.get("path")))
    sc = (doc.get("meta") or {}).get("scope") or {}
    out.update(sc.get("inputs") or [])
    out.update(sc.get("models") or [])
    for e in sc.get("evals") or []:
        out.update((e["eval_id"], e.get("model") or "", e.get("benchmark") or ""))
    for r in doc.get("runs") or []:
        out.update(str(r.get(k) or "") for k in ("run_id", "label", "benchmark", "model"))
    for s in (doc.get("conclusion") or {}).get("suggestions") or []:
        out.update(f.lstrip("-") for f in s.get("flags") or [])  # engine flags, as the engine spells them
    # a figure wraps a long name at its hyphens ("demo-" / "maths"): the pieces are data too
    out |= {p for d in list(out) for p in re.split(r"(?<=-)", d) if len(p.strip("-")) >= 3}
    return out


def _without_case_listing(text: str, start: str, end: str) -> str:
    """The badcases' own prompts and predictions are data: cut their listing out."""
    a = text.find(start)
    b = text.find(end, a + 1) if a >= 0 else -1
    return text if a < 0 else text[:a] + (text[b:] if b >= 0 else "")


def test_markdown_is_chinese(zh_report):
    doc = json.loads((zh_report / "report.json").read_text(encoding="utf-8"))
    md = (zh_report / "report.md").read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", md, re.M)
    assert headings and all(ZH.search(h) for h in headings), headings
    for h in ("## 定界结论", "## 决策树定界", "## 指标对比分析"):
        assert h in md
    c = doc["conclusion"]
    # the workload's sentences first (issue 35), then the modules
    assert ZH.search(c["narrative"]) and c["narrative"].startswith("这些 badcase 是长 prompt")
    assert "证据指向" in c["narrative"]
    assert c["suggestions"] and all(ZH.search(s["text"]) for s in c["suggestions"])
    left = english_phrases(md, _data(doc))
    assert not left, left


def test_html_is_chinese(zh_report):
    doc = json.loads((zh_report / "report.json").read_text(encoding="utf-8"))
    html = (zh_report / "report.html").read_text(encoding="utf-8")
    html = re.sub(r"data:image/[^'\"]+", "", html)
    html = _without_case_listing(html, "<h2>该 cohort 的 badcase</h2>", "<h2>")
    heads = re.findall(r"<h[12]>([^<]+)</h[12]>", html)
    assert heads and all(ZH.search(h) for h in heads), heads
    text = re.sub(r"<style>.*?</style>", " ", html, flags=re.S)
    left = english_phrases(text, _data(doc))
    assert not left, left


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) not installed")
def test_pdf_is_chinese_with_embedded_cjk_font(zh_report):
    doc = json.loads((zh_report / "report.json").read_text(encoding="utf-8"))
    pdf = zh_report / "report.pdf"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert "定界结论" in text and "优化建议" in text
    text = _without_case_listing(text, "该 cohort 的 badcase", "数据来源")
    left = english_phrases(text, _data(doc))
    assert not left, left
    if shutil.which("pdffonts"):
        fonts = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True).stdout
        assert re.search(r"WenQuanYi|Noto.*CJK|WQY", fonts, re.I), fonts  # glyphs, not boxes


def _svg_text(path) -> str:
    """Every <text> of an SVG the report wrote (axis labels, ticks, legends, table cells), one a
    line: what a reader of the picture sees."""
    import xml.etree.ElementTree as ET
    return "\n".join("".join(e.itertext()) for e in ET.parse(path).iter() if e.tag.endswith("}text"))


def test_figures_have_no_english_words(zh_report):
    """The panel pictures (timeline, replay, what-if, SLA, ...) in Chinese: no English word left in
    their painted text outside data, metric names, statistics and units; word by word, since
    figure text comes in short pieces."""
    doc = json.loads((zh_report / "report.json").read_text(encoding="utf-8"))
    data = _data(doc)
    svgs = sorted(zh_report.glob("*.svg"))
    assert {"timeline.svg", "replay.svg", "whatif.svg", "sla.svg"} <= {p.name for p in svgs}
    left = {p.name: english_words(_svg_text(p), data) for p in svgs}
    assert not any(left.values()), {k: v for k, v in left.items() if v}
    assert ZH.search(_svg_text(zh_report / "timeline.svg"))


def test_english_words_catches_figure_fragments():
    """The word check sees what the phrase check cannot: numbers and '=' between the words."""
    assert english_words("266 neighbours 个") == ["neighbours"]
    assert english_words("95% CI 0.64 to 0.88") == ["to"]
    assert english_words("没有 the outcome = 1") == ["outcome", "the"]
    assert english_words("TTFT 7,595 ms · kv_cache_hit_rate · --max-num-seqs · 批处理（batching）") == []


def test_dashboard_captions_are_chinese():
    """dashboard.png's own text (panel captions, provenance footer) in zh_CN."""
    from explorer.reporting.dashboard import footer_text, layout
    i18n.set_language("zh_CN")
    try:
        rows = layout({"header": None, "comparison": None, "tree": None, "conclusion": None,
                       "versions": None, "distributions_kv_cache_hit_rate": None})
        captions = [c for _h, cells in rows for _k, c, _w in cells]
        foot = footer_text({"simulated": True, "scope": {"evals": [{"eval_id": "e1"}],
                                                         "models": ["m"], "inputs": ["a.jsonl"]}})
    finally:
        i18n.set_language("en")
    assert len(captions) == 6 and all(ZH.search(c) for c in captions), captions
    assert not english_words("\n".join(captions) + "\n" + foot, {"e1", "a.jsonl"}), (captions, foot)
    assert "KV cache" in captions[3] and "kv_cache_hit_rate" not in captions[3]
