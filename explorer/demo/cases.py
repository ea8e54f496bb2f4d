"""Templated maths eval cases for the demo workload, with a planted engine effect.

Every request of the demo trace carries one maths question the code writes itself (a template
filled with seeded numbers: prompt, reference answer, worked prediction). Whether the simulated
model answers it wrongly, and how, is drawn per case:

* **Planted effect** (cluster ``计算题中间步骤出错``, "an intermediate calculation step is
  wrong"): with probability

      p_planted = 1 / (1 + exp(-(ALPHA + BETA * (1 - h) + GAMMA * min(n, 3))))

  where h is the request's kv_cache_hit_rate (0..1) and n its num_preemptions, the prediction
  gets one intermediate step off by a small amount and carries the error to the final answer.
  With ALPHA = -4.0, BETA = 2.0, GAMMA = 0.8 a request that reused its whole prompt from the
  prefix cache and was never preempted fails this way 1.8% of the time, one that reused nothing
  and was preempted three times 60% of the time.
* **Noise** (independent of the engine): with probability P_NOISE = 0.09 a case that did not
  fail the planted way fails in one of three other clusters: ``单位换算错误`` (unit conversion
  error; only questions that ask for another unit), ``answered an intermediate quantity`` and
  ``final answer missing``.

Categories (arithmetic, algebra, geometry) come from the template, so same-category control
groups exist. The effect is simulated: it says nothing about any real engine.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

PLANTED_CLUSTER = "计算题中间步骤出错"
UNIT_CLUSTER = "单位换算错误"
EARLY_CLUSTER = "answered an intermediate quantity"
MISSING_CLUSTER = "final answer missing"
CLUSTERS = (PLANTED_CLUSTER, UNIT_CLUSTER, EARLY_CLUSTER, MISSING_CLUSTER)
CATEGORIES = ("arithmetic", "algebra", "geometry")

ALPHA, BETA, GAMMA = -4.0, 2.0, 0.8
P_NOISE = 0.09


def p_planted(hit_rate: np.ndarray, preemptions: np.ndarray) -> np.ndarray:
    """Probability of the planted failure per request (formula in the module docstring).

    hit_rate: kv_cache_hit_rate in [0, 1] (NaN counts as 0); preemptions: counts (NaN = 0).
    Returns an array of probabilities in (0, 1), same shape.
    """
    h = np.nan_to_num(np.asarray(hit_rate, dtype=float), nan=0.0).clip(0.0, 1.0)
    n = np.nan_to_num(np.asarray(preemptions, dtype=float), nan=0.0).clip(0.0, 3.0)
    return 1.0 / (1.0 + np.exp(-(ALPHA + BETA * (1.0 - h) + GAMMA * n)))


@dataclass(frozen=True)
class Question:
    """One filled template. solve(errors, factor) -> (step texts, final value): errors maps a
    step index to an amount added to that step's result (carried on); factor overrides the
    unit-conversion factor where the question has one (unit is then its unit name)."""
    category: str
    prompt: str
    solve: Callable[[dict, int | None], tuple[list[str], int]]
    unit: str | None = None


def _bakery(r):
    a, b = int(r.integers(12, 60)), int(r.integers(6, 25))
    c = int(r.integers(10, a * b - 5))

    def solve(err, factor=None):
        s1 = a * b + err.get(0, 0)
        s2 = s1 - c + err.get(1, 0)
        return [f"{a} × {b} = {s1}", f"{s1} − {c} = {s2}"], s2
    return Question("arithmetic", f"A bakery bakes {a} trays of {b} rolls each and sells {c} "
                    "rolls. How many rolls are left?", solve)


def _sum_products(r):
    a, b, c, d = (int(x) for x in r.integers(11, 99, size=4))

    def solve(err, factor=None):
        s1 = a * b + err.get(0, 0)
        s2 = c * d + err.get(1, 0)
        s3 = s1 + s2 + err.get(2, 0)
        return [f"{a} × {b} = {s1}", f"{c} × {d} = {s2}", f"{s1} + {s2} = {s3}"], s3
    return Question("arithmetic", f"计算：{a} × {b} + {c} × {d} = ?", solve)


def _trip(r):
    a, b = int(r.integers(15, 80)), int(r.integers(20, 45))
    c = int(r.integers(100, a * b - 50))

    def solve(err, factor=None):
        s1 = a * b + err.get(0, 0)
        s2 = s1 - c + err.get(1, 0)
        return [f"{b} × {a} = {s1}", f"{s1} − {c} = {s2}"], s2
    return Question("arithmetic", f"{b} students each pay {a} yuan for a trip and the bus costs "
                    f"{c} yuan. How many yuan are left?", solve)


def _linear(r):
    a, x, b = int(r.integers(2, 13)), int(r.integers(-40, 60)), int(r.integers(1, 99))
    c = a * x + b

    def solve(err, factor=None):
        s1 = c - b + err.get(0, 0)
        s2 = s1 // a + err.get(1, 0)
        return [f"{a}x = {c} − {b} = {s1}", f"x = {s1} ÷ {a} = {s2}"], s2
    return Question("algebra", f"Solve for x: {a}x + {b} = {c}.", solve)


def _linear_zh(r):
    a, x, b = int(r.integers(3, 15)), int(r.integers(2, 90)), int(r.integers(1, 99))
    c = a * x - b

    def solve(err, factor=None):
        s1 = c + b + err.get(0, 0)
        s2 = s1 // a + err.get(1, 0)
        return [f"{a}x = {c} + {b} = {s1}", f"x = {s1} ÷ {a} = {s2}"], s2
    return Question("algebra", f"若 {a}x − {b} = {c}，求 x。", solve)


def _consecutive(r):
    n = int(r.integers(20, 5000))
    s = 3 * n + 3  # n + (n+1) + (n+2)

    def solve(err, factor=None):
        s1 = s - 3 + err.get(0, 0)
        s2 = s1 // 3 + err.get(1, 0)
        s3 = s2 + 2 + err.get(2, 0)
        return [f"3n = {s} − 3 = {s1}", f"n = {s1} ÷ 3 = {s2}", f"largest = {s2} + 2 = {s3}"], s3
    return Question("algebra", f"Three consecutive integers add up to {s}. What is the largest "
                    "of them?", solve)


def _perimeter(r):
    a, b = int(r.integers(5, 300)), int(r.integers(5, 300))

    def solve(err, factor=None):
        s1 = a + b + err.get(0, 0)
        s2 = 2 * s1 + err.get(1, 0)
        return [f"{a} + {b} = {s1}", f"2 × {s1} = {s2}"], s2
    return Question("geometry", f"A rectangle is {a} cm long and {b} cm wide. What is its "
                    "perimeter in centimetres?", solve)


def _flowerbed_zh(r):
    a, b = int(r.integers(3, 60)), int(r.integers(2, 40))

    def solve(err, factor=None):
        f = 100 if factor is None else factor
        s1 = a * b + err.get(0, 0)
        s2 = s1 * f + err.get(1, 0)
        return [f"{a} × {b} = {s1} 平方米", f"{s1} × {f} = {s2} 平方分米"], s2
    return Question("geometry", f"一个长方形花坛长 {a} 米，宽 {b} 米，面积是多少平方分米？",
                    solve, unit="平方分米")


def _triangle(r):
    a, b = int(r.integers(4, 90)) * 2, int(r.integers(3, 80))

    def solve(err, factor=None):
        f = 100 if factor is None else factor
        s1 = a * b + err.get(0, 0)
        s2 = s1 // 2 + err.get(1, 0)
        s3 = s2 * f + err.get(2, 0)
        return [f"{a} × {b} = {s1}", f"{s1} ÷ 2 = {s2} cm²", f"{s2} × {f} = {s3} mm²"], s3
    return Question("geometry", f"A triangle has a base of {a} cm and a height of {b} cm. What "
                    "is its area in square millimetres?", solve, unit="mm²")


TEMPLATES = (_bakery, _sum_products, _trip, _linear, _linear_zh, _consecutive, _perimeter,
             _flowerbed_zh, _triangle)


def make_questions(n: int, seed: int) -> list[Question]:
    """n questions with pairwise different prompt texts, deterministic in seed."""
    r = np.random.default_rng([seed, 0x6d617468])
    out, seen = [], set()
    while len(out) < n:
        q = TEMPLATES[int(r.integers(len(TEMPLATES)))](r)
        if q.prompt not in seen:
            seen.add(q.prompt)
            out.append(q)
    return out


def _fmt(steps: list[str], value: int | None) -> str:
    text = " ".join(f"Step {i + 1}: {s}." for i, s in enumerate(steps))
    return text + (f" The answer is {value}." if value is not None else "")


def answer(q: Question, r: np.random.Generator, planted: bool, noise: bool) -> tuple[str, str, bool, str | None]:
    """The simulated model's answer to q: (reference, prediction, correct, cluster).

    planted: fail with an intermediate-step error; else noise: fail in a noise cluster;
    else answer correctly. cluster is None for a correct answer.
    """
    steps, ref = q.solve({}, None)
    if planted:
        for _ in range(20):  # an error that happens to give the right answer is redrawn
            k = int(r.integers(0, len(steps) - 1))
            delta = int(r.choice([-1, 1])) * int(r.integers(1, 10)) * 10 ** int(r.integers(0, 2))
            wsteps, wrong = q.solve({k: delta}, None)
            if wrong != ref:
                return str(ref), _fmt(wsteps, wrong), False, PLANTED_CLUSTER
        raise AssertionError(f"no wrong intermediate step found for {q.prompt!r}")
    if noise:
        if q.unit and r.random() < 0.7:
            wsteps, wrong = q.solve({}, int(r.choice([10, 1000])))
            return str(ref), _fmt(wsteps, wrong), False, UNIT_CLUSTER
        if r.random() < 0.5:
            early = int(steps[0].rsplit("=", 1)[1].split()[0])
            if early != ref:
                return str(ref), _fmt(steps[:1], early), False, EARLY_CLUSTER
        return str(ref), _fmt(steps, None), False, MISSING_CLUSTER
    return str(ref), _fmt(steps, ref), True, None


def is_correct(reference: str, prediction: str) -> bool:
    """How the demo grades: the number after the last "The answer is" equals the reference."""
    marker = "The answer is "
    if marker not in prediction:
        return False
    return prediction.rsplit(marker, 1)[1].rstrip(".").strip() == reference.strip()
