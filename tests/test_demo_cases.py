"""The demo's templated maths cases: unique prompts, honest grading, the planted formula."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from explorer.demo import cases as cg


@pytest.fixture(scope="module")
def questions():
    return cg.make_questions(2000, seed=7)


def test_questions_are_unique_deterministic_and_cover_the_categories(questions):
    assert len({q.prompt for q in questions}) == 2000
    assert [q.prompt for q in cg.make_questions(50, seed=7)] == [q.prompt for q in questions[:50]]
    assert [q.prompt for q in cg.make_questions(50, seed=8)] != [q.prompt for q in questions[:50]]
    by_cat = Counter(q.category for q in questions)
    assert set(by_cat) == set(cg.CATEGORIES) and min(by_cat.values()) > 400
    assert any(re.search(r"[\u4e00-\u9fff]", q.prompt) for q in questions)


def _eval(text: str) -> int:
    """Evaluate a prompt's arithmetic independently of the templates' solve()."""
    expr = text.replace("×", "*").replace("−", "-").replace("÷", "//")
    return eval(expr, {"__builtins__": {}})  # digits and operators only (checked below)


def test_references_are_right(questions):
    checked = 0
    for q in questions:
        ref = int(q.solve({}, None)[1])
        if m := re.fullmatch(r"计算：(.*) = \?", q.prompt):
            assert re.fullmatch(r"[\d ×+]+", m[1])
            assert ref == _eval(m[1])
        elif m := re.fullmatch(r"Solve for x: (\d+)x \+ (\d+) = (-?\d+)\.", q.prompt):
            a, b, c = map(int, m.groups())
            assert a * ref + b == c
        elif m := re.fullmatch(r"若 (\d+)x − (\d+) = (-?\d+)，求 x。", q.prompt):
            a, b, c = map(int, m.groups())
            assert a * ref - b == c
        elif m := re.fullmatch(r"A triangle has a base of (\d+) cm and a height of (\d+) cm\..*", q.prompt):
            assert ref == int(m[1]) * int(m[2]) * 50  # (b h / 2) cm2 x 100 mm2/cm2
        elif m := re.fullmatch(r"一个长方形花坛长 (\d+) 米，宽 (\d+) 米.*", q.prompt):
            assert ref == int(m[1]) * int(m[2]) * 100  # m2 -> dm2
        else:
            continue
        checked += 1
    assert checked > 800


@pytest.mark.parametrize("planted, noise", [(False, False), (True, False), (False, True)])
def test_grading_matches_the_outcome_and_cluster(questions, planted, noise):
    r = np.random.default_rng(0)
    clusters = Counter()
    for q in questions[:600]:
        ref, pred, ok, cluster = cg.answer(q, r, planted, noise)
        assert ok == cg.is_correct(ref, pred)
        assert ok == (cluster is None) == (not planted and not noise)
        clusters[cluster] += 1
    if planted:
        assert set(clusters) == {cg.PLANTED_CLUSTER}
    if noise:
        assert set(clusters) == {cg.UNIT_CLUSTER, cg.EARLY_CLUSTER, cg.MISSING_CLUSTER}


def test_planted_probability_follows_the_stated_formula():
    h = np.array([1.0, 0.0, 0.0, 0.5, np.nan])
    n = np.array([0, 0, 3, 1, np.nan])
    z = -4.0 + 2.0 * (1 - np.array([1.0, 0.0, 0.0, 0.5, 0.0])) + 0.8 * np.array([0, 0, 3, 1, 0])
    np.testing.assert_allclose(cg.p_planted(h, n), 1 / (1 + np.exp(-z)))
    assert cg.p_planted(np.array([1.0]), np.array([0]))[0] == pytest.approx(0.018, abs=0.001)
    assert cg.p_planted(np.array([0.0]), np.array([3]))[0] == pytest.approx(0.599, abs=0.001)
    # more preemptions than 3 do not raise it further
    assert cg.p_planted(np.array([0.2]), np.array([9]))[0] == cg.p_planted(np.array([0.2]), np.array([3]))[0]
