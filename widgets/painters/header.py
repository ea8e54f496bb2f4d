"""Header figures: the cohort in one line (cluster badcases + share, binding rate "21/23 (91%)",
control size and category, strongest link level, simulated label)."""
from __future__ import annotations

import html
from typing import Any

from .common import is_missing, ratio, share

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


def control_text(cohort: dict) -> tuple[str, str]:
    """(value, tooltip) describing the control group: its size and how it was chosen."""
    ctl = cohort.get("control")
    n = cohort.get("control_cases", cohort.get("control_n"))
    how = ctl
    if isinstance(ctl, dict):
        n = ctl.get("n", n)
        how = ctl.get("kind") or ctl.get("name") or ctl.get("control")
    cat = cohort.get("category")
    if isinstance(cat, (list, tuple)):
        cat = ", ".join(map(str, cat)) if len(cat) <= 3 else f"{len(cat)} categories"
    scope = {"same-category": f"correct, {cat}" if cat else "correct, same category",
             "all-correct": "all correct cases"}.get(how, str(how or "–"))
    size = "–" if is_missing(n) else f"{int(n)}"
    bound = cohort.get("control_bound")
    tip = f"Control group: {how or '–'}" + ("" if is_missing(bound) else f"; {int(bound)} bound to a trace request")
    return f"{size} ({scope})", tip


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
    items.append(("Badcases", f"{'–' if is_missing(bad) else int(bad)} ({share(cohort.get('share_of_badcases'))} of all)",
                  "Badcases in this cluster and their share of all badcases"))
    items.append(("Bound to traces", ratio(cohort.get("bound"), bad),
                  "Badcases of the cluster bound to an inference request"))
    ctl, tip = control_text(cohort)
    items.append(("Control", ctl, tip))
    lv = strongest_level(cohort)
    levels = _levels(cohort)
    detail = ", ".join(f"L{k}: {v}" for k, v in sorted(levels.items())) or "no case bound"
    items.append(("Strongest link", LEVEL_NAMES.get(lv, "none") if lv else "none", detail))
    if selection and selection[0]:
        lab, nc, nr = selection
        val = "…" if nc is None else f"{nc} cases" + (f", {nr} requests" if nr is not None else "")
        items.append(("Selected", val, lab))
    if meta.get("simulated"):
        items.append(("Data", "SIMULATED", meta.get("demo_note") or "Generated data, not a real run"))
    return items


def header_html(cohort: dict | None, meta: dict | None = None) -> str:
    """The header as an HTML table row (reports)."""
    cells = "".join(f"<td><div class='t'>{html.escape(t)}</div><div class='v'>{html.escape(v)}</div></td>"
                    for t, v, _ in header_items(cohort, meta))
    return f"<table class='header'><tr>{cells}</tr></table>"


def summary_line(items: list[tuple[str, str, str]]) -> str:
    """Plain one-line text of the header (clipboard, logs)."""
    return " · ".join(f"{t}: {v}" for t, v, _ in items)


def as_text(value: Any) -> str:
    return "–" if value is None else str(value)
