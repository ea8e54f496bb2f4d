"""`report` on engine logs alone: the `engine` section (JSON and Markdown) holds their
statistics per engine, as the published logs print them."""
from __future__ import annotations

import json
import re

import pytest

from explorer.core.analysis.cohort import Cohort
from explorer.core.report import build_report, render_markdown
from tests.conftest import REAL

PUB = REAL / "published"
pytestmark = pytest.mark.skipif(not PUB.is_dir(), reason=f"published real files missing: {PUB}")


@pytest.fixture(scope="module")
def doc():
    from explorer.core.store import Store
    store = Store()
    for f in ("vllm-30738-v1-dp2-two-engines-mfu.txt", "vllm-43295-v1-engine-log.txt",
              "sglang-1270-decode-batch-no-date.txt", "korean-doc-vllm-0.6-llama31-metrics.prom.txt"):
        assert store.load_file(PUB / f).error is None
    out = build_report(store, Cohort(), whatif=False).doc
    store.close()
    return json.loads(json.dumps(out))  # what report.json holds


def _run(doc, stem):
    return next(r for r in doc["engine"]["runs"] if r["run_id"].endswith(stem))


def test_engine_section_per_engine_and_server(doc):
    dp = _run(doc, "vllm-30738-v1-dp2-two-engines-mfu")
    assert [e["engine"] for e in dp["engines"]] == ["0", "1"]
    assert [e["running_max"] for e in dp["engines"]] == [106, 106]
    assert [e["waiting_max"] for e in dp["engines"]] == [22, 22]
    assert dp["server"] == {"engines": 2, "peak_running": 212, "peak_running_ts_s": 10,
                            "waiting_at_peak": 44}
    assert dp["first_stat_line_time"] == "12-15 18:51:34"
    mtp = _run(doc, "vllm-43295-v1-engine-log")["engines"][0]
    assert mtp["series"]["running"] == [18, 18, 18, 21, 20]
    assert mtp["series"]["waiting"] == [43, 42, 33, 23, 23]
    assert mtp["gen_tps_max"] == 1242.7 and mtp["kv_usage_gpu_max"] == pytest.approx(0.984)
    sgl = _run(doc, "sglang-1270-decode-batch-no-date")["engines"][0]
    assert sgl["engine"] == "TP0" and sgl["samples"] == 10 and sgl["gen_tps_max"] == 447.31
    prom = _run(doc, "korean-doc-vllm-0.6-llama31-metrics.prom")["engines"][0]
    assert prom["prefix_cache_hit_rate_mean"] is None  # the -1 sentinel is no data
    assert doc["meta"]["sections_without_data"]  # no eval: the cohort sections say why


def test_engine_section_in_markdown(doc):
    md = render_markdown(doc)
    sec = md.split("## Engine statistics", 1)[1].split("\n## ", 1)[0]
    assert "peak 212 running at 10 s, 44 waiting then" in sec
    assert re.search(r"\| 0 \| 2 \| 10 s \| 53\.5 / 106 \| 11 / 22 \|", sec)
    assert "| TP0 | 10 |" in sec


def test_report_command_on_engine_logs_alone(tmp_path):
    """`trace-explorer report LOG LOG` with nothing else loaded: exit 0, and the report's
    engine section holds the logs' statistics (vllm#43295: 5 V1 lines, running 18-21)."""
    import subprocess
    import sys
    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "explorer", "report",
                        str(PUB / "vllm-43295-v1-engine-log.txt"),
                        str(PUB / "sglang-1270-decode-batch-no-date.txt"),
                        "--out", str(out), "--format", "json,md"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "report.json").read_text())
    mtp = _run(doc, "vllm-43295-v1-engine-log")["engines"][0]
    assert (mtp["samples"], mtp["running_max"], mtp["waiting_max"]) == (5, 21, 43)
    sec = (out / "report.md").read_text().split("## Engine statistics", 1)[1].split("\n## ", 1)[0]
    assert "| 0 | 5 | 40 s | 19 / 21 |" in sec and "| TP0 | 10 |" in sec


def test_engine_section_states_the_scraped_engine_settings(doc):
    """The Korean guide's scrape: prefix caching off and 2,375 GPU blocks of 16 tokens
    (vllm:cache_config_info), next to its -1 hit-rate gauge."""
    prom = _run(doc, "korean-doc-vllm-0.6-llama31-metrics.prom")
    assert prom["settings"] == {"enable_prefix_caching": "False", "block_size": "16",
                                "num_gpu_blocks": "2375", "gpu_memory_utilization": "0.9"}
    assert _run(doc, "vllm-43295-v1-engine-log")["settings"] is None  # a log states none
    md = render_markdown(doc)
    assert ("Engine settings (vllm:cache_config_info): enable_prefix_caching = False, "
            "block_size = 16, num_gpu_blocks = 2375, gpu_memory_utilization = 0.9.") in md


def test_engine_html_states_the_settings(doc):
    from explorer.widgets.painters.engine import engine_html
    html = engine_html(doc["engine"])
    assert "engine settings (vllm:cache_config_info): enable_prefix_caching = False" in html
