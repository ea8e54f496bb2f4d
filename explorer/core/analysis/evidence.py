"""The conclusion's test family: every finding it may cite, tested together.

A finding may name an engine module only when it survives all three gates:

1. error control: its p-value is Benjamini-Hochberg adjusted (scipy.stats.false_discovery_control)
   over EVERY test the conclusion weighs, in one family: the comparison's metric rows (Mann-Whitney
   U; a row adjusted for the workload by its test at equal workload, van Elteren's) and share
   rows (Fisher's exact; adjusted likewise), the decision tree's riskiest leaf on held-out cases
   (tree.holdout, one-sided Fisher) and every change between engine versions (Mann-Whitney U);
   the family-adjusted p (`q`) must be below ALPHA; the cohort's own tests (comparison rows and
   the tree's leaf) must also pass BH among themselves, so that true version changes (tiny
   p-values) cannot loosen the threshold for them;
2. support: it rests on at least MIN_SUPPORT badcases (MIN_SUPPORT_WHY says why that number);
3. an effect-size floor (MIN_EFFECT), so that with millions of requests a trivially small but
   "significant" difference names no module: |Hedges' g| >= 0.2 for a metric (Cohen's "small"),
   |Cohen's h| >= 0.2 or a risk ratio >= 1.25 for a share (share_big), a held-out lift >= 1.5 x the baseline for a tree leaf, a change
   of at least 5 % between releases.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..i18n import N_
from .results import Comparison, TreeResult, VersionsResult

ALPHA = 0.05
MIN_SUPPORT = 10
MIN_SUPPORT_WHY = N_("below 10 badcases one case moves a share by 10 points or more and the 95% "
                   "interval of an error rate spans about +/-25 points, so no module is named "
                   "on fewer")
MIN_EFFECT = {"hedges_g": 0.2, "cohens_h": 0.2, "risk_ratio": 1.25, "lift": 1.5,
              "change_pct": 5.0}
FLOOR_TEXT = N_("Findings are tested together (Benjamini-Hochberg over all {n} weighed and "
              "over the cohort's own tests, false discovery rate 5%), rest on at least 10 badcases and have at least a small "
              "effect (|Hedges' g| >= 0.2, |Cohen's h| >= 0.2 or a risk ratio >= 1.25 for "
              "shares, held-out tree lift "
              ">= 1.5, version change >= 5%).")


def hedges_g(d: float | None, n1: int, n2: int) -> float | None:
    """Cohen's d with Hedges' small-sample correction J = 1 - 3 / (4 (n1 + n2) - 9)."""
    if d is None or n1 + n2 < 3:
        return None
    return d * (1 - 3 / (4 * (n1 + n2) - 9))


def risk_ratio(share_bad: float | None, share_control: float | None, n_bad: int,
               n_control: int) -> float | None:
    """How much more often a case with the signal is a badcase than one without, within the
    cohort: P(bad | signal) / P(bad | no signal), from the two groups' shares of the signal and
    their sizes; None when undefined."""
    if share_bad is None or share_control is None or n_bad <= 0 or n_control <= 0:
        return None
    kb, kc = share_bad * n_bad, share_control * n_control
    with_sig, without = kb + kc, (n_bad - kb) + (n_control - kc)
    if with_sig <= 0 or without <= 0 or n_bad - kb <= 0:
        return None
    return (kb / with_sig) / ((n_bad - kb) / without)


def share_big(share_bad, share_control, n_bad: int, n_control: int,
              floor: float | None = None) -> bool:
    """A share difference of at least a small effect: |Cohen's h| >= the floor (MIN_EFFECT's
    at least), or a risk ratio of at least MIN_EFFECT["risk_ratio"] (or at most its inverse):
    errors 10% -> 14% when preempted is h 0.19 on the preempted shares but a risk ratio 1.4."""
    h = cohens_h(share_bad, share_control)
    lim = max(floor or 0.0, MIN_EFFECT["cohens_h"])
    if h is not None and abs(h) >= lim:
        return True
    rr = risk_ratio(share_bad, share_control, n_bad, n_control)
    return rr is not None and rr > 0 and max(rr, 1 / rr) >= MIN_EFFECT["risk_ratio"]


def cohens_h(p1: float | None, p2: float | None) -> float | None:
    """Cohen's h between two shares: 2 asin(sqrt(p1)) - 2 asin(sqrt(p2))."""
    if p1 is None or p2 is None:
        return None
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


@dataclass(frozen=True)
class Finding:
    """One test of the family. key: ("comparison", metric) | ("tree",) | ("version", benchmark,
    metric, from_version, to_version); support: the badcases (requests for a version change) it
    rests on; effect: the size its floor applies to (name in effect_name)."""
    key: tuple
    p_value: float
    support: int
    effect: float | None
    effect_name: str

    def big_enough(self, floor: float | None = None) -> bool:
        """|effect| at or above the floor (max of MIN_EFFECT and `floor`); a version change
        from 0 has no relative size and counts as big, as the versions section counts it."""
        if self.effect is None and self.effect_name == "change_pct":
            return True
        lim = MIN_EFFECT[self.effect_name] if floor is None else max(floor, MIN_EFFECT[self.effect_name])
        return self.effect is not None and abs(self.effect) >= lim


def collect(results: dict) -> list[Finding]:
    """Every test the conclusion weighs, from the results of the other sections."""
    out = []
    comp = results.get("comparison")
    if isinstance(comp, Comparison):
        for r in comp.rows:
            if r.p_value is None:
                continue
            if getattr(r, "adjusted_test", None) is not None:
                # the row's test at equal workload (analysis/workload.py) is the finding: a
                # difference the workload makes does not count, one that pooling hides does
                if r.adjusted_p_value is None:
                    continue
                eff = r.adjusted_d
                name = "cohens_h" if r.kind == "categorical" else "hedges_g"
                out.append(Finding(("comparison", r.metric), r.adjusted_p_value,
                                   r.adjusted_n_bad or 0, eff, name))
                continue
            if r.kind == "categorical":
                eff, name = cohens_h(r.bad_mean, r.control_mean), "cohens_h"
            else:
                eff = getattr(r, "hedges_g", None)
                if eff is None:
                    eff = hedges_g(r.cohens_d, r.n_bad, r.n_control)
                name = "hedges_g"
            out.append(Finding(("comparison", r.metric), r.p_value, r.n_bad, eff, name))
    tree = results.get("tree")
    h = getattr(tree, "holdout", None) if isinstance(tree, TreeResult) else None
    if h and h.get("p_value") is not None:
        out.append(Finding(("tree",), h["p_value"], h["n_bad"], h.get("lift"), "lift"))
    ver = results.get("versions")
    if isinstance(ver, VersionsResult):
        for c in ver.changes:
            if c.get("p_value") is None:
                continue
            out.append(Finding(version_key(c), c["p_value"], min(c["n_from"], c["n_to"]),
                               c.get("change_pct"), "change_pct"))
    return out


def version_key(c: dict) -> tuple:
    return ("version", c.get("benchmark"), c["metric"], c["from_version"], c["to_version"])


def adjust(findings: list[Finding]) -> dict:
    """{key: Benjamini-Hochberg adjusted p over the whole family}."""
    if not findings:
        return {}
    from scipy import stats

    q = stats.false_discovery_control([f.p_value for f in findings], method="bh")
    return {f.key: float(v) for f, v in zip(findings, q)}


class Family:
    """The family of one conclusion: q(key), and whether a finding passes every gate."""

    def __init__(self, results: dict, alpha: float = ALPHA):
        self.findings = {f.key: f for f in collect(results)}
        self.q = adjust(list(self.findings.values()))
        # the cohort's own tests (comparison rows, the tree's leaf) adjusted among themselves
        # too: true version changes, with their tiny p-values, would otherwise loosen the BH
        # threshold for them (BH controls the false discovery rate of the whole family, and
        # every true discovery raises the bar the others must pass)
        self.q_own = adjust([f for f in self.findings.values() if f.key[0] != "version"])
        self.alpha = alpha

    def __len__(self) -> int:
        return len(self.findings)

    def passes(self, key: tuple, floor: float | None = None, support: int | None = None,
               effect: bool = True) -> bool:
        """Survives: family-adjusted p < alpha, at least MIN_SUPPORT badcases (or `support`
        when the caller counts them itself) and, unless effect=False (the caller applies the
        floor at equal workload), an effect at or above the floor."""
        f = self.findings.get(key)
        if f is None or max(self.q[key], self.q_own.get(key, 0.0)) >= self.alpha:
            return False
        if (f.support if support is None else support) < MIN_SUPPORT:
            return False
        return f.big_enough(floor) if effect else True

    def adjusted(self, key: tuple) -> float:
        """The finding's adjusted p: the larger of its whole-family and own-family q."""
        return max(self.q[key], self.q_own.get(key, 0.0))
