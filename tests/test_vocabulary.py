"""One vocabulary: the same value reads the same in every front end. The same comparison rows,
cohort and clusters go through the Comparison panel's cells, the HTML report's tables,
report.md (rendered by a Markdown parser, so escaping does not count) and the command line;
each quantity's text must be identical everywhere, and equal to the text written down here
("0.25%" of badcases is "<1%", never "0.2%" in one place and "<1%" in another)."""
from __future__ import annotations

import html
import io
import re
from contextlib import redirect_stderr
from types import SimpleNamespace

import pytest
from markdown_it import MarkdownIt

from explorer.core import fmt
from explorer.core import report as core_report
from explorer.core import i18n

ROWS = [
    {"metric": "kv_cache_hit_rate", "kind": "numeric", "bad_mean": 0.31234, "control_mean": 0.7249,
     "diff_pct": -56.9412, "p_value": 0.0004, "p_adjusted": 0.0021, "cohens_d": -1.904,
     "hedges_g": -1.89, "rank_biserial": -0.612, "rank_biserial_ci_low": -0.7,
     "rank_biserial_ci_high": -0.5, "n_bad": 1204, "n_control": 3588},
    {"metric": "tpot_ms", "kind": "numeric", "bad_mean": 18.34, "control_mean": 99.97,
     "diff_pct": 0.04, "p_value": 0.61234, "p_adjusted": 0.7, "cohens_d": 0.0004,
     "hedges_g": None, "rank_biserial": None, "n_bad": 50, "n_control": 150},
    {"metric": "preempted", "kind": "categorical", "bad_mean": 0.0025, "control_mean": 0.997,
     "diff_pct": None, "p_value": None, "p_adjusted": None, "cohens_d": None,
     "odds_ratio": 2.104, "n_bad": 50, "n_control": 150},
]
# (bad mean, control mean, diff, p, p adj., d, n) of each row, written out by hand
EXPECTED = [
    ("0.31", "0.72", "-56.9%", "< 0.001", "0.002", "-1.90", "1,204 / 3,588"),
    ("18.3 ms/token", "100 ms/token", "+0.0%", "0.612", "0.700", "0.00", "50 / 150"),
    ("<1%", ">99%", "–", "–", "–", "OR 2.10", "50 / 150"),
]
COHORT = {"cluster": "sign | errors", "category": "alg", "badcases": 2, "share_of_badcases": 0.0025,
          "bound": 1, "binding_rate": 0.5, "control": "same-category", "control_cases": 1500,
          "control_bound": 1497, "link_levels": {"1": 1498}}
CLUSTERS = [{"cluster": "sign | errors", "badcases": 1204, "share": 0.997, "bound": 1203,
             "binding_rate": 1203 / 1204, "categories": ["alg"]},
            {"cluster": "units", "badcases": 3, "share": 0.0025, "bound": 0, "binding_rate": 0.0,
             "categories": []}]


@pytest.fixture(autouse=True)
def english():
    before = i18n.language()
    i18n.set_language("en")
    yield
    i18n.set_language(before)


def _text(cell_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", cell_html)).strip()


def _table_rows(html_text: str) -> list[list[str]]:
    """Cells of every row of the first table of an HTML fragment, as plain text."""
    table = re.search(r"<table.*?</table>", html_text, re.S).group(0)
    return [[_text(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, re.S)]
            for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]


def _markdown_rows(md: str) -> list[list[str]]:
    return _table_rows(MarkdownIt("commonmark").enable("table").render(md))


def test_a_comparison_row_reads_the_same_in_the_panel_the_html_and_report_md():
    from explorer.widgets.painters.comparison import comparison_html, comparison_rows
    panel = comparison_rows(ROWS)                         # the Comparison panel's cells
    page = _table_rows(comparison_html(ROWS))[1:]         # report.html (and the PDF)
    md = _markdown_rows(core_report._md_comparison(ROWS))[1:]
    for want, p, h, m in zip(EXPECTED, panel, page, md):
        bad, ctl, diff, pv, padj, d, n = want
        assert p[1:7] == [bad, ctl, diff, pv, padj, d] and p[8] == n
        assert h[1:] == p[1:]
        # report.md has "Diff at equal workload (adjusted p)" after Diff (issue 35): '–' here,
        # these rows carry no adjusted test
        assert m[1:4] + m[5:7] == [bad, ctl, diff, pv, padj] and m[4] == "–" and m[10] == n
        assert m[7].split(" / ")[0] == d                  # "Cohen's d / Hedges' g"
    assert md[0][8] == panel[0][7] == "-0.61 [-0.70, -0.50]"  # rank-biserial r [CI]


def test_shares_of_the_cohort_read_the_same_in_the_header_report_md_and_the_command_line():
    from explorer.cli.report import _print_bound
    from explorer.widgets.painters.header import header_html, header_items
    items = {k: v for k, v, _tip in header_items(COHORT)}
    page = _text(header_html(COHORT))
    md = MarkdownIt("commonmark").enable("table").render(core_report._md_cohort(COHORT))
    cohort_md = {r[0]: r[1] for r in _table_rows(md)}
    err = io.StringIO()
    with redirect_stderr(err):
        _print_bound(SimpleNamespace(bound=1, total=2, rate=0.5))
    # share of all badcases: 0.25 % is "<1%" everywhere
    assert "(<1% of badcases)" in items["Badcases"] and "(<1% of badcases)" in page
    assert cohort_md["Share of all badcases"] == "<1%"
    # binding rate: "1/2 (50%)" in the header, the HTML and report.md; the CLI says the share
    assert items["Bound to traces"] == cohort_md["Bound to a trace request"] == "1/2 (50%)"
    assert "1/2 (50%)" in page and err.getvalue().strip().endswith("(50%)")


def test_cluster_rows_read_the_same_in_the_clusters_panel_and_report_md():
    from explorer.widgets.clusters import _format_row
    texts = ("every badcase", "", "bound %1", "categories %1")
    panel = [_format_row({"name": c["cluster"], "badcases": c["badcases"], "share": c["share"],
                          "bound": c["bound"], "categories": c["categories"]}, 0, texts)[0]
             for c in CLUSTERS]
    md = _markdown_rows(core_report._md_clusters(CLUSTERS))[1:]
    assert [p[1:4] for p in panel] == [m[1:4] for m in md] == [
        ["1,204", ">99%", "1,203 (>99%)"], ["3", "<1%", "0 (0%)"]]


@pytest.mark.parametrize("value, text", [(0.0025, "<1%"), (0.997, ">99%"), (0.913, "91%"),
                                         (0.0, "0%"), (1.0, "100%"), (None, "–"),
                                         (float("nan"), "–")])
def test_share_text(value, text):
    assert fmt.share(value) == text


@pytest.mark.parametrize("value, metric, text", [
    (18.34, "tpot_ms", "18.3 ms/token"), (0.31234, "kv_cache_hit_rate", "0.31"),
    (99.97, None, "100"), (1904.4, "ttft_ms", "1,904 ms"), (1.5, None, "1.5"),
    (-0.00001, None, "-1.00e-05"), (0, None, "0"), (None, "ttft_ms", "–")])
def test_number_text(value, metric, text):
    assert fmt.num(value, metric) == text
