"""Header figures: the cohort in one line (cluster badcases + share, binding rate "21/23 (91%)",
control size and category, strongest link level, simulated label)."""
from __future__ import annotations

from typing import Any

from explorer.core.fmt import by_spec
from .common import is_missing, ratio, share

from explorer.core.escape import html_text
from explorer.core.i18n import N_, _

LEVEL_NAMES = {1: N_("L1 exact request id"), 2: N_("L2 multi-condition fuzzy"), 3: N_("L3 single-condition (weak)")}


def _levels(cohort: dict) -> dict[int, int]:
    out = {}
    for k, v in (cohort.get("link_levels") or {}).items():
        try:
            if not is_missing(v) and int(v) > 0:
                out[int(k)] = int(v)
        except (TypeError, ValueError):
            continue
    return out


def strongest_level(cohort: dict) -> int | None:
    """The strongest (lowest) association level that bound at least one case, or None."""
    lv = _levels(cohort)
    return min(lv) if lv else None


def _categories(cat) -> list[str]:
    """The control's categories as a list of names: a list, a tuple, one name, or the text of a
    Python list (an older report JSON) all give the plain names."""
    if is_missing(cat) and not isinstance(cat, (str, list, tuple)):
        return []
    if isinstance(cat, str):
        t = cat.strip()
        if t.startswith("[") and t.endswith("]"):
            import ast
            try:
                cat = ast.literal_eval(t)
            except (ValueError, SyntaxError):
                cat = [x.strip(" '\"") for x in t[1:-1].split(",")]
        else:
            return [t] if t else []
    if isinstance(cat, (list, tuple, set)):
        return [str(c) for c in cat if c is not None and str(c) != ""]
    return [str(cat)]


def _count(v) -> int | None:
    if isinstance(v, bool) or is_missing(v):
        return None
    return int(v)


def control_text(cohort: dict) -> tuple[str, str]:
    """(value, tooltip) describing the control group: its size and how it was chosen, e.g.
    ("2,821 correct (algebra, arithmetic, geometry)", ...) for the same-category control,
    ("2,821 correct (all categories)", ...) for all-correct; "–" for an unknown size."""
    ctl = cohort.get("control")
    n = _count(cohort.get("control_cases", cohort.get("control_n")))
    how = ctl
    if isinstance(ctl, dict):
        n = _count(ctl.get("n", ctl.get("cases"))) if n is None else n
        how = ctl.get("kind") or ctl.get("name") or ctl.get("control")
    cats = _categories(cohort.get("category"))
    if how == "all-correct":
        scope = _("all categories")
    elif cats:
        scope = ", ".join(cats) if len(cats) <= 3 else _("{n_cats} categories").format(
                n_cats=len(cats))
    else:
        scope = _("same category")
    size = "–" if n is None else by_spec(n, ',')
    bound = _count(cohort.get("control_bound"))
    how_text = {"same-category": _("correct cases of the badcases' categories"),
                "all-correct": _("every correct case"),
                "outside-cluster": _("the cases of the badcases' categories outside the cluster: "
                                     "correct ones and other clusters' badcases")}.get(how, str(how or "–"))
    tip = (_("Control group: {how_text}").format(how_text=how_text) + (f" ({', '.join(cats)})" if cats and how != "all-correct" else "")
           + ("" if bound is None else _("; {bound:,} bound to a trace request").format(
                   bound=bound)))
    if how == "outside-cluster":
        return _("{size} outside the cluster ({scope})").format(size=size, scope=scope), tip
    return _("{size} correct ({scope})").format(size=size, scope=scope), tip


def header_items(cohort: dict | None, meta: dict | None = None,
                 selection: tuple[str, int | None, int | None] | None = None) -> list[tuple[str, str, str]]:
    """The header's (title, value, tooltip) boxes. cohort: the report JSON `cohort` section;
    meta: Session "meta" (simulated, demo_note); selection: (label, n_cases, n_requests)."""
    cohort = cohort or {}
    meta = meta or {}
    items: list[tuple[str, str, str]] = []
    name = cohort.get("cluster") or _("all badcases")
    bad = cohort.get("badcases")
    items.append((_("Cluster"), f"{name}", _("The badcase cluster under study")))
    items.append((_("Badcases"), _("{x} ({share_of_badcases} of badcases)").format(
            x='–' if is_missing(bad) else by_spec(int(bad), ","),
            share_of_badcases=share(cohort.get('share_of_badcases'))),
                  _("Badcases in this cluster and their share of all badcases")))
    items.append((_("Bound to traces"), ratio(cohort.get("bound"), bad),
                  _("Badcases of the cluster bound to an inference request")))
    ctl, tip = control_text(cohort)
    items.append((_("Control"), ctl, tip))
    lv = strongest_level(cohort)
    levels = _levels(cohort)
    detail = ", ".join(f"L{k}: {v}" for k, v in sorted(levels.items())) or _("no case bound")
    items.append((_("Strongest link"), _(LEVEL_NAMES.get(lv, N_("none"))) if lv else _("none"), detail))
    amb_b, amb_c = cohort.get("ambiguous_badcases") or 0, cohort.get("ambiguous_control") or 0
    if amb_b or amb_c:
        items.append((_("Ambiguous"), _("{bad:,} bad / {control:,} control").format(
                          bad=amb_b, control=amb_c),
                      _("Cases left unbound because several requests fit equally well (never "
                        "guessed); the Cases panel lists them with their candidates")))
    if selection and selection[0]:
        lab, nc, nr = selection
        items.append((_("Selected"), f"{selection_text(nc, nr)} · {lab}",
                      _("{lab}: every view shows these cases (Esc clears the selection)").format(
                              lab=lab)))
    if meta.get("simulated"):
        items.append((_("Data"), _("SIMULATED"), meta.get("demo_note") or _("Generated data, not a real run")))
    return items


def selection_text(n_cases: int | None, n_requests: int | None) -> str:
    """What a selection holds: "32 cases", "12 cases, 40 requests", or, when a heatmap cell's
    requests belong to no case of the cohort, "5 requests, none bound to a case of this
    cohort"; "…" while it is being computed (n_cases None)."""
    if n_cases is None:
        return "…"
    if n_cases == 0 and n_requests:
        return _("{n_requests:,} request{x}, none bound to a case of this cohort").format(
                n_requests=n_requests, x='s' if n_requests != 1 else '')
    return _("{n_cases:,} case{x}").format(n_cases=n_cases, x='s' if n_cases != 1 else '') + (
        "" if n_requests is None else _(", {n_requests:,} request{x}").format(
                n_requests=n_requests, x='s' if n_requests != 1 else ''))


def header_html(cohort: dict | None, meta: dict | None = None) -> str:
    """The header as an HTML table row (reports)."""
    cells = "".join(f"<td><div class='t'>{html_text(t)}</div><div class='v'>{html_text(v)}</div></td>"
                    for t, v, _ in header_items(cohort, meta))
    return f"<table class='header'><tr>{cells}</tr></table>"


def summary_line(items: list[tuple[str, str, str]]) -> str:
    """Plain one-line text of the header (clipboard, logs)."""
    return " · ".join(f"{t}: {v}" for t, v, _ in items)


def as_text(value: Any) -> str:
    return "–" if value is None else str(value)
