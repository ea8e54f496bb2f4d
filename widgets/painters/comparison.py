"""Metric comparison table: badcase vs control means, diff %, Mann-Whitney U p, BH-adjusted p,
Cohen's d, n per group (report JSON `comparison`: list of rows)."""
from __future__ import annotations

from explorer.core.fmt import effect_cell, mean_cell, n_cell, rank_cell
from explorer.core.escape import html_text
from explorer.core.i18n import N_, _

from .common import is_missing, label, pct, pval, significant

HEADERS = [N_("Metric"), N_("Badcase"), N_("Control"), N_("Diff"), "p", N_("p adj."), "d",
           N_("r (rank) [95% CI]"), N_("n bad / ctl")]
TIPS = [N_("Metric (unit)"), N_("Badcase mean (share of requests for yes/no signals)"),
        N_("Control mean"), N_("(badcase - control) / |control|"),
        N_("Mann-Whitney U, two-sided (Fisher's exact for yes/no signals)"),
        N_("Benjamini-Hochberg adjusted across the metrics"),
        N_("Cohen's d: badcase minus control over the pooled SD (odds ratio for yes/no signals)"),
        N_("Rank-biserial correlation, the effect size of the Mann-Whitney test: share of pairs "
           "where the badcase is higher minus share where it is lower (DeLong 95% interval)"),
        N_("badcases / control cases with a value")]


def headers_for(other: str) -> list[str]:
    """HEADERS of a selection's comparison: "Selected" against "Rest" (the rest of the
    cohort) or "Control"."""
    return [_("Metric"), _("Selected"), _("Rest") if other == "rest" else _("Control"), _("Diff"),
            "p", _("p adj."), "d", _("r (rank) [95% CI]"),
            _("n sel / ") + ("rest" if other == "rest" else "ctl")]


def sort_key(row: dict, col: int):
    """Sort value of one cell: the metric's name (text) or the number, None when missing (the
    table's model sorts numbers numerically and missing values last)."""
    keys = [None, "bad_mean", "control_mean", "diff_pct", "p_value", "p_adjusted", "cohens_d",
            "rank_biserial", "n_bad"]
    if col == 0:
        return label(row.get("metric", ""), False)
    v = row.get(keys[col])
    return None if is_missing(v) else float(v)


def comparison_rows(rows: list[dict] | None) -> list[list[str]]:
    """Formatted cells per row, in HEADERS order (the core's cells: report.md writes the same
    text); a significant row's metric gets a leading '★'."""
    out = []
    for r in rows or []:
        m = str(r.get("metric", "?"))
        cat = r.get("kind") == "categorical"
        out.append([("★ " if significant(r) else "") + label(m) + (_(" (share)") if cat else ""),
                    mean_cell(r, "bad_mean"), mean_cell(r, "control_mean"),
                    pct(r.get("diff_pct")), pval(r.get("p_value")), pval(r.get("p_adjusted")),
                    effect_cell(r), rank_cell(r), n_cell(r)])
    return out


def to_markdown(rows: list[dict] | None) -> str:
    """GitHub Markdown table; significant rows (BH-adjusted p < 0.05) marked with ★."""
    lines = ["| " + " | ".join(_(h) for h in HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    for cells in comparison_rows(rows):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines.append("")
    lines.append(_("★ Benjamini-Hochberg adjusted p < 0.05"))
    return "\n".join(lines)


def to_tsv(rows: list[dict] | None) -> str:
    """Tab-separated, raw numbers (for spreadsheets): metric and the JSON fields."""
    keys = ["metric", "bad_mean", "control_mean", "diff_pct", "p_value", "p_adjusted",
            "cohens_d", "n_bad", "n_control"]
    lines = ["\t".join(keys)]
    for r in rows or []:
        lines.append("\t".join("" if is_missing(r.get(k)) and k != "metric" else str(r.get(k, ""))
                               for k in keys))
    return "\n".join(lines)


def comparison_html(rows: list[dict] | None) -> str:
    """HTML table (reports); significant rows get class 'sig'."""
    head = "".join(f"<th>{html_text(_(h))}</th>" for h in HEADERS)
    body = []
    for r, cells in zip(rows or [], comparison_rows(rows)):
        cls = " class='sig'" if significant(r) else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{html_text(c)}</td>" for c in cells) + "</tr>")
    return f"<table class='comparison'><tr>{head}</tr>{''.join(body)}</table>"
