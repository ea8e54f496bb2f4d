"""A report of an eval beside traces that serve none of its cases (issue 18): the MMLU-Pro 8B
outputs with both aibrix releases (132 CSVs, 133 inputs). Per-run SLA rows only for the runs
that serve the cohort (here none), the other runs in one line; long lists of inputs cut as
"and N more"; every format (Markdown, HTML, the PDF typeset from it) says the same. Counts
come from the raw files (pandas), not from the product."""
from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest

from explorer.__main__ import main

FOLDERS = ("aibrix/ps_experiment_v0.2.1_20250323", "aibrix/ps_experiment_v0.3.0_20250519")
EVAL = "mmlu_pro_outputs/Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json"


@pytest.fixture(scope="module")
def unrelated(real, tmp_path_factory):
    out = tmp_path_factory.mktemp("unrelated")
    rc = main(["report", str(real / EVAL), *(str(real / f) for f in FOLDERS), "--out", str(out),
               "--format", "json,md", "--no-whatif", "--no-replay", "--lang", "en"])
    assert rc == 0
    csvs = sorted(p for f in FOLDERS for p in (real / f).glob("*.csv"))
    requests = sum(len(pd.read_csv(p)) for p in csvs)
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return out, doc, csvs, requests


def test_no_run_serves_the_cohort_so_none_gets_a_row(unrelated):
    out, doc, csvs, requests = unrelated
    assert len(csvs) == 132 and len(doc["inputs"]) == 133
    assert doc["cohort"]["bound"] == 0 and doc["meta"]["scope"]["cohort_runs"] == []
    assert doc["sla"]["attainment"]["n_unjudged"] == 0  # every aibrix row has TTFT and TPOT
    assert len(doc["sla"]["by"]["run"]) == 132       # report.json keeps every run
    md = (out / "report.md").read_text(encoding="utf-8")
    sla = md[md.index("## SLA attainment"):md.index("## What-if")]
    line = (f"132 other runs served no case of this cohort: attainment 0% to 100%, "
            f"{requests:,} judged requests (every run is in report.json).")
    assert line in sla
    assert "By run" not in sla and "aibrix_high_low_output" not in sla
    tenants = len(doc["sla"]["by"]["tenant"])
    assert tenants > 12 and f"By tenant (12 largest of {tenants}):" in sla
    assert sla.count("\n| ") <= 2 * (2 + 2) + 12 + 2   # version and tenant tables only


def test_inputs_are_named_with_and_n_more_in_markdown(unrelated):
    out, doc, csvs, _ = unrelated
    md = (out / "report.md").read_text(encoding="utf-8")
    inputs = next(ln for ln in md.splitlines() if ln.startswith("- Inputs: "))
    assert inputs.endswith("and 127 more")           # 6 named of 133
    assert inputs.startswith("- Inputs: Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json, ")
    listing = md[md.index("## Inputs"):]
    assert "133 files, grouped by folder" in listing and "(66 files)" in listing
    assert "(1 file)" in listing and "1 files" not in listing


def test_html_and_pdf_say_the_same(unrelated, tmp_path):
    from explorer.reporting.html import build_html
    out, doc, csvs, requests = unrelated
    html = build_html(doc, {})
    assert "and 127 more" in html
    assert "132 other runs served no case of this cohort" in html
    sla = html[html.index("<table class='sla'>"):]
    sla = sla[:sla.index("</table>")]
    assert "aibrix_high_low_output" not in sla             # no per-run row
    assert sla.count("<tr>") == 1 + 2 + 12                # header, 2 versions, 12 tenants
    assert "tenant: the 12 largest of" in html
    prov = html[html.index("Provenance"):]
    assert prov.count("<tr>") == 1 + 3                    # three folders, not 133 rows
    # the PDF is typeset from the same HTML: its text says it too, in few pages
    from explorer.reporting import render
    render(doc, tmp_path, {"pdf"})
    pdf = tmp_path / "report.pdf"
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    flat = " ".join(text.split())
    assert "132 other runs served no case of this cohort" in flat and "and 127 more" in flat
    pages = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    # 8: the runs compared (first 4 pairs) and the SLA over time joined the report (issues 30, 31)
    assert int(next(ln.split()[-1] for ln in pages.splitlines() if ln.startswith("Pages:"))) <= 8
