"""Report bundle (issue 7): escaped HTML, a PDF with an embedded CJK font, Chinese glyphs in
the pictures, and image regression of two panels (marker `image`)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.report_fixture import CLUSTER, sample_doc, sample_frame

XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from explorer.reporting import render
    out = tmp_path_factory.mktemp("report")
    cases = pd.DataFrame({"case_id": ["c1"], "prompt": [XSS], "prediction": ["<img src=x onerror=1>"],
                          "request_id": ["r1"], "level": [1]})
    doc = sample_doc()
    doc["cohort"] = dict(doc["cohort"])
    files = render(doc, out, {"png", "svg", "html", "pdf"}, frame=sample_frame(), cases=cases)
    return out, files


def test_every_file_is_written(bundle):
    out, files = bundle
    for name in ("report.html", "report.pdf", "dashboard.png", "comparison.png", "tree.png",
                 "distributions.png", "conclusion.png", "header.png", "tree.svg"):
        assert (out / name).exists() and (out / name).stat().st_size > 0, name
    from PySide6.QtGui import QImage
    img = QImage(str(out / "tree.png"))
    from explorer.reporting.bundle import PANEL_SIZES
    size = PANEL_SIZES["tree"]
    assert (img.width(), img.height()) == (2 * size.width(), 2 * size.height())  # 2x device pixel ratio


def test_html_shows_markup_in_case_text_as_text(bundle):
    html = (bundle[0] / "report.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script" not in html.lower()
    assert "<img src=x" not in html
    assert "hit rate &lt;b&gt;low&lt;/b&gt;" in html  # the narrative is text too
    assert CLUSTER in html
    assert html.count("data:image/png;base64,") >= 3  # self-contained: dashboard, distributions, tree


def test_html_says_why_a_section_is_empty(bundle):
    html = (bundle[0] / "report.html").read_text(encoding="utf-8")
    assert "only one engine version loaded" in html
    assert "no batch_size in these traces" in html


def test_pdf_embeds_a_cjk_font_and_prints_the_chinese_cluster(bundle):
    pdf = bundle[0] / "report.pdf"
    fonts = subprocess.run(["pdffonts", str(pdf)], capture_output=True, text=True, check=True).stdout
    cjk = [ln for ln in fonts.splitlines() if "WenQuanYi" in ln]
    assert cjk, fonts
    assert all(" yes " in ln for ln in cjk), "CJK font not embedded"
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert CLUSTER in text.replace("\n", "")
    pages = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert "595.276 x 841.89" in pages or "595 x 842" in pages  # A4 in points


def _render_text(text: str, families: list[str], merge: bool = True) -> np.ndarray:
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QLabel

    from explorer.reporting.images import ensure_app, settle, to_image
    ensure_app()
    font = QFont()
    font.setFamilies(families)
    font.setPixelSize(24)
    if not merge:
        font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)
    label = QLabel(text)
    label.setFont(font)
    from PySide6.QtCore import QSize
    settle(label, QSize(320, 40))
    img = to_image(label, 1.0).convertToFormat(to_image(label, 1.0).format().Format_Grayscale8)
    arr = np.frombuffer(img.constBits(), dtype=np.uint8, count=img.sizeInBytes())
    return arr.reshape(img.height(), img.bytesPerLine())[:, : img.width()].copy()


def test_chinese_cluster_names_render_as_glyphs_not_boxes():
    """The report's font list draws the Chinese name exactly as the known-good CJK font does,
    and differently from the same text forced into a Latin-only font (which draws boxes)."""
    from explorer.reporting.images import CJK_FAMILIES
    ours = _render_text(CLUSTER, CJK_FAMILIES)
    good = _render_text(CLUSTER, ["WenQuanYi Micro Hei"])
    boxes = _render_text(CLUSTER, ["DejaVu Sans"], merge=False)
    assert (ours < 128).sum() > 200, "nothing drawn"
    assert np.abs(ours.astype(int) - good.astype(int)).mean() < 1.0
    assert np.abs(ours.astype(int) - boxes.astype(int)).mean() > 5.0


BASELINES = Path(__file__).parent / "baselines"


@pytest.mark.image
@pytest.mark.parametrize("panel", ["tree", "comparison"])
def test_panel_matches_baseline(bundle, panel):
    """Pixel comparison with a tolerance (mean absolute difference of grey levels < 3 of 255,
    fewer than 2% of pixels off by more than 64). Regenerate a baseline by copying the new
    render over it after looking at both."""
    from PySide6.QtGui import QImage

    def grey(path):
        img = QImage(str(path)).convertToFormat(QImage.Format.Format_Grayscale8)
        arr = np.frombuffer(img.constBits(), dtype=np.uint8, count=img.sizeInBytes())
        return arr.reshape(img.height(), img.bytesPerLine())[:, : img.width()].astype(int)

    new, base = grey(bundle[0] / f"{panel}.png"), grey(BASELINES / f"report_{panel}.png")
    assert new.shape == base.shape
    diff = np.abs(new - base)
    assert diff.mean() < 3.0 and (diff > 64).mean() < 0.02
