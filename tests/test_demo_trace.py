"""The synthetic Mooncake-style trace against the real Mooncake conversation trace.

Statistics are computed here with numpy straight from the JSONL lines (the real file read in
place, the synthetic one written to tmp_path by write_mooncake), never from the generator's
parameters. Tolerances: request rate and inter-arrival coefficient of variation within 10%
(relative), prompt-length quartiles and p90 within 15%, output-length quartiles and p90 within
15%, share of reused prefix blocks within 0.03 (absolute).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core.errors import InputError
from explorer.demo.trace import read_mooncake_trace, synthesize_trace, write_mooncake

Q = [0.25, 0.5, 0.75, 0.9]


def _stats(path):
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    ts = np.array([r["timestamp"] for r in rows], dtype=float)
    gaps = np.diff(ts)
    seen, reused, total = set(), 0, 0
    for r in rows:
        for h in r["hash_ids"]:
            total += 1
            reused += h in seen
            seen.add(h)
    return {
        "n": len(rows),
        "rate_per_s": len(rows) / (ts[-1] / 1000.0),
        "cv": gaps.std() / gaps.mean(),
        "input_q": np.quantile([r["input_length"] for r in rows], Q),
        "output_q": np.quantile([r["output_length"] for r in rows], Q),
        "reuse": reused / total,
        "blocks_ok": all(len(r["hash_ids"]) == -(-r["input_length"] // 512) for r in rows),
    }


@pytest.fixture(scope="module")
def real_stats(real):
    return _stats(real / "mooncake" / "conversation_trace.jsonl")


@pytest.fixture(scope="module")
def synth_stats(real_stats, tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "synthetic.jsonl"
    write_mooncake(synthesize_trace(real_stats["n"], seed=7), path)
    return _stats(path)


def test_arrival_burstiness_matches_real(real_stats, synth_stats):
    assert real_stats["cv"] > 2.5  # the real trace is very bursty (3 s logging tick)
    assert synth_stats["rate_per_s"] == pytest.approx(real_stats["rate_per_s"], rel=0.10)
    assert synth_stats["cv"] == pytest.approx(real_stats["cv"], rel=0.10)


def test_length_quantiles_match_real(real_stats, synth_stats):
    np.testing.assert_allclose(synth_stats["input_q"], real_stats["input_q"], rtol=0.15)
    np.testing.assert_allclose(synth_stats["output_q"], real_stats["output_q"], rtol=0.15)


def test_prefix_block_reuse_matches_real(real_stats, synth_stats):
    assert real_stats["blocks_ok"] and synth_stats["blocks_ok"]
    assert synth_stats["reuse"] == pytest.approx(real_stats["reuse"], abs=0.03)


def test_trace_is_deterministic_in_seed():
    a, b, c = synthesize_trace(500, seed=3), synthesize_trace(500, seed=3), synthesize_trace(500, seed=4)
    assert len(a) == 500
    assert a.equals(b)
    assert not a["input_length"].equals(c["input_length"])
    assert a["timestamp"].is_monotonic_increasing


def test_follow_up_turns_repeat_the_previous_prompt(tmp_path):
    trace = synthesize_trace(800, seed=5)
    back = read_mooncake_trace(write_mooncake(trace, tmp_path / "t.jsonl"))
    assert back[["timestamp", "input_length", "output_length"]].equals(
        trace[["timestamp", "input_length", "output_length"]])
    # a recovered follow-up starts with all full blocks its predecessor in the chain had
    by_conv = {}
    for h, n_in, conv in zip(back["hash_ids"], back["input_length"], back["conversation_id"]):
        if conv in by_conv:
            prev_h, prev_in = by_conv[conv]
            assert h[:prev_in // 512] == prev_h[:prev_in // 512]
            assert n_in > prev_in
        by_conv[conv] = (h, n_in)
    assert (back["turn"] > 0).sum() > 100


@pytest.mark.parametrize("line, where", [
    ('{"timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": [0]}\n[1, 2]\n', ":2:"),
    ('{"timestamp": 0, "input_length": "x", "output_length": 3, "hash_ids": [0]}\n',
     ":1: field 'input_length'"),
    ('{"timestamp": 0, "input_length": 10, "output_length": 3, "hash_ids": "a"}\n',
     ":1: field 'hash_ids'"),
    ("\n", "no requests"),
])
def test_bad_trace_names_file_line_and_field(tmp_path, line, where):
    p = tmp_path / "bad.jsonl"
    p.write_text(line, encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_mooncake_trace(p)
    assert str(p) in str(e.value) and where in str(e.value)


def test_command_writes_a_trace_the_reader_takes(tmp_path, capsys):
    from explorer.demo.__main__ import main
    out = tmp_path / "demo.jsonl"
    assert main([str(out), "--requests", "40", "--seed", "3"]) == 0
    assert "wrote 40 requests" in capsys.readouterr().out
    back = read_mooncake_trace(out)
    assert back["input_length"].tolist() == synthesize_trace(40, seed=3)["input_length"].tolist()
    assert main([str(tmp_path / "missing" / "x.jsonl"), "--requests", "5"]) == 1
    assert "cannot be written" in capsys.readouterr().err
