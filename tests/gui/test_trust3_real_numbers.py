"""Issue 33, "every number checked", on real files: the numbers the Versions, SLA and
Distributions panels show for aibrix's naive benchmark at 0.5 req/s on releases 0.2.1 and 0.3.0
with the MMLU-Pro Llama-3.1 8B / 70B outputs, each recomputed here with pandas / scipy from the
published files themselves (the CSVs and the JSON lists), never from the window's results.

Definitions (resources/metrics.toml [records.aibrix], from aibrix's benchmark client): ttft_ms = ttft
x 1000; tpot_ms = generation_time / (generation_tokens - 1) x 1000; e2e_ms = (finish_time -
launch_time) x 1000. SLA (DESIGN `sla`): a request meets it when TTFT <= 500 ms and TPOT <= 50
ms/token (no error column in these files); goodput = met requests over the runs' wall time,
first launch to last finish of each run, summed over runs. Answer length = characters of the
prediction text (queries/analysis_case_view.sql: length(prediction))."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.gui.conftest import on_screen, painted

RELEASES = {"0.2.1": "ps_experiment_v0.2.1_20250323", "0.3.0": "ps_experiment_v0.3.0_20250519"}


def _csv(real, version):
    df = pd.read_csv(real / "aibrix" / RELEASES[version] / "naive_output_0.5.csv")
    return pd.DataFrame({
        "ttft_ms": df["ttft"] * 1000.0,
        "tpot_ms": np.where(df["generation_tokens"] > 1,
                            df["generation_time"] / (df["generation_tokens"] - 1) * 1000.0, np.nan),
        "e2e_ms": (df["finish_time"] - df["launch_time"]) * 1000.0,
        "prompt_tokens": df["prompt_tokens"].astype(float),
        "completion_tokens": df["generation_tokens"].astype(float),
        "launch": df["launch_time"], "finish": df["finish_time"]})


def _num(text: str) -> float:
    return float(re.sub(r"[^\d.\-+]", "", text.replace(",", "")))


def _decimals(text: str) -> int:
    t = re.sub(r"[^\d.]", "", text.split(" ")[0].replace(",", ""))
    return len(t.split(".")[1]) if "." in t else 0


@pytest.fixture
def real_session(real, window, qtbot):
    files = [real / "aibrix" / RELEASES[v] / "naive_output_0.5.csv" for v in RELEASES]
    mmlu = sorted((real / "mmlu_pro_outputs").glob("*.json"))
    if not all(f.exists() for f in files) or len(mmlu) != 2:
        pytest.skip("aibrix / MMLU-Pro files not present")
    s = window.session
    window.resize(1366, 768)
    window.load([str(f) for f in files] + [str(real / "mmlu_pro_outputs")])
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.data.get("conclusion") is not None
                    and s.data.get("versions") is not None, timeout=180000)
    painted(window)
    return window, {v: _csv(real, v) for v in RELEASES}, mmlu


def test_versions_cells_are_the_files_means(real_session, qtbot):
    window, data, _mmlu = real_session
    panel = on_screen(window, qtbot, "versions")
    heads = panel.model.headers
    col = {h: i for i, h in enumerate(heads)}
    metric_of = {"TTFT (ms)": "ttft_ms", "TPOT (ms/token)": "tpot_ms", "E2E latency (ms)": "e2e_ms",
                 "prompt tokens": "prompt_tokens", "output tokens": "completion_tokens"}
    seen = set()
    for row in panel.model.rows:
        m = metric_of.get(row[col["Metric"]])
        if m is None:
            continue
        seen.add(m)
        a, b = data[row[col["From"]]][m].dropna(), data[row[col["To"]]][m].dropna()
        for cell, want in ((row[col["From value"]], a.mean()), (row[col["To value"]], b.mean())):
            assert _num(cell) == pytest.approx(want, abs=0.5 * 10 ** -_decimals(cell) + 1e-9), (m, cell, want)
        change = 100 * (b.mean() / a.mean() - 1)
        assert _num(row[col["Change"]]) == pytest.approx(change, abs=0.05 + 1e-9), (m, row)
        p_cell = row[col["p"]]
        if p_cell == "< 0.001":   # the table's p is the Mann-Whitney U of the requests
            assert stats.mannwhitneyu(a, b, alternative="two-sided").pvalue < 0.001, m
    assert {"ttft_ms", "tpot_ms", "e2e_ms"} <= seen


def test_sla_summary_and_bars_are_the_files_attainment(real_session, qtbot):
    window, data, _mmlu = real_session
    panel = on_screen(window, qtbot, "sla")
    met = {v: (d["ttft_ms"] <= 500) & (d["tpot_ms"] <= 50) for v, d in data.items()}
    n = sum(len(d) for d in data.values())
    k = sum(int(x.sum()) for x in met.values())
    wall = sum(d["finish"].max() - d["launch"].min() for d in data.values())
    text = panel.summary.text()
    m = re.search(r": (\d+)% of ([\d,]+) requests met; goodput ([\d.]+) req/s", text)
    assert m, text
    assert int(m.group(2).replace(",", "")) == n
    assert int(m.group(1)) == round(100 * k / n)
    assert float(m.group(3)) == pytest.approx(k / wall, abs=0.005)
    # every bar: its label's n and its length (attainment %), per version and per run
    from PySide6.QtWidgets import QGraphicsItem  # noqa: F401 - pyqtgraph items are Qt items
    import pyqtgraph as pg
    bars = [it for it in panel.plot.items if isinstance(it, pg.BarGraphItem)]
    widths = bars[0].opts["width"]
    ticks = panel.plot.getAxis("left")._tickLevels[0]
    assert len(ticks) == len(widths) >= 3
    for (_y, label), w in zip(ticks, widths):
        v = next((v for v in data if f": {v} (" in label or f":{v}:" in label), None)
        if label.startswith("all requests"):
            assert w == pytest.approx(100 * k / n) and f"(n={n})" in label
        elif v is not None:
            assert w == pytest.approx(100 * met[v].mean()), label
            assert f"(n={len(data[v])})" in label


def test_distribution_legend_is_the_outputs_lengths(real_session, qtbot):
    """Answer length of the largest cluster's badcases against its control (correct cases of
    its category), both models pooled: n and mean in the legend, by pandas from the JSON."""
    window, _data, mmlu = real_session
    s = window.session
    rows = [r for f in mmlu for r in json.loads(f.read_text())]
    df = pd.DataFrame({"src": [r["src"] for r in rows],
                       "correct": [r["pred"] == r["answer"] for r in rows],
                       "chars": [len(r.get("generated_text") or r.get("model_outputs") or "") for r in rows]})
    panel = on_screen(window, qtbot, "distributions")
    i = panel.metric_box.findData("prediction_chars")
    assert i >= 0
    panel.metric_box.setCurrentIndex(i)
    qtbot.wait(50)
    cluster = s.cluster
    assert cluster and cluster.startswith("ori_mmlu")
    part = df[df["src"] == cluster]
    bad, ctl = part[~part["correct"]], part[part["correct"]]
    import html
    texts = [html.unescape(label.text) for _, label in panel.plot.legend.items]  # as drawn
    got = {}
    for t in texts:
        m = re.search(r"(Badcase|Control) \(n=([\d,]+), mean ([\d,.]+) chars\)", t)
        if m:
            got[m.group(1)] = (int(m.group(2).replace(",", "")), float(m.group(3).replace(",", "")))
    assert got["Badcase"][0] == len(bad) and got["Control"][0] == len(ctl), (got, texts)
    assert got["Badcase"][1] == pytest.approx(bad["chars"].mean(), abs=0.5)
    assert got["Control"][1] == pytest.approx(ctl["chars"].mean(), abs=0.5)
    p = stats.mannwhitneyu(bad["chars"], ctl["chars"], alternative="two-sided").pvalue
    if p < 0.001 / 2:   # the legend's p is BH-adjusted (>= raw): "< 0.001" needs a small raw p
        assert any("p adj. < 0.001" in t for t in texts), texts
