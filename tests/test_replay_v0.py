"""vLLM V0's default scheduler without chunked prefill (EngineConfig.chunked_prefill False, the
aibrix v0.2.1 pods' vLLM v0.7.0 with --enable-chunked-prefill false): whole prompts in
prefill-only steps during which nobody decodes; checked by hand and against stepping."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.core.replay import EngineConfig, TraceRequest, simulate
from explorer.core.replay.engine import _Engine

V0 = EngineConfig(step_base_ms=10.0, step_per_decode_seq_ms=1.0, step_per_prefill_token_ms=0.01,
                  step_prefill_base_ms=5.0, max_num_batched_tokens=32000, chunked_prefill=False)


def test_lone_prompt_in_one_step_then_decodes():
    """20,000 tokens under a 32,000 budget: one step of 10 + 5 + 200 ms, then 4 decode steps
    of 11 ms (a V1 engine with budget 8192 would take three chunk steps)."""
    r = simulate([TraceRequest("a", 0.0, 20000, 5)], V0, record_itl=True).requests.iloc[0]
    assert r.ttft_ms == pytest.approx(215.0)
    assert r.tpot_ms == pytest.approx(11.0)
    assert r.e2e_ms == pytest.approx(215.0 + 4 * 11.0)


def test_decodes_stand_still_while_another_prompt_prefills():
    """a (1,000 tokens, 11 out) starts at 0; b (5,000 tokens, 3 out) arrives at 50 ms. V0:
    b's prefill step (10 + 5 + 50 ms) runs alone and a's decode waits it out; V1 (chunked)
    rides a's decode along it. By hand below."""
    trace = [TraceRequest("a", 0.0, 1000, 11), TraceRequest("b", 0.05, 5000, 3)]
    rq = simulate(trace, V0).requests.set_index("request_id")
    # a: prefill step 0 -> 25 ms (first token); decode steps of 11 ms at 25, 36, 47 -> 58
    # (tokens 2..4); b visible at the step starting at 58 ms: prefill-only 58 -> 123 ms;
    # then a and b decode together (12 ms a step): a needs 11 - 4 = 7 more, b 2 more.
    assert rq.loc["b", "ttft_ms"] == pytest.approx(123.0 - 50.0)
    a_end = 123.0 + 2 * 12.0 + 5 * 11.0
    assert rq.loc["a", "e2e_ms"] == pytest.approx(a_end)
    assert rq.loc["a", "tpot_ms"] == pytest.approx((a_end - 25.0) / 10)
    assert rq.loc["b", "e2e_ms"] == pytest.approx(123.0 + 2 * 12.0 - 50.0)
    # the same with chunked prefill (V1): a's decode rides along b's prefill step
    v1 = simulate(trace, EngineConfig(**{**V0.to_dict(), "chunked_prefill": True})).requests
    v1 = v1.set_index("request_id")
    assert v1.loc["b", "ttft_ms"] == pytest.approx(58.0 + 10 + 1 + 5 + 50 - 50.0)


def test_two_prompts_that_do_not_fit_the_budget_go_in_two_steps():
    """Two 20,000-token prompts at once: 40,000 > 32,000, so one prefill step each (V0 does
    not chunk the second)."""
    trace = [TraceRequest("a", 0.0, 20000, 2), TraceRequest("b", 0.0, 20000, 2)]
    rq = simulate(trace, V0).requests.set_index("request_id")
    assert rq.loc["a", "ttft_ms"] == pytest.approx(215.0)
    assert rq.loc["b", "ttft_ms"] == pytest.approx(430.0)   # a's decode waits: no decode step


def test_v0_jumps_equal_step_by_step():
    """Decode-only jumps give what stepping gives in V0 mode, under memory pressure too."""
    rng = np.random.default_rng(5)
    t = np.cumsum(rng.exponential(0.05, 200))
    trace = [TraceRequest(str(i), float(t[i]), int(rng.integers(50, 3000)),
                          int(rng.integers(2, 200))) for i in range(200)]
    cfg = EngineConfig(**{**V0.to_dict(), "num_gpu_blocks": 900, "max_num_batched_tokens": 4096})
    out = []
    for jumps in (True, False):
        eng = _Engine(trace, cfg, record_events=True, record_itl=False)
        eng.jumps = jumps
        eng.run(None, None)
        out.append(eng.result())
    a, b = out
    assert a.summary["preemptions"] > 0 and a.summary["steps"] == b.summary["steps"]
    assert a.summary["finished"] == 200
    num = a.requests.select_dtypes("number").columns
    assert np.allclose(a.requests[num].to_numpy(float), b.requests[num].to_numpy(float),
                       equal_nan=True, rtol=1e-9)


# -- the deployment's engine facts, and the same model in replay, the panel and validation ----
from tests.conftest import REAL  # noqa: E402

AIBRIX = REAL / "aibrix"
V021 = AIBRIX / "ps_experiment_v0.2.1_20250323"
V030 = AIBRIX / "ps_experiment_v0.3.0_20250519"
needs_real = pytest.mark.skipif(not V030.is_dir(), reason="real aibrix data absent")
FACTS = ("chunked_prefill", "max_num_batched_tokens", "max_num_seqs", "step_per_kv_token_ms",
         "num_gpu_blocks")


def _store(path):
    from explorer.core.store import Store
    st = Store()
    return st, st.load_file(path).run_ids[0]


@needs_real
def test_each_release_gets_its_vllm_scheduler():
    """v0.2.1's pods ran vLLM 0.7.0 V0 with chunked prefill off (budget max(32000, 2048)),
    v0.3.0's vLLM 0.8.5 V1 (chunked forced on, 8192 tokens and 1024 seqs on a >= 70 GiB GPU);
    a value the caller set is kept."""
    from explorer.core.replay.deployments import deployment_of, with_kv_read
    st, r21 = _store(V021 / "naive_output_0.1.csv")
    st3, r30 = _store(V030 / "naive_output_0.1.csv")
    c21 = with_kv_read(deployment_of(st, r21), EngineConfig())
    c30 = with_kv_read(deployment_of(st3, r30), EngineConfig())
    assert (c21.chunked_prefill, c21.max_num_batched_tokens, c21.max_num_seqs) == (False, 32000, 256)
    assert (c30.chunked_prefill, c30.max_num_batched_tokens, c30.max_num_seqs) == (True, 8192, 1024)
    kept = with_kv_read(deployment_of(st3, r30), EngineConfig(max_num_batched_tokens=2048))
    assert kept.max_num_batched_tokens == 2048 and kept.max_num_seqs == 1024
    # the other configurations' engines are not listed: nothing of the scheduler changes
    st4, r4 = _store(V021 / "ps_stack_low_high_output_0.1.csv")
    other = with_kv_read(deployment_of(st4, r4), EngineConfig())
    assert (other.chunked_prefill, other.max_num_batched_tokens) == (True, 8192)
    for s in (st, st3, st4):
        s.close()


@needs_real
def test_replay_panel_and_validation_use_one_model(capsys):
    """Plain `replay` (no --blocks) and the Replay panel's Run replay v0.2.1's 0.1 QPS run with
    the engine the validation fits (validate.fit): V0 scheduler, KV read, the A100's capacity;
    both label it in-sample. An explicit --blocks inf stays infinite."""
    import json

    from explorer.__main__ import main
    from explorer.core.replay.validate import fit
    from explorer.core.viewstate.replay import ReplayJob, TraceQuery
    path = V021 / "naive_output_0.1.csv"
    st, rid = _store(path)
    want = fit(st, rid, EngineConfig()).config
    assert main(["replay", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {k: doc["config"][k] for k in FACTS} == {k: getattr(want, k) for k in FACTS}
    assert doc["config"]["num_gpu_blocks"] == 29205 and doc["config"]["chunked_prefill"] is False
    assert doc["error_applies"]["kind"] == "in-sample"
    res, cal = ReplayJob(TraceQuery(rid).run(st), EngineConfig(), EngineConfig()).run()
    assert cal is not None
    assert {k: getattr(res.config, k) for k in FACTS} == {k: getattr(want, k) for k in FACTS}
    assert main(["replay", str(path), "--json", "--blocks", "inf"]) == 0
    inf = json.loads(capsys.readouterr().out)
    assert inf["config"]["num_gpu_blocks"] is None and inf["config"]["chunked_prefill"] is False
    st.close()


def test_replay_without_a_capacity_or_a_known_deployment_says_so(tmp_path, capsys):
    from explorer.__main__ import main
    p = tmp_path / "t.jsonl"
    p.write_text('{"timestamp": 0, "input_length": 100, "output_length": 5, "hash_ids": [1]}\n')
    assert main(["replay", str(p)]) == 2
    assert "--blocks N or --kv-gb GB is required" in capsys.readouterr().err
