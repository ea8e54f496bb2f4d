"""A report panel with nothing to draw but a sentence (no case in the cohort, no bound badcase and
a capacity sweep that plots nothing) is printed as that sentence, not as a large empty grey
picture; a picture that is included has a figure on it (real files: a Mooncake trace alone, two
AIBrix runs with MMLU-Pro outputs bound to none of their requests)."""
import base64
import json
import re
import shutil
import subprocess
import unicodedata

import numpy as np
import pytest
from PySide6.QtGui import QImage

from explorer.__main__ import main

IMG = re.compile(r"<img src='data:image/png;base64,([^']*)'[^>]*alt='([^']*)'")
PANEL_GREY = (239, 239, 239)  # the window's background: a panel pictured without a figure


def _pictures(html: str) -> dict[str, np.ndarray]:
    """alt -> RGB pixels of each picture embedded in the HTML."""
    out = {}
    for data, alt in IMG.findall(html):
        img = QImage.fromData(base64.b64decode(data)).convertToFormat(QImage.Format.Format_RGB888)
        w, h, bpl = img.width(), img.height(), img.bytesPerLine()
        a = np.frombuffer(img.constBits(), np.uint8, count=h * bpl).reshape(h, bpl)[:, :3 * w]
        out[alt] = a.reshape(h, w, 3).copy()
    return out


def _grey_share(px: np.ndarray) -> float:
    return float((np.abs(px.astype(int) - PANEL_GREY).sum(axis=2) <= 3).mean())


def _saturated_share(px: np.ndarray) -> float:
    """Share of coloured pixels (curves, bars), not grey or black text."""
    p = px.astype(int)
    return float((p.max(axis=2) - p.min(axis=2) > 60).mean())


def _report(tmp_path, files) -> tuple[str, str, dict]:
    rc = main(["report", *map(str, files), "--out", str(tmp_path), "--format", "json,html,pdf",
               "--no-whatif"])
    assert rc == 0
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    pdf = subprocess.run(["pdftotext", "-layout", str(tmp_path / "report.pdf"), "-"],
                         capture_output=True, text=True, check=True).stdout
    pdf = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", pdf))  # the "ﬁ" ligature: "fi"
    return html, pdf, _pictures(html)


needs_pdftotext = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext")


@needs_pdftotext
def test_trace_alone_prints_sentences_and_draws_the_sweep(real, tmp_path):
    html, pdf, pics = _report(tmp_path, [real / "mooncake" / "synthetic_trace.jsonl"])
    # no case: the distributions are the cohort's reason (not the window's "choose a cluster"),
    # in the HTML and the PDF, not a grey picture
    assert "Distributions" not in pics
    assert "choose a cluster" not in html and "choose a cluster" not in pdf
    assert "Distributions no eval cases are loaded: load an eval file" in pdf  # under its heading
    assert "<h2>Distributions</h2><p class='why'>no eval cases are loaded" in html
    # nothing to picture in the timeline: its reason under its heading (it was a bare heading)
    assert ("Timeline of the worst badcase no bound badcase to show (no badcase of this cohort is "
            "bound to a request") in pdf
    for alt, px in pics.items():
        assert _grey_share(px) < 0.5, alt  # every picture is a figure, not an empty panel
    # no bound badcase, but the sweep has rows: its chart is drawn, with its curves on it
    replay = [px for alt, px in pics.items() if alt.startswith("Replay")]
    assert len(replay) == 1 and _saturated_share(replay[0]) > 0.001


@needs_pdftotext
def test_sweep_without_a_curve_is_text(real, tmp_path):
    aib = real / "aibrix"
    html, pdf, pics = _report(tmp_path, [
        aib / "ps_experiment_v0.2.1_20250323" / "naive_output_0.5.csv",
        aib / "ps_experiment_v0.3.0_20250519" / "naive_output_0.5.csv",
        real / "mmlu_pro_outputs"])
    # no prefix information and 0 preemptions at every capacity: nothing to plot
    assert not [alt for alt in pics if alt.startswith("Replay")]
    section = html.split("<h2>Replay", 1)[1].split("<h2>", 1)[0]
    for run in ("aibrix:0.2.1:naive_output_0.5", "aibrix:0.3.0:naive_output_0.5"):
        line = (f"Capacity sweep of {run} (55 requests, LRU): no prefix information in this "
                "trace (no hash_ids): hit rates not meaningful; preemptions 0 → 0.")
        assert line in section and line in pdf
    assert "nothing to replay." in section and "nothing to replay." in pdf
    for alt, px in pics.items():
        assert _grey_share(px) < 0.5, alt


def test_without_a_cohort_every_run_keeps_its_sla_row(real, tmp_path):
    """A trace without an eval has no cohort: its run is not "an other run that served no case
    of this cohort" (the report said so and dropped the run's row)."""
    trace = real / "aibrix" / "ps_experiment_v0.3.0_20250519" / "naive_output_0.5.csv"
    assert main(["report", str(trace), "--out", str(tmp_path), "--format", "json,html",
                 "--no-whatif", "--no-replay"]) == 0
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert doc["meta"]["scope"]["cohort_runs"] is None
    run = next(r for r in doc["sla"]["by"]["run"])
    section = html.split("<h2>SLA attainment", 1)[1].split("<h2>", 1)[0]
    assert "served no case" not in section
    assert f"<td>run</td><td>{run['key']}</td><td>{round(100 * run['share'])}%</td><td>{run['n']}</td>" in section
