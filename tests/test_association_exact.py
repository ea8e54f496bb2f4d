"""Level 1 when ids bind: an exact id beats a normalised one, so bind_cases first stages only the
ids as stored and normalises request ids only for a case left without an exact candidate
(association.stage_level1). Each store here is small enough to work out by hand; the expected
links and ambiguous cases below are read off the rules in association.py's docstring, not from
the code."""
from __future__ import annotations

import pandas as pd
import pytest

from explorer.core import association
from explorer.core.association import ambiguous_detail, bind_cases, prompt_hash
from explorer.core.store import Store

T0 = 1_750_000_000.0


def _store(runs: dict, requests: list[dict], cases: list[dict], eval_model=None) -> Store:
    """runs: run_id -> model; requests and cases: rows (cases of eval 'e', badcases)."""
    s = Store()
    for run, model in runs.items():
        s.add_run(run, model=model)
    s.add_eval("e", model=eval_model)
    s.append("requests", pd.DataFrame(requests))
    df = pd.DataFrame([{"eval_id": "e", "correct": False, **c} for c in cases])
    if "prompt_tokens" in df:
        df["prompt_tokens"] = df["prompt_tokens"].astype("Int64")
    s.append("cases", df)
    return s


def _links(s: Store) -> dict:
    return {c: (run, rid, level) for c, run, rid, level in s.df(
        "SELECT case_id, run_id, request_id, level FROM case_links").values.tolist()}


@pytest.fixture()
def keys_passes(monkeypatch):
    """The $norm of every assoc_request_keys run of the next bind_cases (False: ids as stored;
    True: with the normalised ids)."""
    seen = []
    run = association._run

    def spy(con, name, params=None):
        if name == "assoc_request_keys":
            seen.append(params.get("norm"))
        return run(con, name, params)
    monkeypatch.setattr(association, "_run", spy)
    return seen


def test_exact_id_beats_normalised_ones_without_normalising(keys_passes):
    """Case 'chatcmpl-abc' (normalised: 'abc'): request A stores it as it is; B stores 'abc'
    and C 'REQ-ABC', both only normalised matches -> A alone, level 1, not ambiguous. Case
    'abc' is B's stored id (A and C normalise to it) -> B alone."""
    s = _store({"r": None},
               [{"run_id": "r", "request_id": "chatcmpl-abc"},
                {"run_id": "r", "request_id": "abc"},
                {"run_id": "r", "request_id": "REQ-ABC"}],
               [{"case_id": "e:1", "request_id": "chatcmpl-abc"},
                {"case_id": "e:2", "request_id": "abc"}])
    r = bind_cases(s)
    assert _links(s) == {"e:1": ("r", "chatcmpl-abc", 1), "e:2": ("r", "abc", 1)}
    assert r.ambiguous == [] and r.per_level == {1: 2, 2: 0, 3: 0}
    assert keys_passes == [False]  # every case's id is stored: nothing normalised


def test_contradicted_exact_candidate_falls_back_to_the_normalised_one(keys_passes):
    """Case 'ID-7' (normalised 'id-7') of an 8B eval: request 'ID-7' in run big (70B model)
    contradicts it, so the exact match is dropped and the normalised match, 'id-7' in run
    small (8B), binds at level 1. Case 'ID-8' names run again (8B) in its extra: its exact
    request in run small is dropped, and 'req-id-8' in run again binds. Case 'ID-9': its only
    request is in run big and contradicted; no normalised one -> unbound, not ambiguous."""
    s = _store({"big": "meta-llama/Llama-3.1-70B-Instruct",
                "small": "meta-llama/Llama-3.1-8B-Instruct", "again": "Llama-3.1-8B-Instruct"},
               [{"run_id": "big", "request_id": "ID-7"},
                {"run_id": "small", "request_id": "id-7"},
                {"run_id": "small", "request_id": "ID-8"},
                {"run_id": "again", "request_id": "req-id-8"},
                {"run_id": "big", "request_id": "ID-9"}],
               [{"case_id": "e:7", "request_id": "ID-7"},
                {"case_id": "e:8", "request_id": "ID-8", "extra": '{"run_id": "again"}'},
                {"case_id": "e:9", "request_id": "ID-9"}],
               eval_model="Llama-3.1-8B-Instruct")
    r = bind_cases(s)
    assert _links(s) == {"e:7": ("small", "id-7", 1), "e:8": ("again", "req-id-8", 1)}
    assert r.ambiguous == []
    assert keys_passes == [False, True]  # ids stored, then normalised for the dropped ones


def test_hash_contradiction_drops_the_exact_candidate():
    """The eval and run hash the same texts (case e:1 shares request x's hash), so a differing
    hash contradicts: case e:2's exact request 'Q-2' has another prompt -> the normalised
    match 'q-2' (same prompt) binds."""
    h1, h2, other = prompt_hash("one"), prompt_hash("two"), prompt_hash("three")
    s = _store({"r": None},
               [{"run_id": "r", "request_id": "x", "prompt_hash": h1},
                {"run_id": "r", "request_id": "Q-2", "prompt_hash": other},
                {"run_id": "r", "request_id": "q-2", "prompt_hash": h2}],
               [{"case_id": "e:1", "request_id": "x", "prompt_hash": h1},
                {"case_id": "e:2", "request_id": "Q-2", "prompt_hash": h2}])
    bind_cases(s)
    assert _links(s) == {"e:1": ("r", "x", 1), "e:2": ("r", "q-2", 1)}


def test_same_exact_id_in_two_runs_is_ambiguous_between_those_two(keys_passes):
    """'r-1' is stored in runs v1 and v2 and normalises from 'REQ-R-1' in v3: the two exact
    candidates tie (ambiguous, 2 candidates), the normalised one does not count. 'r-2' only
    in v1 binds there."""
    s = _store({"v1": None, "v2": None, "v3": None},
               [{"run_id": "v1", "request_id": "r-1"}, {"run_id": "v2", "request_id": "r-1"},
                {"run_id": "v3", "request_id": "REQ-R-1"}, {"run_id": "v1", "request_id": "r-2"}],
               [{"case_id": "e:1", "request_id": "r-1"},
                {"case_id": "e:2", "request_id": "r-2"}])
    r = bind_cases(s)
    assert _links(s) == {"e:2": ("v1", "r-2", 1)}
    assert r.ambiguous == ["e:1"]
    assert ambiguous_detail(s) == [{"case_id": "e:1", "reason": "id", "candidates": 2,
                                    "requests": ["v1 / r-1", "v2 / r-1"]}]
    assert keys_passes == [False]


def test_ids_in_extra_bind_exactly_and_beat_a_normalised_request_id(keys_passes):
    """Request span-1 keeps x-request-id 'abc-123' in extra, span-2's own id is 'ABC-123'
    (normalised: 'abc-123'): case 'abc-123' binds span-1. span-3 keeps gen_ai.request.id
    'trace-9' and span-4 x_request_id 'TRACE-9': case 'trace-9' binds span-3."""
    s = _store({"otlp": None},
               [{"run_id": "otlp", "request_id": "span-1", "extra": '{"x-request-id": "abc-123"}'},
                {"run_id": "otlp", "request_id": "ABC-123"},
                {"run_id": "otlp", "request_id": "span-3",
                 "extra": '{"gen_ai.request.id": "trace-9"}'},
                {"run_id": "otlp", "request_id": "span-4", "extra": '{"x_request_id": "TRACE-9"}'}],
               [{"case_id": "e:1", "request_id": "abc-123"},
                {"case_id": "e:2", "request_id": "trace-9"}])
    bind_cases(s)
    assert _links(s) == {"e:1": ("otlp", "span-1", 1), "e:2": ("otlp", "span-3", 1)}
    assert keys_passes == [False]


def test_ids_bind_some_cases_and_the_fuzzy_levels_the_rest(keys_passes):
    """Cases a and b carry stored ids; case c has none but the prompt hash and tokens of
    request q3 (level 2). q1 and q2 are bound by id, so only q3 and q4 are fuzzy candidates;
    q4 has another prompt and length."""
    ha, hb = prompt_hash("alpha"), prompt_hash("beta")
    s = _store({"r": None},
               [{"run_id": "r", "request_id": f"q{i}", "arrival_s": T0 + 10 * i,
                 "e2e_ms": 1000.0, "prompt_tokens": 100 * i,
                 "prompt_hash": ha if i == 3 else hb} for i in (1, 2, 3, 4)],
               [{"case_id": "e:a", "request_id": "q1"}, {"case_id": "e:b", "request_id": "q2"},
                {"case_id": "e:c", "prompt_hash": ha, "prompt_tokens": 301}])
    r = bind_cases(s)
    assert _links(s) == {"e:a": ("r", "q1", 1), "e:b": ("r", "q2", 1), "e:c": ("r", "q3", 2)}
    assert r.per_level == {1: 2, 2: 1, 3: 0}
    assert keys_passes == [False]


def test_a_case_id_no_request_stores_needs_the_normalised_ids(keys_passes):
    """Case 'CHATCMPL-00042' is stored nowhere as it is; it normalises to '00042'. Request
    '00042-0' is under 18 characters, so its '-0' is kept and it does not match; 'cmpl-00042'
    does. Case 'k' is stored as it is."""
    s = _store({"r": None},
               [{"run_id": "r", "request_id": "00042-0"},
                {"run_id": "r", "request_id": "cmpl-00042"}, {"run_id": "r", "request_id": "k"}],
               [{"case_id": "e:1", "request_id": "CHATCMPL-00042"},
                {"case_id": "e:2", "request_id": "k"}])
    bind_cases(s)
    assert _links(s) == {"e:1": ("r", "cmpl-00042", 1), "e:2": ("r", "k", 1)}
    assert keys_passes == [False, True]


def test_rates_of_all_cases_and_of_badcases_per_cluster():
    """Badcases k1 (bound) and k2 (unbound) in cluster k, badcase n1 (bound) in no cluster,
    correct case ok (bound): 3/4 bound overall; per cluster of badcases only k, 1/2 (a
    badcase without a cluster is no cluster's); binding_rates over all cases counts ok under
    no cluster."""
    from explorer.core.association import binding_rates, overall_rate
    s = _store({"r": None}, [{"run_id": "r", "request_id": f"q{i}"} for i in range(3)],
               [{"case_id": "k1", "request_id": "q0", "cluster": "k"},
                {"case_id": "k2", "request_id": "gone", "cluster": "k"},
                {"case_id": "n1", "request_id": "q1"}])
    s.append("cases", pd.DataFrame([{"case_id": "ok", "eval_id": "e", "correct": True,
                                     "request_id": "q2"}]))
    r = bind_cases(s)
    assert (r.bound, r.total, r.per_level) == (3, 4, {1: 3, 2: 0, 3: 0})
    assert {k: v.label() for k, v in r.per_cluster.items()} == {"k": "1/2 (50%)"}
    assert {k: (v.bound, v.total) for k, v in binding_rates(s, False).items()} == \
        {"k": (1, 2), None: (2, 2)}
    assert {k: (v.bound, v.total) for k, v in binding_rates(s).items()} == \
        {"k": (1, 2), None: (1, 1)}
    assert (overall_rate(s, badcases_only=True).bound, overall_rate(s, True).total) == (2, 3)
