"""NVIDIA GenAI-Perf run for real against the local endpoint; its exports read back.

`genai-perf profile` (chat, streaming, 20 requests at concurrency 2, 12 output tokens, a word-level
tokenizer built here) runs Triton's perf_analyzer binary (from tritonclient's wheel, see
requirements-tools/genai-perf.txt), which writes the per-request `profile_export.json`
(experiments[].requests[]: timestamp, response_timestamps in ns, one per SSE chunk, and the
chunks); genai-perf then writes its aggregates `profile_export_genai_perf.json` / `.csv`.
Checked:
* the product reads both exports (`[tool.genai_perf]`) as exactly what genai-perf published: every
  statistic of the JSON, and the CSV as the JSON to two decimals (csv_exporter.py `{:,.2f}`);
* genai-perf's own aggregates reproduced from its own per-request file with its definitions
  (genai_perf/profile_data_parser/llm_profile_data_parser.py: chunks without content, the
  `[DONE]` event included, removed first; request_latency = last response - request timestamp,
  time_to_first_token = first response - request timestamp, inter_token_latency =
  round((latency - ttft) / (output tokens - 1)), request_throughput = requests / (last
  response - first request); metrics/statistics.py: np.mean, np.std (population),
  np.percentile);
* the endpoint's truth: 20 requests served, 12 words each.
The endpoint leaves out its last usage-only chunk (`choices: []`) here: genai-perf 0.0.16
indexes choices[0] of every chunk and fails on it.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from explorer.core.store import Store
from tests.openai_endpoint import Endpoint, Timing
from tests.real_tools import TOOLS, build_tokenizer, run_tool, tool_bin

pytestmark = pytest.mark.xdist_group("real_tools_genai_perf")
N, CONC, OSL = 20, 2, 12
# genai-perf's JSON key -> the vocabulary's metric (inter_token_latency is its TPOT: rename)
METRICS = {"time_to_first_token": "ttft_ms", "request_latency": "e2e_ms",
           "inter_token_latency": "tpot_ms", "time_to_second_token": "ttst_ms"}


@pytest.fixture(scope="module")
def genai_perf_run(tmp_path_factory):
    exe = tool_bin("genai-perf")
    venv = TOOLS / "genai-perf"
    libs = [*venv.glob("native/usr/lib/*"), *venv.glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib")]
    d = tmp_path_factory.mktemp("genai_perf")
    tok = build_tokenizer("genai-perf", d / "tokenizer")
    with Endpoint(timing=Timing(base_ms=20, per_prompt_token_ms=0.05, itl_ms=3),
                  usage_chunk=False) as ep:
        run_tool([exe, "profile", "-m", "tiny-model", "--endpoint-type", "chat", "--streaming",
                  "--url", ep.url.removeprefix("http://"), "--tokenizer", tok,
                  "--num-prompts", N, "--request-count", N, "--concurrency", CONC,
                  "--synthetic-input-tokens-mean", 16, "--synthetic-input-tokens-stddev", 0,
                  "--output-tokens-mean", OSL, "--artifact-dir", d / "artifacts"],
                 cwd=d, timeout=400,
                 env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin",
                      "LD_LIBRARY_PATH": ":".join(map(str, libs))})
        log = list(ep.log)
    (art,) = [p.parent for p in (d / "artifacts").rglob("profile_export_genai_perf.json")]
    return art, log


def _published(store: Store, run_id: str) -> dict[tuple[str, str], float]:
    rows = store.con.execute("SELECT metric, stat, value FROM run_metrics WHERE run_id = ?",
                             [run_id]).fetchall()
    return {(m, s): v for m, s, v in rows}


def _loaded(path: Path) -> dict[tuple[str, str], float]:
    s = Store()
    try:
        r = s.load_file(path)
        assert r.error is None and r.format == "published", r.error
        return _published(s, r.run_ids[0])
    finally:
        s.close()


def _stats(values) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    out = {"avg": a.mean(), "min": a.min(), "max": a.max(), "std": a.std()}
    out.update({f"p{q}": np.percentile(a, q) for q in (1, 5, 10, 25, 50, 75, 90, 95, 99)})
    return out


def _own_requests(art: Path) -> list[tuple[int, list[int], int]]:
    """(request timestamp, response timestamps of the chunks with content, output words) per
    request of perf_analyzer's export, after genai-perf's removal of empty chunks."""
    doc = json.loads((art / "profile_export.json").read_text())
    out = []
    for req in doc["experiments"][0]["requests"]:
        stamps, words = [], 0
        for ts, o in zip(req["response_timestamps"], req["response_outputs"]):
            body = o["response"].removeprefix("data: ").strip()
            if not body or body == "[DONE]":
                continue
            text = json.loads(body)["choices"][0]["delta"].get("content") or ""
            if text:
                stamps.append(ts)
                words += len(text.split())
        out.append((req["timestamp"], stamps, words))
    return out


def test_genai_perf_json_is_read_as_published(genai_perf_run):
    art, _ = genai_perf_run
    doc = json.loads((art / "profile_export_genai_perf.json").read_text())
    got = _loaded(art / "profile_export_genai_perf.json")
    n = 0
    for key, metric in METRICS.items():
        assert doc[key]["unit"] == "ms"
        for stat, value in doc[key].items():
            if stat != "unit":
                ours = got[(metric, "mean" if stat == "avg" else stat)]
                assert ours == pytest.approx(value, rel=1e-12), (key, stat)
                n += 1
    assert n == 4 * 13
    assert got[("request_throughput", "value")] == pytest.approx(doc["request_throughput"]["avg"])
    assert got[("output_throughput", "value")] == pytest.approx(
        doc["output_token_throughput"]["avg"])
    assert got[("completion_tokens", "mean")] == pytest.approx(doc["output_sequence_length"]["avg"])


def test_genai_perf_csv_is_its_json_to_two_decimals(genai_perf_run):
    art, _ = genai_perf_run
    js = _loaded(art / "profile_export_genai_perf.json")
    csv = _loaded(art / "profile_export_genai_perf.csv")
    shared = set(js) & set(csv)
    assert {("ttft_ms", "p99"), ("e2e_ms", "mean"), ("tpot_ms", "p50"),
            ("request_throughput", "value")} <= shared
    for k in shared:
        assert csv[k] == pytest.approx(round(js[k], 2), abs=1e-9), k


def test_genai_perf_aggregates_recomputed_from_its_own_requests(genai_perf_run):
    art, log = genai_perf_run
    got = _loaded(art / "profile_export_genai_perf.json")
    reqs = _own_requests(art)
    assert len(reqs) == N
    ttft = [s[0] - t for t, s, _ in reqs]
    lat = [s[-1] - t for t, s, _ in reqs]
    itl = [round((la - tf) / (w - 1)) for (_, _, w), la, tf in zip(reqs, lat, ttft) if w > 1]
    for metric, ns in (("ttft_ms", ttft), ("e2e_ms", lat), ("tpot_ms", itl)):
        for stat, value in _stats(np.asarray(ns) / 1e6).items():
            assert got[(metric, "mean" if stat == "avg" else stat)] == pytest.approx(
                value, rel=1e-9), (metric, stat)
    span_s = (max(s[-1] for _, s, _ in reqs) - min(t for t, _, _ in reqs)) / 1e9
    assert got[("request_throughput", "value")] == pytest.approx(N / span_s, rel=1e-9)
    # the endpoint's truth: every request served, each answer OSL words long
    assert len(log) == N and {r.completion_tokens for r in log} == {OSL}
    assert [w for _, _, w in reqs] == [OSL] * N
