"""Engine versions from where users keep them (the file, its path, the user) and the run-level
version comparison of published aggregates.

The version pair is written here from the numbers of vllm-project/vllm#14845 ("TTFT
Performance Regression in vLLM v0.7.0 Compared to v0.6.1.post2"): the issue reports TTFT
0.13 s on v0.6.1.post2 and 0.39 s on v0.7.0 for the same benchmark_serving run (QPS 1.2, 4K
prompt, 100 output tokens); each version is one printed result block (the form users paste)
in a folder named after the release, as users keep them."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from explorer.core.analysis.run_versions import compare_run_versions
from explorer.core.errors import NoData
from explorer.core.formats._common import version_rule
from explorer.core.store import Store

BLOCK = """Traffic request rate: 1.2
============ Serving Benchmark Result ============
Successful requests:                     1000
---------------Time to First Token----------------
Mean TTFT (ms):                          {ttft:.2f}
==================================================
"""


@pytest.fixture
def pair(tmp_path):
    """vllm-0.6.1.post2/result.txt and vllm-0.7.0/result.txt (vllm#14845's TTFT)."""
    paths = []
    for folder, ttft in (("vllm-0.6.1.post2", 130.0), ("vllm-0.7.0", 390.0)):
        d = tmp_path / "bench" / folder
        d.mkdir(parents=True)
        (d / "result.txt").write_text(BLOCK.format(ttft=ttft))
        paths.append(d / "result.txt")
    return tmp_path / "bench", paths


@pytest.mark.parametrize("path, version, rule", [
    ("runs/vllm-0.6.1/result.json", "0.6.1", "folder 'vllm-0.6.1' (engine name and version)"),
    ("runs/v0.9.2/result.json", "0.9.2", "folder 'v0.9.2' (v + version)"),
    ("runs/sglang-0.4.3/out.jsonl", "0.4.3", "folder 'sglang-0.4.3' (engine name and version)"),
    ("bench_serve_all_requests_failed_v0.25.1.json", "0.25.1", "(v + version)"),
    ("sweep/vllm==0.10.1.1/run=0.json", "0.10.1.1", "engine name and version"),
    ("vllm-19954-before-0.8.5.txt", "0.8.5", "(a version of three numbers)"),
])
def test_version_from_the_path_names_its_rule(path, version, rule):
    got = version_rule(path)
    assert got is not None and got[0] == version and rule in got[1]


@pytest.mark.parametrize("path", ["aibrix_naive_7_output_0.5.csv", "Meta-Llama-3.1-8B_tp1.json",
                                  "llama31-8b-fp8-tp1-len2048.json", "vllm-19954.txt"])
def test_rates_model_names_and_issue_numbers_are_not_versions(path):
    assert version_rule(path) is None


def test_two_versions_in_folders_give_a_run_level_regression(pair):
    root, _ = pair
    s = Store()
    reports = s.load_paths([root])
    assert all(r.error is None and r.format == "bench_stdout" for r in reports)
    vers = s.df("SELECT engine_version, version_source FROM runs ORDER BY engine_version")
    assert vers["engine_version"].tolist() == ["0.6.1.post2", "0.7.0"]
    assert all("path: folder 'vllm-" in v for v in vers["version_source"])
    res = compare_run_versions(s)
    (ch,) = [c for c in res["changes"] if c["metric"] == "ttft_ms" and c["stat"] == "mean"]
    assert (ch["from_version"], ch["to_version"]) == ("0.6.1.post2", "0.7.0")
    assert ch["change_pct"] == pytest.approx((390 - 130) / 130 * 100)
    assert ch["regression"] and ch["tested"] is False and ch["level"] == "run"


def test_an_improvement_and_a_single_version_are_not_regressions(tmp_path):
    s = Store()
    for folder, ttft in (("v0.1.0", 400.0), ("v0.2.0", 200.0)):
        d = tmp_path / folder
        d.mkdir()
        (d / "r.txt").write_text(BLOCK.format(ttft=ttft))
        s.load_file(d / "r.txt")
    (ch,) = compare_run_versions(s)["changes"]
    assert ch["change_pct"] == pytest.approx(-50.0) and not ch["regression"]
    one = Store()
    one.load_file(tmp_path / "v0.1.0" / "r.txt")
    with pytest.raises(NoData):
        compare_run_versions(one)


def test_engine_version_override_wins_and_is_said(pair, tmp_path):
    root, (old, new) = pair
    r = subprocess.run([sys.executable, "-m", "explorer", "inspect", str(root), "--json",
                        "--engine-version", f"{new}=0.7.0-custom",
                        "--engine-version", f"{tmp_path / 'missing'}=1.0"],
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(r.stdout)
    runs = {d["source_path"]: d for f in doc["files"] for d in f["run_details"]}
    assert runs[str(new)]["engine_version"] == "0.7.0-custom"
    assert runs[str(new)]["version_source"].startswith("user: --engine-version")
    assert runs[str(old)]["engine_version"] == "0.6.1.post2"
    assert any("no loaded run comes from" in w for w in doc["warnings"])
    bad = subprocess.run([sys.executable, "-m", "explorer", "inspect", str(old),
                          "--engine-version", "no-equals-sign"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "PATH=VERSION" in bad.stderr and "Traceback" not in bad.stderr


def test_report_has_runs_and_run_level_versions(pair, tmp_path):
    root, _ = pair
    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "explorer", "report", str(root), "--out", str(out),
                        "--format", "json,md"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "report.json").read_text())
    assert {d["engine_version"] for d in doc["runs"]} == {"0.6.1.post2", "0.7.0"}
    assert all(d["published"] and d["version_source"] for d in doc["runs"])
    regs = [c for c in doc["run_versions"]["changes"] if c["regression"]]
    assert [(c["metric"], c["stat"]) for c in regs] == [("ttft_ms", "mean")]
    text = (out / "report.md").read_text()
    assert "Runs and their published results" in text and "390.00 ms" in text
    assert "**REGRESSION**" in text


def test_published_block_against_a_later_version_folder(tmp_path):
    """The real printed block of ../shared/data/real/published (vLLM 0.8.5 by its file name)
    beside a block of our own in a folder named v0.9.2: the run-level comparison takes the
    published numbers as they are and flags the TTFT increase (not the TPOT decrease)."""
    from tests.conftest import REAL
    before = REAL / "published" / "vllm-19954-before-0.8.5.txt"
    if not before.is_file():
        pytest.skip(f"published artefact missing: {before}")
    after = tmp_path / "v0.9.2" / "result.txt"
    after.parent.mkdir()
    after.write_text("============ Serving Benchmark Result ============\n"
                     "Successful requests:                     10000\n"
                     "---------------Time to First Token----------------\n"
                     "Mean TTFT (ms):                          1500.00\n"
                     "-----Time per Output Token (excl. 1st token)------\n"
                     "Mean TPOT (ms):                          200.00\n"
                     "==================================================\n")
    s = Store()
    assert all(r.error is None for r in s.load_paths([before, after]))
    res = compare_run_versions(s)
    got = {(c["metric"], c["stat"]): c for c in res["changes"]}
    ttft, tpot = got[("ttft_ms", "mean")], got[("tpot_ms", "mean")]
    assert (ttft["from_version"], ttft["to_version"]) == ("0.8.5", "0.9.2")
    assert ttft["change_pct"] == pytest.approx((1500.0 - 987.38) / 987.38 * 100)
    assert ttft["regression"] and not tpot["regression"]
    assert tpot["change_pct"] == pytest.approx((200.0 - 262.05) / 262.05 * 100)
