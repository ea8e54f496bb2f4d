"""Header figures: the cohort in one line (cluster badcases + share, binding rate "21/23 (91%)",
control size and category, strongest link level, simulated label)."""
from __future__ import annotations

from typing import Any

from .common import is_missing, ratio, share

from explorer.core.escape import html_text

LEVEL_NAMES = {1: "L1 exact request id", 2: "L2 multi-condition fuzzy", 3: "L3 single-condition (weak)"}


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
        scope = "all categories"
    elif cats:
        scope = ", ".join(cats) if len(cats) <= 3 else f"{len(cats)} categories"
    else:
        scope = "same category"
    size = "–" if n is None else f"{n:,}"
    bound = _count(cohort.get("control_bound"))
    how_text = {"same-category": "correct cases of the badcases' categories",
                "all-correct": "every correct case"}.get(how, str(how or "–"))
    tip = (f"Control group: {how_text}" + (f" ({', '.join(cats)})" if cats and how != "all-correct" else "")
           + ("" if bound is None else f"; {bound:,} bound to a trace request"))
    return f"{size} correct ({scope})", tip


def header_items(cohort: dict | None, meta: dict | None = None,
                 selection: tuple[str, int | None, int | None] | None = None) -> list[tuple[str, str, str]]:
    """The header's (title, value, tooltip) boxes. cohort: the report JSON `cohort` section;
    meta: Session "meta" (simulated, demo_note); selection: (label, n_cases, n_requests)."""
    cohort = cohort or {}
    meta = meta or {}
    items: list[tuple[str, str, str]] = []
    name = cohort.get("cluster") or "all badcases"
    bad = cohort.get("badcases")
    items.append(("Cluster", f"{name}", "The badcase cluster under study"))
    items.append(("Badcases", f"{'–' if is_missing(bad) else f'{int(bad):,}'} ({share(cohort.get('share_of_badcases'))} of badcases)",
                  "Badcases in this cluster and their share of all badcases"))
    items.append(("Bound to traces", ratio(cohort.get("bound"), bad),
                  "Badcases of the cluster bound to an inference request"))
    ctl, tip = control_text(cohort)
    items.append(("Control", ctl, tip))
    lv = strongest_level(cohort)
    levels = _levels(cohort)
    detail = ", ".join(f"L{k}: {v}" for k, v in sorted(levels.items())) or "no case bound"
    items.append(("Strongest link", LEVEL_NAMES.get(lv, "none") if lv else "none", detail))
    amb_b, amb_c = cohort.get("ambiguous_badcases") or 0, cohort.get("ambiguous_control") or 0
    if amb_b or amb_c:
        items.append(("Ambiguous", f"{amb_b:,} bad / {amb_c:,} control",
                      "Cases left unbound because several requests fit equally well (never "
                      "guessed); the Cases panel lists them with their candidates"))
    if selection and selection[0]:
        lab, nc, nr = selection
        items.append(("Selected", f"{selection_text(nc, nr)} · {lab}",
                      f"{lab}: every view shows these cases (Esc clears the selection)"))
    if meta.get("simulated"):
        items.append(("Data", "SIMULATED", meta.get("demo_note") or "Generated data, not a real run"))
    return items


def selection_text(n_cases: int | None, n_requests: int | None) -> str:
    """What a selection holds: "32 cases", "12 cases, 40 requests", or, when a heatmap cell's
    requests belong to no case of the cohort, "5 requests, none bound to a case of this
    cohort"; "…" while it is being computed (n_cases None)."""
    if n_cases is None:
        return "…"
    if n_cases == 0 and n_requests:
        return f"{n_requests:,} request{'s' if n_requests != 1 else ''}, none bound to a case of this cohort"
    return f"{n_cases:,} case{'s' if n_cases != 1 else ''}" + (
        "" if n_requests is None else f", {n_requests:,} request{'s' if n_requests != 1 else ''}")


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
