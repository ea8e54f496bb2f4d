"""Selection predicates -> parameterised SQL, evaluated on the case and request views."""
import pandas as pd
import pytest

from explorer.core.selection import (And, InSet, Not, Or, Range, SelectionError, TreePath,
                                     from_dict, named_params, select_cases, select_requests)


@pytest.fixture
def small(store):
    store.add_run("r1", engine_version="0.5.2")
    store.append("requests", pd.DataFrame({
        "run_id": ["r1"] * 4, "request_id": ["a", "b", "c", "d"],
        "kv_cache_hit_rate": [0.1, 0.9, 0.5, None], "num_preemptions": [3, 0, 1, 2],
        "arrival_s": [0.0, 5.0, 12.0, 25.0]}))
    store.append("cases", pd.DataFrame({
        "case_id": ["e:1", "e:2", "e:3"], "eval_id": "e", "category": ["m", "m", "p"],
        "correct": [False, True, True], "prompt_tokens": [10, 20, 30]}))
    store.append("case_links", pd.DataFrame({"case_id": ["e:1", "e:2"], "run_id": "r1",
                                             "request_id": ["a", "b"], "level": [1, 2]}))
    return store


def test_range_is_half_open_and_null_is_never_selected(small):
    got = select_requests(small, Range("kv_cache_hit_rate", 0.1, 0.5))
    assert got["request_id"].tolist() == ["a"]
    got = select_requests(small, Range("kv_cache_hit_rate", 0.1, 0.5, closed_hi=True))
    assert got["request_id"].tolist() == ["a", "c"]
    # NOT of a range keeps the SQL meaning: NULL stays unselected
    got = select_requests(small, Not(Range("kv_cache_hit_rate", 0.5)))
    assert got["request_id"].tolist() == ["a"]


def test_compositions_on_cases(small):
    assert select_cases(small, InSet("category", ("m",))) == ["e:1", "e:2"]
    assert select_cases(small, And(InSet("category", ("m",)), Range("num_preemptions", 1))) == ["e:1"]
    assert select_cases(small, Or(Range("prompt_tokens", 25), InSet("case_id", ("e:1",)))) == ["e:1", "e:3"]
    assert select_cases(small, InSet("category", ())) == []
    assert select_cases(small, And()) == ["e:1", "e:2", "e:3"]
    assert select_cases(small, None) == ["e:1", "e:2", "e:3"]


def test_tree_path_le_gt(small):
    p = TreePath((("kv_cache_hit_rate", "le", 0.5), ("num_preemptions", "gt", 0.5)))
    assert select_requests(small, p)["request_id"].tolist() == ["a", "c"]
    with pytest.raises(ValueError):
        TreePath((("x", "lt", 1.0),))


def test_values_are_parameters_not_pasted(small):
    hostile = "m') OR TRUE; DROP TABLE cases; --"
    sql, params = InSet("category", (hostile,)).to_sql()
    assert hostile not in sql and params == [hostile]
    assert select_cases(small, InSet("category", (hostile,))) == []
    assert small.count("cases") == 3


def test_unknown_column_is_a_clear_error(small):
    with pytest.raises(SelectionError, match="column"):
        select_cases(small, Range("no_such_metric", 1))


def test_round_trip_and_named_params():
    p = And(Range("a", 1, 2), Not(Or(InSet("b", ("x", "y")), TreePath((("c", "gt", 3.0),)))))
    assert from_dict(p.to_dict()) == p
    frag, params = p.to_sql()
    nfrag, named = named_params(frag, params)
    assert "?" not in nfrag and list(named.values()) == params
