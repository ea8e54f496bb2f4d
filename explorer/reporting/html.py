"""report.html (and the HTML that the PDF is typeset from): one self-contained document built
from the report JSON (../shared/DESIGN.md), the panel images and the painters' HTML tables.

Every piece of input text (cluster names, prompts, predictions, file names) is escaped with
escape.html_text; images are embedded (data: URIs for the HTML file, resource URLs for the PDF).
"""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Callable

import pandas as pd

from explorer.core.fmt import by_spec
from explorer.core import sections
from explorer.core.escape import html_text
from explorer.core.i18n import N_, _
from explorer.core.names import plural
from explorer.core.report import (MD_MAX_INPUTS, folder_files, grouped_files, input_groups,
                                  listed_inputs, loaded_inputs, scope_lines)
from explorer.widgets import palette
from explorer.widgets.painters.compare import REPORT_MAX_PAIRS, compare_html
from explorer.widgets.painters.comparison import comparison_html
from explorer.widgets.painters.conclusion import conclusion_html
from explorer.widgets.painters.engine import engine_html
from explorer.widgets.painters.header import header_html
from explorer.widgets.painters.sla import sla_html
from explorer.core.analysis.sla_report import html as sla_diagnosis_html, sections_view
from explorer.widgets.painters.runs import run_versions_html, runs_html
from explorer.widgets.painters.versions import versions_html

from .images import TEXT_WIDTH

esc = html_text

CSS = f"""
body {{ font-family: 'DejaVu Sans', 'WenQuanYi Micro Hei', sans-serif; color: {palette.TEXT};
       max-width: 1100px; margin: 24px auto; font-size: 10pt; }}
h1 {{ font-size: 17pt; margin-bottom: 2px; }} h2 {{ font-size: 13pt; margin-top: 22px;
       border-bottom: 1px solid {palette.GRID}; }}
.sub {{ color: {palette.MUTED}; }} .why {{ color: {palette.MUTED}; font-style: italic; }}
.sim {{ background: {palette.WARN}; color: black; padding: 6px 10px; font-weight: bold; }}
table {{ border-collapse: collapse; margin: 6px 0; }}
td, th {{ border: 1px solid {palette.GRID}; padding: 3px 6px; text-align: left; vertical-align: top; }}
th {{ background: #F4F4F4; }} tr.sig td {{ font-weight: bold; }}
table.header td {{ border: none; padding-right: 18px; }} .t {{ color: {palette.MUTED}; font-size: 8pt; }}
.v {{ font-size: 12pt; font-weight: bold; }}
img {{ max-width: 100%; }} code {{ font-size: 9pt; }} .foot {{ color: {palette.MUTED}; font-size: 8pt; }}
"""

# What the document shows of each section: (image name or None when the HTML table says it
# all, table painter). build_html writes them in the registry's reading order (sections.DOCUMENT)
# under the sections' titles, but for the distributions, a picture of the cohort frame that is no
# section of the JSON.
SHOWN = {
    "comparison": (None, lambda v: comparison_html(v)),
    "distributions": ("distributions", None),
    "tree": ("tree", None),
    "heatmap": ("heatmap", None),
    "runs": (None, lambda v: runs_html(v)),
    "versions": ("versions", lambda v: versions_html(v)),
    "run_versions": (None, lambda v: run_versions_html(v)),
    "compare": (None, lambda v: compare_html(v, REPORT_MAX_PAIRS)),
    "sla": ("sla", lambda v: sla_html(v)),
    "whatif": ("whatif", None),
    "replay": ("replay", None),
    "timeline": ("timeline", None),
    "sla_diagnosis": (None, lambda v: sla_diagnosis_html(v)),
    "engine": ("engine", lambda v: engine_html(v)),
    "conclusion": (None, lambda v: conclusion_html(v)),
}
# The sections not shown among the others, and where they are instead.
ELSEWHERE = {"cohort": "the header (header_html)", "inputs": "the footer (provenance_html)",
             "clusters": "not shown (report.md lists them)",
             "strata": "not shown (report.md lists them)"}
SECTIONS = [(k, *SHOWN[k]) for k in sections.DOCUMENT if k not in ELSEWHERE]
TITLES = sections.TITLES


def data_uri(path: Path) -> str:
    """A PNG/SVG file as a data: URI (the HTML stays one self-contained file)."""
    mime = "image/svg+xml" if path.suffix == ".svg" else "image/png"
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def missing_reason(value) -> str | None:
    """Why a section has no content (its own reason, or 'not computed'), else None."""
    if value is None:
        return _("This section was not computed for this report.")
    if isinstance(value, dict) and value.get("status") in ("no_data", "error", "cancelled"):
        return str(value.get("reason") or value["status"])
    if isinstance(value, list) and not value:
        return _("No rows.")
    return None


def title_of(doc: dict) -> str:
    cohort = doc.get("cohort") or {}
    cluster = cohort.get("cluster") if isinstance(cohort, dict) else None
    return _("Trace Explorer postmortem: {cluster}").format(cluster=cluster or _("all badcases"))


def build_html(doc: dict, images: dict[str, Path], image_src: Callable[[str, Path], str] | None = None,
               cases=None, for_pdf: bool = False, notes: dict | None = None) -> str:
    """The whole report as one HTML string.

    doc: the report JSON dict; images: panel name -> PNG path; image_src(name, path) gives the
    <img src> (default: a data: URI); cases: optional DataFrame of the cohort's badcases
    (prompt, prediction, ...) listed at the end, escaped; notes: picture name -> the lines a
    panel with nothing to draw showed (bundle.text_only), printed in place of its picture."""
    notes = notes or {}
    src = image_src or (lambda _n, p: data_uri(p))
    meta = doc.get("meta") or {}
    out = [f"<html><head><meta charset='utf-8'><title>{esc(title_of(doc))}</title>"
           f"<style>{CSS}</style></head><body>",
           f"<h1>{esc(title_of(doc))}</h1>",
           f"<p class='sub'>{esc(str(meta.get('generated_at', '')))} · Trace Explorer "
           f"{esc(str(meta.get('app_version', '')))}</p>"]
    if meta.get("simulated"):
        note = meta.get("demo_note") or _("Simulated data.")
        out.append(f"<p class='sim'>{esc(note)}</p>")
    cohort = doc.get("cohort")
    if isinstance(cohort, dict) and "status" not in cohort:
        out.append(header_html(cohort, meta))
    out.append("<p class='scope'>" + "<br>".join(f"<b>{esc(t)}:</b> {esc(v)}" for t, v in scope_lines(meta))
               + "</p>")
    if "dashboard" in images and not for_pdf:
        heading = _("Dashboard")
        out.append(f"<h2>{esc(heading)}</h2><p><img src='{src('dashboard', images['dashboard'])}' alt='dashboard'></p>")
    doc = sections_view(doc)  # the SLA over time as a section of its own
    for key, img, table in SECTIONS:
        if key not in doc and (img is None or (img not in images and img not in notes)):
            continue
        title = _(TITLES[key])
        out.append(f"<h2>{html_text(title)}</h2>")
        value = doc.get(key)
        why = _why_missing(key, value, doc, drawn=img in images or img in notes)
        if why:
            out.append(f"<p class='why'>{esc(why)}</p>")
            continue
        for name in (BEFORE.get(img), img):
            if name in images:  # in its own paragraph: QTextDocument sets an image inline
                width = f" width='{print_width(name, images[name])}'" if for_pdf else ""
                out.append(f"<p><img src='{src(name, images[name])}'{width} alt='{html_text(title)}'></p>")
            elif name in notes:  # nothing to draw: its sentences, not an empty grey picture
                out.append("<p class='note'>" + "<br>".join(esc(t) for t in notes[name]) + "</p>")
        if key == "sla":  # per-run rows only for the runs that served the cohort
            # the panel's picture carries the summary line: printed once (it was twice)
            out.append(sla_html(value, (meta.get("scope") or {}).get("cohort_runs"),
                                with_summary="sla" not in images))
        elif table is not None:
            out.append(table(value))
    if cases is not None and len(cases):
        out.append(badcase_table(cases))
    out.append(provenance_html(doc))
    out.append("</body></html>")
    return "".join(out)


def _why_missing(key: str, value, doc: dict, drawn: bool) -> str | None:
    """The sentence printed instead of a section, or None. The distributions are pictured from
    the cohort's rows (no doc entry of their own): without a cohort, the cohort's reason, not the
    window's "choose a cluster"; the timeline's picture comes from the rows too, so its doc entry
    speaks only when nothing was drawn."""
    if key == "distributions":
        return missing_reason(doc.get("cohort"))
    if key == "timeline" and drawn:
        return None
    return missing_reason(value)


WIDE = ("tree", "whatif", "timeline", "replay")  # printed at the text's width (now every figure is)
BEFORE = {"whatif": "whatif_graph"}  # a figure printed above a panel's picture
# figures drawn at their natural size (the causal graph: 8.5 pt labels at scale 1), printed
# at this many page px per figure px: 8.5 pt x 1.3 x 96 / 144 = 7.4 pt on paper
NATURAL = {"whatif_graph": 1.3}


def print_width(name: str, path: Path) -> int:
    """The <img width> of a figure in the PDF (page px at 144 dpi; the text is 920 wide)."""
    if name in NATURAL:
        from PySide6.QtGui import QImageReader
        px = QImageReader(str(path)).size().width() / 2  # saved at 2x
        return int(min(920, max(200, NATURAL[name] * px)))
    return TEXT_WIDTH  # every figure at the text's width: chart text >= 7 pt (print_fonts)
CASES_LISTED = 50  # badcase rows in the HTML / PDF listing
LINKS = {1: N_("exact id"), 2: N_("fuzzy"), 3: N_("weak")}


def badcase_table(cases, limit: int = CASES_LISTED) -> str:
    """The cohort's badcases: case, prompt, prediction, bound request and how it was bound,
    every row or "the first N of M" (M from cases.attrs["total"] when the caller cut it)."""
    total = max(int(cases.attrs.get("total") or 0), len(cases))
    shown = cases.head(limit)
    note = "<p class='why'>" + esc(
        _("The first {shown:,} of {total:,} badcases, by case id.").format(
                shown=len(shown), total=total)
        if len(shown) < total else
        _("The {badcases}, by case id.").format(badcases=plural(total, "badcase")) if total == 1 else
        _("All {badcases}, by case id.").format(badcases=plural(total, "badcase"))) + "</p>"
    head = "".join(f"<th width='{w}%'>{esc(t)}</th>" for t, w in (
        (_("case"), 12), (_("prompt"), 36), (_("prediction"), 26), (_("request"), 18), (_("link"), 8)))
    rows = []
    for r in shown.itertuples(index=False):
        req, level = getattr(r, "request_id", None), getattr(r, "level", None)
        bound = req is not None and not pd.isna(req)
        run = getattr(r, "run_id", None)
        request = (f"{req}" + (f" ({run})" if run is not None and not pd.isna(run) else "")) if bound \
            else _("not bound")
        known = bound and level is not None and not pd.isna(level)
        link = (_(LINKS[int(level)]) if int(level) in LINKS else str(level)) if known else "–"
        rows.append("<tr>" + "".join(f"<td>{esc(_short(v))}</td>" for v in (
            getattr(r, "case_id", ""), getattr(r, "prompt", ""), getattr(r, "prediction", ""),
            request, link)) + "</tr>")
    heading = _("Badcases of the cohort")
    return (f"<h2>{esc(heading)}</h2>{note}<table class='cases'><tr>{head}</tr>"
            + "".join(rows) + "</table>")


def provenance_html(doc: dict) -> str:
    """The footer: input files with format, sha256 and rows; the app version; simulated flag."""
    meta = doc.get("meta") or {}
    rows = []
    files = doc.get("inputs") or []
    loaded = loaded_inputs(files)
    grouped = len(loaded) > MD_MAX_INPUTS  # as report.md: per folder and format beyond that
    if grouped:
        rows = ["<tr>" + "".join(f"<td>{esc(str(x))}</td>" for x in (
            folder_files(folder, n), fmt, "–", by_spec(loaded_rows, ','), by_spec(skipped, ','), ""))
            + "</tr>" for folder, fmt, n, loaded_rows, skipped in input_groups(files)]
        files = [f for f in files if f.get("error") or f.get("ignored")]
    for f in files:
        rows.append("<tr>" + "".join(f"<td>{esc(str(x))}</td>" for x in (
            Path(str(f.get("path", ""))).name, f.get("format") or "–", (f.get("sha256") or "–")[:16],
            f.get("rows_loaded", 0), f.get("rows_skipped", 0),
            f.get("error") or (_("ignored: {why}").format(why=f['ignored']) if f.get("ignored") else ""))) + "</tr>")
    heads = (_("input"), _("format"), "sha256", _("rows"), _("skipped"), _("error / note"))
    table = ("<table class='foot'><tr>" + "".join(f"<th>{esc(h)}</th>" for h in heads) + "</tr>"
             + "".join(rows) + "</table>") if rows else ""
    if grouped:
        table = (f"<p class='foot'>{esc(grouped_files(listed_inputs(doc.get('inputs') or [])))}</p>"
                 + table)
    sim = " " + _("Data: SIMULATED.") if meta.get("simulated") else ""
    foot = _("Trace Explorer {version}, generated {when}.").format(
        version=meta.get("app_version", ""), when=meta.get("generated_at", ""))
    heading = _("Provenance")
    return f"<h2>{esc(heading)}</h2>{table}<p class='foot'>{esc(foot + sim)}</p>"


def _short(v, n: int = 160) -> str:
    s = "" if v is None else str(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def compare_document(doc: dict) -> str:
    """compare.html: one self-contained document."""
    title = _("Runs compared")
    return (f"<html><head><meta charset='utf-8'><title>{html_text(title)}</title><style>{CSS}</style>"
            f"</head><body><h1>{html_text(title)}</h1>{compare_html(doc)}</body></html>")
