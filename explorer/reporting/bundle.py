"""The report bundle: panel PNG/SVG, dashboard.png, report.html, report.pdf (plus the JSON and
Markdown of explorer.core.report when asked through write_bundle)."""
from __future__ import annotations

import logging
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pandas as pd
from PySide6.QtCore import QSize

from explorer.core import errlog, sections
from explorer.core.atomic import write_bytes, write_text
from explorer.core.analysis.sla import for_cohort_runs
from explorer.core.errors import ReportIncomplete

from .images import (axis_label_overflow, ensure_app, print_fonts, report_mode, save_image, save_scene_png, save_svg,
                     scroll_overflow, settle, table_overflow, to_image)

log = logging.getLogger(__name__)

ALL_FORMATS = ("json", "md", "png", "svg", "html", "pdf")
QT_FORMATS = {"png", "svg", "html", "pdf"}

# The report's panel pictures: panel name (sections.WINDOW) -> logical size in px, in the
# order they are drawn.
PANEL_SIZES: dict[str, QSize] = {
    "header": QSize(1400, 86), "comparison": QSize(1100, 420), "distributions": QSize(760, 400),
    "tree": QSize(820, 720), "heatmap": QSize(820, 520), "versions": QSize(1000, 420),
    "sla": QSize(820, 720), "whatif": QSize(820, 560), "replay": QSize(1000, 560),
    "conclusion": QSize(760, 640), "timeline": QSize(1100, 560), "engine": QSize(1100, 620),
}
# The pictured panels that show what they show another way than the session's results
# (_draw_panel).
DRAWN_APART = ("timeline", "replay")
# The sections handed to the pictured panels as the session's results, in the registry's order.
SECTION_KEYS = tuple(k for k in sections.keys() if k in {
    sections.SHOWS.get(n, n) for n in PANEL_SIZES if n not in DRAWN_APART})


def telling_metrics(comparison: Any, k: int = 2) -> list[str]:
    """The k numeric metrics with the smallest adjusted p (then the largest |Cohen's d|)."""
    rows = [r for r in comparison if isinstance(r, dict) and r.get("kind", "numeric") == "numeric"] \
        if isinstance(comparison, list) else []
    rows.sort(key=lambda r: (r.get("p_adjusted") is None, r.get("p_adjusted") or 1.0,
                             -abs(r.get("cohens_d") or 0.0)))
    return [r["metric"] for r in rows[:k]]


def _panel_classes() -> dict[str, type]:
    from explorer.widgets.panels import PANELS
    return {name: cls for name, cls, _ in PANELS}


def render_panels(doc: dict, out_dir: Path, frame: pd.DataFrame | None, svg: bool,
                  timeline: tuple[str, str] | None = None, store=None,
                  failed: list | None = None, notes: dict | None = None) -> dict[str, Path]:
    """Render every panel that has a section in `doc` to out_dir/<panel>.png (2x) and .svg.

    The panels are the app's own (widgets.panels.PANELS) fed the same dicts through a
    Session, so the pictures match the window. Returns panel name -> PNG path (distributions
    once per telling metric: distributions_<metric>.png; the first is also distributions.png).
    store: the session's store, needed only by the timeline panel (it queries the request).
    failed: a list that receives (panel, one-line reason, "details in <log>") for each panel
    that could not start or be drawn (its traceback goes to the error log; the others are
    still drawn; a picture is written whole or not at all).
    notes: a dict that receives, for a panel that has nothing to draw but a sentence (no case,
    no bound badcase), stem -> its lines, printed as text instead of a picture of an empty
    panel."""
    ensure_app()
    errlog.configure_logging()  # a panel's logged failure goes to the error log, not stderr
    caught: list[BaseException] = []  # raised in a Qt slot while a panel redraws
    hook, sys.excepthook = sys.excepthook, lambda _t, e, _tb: caught.append(e)
    try:
        return _render_panels(doc, out_dir, frame, svg, timeline, store, failed, caught,
                              {} if notes is None else notes)
    finally:
        sys.excepthook = hook


def _render_panels(doc, out_dir, frame, svg, timeline, store, failed, caught,
                   notes) -> dict[str, Path]:
    """render_panels' body; `caught` receives the exceptions Qt slots raise meanwhile."""
    from explorer.core.store import Store
    from explorer.session import Session

    session = Session(store if store is not None else Store())
    panels = _start_panels(session, failed)
    payload = _payload(doc, frame)
    session.publish(payload)
    pictures = _Pictures(out_dir, svg, caught, notes)

    # what the first emit raised in a panel's slot belongs to that panel alone
    raised_at_start = list(caught)

    for name, panel in panels.items():
        caught[:] = [e for e in raised_at_start if _raised_in(e, panel)]
        try:
            _draw_panel(pictures, name, panel, session, doc, frame, timeline, store)
        except Exception as e:  # noqa: BLE001 - one panel failing must not lose the others
            _failed(failed, name, e, "could not be drawn")
    for p in panels.values():
        p.close()
        p.deleteLater()
    return pictures.out


def _start_panels(session, failed: list | None) -> dict:
    """The report's panels (name -> widget, in the report's order) on `session`, in their
    print layout; one that cannot start is recorded in `failed` and left out."""
    classes = _panel_classes()
    panels = {}
    for n in PANEL_SIZES:
        if n not in classes:
            continue
        try:  # the timeline panel gets no session: it paints the view fetched here
            panels[n] = classes[n](None if n == "timeline" else session)
        except Exception as e:  # noqa: BLE001 - a panel that cannot start leaves only its picture out
            _failed(failed, n, e, "could not start")
    for panel in panels.values():  # a page's layout: the tree's depth across, the what-if
        if hasattr(panel, "set_print_layout"):  # without its graph (printed on its own), no
            panel.set_print_layout(True)        # "click" hints
    return panels


def _payload(doc: dict, frame: pd.DataFrame | None) -> dict[str, Any]:
    """The results the panels are handed: doc's sections and meta (the SLA's per-run bars
    for the cohort's runs only) and the case frame."""
    payload: dict[str, Any] = {k: doc[k] for k in SECTION_KEYS if k in doc}
    payload["meta"] = doc.get("meta") or {}
    if isinstance(payload.get("sla"), dict):  # per-run bars only for the cohort's runs
        payload["sla"] = for_cohort_runs(
            payload["sla"], (payload["meta"].get("scope") or {}).get("cohort_runs"))[0]
    if frame is not None:
        payload["frame"] = frame
    return payload


class _Pictures:
    """The panels' pictures written so far: out (stem -> PNG path, in out_dir), an SVG beside
    each when svg; caught: what Qt slots raised while the current panel was drawn; notes:
    stem -> the lines of a panel that had only a sentence to show (no picture)."""

    def __init__(self, out_dir: Path, svg: bool, caught: list[BaseException], notes: dict):
        self.out_dir, self.svg, self.caught, self.notes = out_dir, svg, caught, notes
        self.out: dict[str, Path] = {}

    def shoot(self, name: str, widget, stem: str) -> None:
        """Write widget (panel `name`) as <stem>.png at 2x (and .svg), whole or not at all:
        a panel whose drawing raised, in a slot or in its painting, gets no picture."""
        caught = self.caught
        if caught:  # drawing it raised in a slot: no picture of a half-drawn panel
            raise caught[0]
        if getattr(widget, "paint_error", None) is not None:
            raise widget.paint_error
        if hasattr(widget, "ensure_painted"):  # never shown: its value painted now
            widget.ensure_painted()
        lines = text_only(widget)
        if lines is not None:  # a sentence on a grey page: printed as text, no picture
            self.notes[stem] = lines
            return
        _lay_out_for_print(widget, PANEL_SIZES.get(name, QSize(900, 500)))
        image = to_image(widget, 2.0)
        if caught:  # its paintEvent raised while drawing the picture: not written
            raise caught[0]
        self.out[stem] = save_image(image, self.out_dir / f"{stem}.png")
        if self.svg:
            path = save_svg(widget, self.out_dir / f"{stem}.svg", title=stem)
            if caught:
                path.unlink(missing_ok=True)
                self.out.pop(stem).unlink(missing_ok=True)
                raise caught[0]


def text_only(widget) -> list[str] | None:
    """The lines a panel shows instead of a figure (its message: no case, nothing computed;
    the replay's sentences without a table or chart), or None when it shows a figure."""
    if hasattr(widget, "text_only"):
        return widget.text_only()
    msg = widget.message() if hasattr(widget, "message") else None
    return [msg] if msg else None


def _lay_out_for_print(widget, size: QSize) -> None:
    """widget in report mode with print fonts, settled at `size` grown to show its scrolled
    column and its tables' rows whole."""
    report_mode(widget)  # after painting: panels show their controls once data arrives
    print_fonts(widget, size.width())  # >= 7 pt on the page at html.print_width
    settle(widget, size)
    grow = scroll_overflow(widget)
    if grow > 0:  # a scrolled column of results (the what-if's) shown whole
        size = QSize(size.width(), size.height() + grow)
        settle(widget, size)
    grow = table_overflow(widget)
    if grow:  # every row of a table, no scroll bar and no empty tail
        size = QSize(size.width(), max(160, size.height() + grow))
        settle(widget, size)
    grow = axis_label_overflow(widget)
    if grow > 0:  # a vertical axis title longer than its axis (the sweep's) printed whole
        settle(widget, QSize(size.width(), size.height() + grow))


def _draw_panel(pictures: _Pictures, name: str, panel, session, doc: dict,
                frame: pd.DataFrame | None, timeline: tuple[str, str] | None, store) -> None:
    """Write panel `name`'s pictures; none when the report has nothing for it to show."""
    if name == "distributions":
        if frame is not None:
            _draw_distributions(pictures, panel, session, doc.get("comparison"))
    elif name == "timeline":
        if timeline is None or store is None or not hasattr(panel, "show_request"):
            return
        from explorer.core.viewstate.timeline import fetch_view
        panel.show_view(fetch_view(store, *timeline, frame=frame))
        pictures.shoot(name, panel, name)
    elif name == "replay":
        sec = doc.get("replay")
        if not isinstance(sec, dict) or sec.get("status") or not hasattr(panel, "show_report"):
            return
        panel.show_report(sec)
        pictures.shoot(name, panel, name)
    elif name != "header" and name not in doc:
        return  # a section the report did not compute gets no picture
    elif name == "versions":  # the chart only: the report prints the whole table as text
        if getattr(panel, "view", None) is not None:
            panel.view.hide()
        pictures.shoot(name, panel, name)
    elif name == "whatif":
        pictures.shoot(name, panel, name)
        if getattr(panel, "scene", None) is not None and panel.scene.items():
            pictures.out["whatif_graph"] = save_scene_png(panel.scene,
                                                          pictures.out_dir / "whatif_graph.png")
    else:
        pictures.shoot(name, panel, name)


def _draw_distributions(pictures: _Pictures, panel, session, comparison: Any) -> None:
    """The distributions panel once per telling metric: distributions_<metric>.png, the
    first also distributions.png (without a telling metric, the panel's own choice)."""
    for i, m in enumerate(telling_metrics(comparison) or [None]):
        if m:
            session.set_metric(m)
        pictures.shoot("distributions", panel, "distributions" if i == 0 else f"distributions_{m}")
        if i == 0 and m and "distributions" in pictures.out:
            pictures.out[f"distributions_{m}"] = pictures.out["distributions"]
        if i == 0 and "distributions" in pictures.notes:
            return  # no case to draw: one sentence, not one per metric


def _raised_in(e: BaseException, widget) -> bool:
    """True when `widget`'s own code is on the traceback of `e` (a slot of that panel)."""
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_locals.get("self") is widget:
            return True
        tb = tb.tb_next
    return False


def _failed(failed: list | None, name: str, e: Exception, what: str) -> None:
    """Record a panel's failure: its traceback to the error log, its line to `failed`."""
    where = errlog.record(e, f"report panel {name} {what}")
    log.warning("report panel %s %s: %s", name, what, errlog.describe(e))
    if failed is not None:
        failed.append((name, errlog.describe(e), where))


def render(doc: dict, out_dir: str | Path, formats: set[str] | list[str],
           frame: pd.DataFrame | None = None, cases: pd.DataFrame | None = None,
           timeline: tuple[str, str] | None = None, store=None,
           progress: Callable[[str], None] | None = None) -> list[Path]:
    """Write the Qt-rendered parts of the bundle for a report JSON `doc`.

    formats: any of png, svg, html, pdf (others are ignored here). frame: the cohort frame
    (analysis.cohort_frame) for the distributions; cases: badcases listed (escaped) in the
    HTML/PDF; timeline: (run_id, request_id) of the request whose timeline is included (needs
    `store`, the store holding that request).
    Returns the files written. Raises OSError when out_dir cannot be written, and
    ReportIncomplete (after writing everything else) when some panel could not be drawn."""
    from .dashboard import save_dashboard
    from .html import build_html
    from .pdf import pdf_bytes

    formats = set(formats) & QT_FORMATS
    if not formats:
        return []
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = dict(doc)
    meta = dict(doc.get("meta") or {})
    meta.setdefault("generated_at", datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    meta.setdefault("app_version", _version())
    doc["meta"] = meta
    written: list[Path] = []
    step = progress or (lambda _s: None)
    if timeline is None and store is not None and frame is not None:
        timeline = _worst_badcase(frame)
    step("panels")
    failed: list[tuple[str, str, str]] = []
    notes: dict[str, list[str]] = {}
    images = render_panels(doc, out_dir, frame, "svg" in formats, timeline, store, failed, notes)
    step("dashboard")
    images["dashboard"] = save_dashboard(doc, images, out_dir / "dashboard.png")
    # what render_panels wrote: the pictures, and an SVG beside each only when asked for (so a
    # user's own SVG in out_dir is never taken for one of ours)
    pngs = sorted(set(images.values()))
    svgs = pictures_svg(images) if "svg" in formats else []
    if "png" in formats or "svg" in formats:
        written += [p for p in pngs if p.exists()]
    if "svg" in formats:
        written += svgs
    if "html" in formats:
        step("html")
        path = out_dir / "report.html"
        write_text(path, build_html(doc, images, cases=cases, notes=notes))
        written.append(path)
    if "pdf" in formats:
        step("pdf")
        written.append(write_bytes(out_dir / "report.pdf", pdf_bytes(doc, images, cases=cases,
                                                                   notes=notes)))
    # the pictures were only needed to build html / pdf: only the files written here go
    for p in pngs + svgs:
        if p not in written:
            p.unlink(missing_ok=True)
    if failed:
        raise ReportIncomplete(out_dir, [(n, why) for n, why, _ in failed], written,
                               failed[-1][2])
    return written


def write_bundle(store, cohort, out_dir: str | Path, formats=ALL_FORMATS, **report_args) -> list[Path]:
    """Build the report for `cohort` from `store` and write every format asked for (the app's
    File > Export Report and `trace-explorer report` write the same bundle)."""
    from explorer.core import report as core_report

    return core_report.write_report(store, cohort, out_dir, formats=list(formats), **report_args)


def pictures_svg(images: dict[str, Path]) -> list[Path]:
    """The SVG written beside each picture (render_panels), those that exist."""
    return [p.with_suffix(".svg") for p in images.values() if p.with_suffix(".svg").exists()]


def _worst_badcase(frame: pd.DataFrame) -> tuple[str, str] | None:
    """(run_id, request_id) of the cohort's worst bound badcase, or None (explorer.core.timeline)."""
    try:
        from explorer.core.timeline import worst_badcase
        return tuple(worst_badcase(frame))
    except Exception:  # noqa: BLE001 - no bound badcase: the report has no timeline
        return None


def _version() -> str:
    from explorer import __version__
    return __version__
