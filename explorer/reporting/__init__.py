"""Screenshot-ready postmortem reports (issue 7): per-panel PNG (2x) and SVG, a one-page
dashboard PNG, a self-contained report.html and an A4 report.pdf through Qt's own PDF writer.

The pictures are the app's own panels (widgets/), fed the same result dicts, rendered
offscreen: a report image and the app's panel are the same picture. Qt-side (not in core).

    render(doc, out_dir, formats, frame=None, cases=None) -> list[Path]
    write_bundle(store, cohort, out_dir, formats=ALL_FORMATS) -> list[Path]
"""
from explorer.core.report import register_renderer

from .bundle import ALL_FORMATS, QT_FORMATS, render, write_bundle

register_renderer(render, QT_FORMATS)  # the core's report writes these formats through us

__all__ = ["ALL_FORMATS", "render", "write_bundle"]
