"""Association on constructed inputs with a known truth: every case lands on its true request
or is reported ambiguous / unbound, never on a wrong one."""
from __future__ import annotations

import random

import pandas as pd
import pytest

from explorer.core.association import (AssociationResult, Tolerances, ambiguous_cases,
                                       bind_cases, binding_label, normalise_prompt,
                                       prompt_hash)
from explorer.core.store import Store

T0 = 1_750_000_000.0  # unix seconds


def _rewhitespace(text: str, rng: random.Random) -> str:
    """Same words, other spacing and case: what a different client library may send."""
    words = text.split()
    seps = ["  ", "\n", "\t", " \n "]
    out = words[0].upper()
    for w in words[1:]:
        out += rng.choice(seps) + (w.capitalize() if rng.random() < 0.3 else w)
    return "  " + out + "\n"


def _world(seed: int = 7):
    """A run of 400 requests (unique prompts, arrivals every 0.5-2 s) and an eval whose cases
    are derived from them with known damage; returns (store, truth, expected groups)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(500)]
    reqs, t = [], T0
    for i in range(400):
        t += rng.uniform(0.5, 2.0)
        prompt = " ".join(rng.choice(vocab) for _ in range(12))
        reqs.append({"run_id": "run-a", "request_id": f"chatcmpl-{i:05d}abcdef0123456789",
                     "arrival_s": t, "e2e_ms": rng.uniform(200, 3000),
                     "prompt_tokens": 100 + rng.randrange(0, 4000),
                     "completion_tokens": 50, "prompt_hash": prompt_hash(prompt),
                     "_prompt": prompt})
    truth, cases, group = {}, [], {}

    def case(cid, req, **kw):
        row = {"case_id": cid, "eval_id": "ev", "correct": False, "prompt": req["_prompt"],
               "prompt_hash": prompt_hash(req["_prompt"]), "request_id": req["request_id"],
               "prompt_tokens": req["prompt_tokens"], "timestamp_s": req["arrival_s"]}
        row.update(kw)
        if "prompt" in kw and "prompt_hash" not in kw:
            row["prompt_hash"] = prompt_hash(kw["prompt"])
        cases.append(row)
        truth[cid] = ("run-a", req["request_id"])

    for i in range(0, 100):      # ids kept -> level 1
        case(f"ev:id{i}", reqs[i])
        group[f"ev:id{i}"] = "id"
    for i in range(100, 130):    # only the normalised id: no chatcmpl- prefix, upper case
        case(f"ev:nid{i}", reqs[i], request_id=reqs[i]["request_id"][len("chatcmpl-"):].upper())
        group[f"ev:nid{i}"] = "id"
    for i in range(130, 230):    # id removed, prompt re-whitespaced, tokens +-1, clock skew
        skew = rng.choice([-1, 1]) * rng.uniform(1.0, 4.0)
        case(f"ev:fz{i}", reqs[i], request_id=None,
             prompt=_rewhitespace(reqs[i]["_prompt"], rng),
             prompt_tokens=reqs[i]["prompt_tokens"] + rng.choice([-1, 1]),
             timestamp_s=reqs[i]["arrival_s"] + skew)
        group[f"ev:fz{i}"] = "fuzzy"
    for i in range(230, 260):    # id and prompt removed: tokens off by one + time (skewed)
        case(f"ev:tt{i}", reqs[i], request_id=None, prompt=None, prompt_hash=None,
             prompt_tokens=reqs[i]["prompt_tokens"] + 1,
             timestamp_s=reqs[i]["arrival_s"] + 2.5)
        group[f"ev:tt{i}"] = "fuzzy"
    for i in range(260, 270):    # prompt only (no tokens, no time): weak level 3
        case(f"ev:h{i}", reqs[i], request_id=None, prompt_tokens=None, timestamp_s=None)
        group[f"ev:h{i}"] = "weak"
    # two candidates tied: request 270's prompt is sent again 0.8 s later with the same
    # length (a retry); the case has no id -> both fit equally -> ambiguous
    tie = dict(reqs[270], request_id="retry-270", arrival_s=reqs[270]["arrival_s"] + 0.8)
    reqs.append(tie)
    case("ev:tie", reqs[270], request_id=None, timestamp_s=reqs[270]["arrival_s"] + 0.4)
    group["ev:tie"] = "ambiguous"
    # decoys: a case whose true request is missing from the trace but whose prompt / tokens /
    # time resemble others must not bind to a wrong one
    ghost = " ".join(rng.choice(vocab) for _ in range(12))
    cases.append({"case_id": "ev:ghost", "eval_id": "ev", "correct": False, "prompt": ghost,
                  "prompt_hash": prompt_hash(ghost), "request_id": None,
                  "prompt_tokens": reqs[300]["prompt_tokens"],
                  "timestamp_s": reqs[300]["arrival_s"]})
    group["ev:ghost"] = "none"
    # an id that exists in the trace is never overridden by a better-looking fuzzy match
    cases.append({"case_id": "ev:unknown-id", "eval_id": "ev", "correct": False,
                  "prompt": reqs[310]["_prompt"], "prompt_hash": reqs[310]["prompt_hash"],
                  "request_id": "chatcmpl-nonexistent-id-000000000", "prompt_tokens":
                  reqs[310]["prompt_tokens"], "timestamp_s": reqs[310]["arrival_s"]})
    group["ev:unknown-id"] = "none"

    s = Store()
    s.add_run("run-a", model="meta-llama/Llama-3.1-8B-Instruct")
    s.add_eval("ev", model="Llama-3.1-8B-Instruct")
    s.append("requests", pd.DataFrame([{k: v for k, v in r.items() if k != "_prompt"}
                                       for r in reqs]))
    df = pd.DataFrame(cases)
    df["prompt_tokens"] = df["prompt_tokens"].astype("Int64")
    s.append("cases", df)
    return s, truth, group


@pytest.fixture(scope="module")
def world():
    s, truth, group = _world()
    result = bind_cases(s)
    links = s.df("SELECT case_id, run_id, request_id, level, score FROM case_links")
    yield s, truth, group, result, links
    s.close()


def test_prompt_hash_normalises_case_and_whitespace():
    assert normalise_prompt("  What IS\n\t2 +  2?  ") == "what is 2 + 2?"
    assert prompt_hash("What IS\n2+2?") == prompt_hash("what is 2+2?")
    assert prompt_hash("what is 2+2?") != prompt_hash("what is 2+3?")
    assert prompt_hash("") is None and prompt_hash(None) is None
    assert prompt_hash([{"role": "user", "content": "Hi  there"}]) == prompt_hash("hi there")
    import hashlib
    assert prompt_hash("A  b") == hashlib.sha256(b"a b").hexdigest()


def test_never_binds_to_a_wrong_request(world):
    s, truth, group, result, links = world
    for r in links.itertuples():
        assert truth.get(r.case_id) == (r.run_id, r.request_id), r.case_id
    assert set(links.case_id).isdisjoint(result.ambiguous)


def _has_rival(s, cid, truth, tol=Tolerances()):
    """Independent check (pandas, not the SQL): another request than the true one meets the
    case's known conditions within tolerance, so the case is rightly ambiguous."""
    c = s.df("SELECT * FROM cases WHERE case_id = ?", [cid]).iloc[0]
    r = s.df("SELECT * FROM requests")
    r = r[r.request_id != truth[cid][1]]
    ok = pd.Series(True, index=r.index)
    if pd.notna(c.prompt_tokens):
        ok &= (r.prompt_tokens - c.prompt_tokens).abs() <= tol.prompt_tokens
    if pd.notna(c.timestamp_s):
        end = r.arrival_s + r.e2e_ms.fillna(0) / 1000
        ok &= (c.timestamp_s >= r.arrival_s - tol.window_s) & (c.timestamp_s <= end + tol.window_s)
    if c.prompt_hash is not None:
        ok &= r.prompt_hash == c.prompt_hash
    return bool(ok.any())


def test_each_damage_lands_on_its_level(world):
    s, truth, group, result, links = world
    level = dict(zip(links.case_id, links.level))
    for cid, g in group.items():
        want = {"id": 1, "fuzzy": 2, "weak": 3}.get(g)
        if want is None:
            assert cid not in level, cid
        elif cid in result.ambiguous:
            assert g == "fuzzy" and _has_rival(s, cid, truth), cid
        else:
            assert level.get(cid) == want, cid
    assert "ev:tie" in result.ambiguous and _has_rival(s, "ev:tie", truth)
    assert result.ambiguous == ambiguous_cases(s)
    fuzzy = [c for c, g in group.items() if g == "fuzzy"]
    assert result.per_level[1] == 130 and result.per_level[3] == 10
    assert result.per_level[2] == len(fuzzy) - (len(result.ambiguous) - 1)
    assert result.per_level[2] >= 0.9 * len(fuzzy)
    assert result.bound == sum(result.per_level.values()) and result.total == len(group)


def test_tolerances_change_the_outcome():
    s, truth, group = _world()
    # a 1 s window: the cases with 1-4 s of clock skew no longer fit in time -> unbound
    r = bind_cases(s, Tolerances(window_s=1.0))
    links = s.df("SELECT case_id, run_id, request_id, level FROM case_links")
    for x in links.itertuples():
        assert truth[x.case_id] == (x.run_id, x.request_id)
    skewed = [c for c in group if c.startswith(("ev:fz", "ev:tt"))]
    bound = set(links.case_id)
    assert sum(c in bound for c in skewed) < len(skewed)
    assert r.tolerances.window_s == 1.0
    # tokens must match exactly: the off-by-one cases lose their token condition
    bind_cases(s, Tolerances(prompt_tokens=0))
    links = s.df("SELECT case_id FROM case_links")
    assert not any(c.startswith("ev:tt") for c in links.case_id)
    # the session keeps the last tolerances
    assert s.get_setting("association.tolerances")["prompt_tokens"] == 0
    s.close()


def test_idempotent(world):
    s, truth, group, result, links = world
    again = bind_cases(s)
    links2 = s.df("SELECT case_id, run_id, request_id, level, score FROM case_links")
    assert again.per_level == result.per_level
    pd.testing.assert_frame_equal(links.sort_values("case_id").reset_index(drop=True),
                                  links2.sort_values("case_id").reset_index(drop=True))


def _small_store():
    s = Store()
    s.add_eval("e", model=None)
    return s


def _cases(s, rows):
    df = pd.DataFrame([{"eval_id": "e", "correct": False, **r} for r in rows])
    for c in ("prompt_tokens",):
        if c in df:
            df[c] = df[c].astype("Int64")
    s.append("cases", df)


def test_same_id_in_two_runs_is_ambiguous_unless_the_case_names_its_run():
    s = _small_store()
    for run in ("v1", "v2"):
        s.add_run(run)
        s.append("requests", pd.DataFrame({"run_id": [run], "request_id": ["r-1"]}))
    _cases(s, [{"case_id": "e:1", "request_id": "r-1"},
               {"case_id": "e:2", "request_id": "r-1", "extra": '{"run_id": "v2"}'}])
    r = bind_cases(s)
    assert r.ambiguous == ["e:1"]
    assert s.df("SELECT case_id, run_id, level FROM case_links").values.tolist() == [
        ["e:2", "v2", 1]]


def test_x_request_id_and_gen_ai_forms_in_extra():
    s = _small_store()
    s.add_run("otlp")
    s.append("requests", pd.DataFrame({
        "run_id": ["otlp", "otlp"], "request_id": ["span-1", "span-2"],
        "extra": ['{"gen_ai.request.id": "cmpl-0f3a9c2e6b5d4e1f9a8b7c6d5e4f3a2b-0"}',
                  '{"x_request_id": "abc-123"}']}))
    _cases(s, [{"case_id": "e:1", "request_id": "0f3a9c2e6b5d4e1f9a8b7c6d5e4f3a2b"},
               {"case_id": "e:2", "request_id": "abc-123"}])
    bind_cases(s)
    got = dict(s.df("SELECT case_id, request_id FROM case_links").values.tolist())
    assert got == {"e:1": "span-1", "e:2": "span-2"}


def test_model_mismatch_never_binds():
    s = Store()
    s.add_run("r70", model="meta-llama/Llama-3.1-70B-Instruct")
    s.add_eval("e", model="Meta-Llama-3.1-8B-Instruct")
    s.append("requests", pd.DataFrame({"run_id": ["r70"], "request_id": ["x"],
                                       "prompt_hash": [prompt_hash("q")], "arrival_s": [T0],
                                       "prompt_tokens": [10]}))
    _cases(s, [{"case_id": "e:1", "request_id": "x"},
               {"case_id": "e:2", "prompt_hash": prompt_hash("q"), "timestamp_s": T0,
                "prompt_tokens": 10}])
    r = bind_cases(s)
    assert r.bound == 0


def test_two_cases_on_one_request_bind_neither():
    s = _small_store()
    s.add_run("r")
    s.append("requests", pd.DataFrame({"run_id": ["r"], "request_id": ["x"],
                                       "prompt_hash": [prompt_hash("same question")],
                                       "prompt_tokens": [40], "arrival_s": [T0]}))
    _cases(s, [{"case_id": f"e:{i}", "prompt_hash": prompt_hash("same question"),
                "prompt_tokens": 40, "timestamp_s": T0 + i} for i in (1, 2)])
    r = bind_cases(s)
    assert r.bound == 0 and r.ambiguous == ["e:1", "e:2"]


def test_different_clocks_fall_back_to_hash_and_tokens():
    """A trace with times relative to its own start (Mooncake-like) and an eval with unix
    timestamps: time cannot be compared, so it neither helps nor contradicts."""
    s = _small_store()
    s.add_run("r")
    s.append("requests", pd.DataFrame({"run_id": ["r", "r"], "request_id": ["a", "b"],
                                       "prompt_hash": [prompt_hash("p1"), prompt_hash("p2")],
                                       "prompt_tokens": [10, 20], "arrival_s": [1.0, 2.0]}))
    _cases(s, [{"case_id": "e:1", "prompt_hash": prompt_hash("P1 "), "prompt_tokens": 11,
                "timestamp_s": T0}])
    r = bind_cases(s)
    assert s.df("SELECT request_id, level FROM case_links").values.tolist() == [["a", 2]]
    assert r.per_level[2] == 1


def test_binding_label_and_empty_store():
    assert binding_label(21, 23) == "21/23 (91%)"
    assert binding_label(0, 0) == "0/0"
    s = Store()
    r = bind_cases(s)
    assert isinstance(r, AssociationResult)
    assert (r.bound, r.total, r.rate, r.ambiguous) == (0, 0, None, [])
    s.close()


def test_fixed_prompt_benchmark_is_not_guessed():
    """A benchmark that sends one prompt 500 times at the same length: cases without ids have
    nothing that singles out a request -> none bound (and the join stays small), while a case
    with a distinctive prompt among them still binds."""
    s = _small_store()
    s.add_run("r")
    n = 500
    s.append("requests", pd.DataFrame({
        "run_id": "r", "request_id": [f"q{i}" for i in range(n)],
        "prompt_hash": [prompt_hash("the same prompt")] * (n - 1) + [prompt_hash("unique")],
        "prompt_tokens": [512] * n, "arrival_s": [T0 + i * 0.01 for i in range(n)]}))
    _cases(s, [{"case_id": f"e:{i}", "prompt_hash": prompt_hash("the same prompt"),
                "prompt_tokens": 512, "timestamp_s": T0 + i * 0.01} for i in range(50)]
           + [{"case_id": "e:u", "prompt_hash": prompt_hash("UNIQUE"), "prompt_tokens": 512,
               "timestamp_s": T0 + 4.99}])
    r = bind_cases(s)
    assert s.df("SELECT case_id, request_id FROM case_links").values.tolist() == [
        ["e:u", f"q{n - 1}"]]
    assert r.bound == 1


def test_both_binding_stages_read_the_same_alternate_request_ids():
    """assoc_request_keys.sql (which ids can bind) and assoc_requests.sql (the staged requests'
    alt_ids, which level 1 joins) must list the same requests.extra keys: a key in one only
    would find ids that level 1 cannot join (cases silently unbound). SQLGlot transpiles both
    to Spark, so they cannot share a DuckDB macro; this keeps the two copies equal."""
    import re

    from explorer.core.sqlutil import load_query

    def alt_ids(name: str) -> str:
        m = re.search(r"list_filter\(\[(.*?)\],\s*lambda x: (.*?)\)", load_query(name), re.S)
        assert m, name
        return " ".join(" ".join(m.groups()).split())
    keys = alt_ids("assoc_request_keys")
    assert keys == alt_ids("assoc_requests")
    assert all(k in keys for k in ("x_request_id", "x-request-id", "gen_ai.request.id"))
