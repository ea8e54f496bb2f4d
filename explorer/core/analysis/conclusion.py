"""The written conclusion (DESIGN `conclusion`), drawn from the knowledge base.

resources/knowledge_base.toml (data, read with tomllib) holds metric directions, engine modules
and rules. A rule fires on the evidence of the other sections:
- "comparison": the metric's Benjamini-Hochberg adjusted p < max_p_adjusted, |Cohen's d| >=
  min_abs_d and badcases differ in `direction`;
- "categorical": the signal's adjusted p (Fisher) < max_p_adjusted, in `direction`;
- "tree_split": the tree's riskiest path splits on `feature` (on `side`, if given) and its leaf's
  error rate is at least min_lift x the baseline;
- "version_regression": a change of `metric` between versions is flagged as a regression.
Each fired rule adds its weight to its module; modules are ranked by total weight; the
narrative joins the fired rules' `explain` sentences, filled with the numbers they rest on; the
suggestions of fired rules are merged (duplicates dropped) and sorted by priority, then by the
module's weight. The narrative names the top modules, then gives the fired rules' sentences in
knowledge-base order (so a rule's follow-up sentence comes after its primary evidence).
"""
from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

from .fmt import fmt_num, fmt_p, fmt_pct, fmt_share
from .results import Comparison, Conclusion, SectionError, Suggestion, TreeResult, VersionsResult

MAX_SENTENCES = 8
EVIDENCE = ("comparison", "categorical", "tree_split", "version_regression")


@lru_cache(maxsize=4)
def _read_default() -> dict:
    text = resources.files("resources").joinpath("knowledge_base.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def load_knowledge_base(path=None) -> dict:
    """The knowledge base as a dict (metrics, modules, rules). path=None reads
    resources/knowledge_base.toml. Raises ValueError naming the file and the rule when a rule is
    malformed (unknown evidence, module or missing field); tomllib.TOMLDecodeError for bad
    TOML."""
    if path is None:
        kb = _read_default()
        where = "resources/knowledge_base.toml"
    else:
        with open(path, "rb") as fh:
            kb = tomllib.load(fh)
        where = str(path)
    mods = kb.get("modules", {})
    for i, r in enumerate(kb.get("rules", [])):
        rid = r.get("id", f"#{i + 1}")
        if r.get("evidence") not in EVIDENCE:
            raise ValueError(f"{where}: rule {rid}: evidence must be one of {', '.join(EVIDENCE)}")
        if r.get("module") not in mods:
            raise ValueError(f"{where}: rule {rid}: unknown module {r.get('module')!r}")
        need = {"comparison": ("metric", "direction"), "categorical": ("metric", "direction"),
                "tree_split": ("feature",), "version_regression": ("metric",)}[r["evidence"]]
        for k in need + ("explain",):
            if k not in r:
                raise ValueError(f"{where}: rule {rid}: missing field {k!r}")
        for s in r.get("suggestions", []):
            if "priority" not in s or "text" not in s:
                raise ValueError(f"{where}: rule {rid}: a suggestion needs priority and text")
    return kb


def _fill(template: str, ctx: dict) -> str:
    class Safe(dict):
        def __missing__(self, k):
            return "{" + k + "}"
    return template.format_map(Safe(ctx))


def _row_ctx(row, kb) -> dict:
    meta = kb.get("metrics", {}).get(row.metric, {})
    unit = meta.get("unit", row.unit or "")
    share = row.kind == "categorical"
    f = fmt_share if share else (lambda v: fmt_num(v))
    return {"bad_mean": f(row.bad_mean), "control_mean": f(row.control_mean),
            "diff_pct": fmt_pct(row.diff_pct), "p_adjusted": fmt_p(row.p_adjusted),
            "p_value": fmt_p(row.p_value), "cohens_d": fmt_num(row.cohens_d),
            "n_bad": row.n_bad, "n_control": row.n_control, "unit": unit,
            "label": meta.get("label", row.metric), "metric": row.metric}


def _fires(rule: dict, results: dict) -> dict | None:
    """The context the rule's sentence needs when its evidence holds, else None."""
    ev = rule["evidence"]
    if ev in ("comparison", "categorical"):
        comp = results.get("comparison")
        if not isinstance(comp, Comparison):
            return None
        row = comp.row(rule["metric"])
        if row is None or row.p_adjusted is None or row.bad_mean is None or row.control_mean is None:
            return None
        if row.p_adjusted >= rule.get("max_p_adjusted", 0.05):
            return None
        if (row.bad_mean > row.control_mean) != (rule["direction"] == "higher") or \
                row.bad_mean == row.control_mean:
            return None
        if ev == "comparison":
            if row.cohens_d is None or abs(row.cohens_d) < rule.get("min_abs_d", 0.0):
                return None
        return {"row": row}
    if ev == "tree_split":
        tree = results.get("tree")
        if not isinstance(tree, TreeResult) or len(tree.riskiest_path) < 2:
            return None
        nodes = {n.id: n for n in tree.nodes}
        steps = [(nodes[nodes[c].parent].feature, nodes[c].side) for c in tree.riskiest_path[1:]]
        if not any(f == rule["feature"] and (rule.get("side") in (None, s)) for f, s in steps):
            return None
        leaf = nodes[tree.riskiest_path[-1]]
        base = tree.baseline_error_rate
        if not base or leaf.error_rate is None:
            return None
        lift = leaf.error_rate / base
        if lift < rule.get("min_lift", 1.0):
            return None
        return {"sentence": tree.sentence, "feature": rule["feature"], "lift": f"{lift:.1f}"}
    if ev == "version_regression":
        ver = results.get("versions")
        if not isinstance(ver, VersionsResult):
            return None
        regs = [c for c in ver.changes if c["metric"] == rule["metric"] and c["regression"]]
        if not regs:
            return None
        c = max(regs, key=lambda c: abs(c["change_pct"] or 0))
        bench = f" (benchmark {c['benchmark']})" if c.get("benchmark") else ""
        if len(regs) > 1:
            bench += f", the largest of {len(regs)} flagged changes"
        return {"from_version": c["from_version"], "to_version": c["to_version"], "bench": bench,
                "from_value": fmt_num(c["from_value"]), "to_value": fmt_num(c["to_value"]),
                "change_pct": fmt_pct(c["change_pct"]), "p_value": fmt_p(c["p_adjusted"]),
                "n_regressions": len(regs)}
    return None


def conclude(results: dict, params: dict | None = None) -> Conclusion:
    """Fire the knowledge-base rules on the results of the other sections (a dict section ->
    result or SectionError, as run_all builds it) and write the conclusion.

    params: kb (a loaded knowledge base; default resources/knowledge_base.toml).
    Never raises NoData: with no evidence the narrative says what is missing."""
    p = params or {}
    kb = p.get("kb") or load_knowledge_base()
    fired = []
    for order, rule in enumerate(kb.get("rules", [])):
        ctx = _fires(rule, results)
        if ctx is None:
            continue
        if "row" in ctx:
            ctx = _row_ctx(ctx.pop("row"), kb)
        fired.append((rule, _fill(rule["explain"], ctx), order))
    score: dict[str, float] = {}
    for rule, _, _ in fired:
        score[rule["module"]] = score.get(rule["module"], 0) + rule.get("weight", 1)
    modules = sorted(score, key=lambda m: (-score[m], m))
    evidence = tuple({"rule": r["id"], "module": r["module"], "weight": r.get("weight", 1),
                      "kind": r["evidence"], "text": t} for r, t, _ in fired)
    sentences = []
    if modules:
        names = modules[:3]
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        sentences.append(f"The evidence points to {joined}.")
        # knowledge-base order (primary evidence first), at most MAX_SENTENCES; all in evidence
        sentences += [t for _, t, _ in fired][:MAX_SENTENCES]
        if len(fired) > MAX_SENTENCES:
            sentences.append(f"({len(fired) - MAX_SENTENCES} more findings are listed with the "
                             "evidence.)")
    else:
        sentences.append(_no_evidence(results))
    seen = set()
    sugg = []
    for r, _, order in fired:
        for s in r.get("suggestions", []):
            if s["text"] in seen:
                continue
            seen.add(s["text"])
            sugg.append((s["priority"], -score[r["module"]], order,
                         Suggestion(priority=int(s["priority"]), text=s["text"],
                                    flags=tuple(s.get("flags", ())), module=r["module"],
                                    rule=r["id"])))
    sugg.sort(key=lambda x: x[:3])
    return Conclusion(modules=tuple(modules), narrative=" ".join(sentences),
                      suggestions=tuple(s for *_, s in sugg), evidence=evidence)


def _no_evidence(results: dict) -> str:
    cohort = results.get("cohort")
    parts = []
    note = getattr(cohort, "note", None)
    if note:
        parts.append(f"No engine evidence: {note}. Load the inference server's traces of this "
                     "eval to see which engine behaviour goes with the badcases.")
    comp = results.get("comparison")
    if isinstance(comp, Comparison):
        tested = [r for r in comp.rows if r.p_adjusted is not None]
        if tested:
            best = min(tested, key=lambda r: r.p_adjusted)
            parts.append("No metric separates the badcases from the control strongly enough "
                         "after Benjamini-Hochberg adjustment (smallest adjusted p: "
                         f"{fmt_p(best.p_adjusted)} for {best.metric}, diff "
                         f"{fmt_pct(best.diff_pct)}).")
    elif isinstance(comp, SectionError):
        parts.append(f"No comparison: {comp.reason}.")
    ver = results.get("versions")
    if isinstance(ver, VersionsResult) and ver.changes and not any(c["regression"] for c in ver.changes):
        parts.append("No metric regressed significantly between engine versions.")
    return " ".join(parts) or "There is not enough evidence to point at an engine module."
