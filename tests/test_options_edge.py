"""Every option is checked at the edge (explorer/cli/types.py): each value the issue found
accepted with exit 0 is refused with exit 2 and a message saying what is allowed, before any
file is read; a Hypothesis fuzz of the numeric options: whatever the text, either a value in
range or a usage error, never a traceback."""
from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from explorer.__main__ import main
from explorer.cli import types

pytestmark = pytest.mark.timeout(120)

NONSENSE = [
    # (option words, what the message must say)
    (["--set", "kv_cache_hit_rate=NaN"], "not a finite number"),
    (["--set", "kv_cache_hit_rate=inf"], "not a finite number"),
    (["--set", "kv_cache_hit_rate=1e309"], "not a finite number"),
    (["--set", "kv_cache_hit_rate=-1"], "takes values from 0 to 1"),
    (["--set", "kv_cache_hit_rate=2"], "takes values from 0 to 1"),
    (["--set", "kv_cache_hit_rat=0.5"], "did you mean kv_cache_hit_rate"),
    (["--set", "ttft_ms"], "must look like METRIC=VALUE"),
    (["--sla", "ttft_ms=NaN"], "not a finite number"),
    (["--sla", "ttft_ms=inf"], "not a finite number"),
    (["--sla", "ttft_ms=-1"], "must be above 0"),
    (["--sla", "ttft_ms=0"], "must be above 0"),
    (["--sla", "nonsense_ms=10"], "unknown metric"),
    (["--max-depth", "0"], "from 1 to 32"),
    (["--max-depth", "-1"], "from 1 to 32"),
    (["--max-depth", "x"], "whole number"),
    (["--min-samples-leaf", "0"], "at least 1"),
    (["--treatment", "nonsense"], "unknown treatment metric"),
    (["--outcome", "nonsense"], "unknown outcome"),
    (["--replay-max-num-seqs", "0"], "whole number"),
    (["--out", ""], "empty path"),
    (["--graph", ""], "empty path"),
    (["--graph", "/dev/zero"], "not a regular file"),
]


@pytest.mark.parametrize("words,says", NONSENSE, ids=[" ".join(w) for w, _ in NONSENSE])
def test_report_refuses_nonsense_before_any_work(words, says, tmp_path, capsys, monkeypatch):
    from explorer.core.store import Store
    monkeypatch.setattr(Store, "load_paths", lambda *a, **k: pytest.fail("files were read"))
    f = tmp_path / "t.jsonl"
    f.write_text('{"request_id": "a", "ttft_ms": 1}\n')
    rc = _exit_code(["report", str(f), *words, "--out", str(tmp_path / "out")]
                    if "--out" not in words else ["report", str(f), *words])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert says in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def _exit_code(argv) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse's usage error
        return e.code


@pytest.mark.parametrize("argv,says", [
    (["inspect", ""], "empty path"),
    (["report", ""], "empty path"),
    (["replay", "", "--blocks", "10"], "empty path"),
    (["replay", "t.jsonl", "--blocks", "10", "--block-size", "1000000000"], "from 1 to 4096"),
    (["replay", "t.jsonl", "--blocks", "10", "--block-size", "0"], "from 1 to 4096"),
    (["replay", "t.jsonl", "--kv-gb", "nan"], "not a finite number"),
    (["replay", "t.jsonl", "--kv-gb", "-1"], "above 0"),
    (["replay", "t.jsonl", "--blocks", "10", "--max-num-seqs", "0"], "whole number"),
    (["replay", "t.jsonl", "--blocks", "10", "--bytes-per-token", "inf"], "not a finite number"),
])
def test_other_commands_refuse_nonsense(argv, says, capsys):
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err, err


def test_a_cyclic_graph_is_refused_at_the_edge(tmp_path, capsys):
    g = tmp_path / "g.dot"
    g.write_text("digraph { kv_cache_hit_rate -> ttft_ms; ttft_ms -> badcase; "
                 "badcase -> kv_cache_hit_rate; }")
    f = tmp_path / "t.jsonl"
    f.write_text('{"request_id": "a", "ttft_ms": 1}\n')
    rc = main(["report", str(f), "--graph", str(g), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and "cycle" in err and "acyclic" in err, err


def test_a_large_graph_file_is_not_read_whole(tmp_path):
    g = tmp_path / "big.dot"
    with open(g, "wb") as fh:
        fh.truncate(types.MAX_GRAPH_BYTES + 10)  # sparse: large, nothing to read
    with pytest.raises(ValueError, match="larger than"):
        types.read_capped(str(g))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True).map(repr),
                 st.integers(-10**12, 10**12).map(str)))
def test_numeric_option_types_accept_only_values_in_range(text):
    for parse, ok in ((types.integer(1, 32), lambda v: isinstance(v, int) and 1 <= v <= 32),
                      (types.number(above=0, hi=1e6), lambda v: math.isfinite(v) and 0 < v <= 1e6)):
        try:
            v = parse(text)
        except argparse.ArgumentTypeError as e:
            assert str(e)
        else:
            assert ok(v), (text, v)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_metric_value_pairs_either_parse_in_range_or_say_why(text):
    from explorer.cli.report import _pair
    try:
        m, v = _pair(text, "--set")
    except ValueError as e:
        assert str(e)
    else:
        from explorer.core.formats._common import range_rules
        assert math.isfinite(v)
        for lo, hi, _ in range_rules(m):
            assert (lo is None or v >= lo) and (hi is None or v <= hi)
