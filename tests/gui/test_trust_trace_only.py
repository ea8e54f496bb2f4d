"""Issue 33, item 6: a session of traces without eval cases opens on what it can answer: the
SLA-over-time tab in front (the Versions tab when the traces give no SLA windows), and a
conclusion whose first sentence says what the traces show (runs,
requests), then the regressions between engine versions, never a sentence about badcases that
do not exist. The counts and the median TTFT change are recomputed with pandas from the CSVs
(aibrix's ttft column is in seconds)."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.gui.conftest import painted


def test_traces_without_cases_say_first_what_they_found(real, window, qtbot):
    root = real / "aibrix"
    files = [root / f"ps_experiment_v{v}" / f"naive_output_{x}.csv"
             for v in ("0.2.1_20250323", "0.3.0_20250519") for x in ("2.9", "3.3")]
    files.append(root / "ps_experiment_v0.2.1_20250323" / "ps_naive_output_0.1.csv")
    if not all(f.exists() for f in files):
        pytest.skip("aibrix files not present")
    s = window.session
    window.load([str(f) for f in files])
    qtbot.waitUntil(lambda: (s.data.get("meta") or {}).get("runs") == 5
                    and s.runner.pending() == 0 and s.data.get("conclusion") is not None,
                    timeout=120000)
    painted(window)
    qtbot.waitUntil(lambda: s.runner.pending() == 0, timeout=60000)
    # in front: SLA over time when the traces give windows (issue 31), else Versions (issue 33)
    front = "sla" if (s.data.get("sla_diagnosis") or {}).get("windows") else "versions"
    assert window.docks[front].visibleRegion().isEmpty() is False
    text = window.panels["conclusion"].text.toPlainText()
    n_req = sum(len(pd.read_csv(f)) for f in files)
    first = text.split(". ")[0]
    assert first.startswith("No eval cases are loaded, so no badcase is analysed")
    assert f"5 runs with {n_req:,} requests" in first
    assert "Independently of these badcases" not in text and "bound badcases" not in text
    # TTFT from 0.2.1 to 0.3.0 on the two benchmarks run on both: the median change, by pandas
    mean = {(v, x): pd.read_csv(root / f"ps_experiment_v{v}" / f"naive_output_{x}.csv")["ttft"].mean()
            for v in ("0.2.1_20250323", "0.3.0_20250519") for x in ("2.9", "3.3")}
    ch = [100 * (mean[("0.3.0_20250519", x)] / mean[("0.2.1_20250323", x)] - 1) for x in ("2.9", "3.3")]
    m = re.search(r"TTFT regressed from 0\.2\.1 to 0\.3\.0 on (\d+) of (\d+) benchmarks compared "
                  r"\(median change ([-+][\d.]+)%", text)
    assert m and m.group(2) == "2" and int(m.group(1)) <= 2, text
    assert abs(float(m.group(3)) - sum(ch) / 2) <= 0.05 + 1e-9, (m.group(3), ch)
    assert "1 benchmark were run on one release only" in text or \
        "1 benchmark was run on one release only" in text or "one release only" in text
