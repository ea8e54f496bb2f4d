"""dashboard.png: the whole analysis on one page, laid out like a brief: title with cohort and
date, the header figures, the comparison table beside the tree, the two most telling
distributions, the conclusion beside the version trend, and a provenance footer. Composed from
the panel images the bundle already rendered (the same pictures as the app)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen

from explorer.core.i18n import _
from explorer.core.names import label
from explorer.core.report import scope_lines
from explorer.widgets import palette

from .html import title_of
from .images import CJK_FAMILIES, save_image

WIDTH, DPR, PAD = 1600, 2.0, 16


def _font(size: int, bold: bool = False) -> QFont:
    f = QFont()
    f.setFamilies(CJK_FAMILIES)
    f.setPixelSize(size)
    f.setBold(bold)
    return f


def _place(p: QPainter, img_path: Path | None, rect: QRectF, caption: str) -> None:
    p.setPen(QPen(QColor(palette.GRID)))
    p.drawRect(rect)
    p.setFont(_font(13, True))
    p.setPen(QColor(palette.TEXT))
    p.drawText(rect.adjusted(8, 4, -8, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, caption)
    inner = rect.adjusted(6, 24, -6, -6)
    img = QImage(str(img_path)) if img_path and Path(img_path).exists() else QImage()
    if img.isNull():
        p.setFont(_font(12))
        p.setPen(QColor(palette.MUTED))
        p.drawText(inner, Qt.AlignmentFlag.AlignCenter, _("no data for this section"))
        return
    scale = min(inner.width() / (img.width() / DPR), inner.height() / (img.height() / DPR), 1.0)
    w, h = img.width() / DPR * scale, img.height() / DPR * scale
    p.drawImage(QRectF(inner.x() + (inner.width() - w) / 2, inner.y(), w, h), img)


def layout(images: dict[str, Path]) -> list[tuple[int, list[tuple[str, str, float]]]]:
    """The rows of the page: (height, [(image key, caption, width share)]); the captions in the
    current language."""
    dists = [k for k in images if k.startswith("distributions_")][:2] or \
        (["distributions"] if "distributions" in images else [])
    return [
        (110, [("header", _("Cohort"), 1.0)]),
        (430, [("comparison", _("Metric comparison (Mann-Whitney U, BH-adjusted)"), 0.58),
               ("tree", _("Decision tree: where the error rate jumps"), 0.42)]),
        (360, [(d, _("Distribution: {metric}").format(metric=label(d.removeprefix("distributions_"), False)), 0.5)
               for d in dists if d != "distributions"]
         or [("distributions", _("Distributions"), 1.0)]),
        (560, [("conclusion", _("Conclusion and suggestions"), 0.5),
               ("versions", _("Engine versions"), 0.5)]),
    ]


def footer_text(meta: dict) -> str:
    """The provenance lines under the page: evals, models, versions, inputs ("… and N more")."""
    return "\n".join(_("{title}: {text}").format(title=t, text=v) for t, v in scope_lines(meta)) + (
        "\n" + _("Data: SIMULATED.") if meta.get("simulated") else "")


def save_dashboard(doc: dict, images: dict[str, Path], path: Path) -> Path:
    """Compose the one-page brief at 2x into `path` (PNG). Raises OSError when it cannot write."""
    meta = doc.get("meta") or {}
    rows = layout(images)
    note = meta.get("demo_note") or _("Simulated data.")
    banner = 0
    if meta.get("simulated"):
        probe = QImage(10, 10, QImage.Format.Format_ARGB32)
        fp = QPainter(probe)
        fp.setFont(_font(13, True))
        banner = int(fp.boundingRect(QRectF(0, 0, WIDTH - 2 * PAD - 16, 400),
                                     Qt.TextFlag.TextWordWrap, note).height()) + 8
        fp.end()
    top = 72 + banner
    footer = footer_text(meta)
    probe = QImage(10, 10, QImage.Format.Format_ARGB32)
    fp = QPainter(probe)
    fp.setFont(_font(11))
    foot_h = int(fp.boundingRect(QRectF(0, 0, WIDTH - 2 * PAD, 600), Qt.TextFlag.TextWordWrap, footer).height()) + 10
    fp.end()
    height = top + sum(h + PAD for h, _ in rows) + foot_h
    img = QImage(int(WIDTH * DPR), int(height * DPR), QImage.Format.Format_ARGB32)
    img.setDevicePixelRatio(DPR)
    img.fill(QColor(palette.BACKGROUND))
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    p.setPen(QColor(palette.TEXT))
    p.setFont(_font(24, True))
    p.drawText(QRectF(PAD, 10, WIDTH - 2 * PAD, 34), Qt.AlignmentFlag.AlignLeft, title_of(doc))
    p.setFont(_font(13))
    p.setPen(QColor(palette.MUTED))
    p.drawText(QRectF(PAD, 44, WIDTH - 2 * PAD, 20), Qt.AlignmentFlag.AlignLeft,
               f"{meta.get('generated_at', '')} · Trace Explorer {meta.get('app_version', '')}")
    if meta.get("simulated"):
        p.fillRect(QRectF(PAD, 66, WIDTH - 2 * PAD, banner), QColor(palette.WARN))
        p.setPen(QColor("black"))
        p.setFont(_font(13, True))
        p.drawText(QRectF(PAD + 8, 70, WIDTH - 2 * PAD - 16, banner),
                   int(Qt.AlignmentFlag.AlignLeft) | int(Qt.TextFlag.TextWordWrap), note)
    y = top
    for h, cells in rows:
        x = PAD
        for key, caption, share in cells:
            w = (WIDTH - 2 * PAD - PAD * (len(cells) - 1)) * share
            _place(p, images.get(key), QRectF(x, y, w, h), caption)
            x += w + PAD
        y += h + PAD
    p.setFont(_font(11))
    p.setPen(QColor(palette.MUTED))
    p.drawText(QRectF(PAD, y, WIDTH - 2 * PAD, foot_h), Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap,
               footer)
    p.end()
    return save_image(img, path)
