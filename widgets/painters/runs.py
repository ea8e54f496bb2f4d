"""HTML of the report's `runs` and `run_versions` sections (report.html and the PDF): per run
its label, engine, version and where the version came from, flags in the warning colour, and
the headline published aggregates beside the product's recomputation."""
from __future__ import annotations

from explorer.core.fmt import by_spec
from explorer.core.escape import html_text as esc
from explorer.core.report_runs import (MD_MAX_RUNS, NO_SUCCESS, SHOWN, fmt_published,
                                       none_published, others_unpublished, overview)
from explorer.widgets import palette
from explorer.core.i18n import _


def _overview_html(runs: list) -> str:
    """The runs side by side (report_runs.overview), flagged runs in the warning colour."""
    heads, rows = overview(runs)
    warn = f" style='color:{palette.BAD}'"
    body = "".join(f"<tr{warn if r[-1] == _(NO_SUCCESS) else ''}>" + "".join(f"<td>{esc(c)}</td>" for c in r)
                   + "</tr>" for r in rows)
    first = f"<th width='20%'>{esc(heads[0])}</th>"  # the run's name: the widest cell
    return ("<table><tr>" + first + "".join(f"<th>{esc(h)}</th>" for h in heads[1:]) + "</tr>"
            + body + "</table>")


def runs_html(runs: list) -> str:
    shown = [r for r in runs or [] if r.get("published") or r.get("flags")]
    rest = len(runs or []) - len(shown)
    if not shown:
        return f"<p>{esc(none_published(len(runs or [])))}</p>"
    out = [_overview_html(shown[:MD_MAX_RUNS])]
    unknown = _("engine?")
    for r in shown[:MD_MAX_RUNS]:
        if not r.get("flags") and not r.get("recomputed"):
            continue  # its numbers are all in the overview
        ver = r.get("engine_version") or _("unknown version")
        src = f" ({r['version_source']})" if r.get("version_source") else ""
        out.append(f"<p><b>{esc(r.get('label') or r['run_id'])}</b>: "
                   f"{esc(r.get('engine') or unknown)} {esc(ver)}{esc(src)}<br>"
                   f"<span class='sub'>{esc(r.get('source_path') or '')}</span></p>")
        for f in r.get("flags") or []:
            out.append(f"<p style='color:{palette.BAD}'><b>{esc(f)}</b></p>")
        pub = {(p["metric"], p["stat"]): p for p in r.get("published") or []}
        rec = {(p["metric"], p["stat"]): p for p in r.get("recomputed") or []}
        rows = []
        for key in SHOWN:
            if key in pub:
                p, c = pub[key], rec.get(key)
                again = "" if c is None else (c.get("note") or fmt_published(c["recomputed"], p["unit"]))
                name = key[0] + ("" if key[1] == "value" else f" {key[1]}")
                rows.append(f"<tr><td>{esc(name)}</td><td>{esc(fmt_published(p['value'], p['unit']))}"
                            f"</td>" + (f"<td>{esc(again)}</td>" if rec else "") + "</tr>")
        if rows:
            pub_h, val_h, rec_h = _("published"), _("value"), _("recomputed from the requests")
            head = (f"<tr><th>{esc(pub_h)}</th><th>{esc(val_h)}</th>"
                    + (f"<th>{esc(rec_h)}</th>" if rec else "") + "</tr>")
            out.append("<table>" + head + "".join(rows) + "</table>")
    if len(shown) > MD_MAX_RUNS:
        more = _("{n} more runs in report.json.").format(n=len(shown) - MD_MAX_RUNS)
        out.append(f"<p class='sub'>{esc(more)}</p>")
    if rest:
        out.append(f"<p class='sub'>{esc(others_unpublished(rest))}</p>")
    return "".join(out)


def run_versions_html(v: dict) -> str:
    ch = (v or {}).get("changes") or []
    rows = []
    flag = _("REGRESSION")
    for c in ch[:30]:
        pct = "n/a" if c.get("change_pct") is None else f"{by_spec(c['change_pct'], '+.1f')} %"
        cls = " class='sig'" if c.get("regression") else ""
        rows.append(f"<tr{cls}><td>{esc(c.get('engine') or '')} {esc(c.get('benchmark') or '')}</td>"
                    f"<td>{esc(c['metric'])} {esc(c['stat'])}</td>"
                    f"<td>{esc(c['from_version'])} → {esc(c['to_version'])}</td>"
                    f"<td>{esc(fmt_published(c['from_value'], c.get('unit')))}</td>"
                    f"<td>{esc(fmt_published(c['to_value'], c.get('unit')))}</td><td>{esc(pct)}</td>"
                    f"<td>{flag if c.get('regression') else ''}</td></tr>")
    return ("<p class='sub'>Published aggregates, one number per version: the bad direction and "
            "at least the minimum change flag a regression; nothing is tested.</p><table><tr>"
            "<th>engine / benchmark</th><th>metric</th><th>versions</th><th>old</th><th>new</th>"
            "<th>change</th><th>flag</th></tr>" + "".join(rows) + "</table>")
