"""Fuzz suite of the readers (Hypothesis, small sizes for CI): for a seed file of each format, a
sample of pathological variants (truncated, BOM, NUL bytes, CR line ends, a line in another
encoding, a sep= line, a huge value, a deleted key, random byte flips and splices) goes
through Store.load_file. Whatever the bytes, the load returns a report (never raises), a
failure names the file and carries no traceback, a skipped row names its line, and the store
stays usable (no transaction left aborted: the next file loads). Like Orange3's widget fuzzing,
the point is the invariant, not the value."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from explorer.core.store import Store

pytestmark = pytest.mark.timeout(300)

SEEDS: dict[str, tuple[str, bytes]] = {
    "trace_csv": ("trace.csv", b"request_id,arrival_s,ttft_ms,tpot_ms,e2e_ms,prompt_tokens,"
                  b"completion_tokens\n" + b"".join(
                      f"r{i},{i * 0.5},{20 + i},{5 + i % 3},{200 + i},{100 + i},{50 + i}\n".encode()
                      for i in range(12))),
    "trace_jsonl": ("trace.jsonl", b"".join(json.dumps(
        {"request_id": f"r{i}", "ttft_ms": 20.0 + i, "e2e_ms": 200.0 + i,
         "prompt_tokens": 100 + i}).encode() + b"\n" for i in range(12))),
    "eval_csv": ("eval.csv", b"case_id,correct,category,cluster,prompt\n" + b"".join(
        f"c{i},{i % 2},maths,\xe5\x8d\x95\xe4\xbd\x8d,question {i}\n".encode("latin-1")
        for i in range(12))),
    "eval_jsonl": ("samples.jsonl", b"".join(json.dumps(
        {"case_id": f"c{i}", "correct": bool(i % 2), "category": "maths",
         "prompt": f"q{i}"}).encode() + b"\n" for i in range(12))),
    "mooncake": ("mooncake.jsonl", b"".join(json.dumps(
        {"timestamp": i * 100, "input_length": 512 + i, "output_length": 32,
         "hash_ids": [i, i + 1, i + 2]}).encode() + b"\n" for i in range(12))),
    "llmperf": ("llmperf_individual_responses.json", json.dumps(
        [{"ttft_s": 0.1 + i / 100, "end_to_end_latency_s": 1.0 + i / 10,
          "number_input_tokens": 100, "number_output_tokens": 20,
          "inter_token_latency_s": 0.01, "error_code": None, "error_msg": ""}
         for i in range(12)]).encode()),
}

# the pathological variants every format is tried with (name -> bytes -> bytes)
VARIANTS = {
    "truncated": lambda b: b[: len(b) * 2 // 3],
    "utf8_bom": lambda b: b"\xef\xbb\xbf" + b,
    "nul_line": lambda b: b.replace(b"\n", b"\n\x00\x00\x00\n", 1),
    "cr_only": lambda b: b.replace(b"\n", b"\r"),
    "crlf_mixed": lambda b: b.replace(b"\n", b"\r\n", 3),
    "gbk_line": lambda b: b + "c99,0,单位换算,x\n".encode("gbk"),
    "sep_line": lambda b: b"sep=,\n" + b,
    "comment_head": lambda b: b"# preamble\n" + b,
    "huge_number": lambda b: b.replace(b"1", b"1" + b"0" * 400, 1),
    "no_request_id": lambda b: b.replace(b'"request_id": "r3", ', b"", 1),
    "null_request_id": lambda b: b.replace(b'"r4"', b"null", 1),
    "only_header": lambda b: b.split(b"\n", 1)[0] + b"\n",
    "deep_nesting": lambda b: b"[" * 5000 + b"]" * 5000,
    "ansi_and_bidi": lambda b: b.replace(b"maths", "\x1b[2J\u202e<b>m</b>".encode(), 1),
    "formula": lambda b: b.replace(b"maths", b"=HYPERLINK(\"x\")", 1),
    "gzip": lambda b: __import__("gzip").compress(b),
}


def _check(store: Store, path, r) -> None:
    assert r is not None and r.path == str(path)
    if r.error:
        assert r.error.startswith(str(path)), r.error
        assert "Traceback" not in r.error and 'File "' not in r.error
    for why in r.skipped_reasons:
        assert "Traceback" not in why
    store.con.execute("SELECT 1").fetchall()  # the connection is not in an aborted transaction


@pytest.fixture(scope="module")
def fuzz_store():
    s = Store()
    yield s
    s.close()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_pathological_variant(fmt, variant, tmp_path, fuzz_store):
    name, seed = SEEDS[fmt]
    f = tmp_path / name
    f.write_bytes(VARIANTS[variant](seed))
    r = fuzz_store.load_file(f)
    _check(fuzz_store, f, r)
    # and a good file still loads after it (the store is not left broken)
    g = tmp_path / f"after_{fmt}_{variant}.jsonl"
    g.write_text(json.dumps({"request_id": f"ok-{fmt}-{variant}", "ttft_ms": 1.0,
                             "e2e_ms": 2.0}) + "\n")
    ok = fuzz_store.load_file(g)
    assert ok.error is None and ok.rows_loaded == 1, ok


def _mutate(seed: bytes, data) -> bytes:
    """A few random edits of seed: byte flips, deletions, insertions, a splice."""
    b = bytearray(seed)
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["flip", "delete", "insert", "splice"]))
        i = data.draw(st.integers(0, max(0, len(b) - 1)))
        if op == "flip" and b:
            b[i] = data.draw(st.integers(0, 255))
        elif op == "delete" and b:
            del b[i:i + data.draw(st.integers(1, 40))]
        elif op == "insert":
            b[i:i] = data.draw(st.binary(min_size=1, max_size=20))
        else:
            j = data.draw(st.integers(0, max(0, len(b) - 1)))
            b[i:i] = b[j:j + 30]
    return bytes(b)


@pytest.mark.parametrize("fmt", sorted(SEEDS))
@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_mutations_never_break_a_load(fmt, data, tmp_path_factory, fuzz_store):
    name, seed = SEEDS[fmt]
    f = tmp_path_factory.mktemp("fuzz") / name
    f.write_bytes(_mutate(seed, data))
    r = fuzz_store.load_file(f)
    _check(fuzz_store, f, r)
