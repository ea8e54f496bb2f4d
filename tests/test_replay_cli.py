"""`trace-explorer replay` on awkward inputs and its headline: the capacity-comparable hit rate
leads (vLLM's per-attempt hit_rate_blocks is kept and explained), a truncated Mooncake file
replays its good lines with a warning naming FILE:LINE, a folder is refused plainly, a trace
without hash ids says that hit rates are not meaningful instead of printing 0%."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from explorer.__main__ import main
from explorer.core.errors import InputError
from explorer.core.replay import read_mooncake


@pytest.fixture(scope="module")
def conv3000(real, tmp_path_factory):
    """The first 3000 requests of the real Mooncake conversation trace (copied to tmp)."""
    lines = (real / "mooncake" / "conversation_trace.jsonl").read_text().splitlines(keepends=True)
    p = tmp_path_factory.mktemp("conv") / "conv3000.jsonl"
    p.write_text("".join(lines[:3000]))
    return p


def _json(capsys, *argv):
    assert main(["replay", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_headline_is_the_capacity_comparable_hit_rate(conv3000, capsys):
    """At 20000 blocks the cache thrashes (preemptions): requests re-query their own blocks on
    every scheduling attempt, so vLLM's hit_rate_blocks is HIGHER than with an infinite cache.
    The share of prompt tokens served from cache (each request once) ranks the capacities right,
    and the text output leads with it."""
    small, inf = _json(capsys, conv3000, "--blocks", 20000), _json(capsys, conv3000, "--blocks", "inf")
    assert small["preemptions"] > 0 and inf["preemptions"] == 0
    assert small["hit_rate_blocks"] > inf["hit_rate_blocks"]          # the misleading contract key
    assert small["hit_rate_tokens"] < inf["hit_rate_tokens"]
    assert small["hit_rate_per_request"] < inf["hit_rate_per_request"]
    # infinite cache: independent count from the raw hash ids (chained prefixes seen before,
    # capped at (input_length - 1) // 512 blocks, only full blocks cached) at 512-token blocks
    seen, hit_tok, tot_tok = set(), 0, 0
    for line in conv3000.read_text().splitlines():
        rec = json.loads(line)
        h, n = rec["hash_ids"], rec["input_length"]
        pre = [tuple(h[:i + 1]) for i in range(len(h))]
        k = 0
        while k < min(len(pre), (n - 1) // 512) and pre[k] in seen:
            k += 1
        hit_tok, tot_tok = hit_tok + 512 * k, tot_tok + n
        seen.update(pre[:n // 512])
    # (the replay can only be a little lower: a request admitted while an earlier one with the
    # same prefix is still in prefill cannot hit blocks not yet computed)
    inf512 = _json(capsys, conv3000, "--blocks", "inf", "--block-size", 512)
    assert hit_tok / tot_tok - 0.002 <= inf512["hit_rate_tokens"] <= hit_tok / tot_tok

    assert main(["replay", str(conv3000), "--blocks", "20000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].strip().startswith(f"prefix-cache hit rate {100 * small['hit_rate']:.1f}% of "
                                     "first-query tokens (vLLM's prefix_cache_hits / "
                                     "prefix_cache_queries; mean per request "
                                     f"{100 * small['hit_rate_per_request']:.1f}%")
    assert small["hit_rate"] == small["hit_rate_tokens"]
    assert "comparable across capacities" in out[1]
    lines = [x.strip() for x in out[2:5]]
    if small["preemptions"]:
        pc = small["prefix_cache"]
        assert lines[0].startswith(f"preempted requests re-queried {pc['preempted_queries']:,} "
                                   f"tokens {pc['preempted_requests']:,} times")
        lines = lines[1:]
    assert lines[0].startswith(f"hit_rate_blocks {100 * small['hit_rate_blocks']:.1f}%: "
                               "older per-attempt block count")


def test_truncated_mooncake_file_skips_the_cut_line(real, tmp_path, capsys):
    lines = (real / "mooncake" / "conversation_trace.jsonl").read_text().splitlines(keepends=True)
    p = tmp_path / "cut.jsonl"
    p.write_text("".join(lines[:90]) + lines[90][:57])
    skipped: list = []
    trace = read_mooncake(p, skipped=skipped)
    assert len(trace) == 90 and [e.line for e in skipped] == [91]
    with pytest.warns(RuntimeWarning, match=re.escape(f"{p}:91:")):
        assert len(read_mooncake(p)) == 90
    doc = _json(capsys, p, "--blocks", 2000)
    assert doc["requests"] == 90 and doc["skipped_lines"] == 1
    assert main(["replay", str(p), "--blocks", "2000"]) == 0
    cap = capsys.readouterr()
    assert f"{p}:91: not JSON" in cap.err and "warning" in cap.err
    assert "90 requests replayed" in cap.out and "1 bad line skipped" in cap.out


def test_a_bad_record_is_skipped_and_a_file_of_bad_lines_fails(tmp_path, capsys):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"timestamp": 0, "input_length": 5, "output_length": 1}\n'
                     '{"timestamp": 1, "input_length": 5, "output_length": -3}\n')
    assert main(["replay", str(mixed), "--blocks", "100"]) == 0
    err = capsys.readouterr().err
    assert f"{mixed}:2:" in err and "output_length" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"timestamp": 1, "input_length": 5, "output_length": -3}\n{"timestamp": 2,')
    with pytest.raises(InputError, match="no usable request"):
        read_mooncake(bad)
    assert main(["replay", str(bad), "--blocks", "100"]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and ":1:" in err and "output_length" in err


def test_a_folder_is_refused_plainly(real, capsys):
    assert main(["replay", str(real / "mooncake"), "--blocks", "100"]) == 1
    err = capsys.readouterr().err
    assert "replay takes one trace file" in err and "conversation_trace.jsonl" in err
    assert "unrecognised" not in err


def test_trace_without_hash_ids_says_hit_rates_are_not_meaningful(real, tmp_path, capsys):
    """Azure LLM inference trace 2023: timestamps and token counts, no prompt content."""
    lines = (real / "azure_llm_2023" / "AzureLLMInferenceTrace_conv.csv").read_text().splitlines(True)
    p = tmp_path / "azure_conv_400.csv"
    p.write_text("".join(lines[:401]))
    doc = _json(capsys, p, "--blocks", 5000)
    assert doc["requests"] == 400 and doc["prefix_information"] is False
    assert doc["hit_rate_blocks"] is None and doc["hit_rate_tokens"] is None
    assert "no hash_ids" in doc["note"]
    assert main(["replay", str(p), "--blocks", "5000"]) == 0
    out = capsys.readouterr().out
    assert "no prefix information in this trace (no hash_ids): hit rates not meaningful" in out
    assert "0.0%" not in out
    # a row with a negative prompt never reaches the engine: the loader skips it, naming it
    bad = tmp_path / "azure_bad.csv"
    bad.write_text(lines[0] + lines[1] + lines[2].replace(",", ",-", 1) + lines[3])
    assert main(["replay", str(bad), "--blocks", "5000"]) == 0
    captured = capsys.readouterr()
    assert "negative value" in captured.err + captured.out
    # ... and the engine itself rejects an empty prompt instead of looping on it
    from explorer.core.replay import EngineConfig, TraceRequest, simulate
    res = simulate([TraceRequest("a", 0.0, 0, 5), TraceRequest("b", 0.1, 300, 5)],
                   EngineConfig(num_gpu_blocks=5000))
    assert res.summary["rejected"] == 1
    # the requests carry NULL, not 0, for what the trace cannot tell
    from explorer.core.replay import EngineConfig, TraceRequest, simulate
    res = simulate([TraceRequest(str(i), 0.1 * i, 300, 5) for i in range(20)],
                   EngineConfig(num_gpu_blocks=1000))
    assert res.requests.cached_prompt_tokens.isna().all()
    assert np.isnan(res.requests.kv_cache_hit_rate.astype(float)).all()


def test_a_truncated_json_names_its_line_as_inspect_does(real, tmp_path, capsys):
    """QA: replay dropped the ':LINE' that inspect gives for a truncated JSON document."""
    src = sorted((real / "llmperf_leaderboard" / "individual").glob("*.json"))[0]
    cut = tmp_path / "cut.json"
    cut.write_bytes(src.read_bytes()[:3000])
    assert main(["inspect", str(cut)]) == 1
    line = capsys.readouterr().err.split(f"{cut}:")[1].split(":")[0]
    assert line.isdigit()
    assert main(["replay", str(cut), "--blocks", "100"]) == 1
    assert f"{cut}:{line}: invalid JSON" in capsys.readouterr().err


def test_aiperf_replay_is_calibrated_and_counts_its_dropped_requests(real, capsys):
    """Issue 20: the AIPerf example replayed at mean TTFT 306 ms against 2,343 ms observed and
    dropped its 11 cancelled requests silently ("89 requests replayed")."""
    path = real / "aiperf_example" / "profile_export.jsonl"
    doc = _json(capsys, path, "--blocks", "inf")
    cal = doc["calibration"]
    for m in ("ttft_ms", "tpot_ms"):
        assert set(cal[m]) >= {"observed", "replayed", "error"}
        assert abs(cal[m]["error"]) < 0.02
        assert cal["before"][m]["error"] < -0.5
    assert cal["ttft_ms"]["observed"] == pytest.approx(2343.2, abs=0.1)
    # the replay itself, run with the calibrated step time, gives the calibrated mean
    assert doc["ttft_ms_mean"] == pytest.approx(cal["ttft_ms"]["replayed"], rel=1e-9)
    assert doc["requests"] == 89 and sum(doc["dropped"].values()) == 11
    assert doc["timing"].startswith("default (SGLang bench_one_batch), scaled to reproduce")
    assert main(["replay", str(path), "--blocks", "inf"]) == 0
    out = capsys.readouterr().out
    assert "89 requests replayed of 100" in out
    assert "dropped 11: errored (499 RequestCancellationError" in out
    assert "calibration TTFT: observed mean 2,343.2 ms" in out and "WARNING" not in out
    # --timing default: the default's errors are reported, not hidden
    doc = _json(capsys, path, "--blocks", "inf", "--timing", "default")
    assert doc["calibration"]["ttft_ms"]["error"] == pytest.approx(-0.87, abs=0.02)
    assert "not calibrated (asked for the default step time)" in doc["timing"]
    # nothing was fitted: not "in-sample" (it said so beside "not calibrated")
    assert doc["error_applies"]["kind"] == "not validated"
    assert _json(capsys, path, "--blocks", "inf")["error_applies"]["kind"] == "in-sample"
    assert main(["replay", str(path), "--blocks", "inf"]) == 0
    out = capsys.readouterr().out
    assert "replayed means reproduce the observed ones" in out and "add --what-if" in out
