"""An emoji in a cluster name prints in report.pdf: Symbola (fonts-symbola, installed by
scripts/setup.sh) is behind the CJK faces in the PDF's font list and gets embedded; skipped
where the font or pdffonts is missing."""
from __future__ import annotations

import shutil
import subprocess

import pytest

pytestmark = pytest.mark.timeout(300)


def test_emoji_cluster_name_embeds_a_font_that_has_it(tmp_path, qapp):
    from PySide6.QtGui import QFontDatabase
    if "Symbola" not in QFontDatabase.families() or not shutil.which("pdffonts"):
        pytest.skip("fonts-symbola / poppler-utils not installed")
    from explorer.reporting.pdf import save_pdf
    from tests.report_fixture import sample_doc
    doc = sample_doc()
    doc["cohort"]["cluster"] = "单位换算 🔥🚀 mistakes"
    p = save_pdf(doc, {}, tmp_path / "report.pdf")
    fonts = subprocess.run(["pdffonts", str(p)], capture_output=True, text=True, timeout=60).stdout
    assert "Symbola" in fonts, fonts
