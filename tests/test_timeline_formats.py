"""Timelines of requests loaded from real formats land with the right times and units.

Expected values are computed here straight from the raw files (json + numpy), not through the
loaders: the AIPerf run in ../shared/data/real/aiperf_example (timestamp_ns, ttft,
request_latency, inter_chunk_latency) and a vLLM `bench serve --save-detailed` result built in
tmp_path from LLMPerf per-request numbers (ttft_s, end_to_end_latency_s, number_output_tokens).
The loaders are engineer T's; a test skips with the reason when its format is not registered.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from explorer.core import timeline as tl
from explorer.core.store import Store


def _need_format(name: str) -> None:
    from explorer.core.formats import get_format
    get_format(name)  # raises KeyError naming the known formats when the loader is missing


@pytest.fixture(scope="module")
def aiperf(real):
    _need_format("aiperf")
    path = real / "aiperf_example" / "profile_export.jsonl"
    s = Store()
    rep = s.load_file(path)
    assert rep.error is None, rep.error
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    yield s, rep.run_ids[0], recs
    s.close()


def _ms(metric: dict) -> float:
    return metric["value"] * {"ms": 1.0, "ns": 1e-6, "s": 1000.0}[metric["unit"]]


def test_aiperf_events_phases_and_itl(aiperf):
    s, run, recs = aiperf
    icl_all = np.concatenate([[_ms({"value": v, "unit": r["metrics"]["inter_chunk_latency"]["unit"]})
                               for v in r["metrics"]["inter_chunk_latency"]["value"]]
                              for r in recs if "inter_chunk_latency" in r["metrics"]])
    p99 = np.percentile(icl_all, 99)
    ok = [r for r in recs if not r.get("error")]
    assert len(ok) == 89
    for r in ok:
        m, rid = r["metrics"], r["metadata"]["x_request_id"]
        t = tl.request_timeline(s, run, rid)
        assert t.source == "events"
        assert t.arrival_s == pytest.approx(r["metadata"]["timestamp_ns"] / 1e9, abs=1e-6)
        ttft, e2e = _ms(m["ttft"]), _ms(m["request_latency"])
        ev = {e.kind: e.t_ms for e in t.events}
        # the store keeps unix seconds in a double: ~0.3 us resolution at 1.76e9 s
        assert ev["arrived"] == pytest.approx(0.0, abs=1e-3)
        assert ev["first_token"] == pytest.approx(ttft, abs=1e-3)
        assert ev["finished"] == pytest.approx(e2e, abs=1e-3)
        assert [p.kind for p in t.phases] == ["prefill", "decode"]
        assert t.phases[1].start_ms == pytest.approx(ttft, abs=1e-3)
        icl = np.array([_ms({"value": v, "unit": m["inter_chunk_latency"]["unit"]})
                        for v in m["inter_chunk_latency"]["value"]])
        assert t.itl.itl_ms == pytest.approx(tuple(icl))
        assert t.itl.t_ms == pytest.approx(tuple(ttft + np.cumsum(icl)), abs=1e-3)
        # the chunks add up to the request latency (AIPerf's own bookkeeping)
        assert t.itl.t_ms[-1] == pytest.approx(e2e, rel=1e-6)
        assert t.itl.above_p99 == tuple(bool(x) for x in icl > p99)
    assert tl.run_p99_itl_ms(s, run) == pytest.approx(p99)


def test_aiperf_cancelled_requests_show_their_error(aiperf):
    s, run, recs = aiperf
    bad = [r for r in recs if r.get("error")]
    assert len(bad) == 11
    for r in bad:
        t = tl.request_timeline(s, run, r["metadata"]["x_request_id"])
        err = [e for e in t.events if e.kind == "error"]
        assert len(err) == 1 and r["error"]["type"] in (err[0].detail or "")
        assert t.phases == () and len(t.itl) == 0


def test_aiperf_neighbours_overlap_in_unix_time(aiperf):
    s, run, recs = aiperf
    ok = [r for r in recs if not r.get("error")]
    r0 = ok[10]
    a0 = r0["metadata"]["timestamp_ns"] / 1e9
    e0 = a0 + _ms(r0["metrics"]["request_latency"]) / 1000
    expect = set()
    for r in recs:
        a = r["metadata"]["timestamp_ns"] / 1e9
        lat = r["metrics"].get("request_latency")
        e = a + (_ms(lat) / 1000 if lat else 0.0)
        if r is not r0 and a <= e0 + 5 and e >= a0 - 5:
            expect.add(r["metadata"]["x_request_id"])
    nb = tl.neighbours(s, run, r0["metadata"]["x_request_id"], window_s=5)
    assert set(nb["request_id"]) == expect and len(expect) > 10


@pytest.fixture(scope="module")
def vllm_detailed(real, tmp_path_factory):
    """A vLLM bench serve --save-detailed result whose per-request numbers come from LLMPerf:
    ttfts = ttft_s, output_lens = number_output_tokens, itls = (n - 1) gaps shaped by a fixed
    pattern and summing to end_to_end_latency_s - ttft_s. Times in seconds, as vLLM writes."""
    _need_format("vllm_bench")
    src = json.loads((real / "llmperf_leaderboard" / "individual" / "anyscale_7b.json").read_text())
    reqs = [r for r in src if not r["error_code"] and r["number_output_tokens"] > 2][:25]
    itls = []
    for r in reqs:
        n = r["number_output_tokens"] - 1
        shape = 1.0 + 0.5 * np.sin(np.arange(n) * 0.7)
        itls.append(list(shape / shape.sum() * (r["end_to_end_latency_s"] - r["ttft_s"])))
    obj = {"date": "20240101-000000", "backend": "vllm", "model_id": "meta-llama/Llama-2-7b-chat-hf",
           "num_prompts": len(reqs), "completed": len(reqs), "duration": 60.0,
           "request_throughput": 0.4, "output_throughput": 50.0,
           "mean_ttft_ms": 1000 * float(np.mean([r["ttft_s"] for r in reqs])),
           "median_ttft_ms": 1000 * float(np.median([r["ttft_s"] for r in reqs])),
           "input_lens": [r["number_input_tokens"] for r in reqs],
           "output_lens": [r["number_output_tokens"] for r in reqs],
           "ttfts": [r["ttft_s"] for r in reqs], "itls": itls,
           "generated_texts": [""] * len(reqs), "errors": [""] * len(reqs)}
    path = tmp_path_factory.mktemp("vllm") / "vllm_detailed.json"
    path.write_text(json.dumps(obj))
    s = Store()
    rep = s.load_file(path)
    assert rep.error is None and rep.format == "vllm_bench", (rep.format, rep.error)
    yield s, rep.run_ids[0], reqs, itls
    s.close()


def test_vllm_detailed_itls_land_in_ms(vllm_detailed):
    s, run, reqs, itls = vllm_detailed
    p99 = np.percentile(np.concatenate(itls) * 1000, 99)
    for i, (r, gaps) in enumerate(zip(reqs, itls)):
        t = tl.request_timeline(s, run, str(i))
        # vLLM bench records no per-request start or event times: derived from the row
        assert t.source == "derived"
        ttft = r["ttft_s"] * 1000
        g = np.asarray(gaps) * 1000
        assert t.itl.itl_ms == pytest.approx(tuple(g))
        assert t.itl.token_index == tuple(range(1, len(g) + 1))
        assert t.itl.t_ms == pytest.approx(tuple(ttft + np.cumsum(g)))
        assert [p.kind for p in t.phases] == ["prefill", "decode"]
        assert [x for p in t.phases for x in (p.start_ms, p.end_ms)] == pytest.approx(
            [0.0, ttft, ttft, r["end_to_end_latency_s"] * 1000])
        assert t.itl.above_p99 == tuple(bool(x) for x in g > p99)
    assert tl.run_p99_itl_ms(s, run) == pytest.approx(p99)
    assert math.isclose(sum(tl.request_timeline(s, run, str(i)).gaps_above_p99
                            for i in range(len(reqs))), int((np.concatenate(itls) * 1000 > p99).sum()))


def test_helm_runtimes_give_an_unsplit_span(real):
    """HELM records when a request was sent (request_datetime, unix s) and how long it ran
    (inference_runtime, s) but no first token: one 'unsplit' span of the runtime."""
    _need_format("helm")
    d = real / "every_eval_ever" / "helm_mmlu_philosophy_gpt2"
    stats = json.loads((d / "per_instance_stats.json").read_text())
    states = json.loads((d / "scenario_state.json").read_text())["request_states"]
    sent = {st["instance"]["id"]: st["result"]["request_datetime"] for st in states}
    s = Store()
    rep = s.load_file(d)
    assert rep.error is None and rep.format == "helm", rep.error
    run = rep.run_ids[0]
    for inst in stats:
        runtime = next(x["mean"] for x in inst["stats"] if x["name"]["name"] == "inference_runtime")
        t = tl.request_timeline(s, run, inst["instance_id"])
        assert t.source == "events" and t.arrival_s == sent[inst["instance_id"]]
        ev = {e.kind: e.t_ms for e in t.events}
        assert ev["arrived"] == 0.0 and ev["finished"] == pytest.approx(runtime * 1000)
        assert [(p.kind, p.start_ms) for p in t.phases] == [("unsplit", 0.0)]
        assert t.phases[0].end_ms == pytest.approx(runtime * 1000)
    s.close()


def test_otlp_span_latencies_and_events(tmp_path):
    """A vLLM llm_request span (gen_ai.latency.* in s, start/end in unix ns) with two span
    events: phases from the latencies, preemption from the events, all in ms from the start."""
    _need_format("otlp")
    t0 = 1_700_000_000_000_000_000
    q, pre, ttft, e2e = 0.120, 0.080, 0.210, 1.500

    def attr(k, v):
        return {"key": k, "value": {"doubleValue": v} if isinstance(v, float) else
                {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "llm_request",
            "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + int(e2e * 1e9)),
            "attributes": [attr("gen_ai.request.id", "req-1"),
                           attr("gen_ai.usage.prompt_tokens", 100),
                           attr("gen_ai.usage.completion_tokens", 50),
                           attr("gen_ai.latency.time_in_queue", q),
                           attr("gen_ai.latency.time_in_model_prefill", pre),
                           attr("gen_ai.latency.time_to_first_token", ttft),
                           attr("gen_ai.latency.e2e", e2e)],
            "events": [{"name": "preempted", "timeUnixNano": str(t0 + 600_000_000)},
                       {"name": "resumed", "timeUnixNano": str(t0 + 900_000_000)}]}
    doc = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "vllm")]},
                              "scopeSpans": [{"spans": [span]}]}]}
    f = tmp_path / "spans.json"
    f.write_text(json.dumps(doc))
    s = Store()
    rep = s.load_file(f)
    assert rep.error is None and rep.format == "otlp", (rep.format, rep.error)
    t = tl.request_timeline(s, rep.run_ids[0], "req-1")
    spans = [(p.kind, p.start_ms, p.end_ms) for p in t.phases]
    assert [k for k, _, _ in spans] == ["queued", "prefill", "decode", "preempted", "decode"]
    assert [x for _, a, b in spans for x in (a, b)] == pytest.approx(
        [0, q * 1e3, q * 1e3, ttft * 1e3, ttft * 1e3, 600, 600, 900, 900, e2e * 1e3], abs=1e-3)
    assert [(p.start_ms, p.end_ms) for p in t.preemptions] == [pytest.approx((600, 900), abs=1e-3)]
    s.close()
