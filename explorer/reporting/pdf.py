"""report.pdf: the report's HTML typeset on A4 pages by Qt's own PDF writer (QPdfWriter +
QTextDocument, no browser engine). Fonts are embedded by Qt; the default font family list puts
a CJK-capable face (WenQuanYi Micro Hei) behind DejaVu Sans so Chinese cluster names print."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMarginsF, QSizeF, QUrl
from PySide6.QtGui import QFont, QImage, QPageLayout, QPageSize, QPdfWriter, QTextDocument

from .html import build_html
from .images import CJK_FAMILIES, ensure_app


def save_pdf(doc: dict, images: dict[str, Path], path: Path, cases=None) -> Path:
    """Typeset the report on A4 portrait pages (15 mm margins) into `path`; returns it.
    Raises OSError when the file cannot be written."""
    ensure_app()
    text = QTextDocument()
    font = QFont()
    font.setFamilies(CJK_FAMILIES)
    font.setPointSize(9)
    text.setDefaultFont(font)
    for name, img_path in images.items():
        text.addResource(QTextDocument.ResourceType.ImageResource, QUrl(f"img://{name}"),
                         QImage(str(img_path)))
    text.setHtml(build_html(doc, images, image_src=lambda n, _p: f"img://{n}", cases=cases,
                            for_pdf=True))
    writer = QPdfWriter(str(path))
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter))
    writer.setResolution(144)
    writer.setTitle(doc.get("meta", {}).get("title") or "Trace Explorer report")
    writer.setCreator("Trace Explorer")
    rect = writer.pageLayout().paintRectPixels(writer.resolution())
    text.setPageSize(QSizeF(rect.width(), rect.height()))
    text.print_(writer)
    if not path.exists() or path.stat().st_size == 0:
        raise OSError(f"cannot write {path}")
    return path
