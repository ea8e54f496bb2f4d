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

A version regression is evidence about the cohort only when at least half (SERVED_SHARE) of
its bound badcases ran on the regressed (newer) release of that benchmark
(CohortSummary.bound_versions: the runs of their bound requests) and a rule also fired on the
cohort's own significant engine evidence (OWN_ENGINE_EVIDENCE: an engine metric's comparison,
or the preempted / errored shares; not a tree split, which is not tested for significance, and
not prompt or answer length, which describe the workload). Any other flagged regression is
stated as context, as a plain fact without the rule's reading: "Independently of these badcases (<why>), the engine versions differ: ..."
(evidence entries with independent=True, no module, no suggestion), where <why> is that none
is bound to a trace request, that their requests belong to other runs, or that no engine
metric of theirs separates them from the control.
When the cohort has badcases but none is bound to a trace request, no engine module is blamed
for them: any fired rule other than a version regression (only case-level features can differ)
is reported as a case-level finding.
Case-level differences (answer / question length, `[case_level]` in the knowledge base) that
no rule explains are read as such ("the badcases differ in answer length, a case-level
signal"), never as "no metric separates the badcases".
"""
from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources

from .cohort import ENGINE_METRICS
from .evidence import FLOOR_TEXT, MIN_SUPPORT, MIN_SUPPORT_WHY, Family, version_key
from .workload import WORKLOAD_METRICS
from .workload_text import explained_rows, lead_sentences
from .. import fmt
from ..names import label, plural
from .results import (CohortSummary, Comparison, Conclusion, SectionError, Suggestion, TreeResult,
                      VersionsResult)
from explorer.core.i18n import N_, _, join_list, language, ngettext, pick

MAX_SENTENCES = 8
EVIDENCE = ("comparison", "categorical", "tree_split", "version_regression")


@lru_cache(maxsize=4)
def _read_default() -> dict:
    kb = resources.files("explorer.resources").joinpath("knowledge_base.toml")
    text = kb.read_text(encoding="utf-8")
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


def module_name(module: str, kb: dict | None = None) -> str:
    """An engine module's name in the current language (knowledge base `name_zh`)."""
    kb = kb or _read_default()
    return pick(kb.get("modules", {}).get(module, {}), "name", module) or module


def _fill(template: str, ctx: dict) -> str:
    class Safe(dict):
        def __missing__(self, k):
            return "{" + k + "}"
    return template.format_map(Safe(ctx))


UNIT_WORDS = (N_("characters"),)  # units that are words (compare.py: text lengths); ms stay


def _unit_word(unit: str) -> str:
    """A unit as the reader reads it: a word unit translated, a symbol (ms, tokens) kept."""
    return _(unit) if unit in UNIT_WORDS else unit


def _row_ctx(row, kb, q=None) -> dict:
    meta = kb.get("metrics", {}).get(row.metric, {})
    unit = _unit_word(meta.get("unit", row.unit or ""))
    share = row.kind == "categorical"
    f = fmt.share if share else (lambda v: fmt.num(v, row.metric, unit=""))  # {unit} apart
    return {"bad_mean": f(row.bad_mean), "control_mean": f(row.control_mean),
            "diff_pct": fmt.pct(row.diff_pct),
            "p_adjusted": fmt.pval(row.p_adjusted if q is None else q),
            "p_value": fmt.pval(row.p_value), "cohens_d": fmt.signed(row.cohens_d),
            "hedges_g": fmt.signed(getattr(row, "hedges_g", None)),
            "n_bad": fmt.count(row.n_bad), "n_control": fmt.count(row.n_control), "unit": unit,
            "label": pick(meta, "label", row.metric), "metric": row.metric}


def _fires(rule: dict, results: dict, fam: Family, keep=None) -> dict | None:
    """The context the rule's sentence needs when its evidence holds, else None. Evidence holds
    only when its finding survives the family's gates (evidence.Family.passes: family-adjusted p,
    support, effect floor). keep: for a version_regression rule, a predicate on a change (dict of
    VersionsResult.changes): only the regressions it keeps count (None = every one); it returns
    the support to check (badcases that ran on the release) or True / False."""
    ev = rule["evidence"]
    if ev in ("comparison", "categorical"):
        comp = results.get("comparison")
        if not isinstance(comp, Comparison):
            return None
        row = comp.row(rule["metric"])
        if row is None or row.bad_mean is None or row.control_mean is None:
            return None
        key = ("comparison", rule["metric"])
        if key not in fam.q or fam.adjusted(key) >= rule.get("max_p_adjusted", fam.alpha):
            return None
        # the effect-size floor applies at equal workload (_survives_workload) when the row was
        # adjusted: a difference that pooling hides (Simpson) counts, one it makes does not
        adjusted = getattr(row, "adjusted_test", None) is not None
        if not fam.passes(key, rule.get("min_abs_d") if ev == "comparison" else None,
                          effect=not adjusted):
            return None
        if not adjusted and ((row.bad_mean > row.control_mean) != (rule["direction"] == "higher")
                             or row.bad_mean == row.control_mean):
            return None
        if not _survives_workload(row, rule["direction"], fam.alpha,
                                  rule.get("min_abs_d") if ev == "comparison" else None):
            return None
        return {"row": row, "_q": fam.adjusted(key)}
    if ev == "tree_split":
        tree = results.get("tree")
        h = getattr(tree, "holdout", None) if isinstance(tree, TreeResult) else None
        if not h or h.get("lift") is None:
            return None
        steps = [(st["feature"], st["side"]) for st in h["steps"]]
        if not any(f == rule["feature"] and (rule.get("side") in (None, s)) for f, s in steps):
            return None
        if not fam.passes(("tree",), rule.get("min_lift")):
            return None
        # the leaf's engine condition must be the feature's own evidence at equal workload
        comp = results.get("comparison")
        row = comp.row(rule["feature"]) if isinstance(comp, Comparison) else None
        way = {"le": "lower", "gt": "higher"}.get(rule.get("side"))
        if row is None or not _survives_workload(row, way, fam.alpha, None):
            return None
        return {"sentence": _("{condition}: error rate {error_rate:.0%} on held-out "
                            "cases (n={n}) against a {baseline_error_rate:.0%} "
                            "baseline, adjusted p {adjusted}").format(condition=h['condition'], error_rate=h['error_rate'], n=h['n'], baseline_error_rate=h['baseline_error_rate'], adjusted=fmt.pval(fam.adjusted(('tree',)))),
                "feature": rule["feature"], "lift": f"{h['lift']:.1f}",
                "_q": fam.adjusted(("tree",))}
    if ev == "version_regression":
        ver = results.get("versions")
        if not isinstance(ver, VersionsResult):
            return None
        regs = []
        for c in ver.changes:
            if c["metric"] != rule["metric"] or not c["regression"]:
                continue
            k = True if keep is None else keep(c)
            if k is False:
                continue
            if fam.passes(version_key(c), support=None if k is True else k):
                regs.append(c)
        if not regs:
            return None
        c = max(regs, key=lambda c: abs(c["change_pct"] or 0))
        bench = _(" (benchmark {benchmark})").format(benchmark=c['benchmark']) if c.get("benchmark") else ""
        if len(regs) > 1:
            bench += _(", the largest of {n_regs} flagged changes").format(n_regs=len(regs))
        return {"change": c,
                "from_version": c["from_version"], "to_version": c["to_version"], "bench": bench,
                "from_value": fmt.num(c["from_value"]), "to_value": fmt.num(c["to_value"]),
                "change_pct": fmt.pct(c["change_pct"]) if c["change_pct"] is not None
                else _("up from zero"), "p_value": fmt.pval(fam.q[version_key(c)]),
                "n_regressions": len(regs), "_q": fam.q[version_key(c)]}
    return None


def _survives_workload(row, direction: str | None, alpha: float, min_abs: float | None) -> bool:
    """A comparison row's difference holds at equal workload (workload.holds_adjusted; the floor
    the larger of the rule's and MIN_EFFECT's). A row the comparison did not adjust (adjust=False)
    counts as holding."""
    from .evidence import MIN_EFFECT
    from .workload import holds_adjusted
    if getattr(row, "adjusted_test", None) is None:
        return True
    floor = MIN_EFFECT["cohens_h" if row.kind == "categorical" else "hedges_g"]
    return holds_adjusted(row, direction, alpha, max(floor, min_abs or 0.0))


def _unbound(results: dict) -> bool:
    """True when the cohort has badcases and none is bound to a trace request."""
    c = results.get("cohort")
    return isinstance(c, CohortSummary) and c.badcases > 0 and c.bound == 0


# A version regression is evidence about a cluster when at least this share of its bound
# badcases ran on the regressed release, and one of these of its own metrics separates them.
SERVED_SHARE = 0.5
OWN_ENGINE_EVIDENCE = frozenset(ENGINE_METRICS) | {"preempted", "errored"}


def _served(cohort, change: dict, pooled: bool) -> int:
    """The cohort's bound badcases whose request ran on the change's newer release (on the
    change's benchmark, unless the versions section pooled benchmarks); 0 without a cohort
    summary."""
    if not isinstance(cohort, CohortSummary):
        return 0
    return sum(v["badcases"] for v in cohort.bound_versions
               if v.get("engine_version") is not None
               and v["engine_version"] == change["to_version"]
               and (pooled or v.get("benchmark") == change.get("benchmark")))


def _ran_on(cohort) -> str:
    """Which runs the cohort's bound badcases belong to, for a sentence: "runs of 0.2.1
    (benchmark b)", "runs that name no engine version"; at most three, most badcases first."""
    versions = getattr(cohort, "bound_versions", ())
    parts = list(dict.fromkeys(
        _("runs that name no engine version") if v.get("engine_version") is None else
        _("runs of {engine_version}").format(engine_version=v['engine_version']) + (_(" (benchmark {benchmark})").format(benchmark=v['benchmark'])
                                            if v.get("benchmark") else "")
        for v in versions[:3]))
    if len(versions) > 3:
        parts.append("others")
    return join_list(parts)


def _ran_into(ran_into: list, cohort, pooled: bool, kb: dict) -> str:
    """The lead sentence on a regression the badcases ran into: "306 of the 383 bound badcases
    ran on 0.6.1, the release where the KV-cache hit rate fell (-40.6%) and preemptions per
    request rose against 0.5.2." (first release pair, at most three metrics)."""
    c0 = ran_into[0][1]
    same = [(r, c) for r, c in ran_into if (c["from_version"], c["to_version"],
                                             c.get("benchmark")) ==
            (c0["from_version"], c0["to_version"], c0.get("benchmark"))]
    seen, parts = set(), []
    for r, c in same:
        if c["metric"] in seen:
            continue
        seen.add(c["metric"])
        label = pick(kb.get("metrics", {}).get(c["metric"], {}), "label", c["metric"])
        pct = f" ({fmt.pct(c['change_pct'])})" if c.get("change_pct") is not None else ""
        parts.append((_("the {label} fell{pct}") if (c["to_value"] or 0) < (c["from_value"] or 0)
                      else _("the {label} rose{pct}")).format(label=label, pct=pct))
    parts = parts[:3]
    what = join_list(parts)
    served = _served(cohort, c0, pooled)
    bound = getattr(cohort, "bound", 0) or 0
    return _("{served} of the {bound} bound badcases ran on {to_version}, the release where "
             "{what} against {from_version}.").format(served=served, bound=bound, what=what,
                                                      to_version=c0["to_version"],
                                                      from_version=c0["from_version"])


def _context_sentence(ctx: dict, rule: dict, kb: dict) -> str:
    """A version regression stated as a fact, without the rule's reading (no module named):
    "TTFT rose from 4111 ms on 0.2.1 to 24673 ms on 0.3.0 (benchmark b) (+500.2%, adjusted p
    < 0.001)"."""
    c = ctx["change"]
    meta = kb.get("metrics", {}).get(rule["metric"], {})
    label = pick(meta, "label", rule["metric"])
    unit = _unit_word(meta.get("unit", ""))
    way = _("fell") if (c["to_value"] or 0) < (c["from_value"] or 0) else _("rose")
    return (_("{x} {way} from {from_value} on "
            "{from_version} to {to_value} on {to_version}"
            "{bench} ({change_pct}, adjusted p {p_value}).").format(x=label[:1].upper() + label[1:], way=way, from_value=fmt.num(c['from_value'], rule['metric'], unit=unit), from_version=c['from_version'], to_value=fmt.num(c['to_value'], rule['metric'], unit=unit), to_version=c['to_version'], bench=ctx['bench'], change_pct=ctx['change_pct'], p_value=ctx['p_value']))


def _context_reason(why: str, cohort, served: int = 0) -> str:
    """The parenthesis of "Independently of these badcases (...)": why a version regression is
    not evidence about them."""
    if why == "unbound":
        return _("none is bound to a trace request, so this is not their cause")
    if why == "unserved":
        if getattr(cohort, "bound_versions", ()):
            return (_("their requests belong to {cohort}, not to the regressed "
                    "release, so it is not shown to cause them").format(cohort=_ran_on(cohort)))
        return _("none of their requests is known to have run on the regressed release, so it " \
               "is not shown to cause them")
    return (_("{served} of them ran on the regressed release, but no engine metric of theirs "
            "separates them from the control, so it is not shown to cause them").format(served=served))


def conclude(results: dict, params: dict | None = None) -> Conclusion:
    """Fire the knowledge-base rules on the results of the other sections (a dict section ->
    result or SectionError, as run_all builds it) and write the conclusion (see the module doc).

    A version regression is evidence about the cohort only when its bound badcases ran on the
    regressed (newer) release of that benchmark (CohortSummary.bound_versions) and some rule
    fired on the cohort's own significant evidence (comparison, categorical); otherwise it is
    stated as context ("Independently of these badcases (...), ...": evidence entries with
    independent=True, no module, no suggestion).

    params: kb (a loaded knowledge base; default resources/knowledge_base.toml), alpha (0.05,
    for the case-level reading). Never raises NoData: with no evidence the narrative says what
    is missing."""
    p = params or {}
    kb = p.get("kb") or load_knowledge_base()
    alpha = p.get("alpha", 0.05)
    unbound = _unbound(results)
    cohort = results.get("cohort")
    pooled = bool(getattr(results.get("versions"), "pooled", False))

    fam = Family(results, alpha)

    def related(c):  # most of the bound badcases ran on the regressed release: their number
        bound = getattr(cohort, "bound", 0) or 0
        served = _served(cohort, c, pooled)
        return served if bound > 0 and served >= SERVED_SHARE * bound else False

    def unrelated(c):
        return related(c) is False

    hits = []  # (order, rule, ctx of the cohort's evidence, ctx of unrelated regressions)
    for order, rule in enumerate(kb.get("rules", [])):
        if rule["evidence"] == "version_regression":
            hits.append((order, rule, _fires(rule, results, fam, related),
                         _fires(rule, results, fam, unrelated)))
        else:
            hits.append((order, rule, _fires(rule, results, fam), None))
    # a rule that needs its mechanism's own signal (`requires`: rule ids) fires only beside one,
    # and not beside a rule whose evidence explains its own (`unless`)
    fired_ids = {r["id"] for _o, r, ctx, _x in hits if ctx is not None}
    hits = [(o, r, ctx if (not r.get("requires") or fired_ids & set(r["requires"]))
             and not fired_ids & set(r.get("unless", ())) else None, x)
            for o, r, ctx, x in hits]
    # tested engine evidence of the cohort's own (longer prompts or answers describe the
    # workload, not the engine)
    own = not unbound and any(ctx is not None for _, r, ctx, _ in hits
                              if r["evidence"] == "tree_split" or
                              (r["evidence"] in ("comparison", "categorical")
                               and r["metric"] in OWN_ENGINE_EVIDENCE))
    fired, case_found, ran_into, independent = _sort_hits(hits, own, unbound, cohort, pooled, kb)
    score: dict[str, float] = {}
    for rule, *_rest in fired:
        score[rule["module"]] = score.get(rule["module"], 0) + rule.get("weight", 1)
    modules = sorted(score, key=lambda m: (-score[m], m))
    evidence = _evidence(fired, case_found, independent)
    comp = results.get("comparison")
    # the workload first: what the badcases were asked, and the engine differences it explains
    sentences = (lead_sentences(comp, alpha, OWN_ENGINE_EVIDENCE, bool(modules))
                 if isinstance(comp, Comparison) and not unbound else [])
    lead = bool(sentences)
    if modules:
        names = modules[:3]
        joined = join_list([module_name(m, kb) for m in names])
        sentences.append(_("The evidence points to {joined}.").format(joined=joined))
        if ran_into:
            sentences.append(_ran_into(ran_into, cohort, pooled, kb))
        sentences += _shown(fired)
    else:
        if len(fam):
            sentences.append(_("No finding about the engine survives the tests, so no engine "
                             "module is named."))
        sentences.append(_no_evidence(results, kb, alpha, case_found, fam, lead))
    sentences += _independent_sentences(independent, cohort)
    strata = getattr(results.get("comparison"), "strata", None) or {}
    if strata.get("warnings"):
        # pooled strata that disagree: said whether or not a module is named (issue 35)
        sentences += list(strata["warnings"])
    ver = results.get("versions")
    if isinstance(ver, VersionsResult) and (independent or any(
            r["evidence"] == "version_regression" for r, *_rest in fired)):
        sentences += list(ver.notes)   # workload differs / one run per version: the caveats
    if len(fam):
        sentences.append(_(FLOOR_TEXT).format(n=plural(len(fam), "test")))
    top, more = _suggestions(fired, score)
    sep = "" if language() == "zh_CN" else " "  # Chinese sentences run on without spaces
    return Conclusion(modules=tuple(modules), narrative=sep.join(sentences),
                      suggestions=top, evidence=tuple(evidence), more_suggestions=more,
                      tests=len(fam))


def _sort_hits(hits: list, own: bool, unbound: bool, cohort, pooled: bool, kb: dict):
    """The rules that fired, sorted by what they say of the cohort: (fired: (rule, sentence,
    kb order, p) on the cohort's own evidence, in kb order; case_found: (rule, sentence) when no
    badcase is bound; ran_into: (rule, change) of the regressions its badcases ran into;
    independent: [((reason, served), [(rule, sentence)])] of the regressions that are context,
    the first rule per metric)."""
    fired, case_found, ran_into = [], [], []
    context: dict = {}  # reason -> {metric: (rule, sentence)}, first rule per metric
    for order, rule, ctx, other in hits:
        if rule["evidence"] == "version_regression":
            if ctx is not None and own:
                fired.append((rule, _fill(pick(rule, "explain"), ctx), order, ctx["_q"]))
                ran_into.append((rule, ctx["change"]))
            elif ctx is not None:
                served = _served(cohort, ctx["change"], pooled)
                context.setdefault(("no_evidence", served), {}).setdefault(
                    rule["metric"], (rule, _context_sentence(ctx, rule, kb)))
            if other is not None:
                context.setdefault(("unbound" if unbound else "unserved", 0), {}).setdefault(
                    rule["metric"], (rule, _context_sentence(other, rule, kb)))
            continue
        if ctx is None:
            continue
        if "row" in ctx:
            ctx = {**_row_ctx(ctx.pop("row"), kb, ctx["_q"]), "_q": ctx["_q"]}
        text = _fill(pick(rule, "explain"), ctx)
        if unbound:
            case_found.append((rule, text))
        else:
            fired.append((rule, text, order, ctx["_q"]))
    fired.sort(key=lambda x: x[2])
    independent = [(reason, list(group.values())) for reason, group in context.items()]
    return fired, case_found, ran_into, independent


def _evidence(fired: list, case_found: list, independent: list) -> list[dict]:
    """The conclusion's evidence entries: the fired rules (with their module and weight), the
    case-level findings, then the independent version findings."""
    evidence = [{"rule": r["id"], "module": r["module"], "weight": r.get("weight", 1),
                 "kind": r["evidence"], "text": t, "independent": False, "p_adjusted": q}
                for r, t, _, q in fired]
    evidence += [{"rule": r["id"], "module": None, "weight": 0, "kind": r["evidence"], "text": t,
                  "independent": False} for r, t in case_found]
    evidence += [{"rule": r["id"], "module": None, "weight": 0, "kind": r["evidence"], "text": t,
                  "independent": True} for _, group in independent for r, t in group]
    return evidence


def _independent_sentences(independent: list, cohort) -> list[str]:
    """"Independently of these badcases (why), the engine versions differ: ..." per reason,
    at most 3 findings each (the rest counted)."""
    sentences = []
    for (why, served), group in independent:
        shown = [t for _, t in group][:3]
        first = shown[0]
        sentences.append(_("Independently of these badcases ({why}"
                         "), the engine versions differ: ").format(why=_context_reason(why, cohort, served))
                         + (first[:1].lower() if first[1:2].islower() else first[:1])
                         + first[1:] + "".join(" " + t for t in shown[1:]))
        if len(group) > len(shown):
            sentences.append(_("({n_shown} more version findings are "
                             "listed with the evidence.)").format(n_shown=len(group) - len(shown)))
    return sentences


def _shown(fired: list) -> list[str]:
    """The fired rules' sentences for the narrative, in knowledge-base order: at most
    MAX_SENTENCES, always including (up to 3) the version regressions the cohort's badcases ran
    into, so that they are never hidden behind "N more findings"."""
    ver = [i for i, f in enumerate(fired) if f[0]["evidence"] == "version_regression"][:3]
    rest = [i for i, f in enumerate(fired) if i not in ver][:max(0, MAX_SENTENCES - len(ver))]
    keep = sorted(set(ver) | set(rest))
    out = [fired[i][1] for i in keep]
    if len(fired) > len(keep):
        out.append(_("({n_keep} more findings are listed with the evidence.)").format(n_keep=len(fired) - len(keep)))
    return out


MAX_TOP_SUGGESTIONS = 3


def _suggestions(fired: list, score: dict) -> tuple[tuple, tuple]:
    """(top, more): the fired rules' suggestions ordered by the knowledge base's priority, then
    by the strength of their evidence (the module's total weight, then the family-adjusted p);
    each
    engine flag is offered once (by the strongest suggestion that carries it); the first
    MAX_TOP_SUGGESTIONS become priority 1, the rest (priority 2 or the knowledge base's, if
    lower) go behind "more"."""
    cand, seen_text = [], set()
    for r, _score, order, q in fired:
        for s in r.get("suggestions", []):
            if s["text"] in seen_text:
                continue
            seen_text.add(s["text"])
            cand.append(((int(s["priority"]), -score[r["module"]], q, order), r, s))
    cand.sort(key=lambda x: x[0])
    top, more, flags_seen = [], [], set()
    for _rank, r, s in cand:
        flags = tuple(f for f in s.get("flags", ()) if f not in flags_seen)
        flags_seen.update(flags)
        high = len(top) < MAX_TOP_SUGGESTIONS and (flags or not s.get("flags"))
        sug = Suggestion(priority=1 if high else max(2, int(s["priority"])), text=pick(s, "text"),
                         flags=flags, module=r["module"], rule=r["id"])
        (top if high else more).append(sug)
    more.sort(key=lambda x: x.priority)
    return tuple(top), tuple(more)


def _case_effect(row) -> bool:
    """A case-level difference big enough to narrate: |Hedges' g| >= MIN_EFFECT (a 0.8 %
    prompt-length difference at 200k requests is significant and explains nothing)."""
    from .evidence import MIN_EFFECT
    g = row.hedges_g if row.hedges_g is not None else row.cohens_d
    return g is not None and abs(g) >= MIN_EFFECT["hedges_g"]


def _case_level(comp: Comparison, kb: dict, alpha: float, skip=()) -> list[str]:
    """Sentences for the case-level features (knowledge base [case_level]) that differ
    significantly (BH-adjusted p < alpha) between badcases and control, one per aspect
    (the smallest adjusted p first)."""
    meta = kb.get("case_level", {})
    rows = sorted((r for r in comp.rows if r.metric in meta and r.metric not in skip
                   and r.p_adjusted is not None
                   and r.p_adjusted < alpha and r.bad_mean is not None
                   and r.control_mean is not None and r.bad_mean != r.control_mean
                   and _case_effect(r)),
                  key=lambda r: r.p_adjusted)
    out, aspects = [], set()
    for r in rows:
        m = meta[r.metric]
        if m.get("aspect") in aspects:
            continue
        aspects.add(m.get("aspect"))
        way = "higher" if r.bad_mean > r.control_mean else "lower"  # a key of the entry
        unit = _unit_word(m.get("unit", ""))
        out.append(_("The badcases differ in {aspect}, a case-level signal: "
                   "{metric} {bad_mean} on average against "
                   "{control_mean} in the control ({diff_pct}, "
                   "adjusted p {p_adjusted}, n = {n_bad} / {n_control}); "
                   "{way}.").format(aspect=pick(m, 'aspect', r.metric), metric=label(r.metric, False), bad_mean=fmt.num(r.bad_mean, r.metric, unit=unit), control_mean=fmt.num(r.control_mean, r.metric, unit=unit), diff_pct=fmt.pct(r.diff_pct), p_adjusted=fmt.pval(r.p_adjusted), n_bad=fmt.count(r.n_bad), n_control=fmt.count(r.n_control), way=pick(m, way, '')).replace("; .", "."))
    return out



def _no_separation(what: str, rows) -> str:
    """"No <what> separates ..." quoting the row with the smallest adjusted p."""
    best = min(rows, key=lambda r: r.p_adjusted)
    return (_("No {what} separates the badcases from the control strongly enough after "
            "Benjamini-Hochberg adjustment (smallest adjusted p: {p_adjusted} for "
            "{metric}, diff {diff_pct}).").format(what=what, p_adjusted=fmt.pval(best.p_adjusted), metric=best.metric, diff_pct=fmt.pct(best.diff_pct)))


def _no_evidence(results: dict, kb: dict | None = None, alpha: float = 0.05,
                 case_found: list | None = None, fam: Family | None = None,
                 lead: bool = False) -> str:
    """The narrative when no rule blames an engine module. case_found: (rule, sentence) of
    the rules that fired on case-level features of unbound badcases; lead: the workload
    sentences (workload_text.lead_sentences) already open the narrative, so the length rows
    and the engine rows it explains are not restated."""
    kb = kb or {}
    case_found = case_found or []
    cohort = results.get("cohort")
    parts = []
    comp = results.get("comparison")
    skip = {r.get("metric") for r, _ in case_found} | (set(WORKLOAD_METRICS) if lead else set())
    case_level = (_case_level(comp, kb, alpha, skip) if isinstance(comp, Comparison) else [])
    parts += [t for _, t in case_found] + case_level
    case_level = case_level + [t for _, t in case_found]
    note = getattr(cohort, "note", None)
    if note:
        parts.append(_("There is no engine evidence: {note}. Load the inference server's traces "
                     "of this eval to see which engine behaviour goes with the badcases.").format(note=note))
    bound = getattr(cohort, "bound", None)
    if isinstance(cohort, CohortSummary) and 0 < bound < MIN_SUPPORT:
        parts.append(ngettext(
            "Only {bound} badcase is bound to a trace request: naming a module needs at least "
            "{min_support} ({why}).",
            "Only {bound} badcases are bound to a trace request: naming a module needs at least "
            "{min_support} ({why}).", bound).format(bound=bound, min_support=MIN_SUPPORT,
                                                    why=_(MIN_SUPPORT_WHY)))
    if isinstance(comp, Comparison):
        case_metrics = set(kb.get("case_level", {}))
        engine = [r for r in comp.rows if r.p_adjusted is not None and r.metric not in case_metrics]
        explained = {r.metric for r in explained_rows(comp, alpha, OWN_ENGINE_EVIDENCE)}
        if lead and explained:
            pass   # the lead sentence said which differ raw and that none holds at equal workload
        elif engine:
            parts.append(_no_separation(_("engine metric"), engine))
        elif not case_level and not note:
            tested = [r for r in comp.rows if r.p_adjusted is not None]
            if tested:
                parts.append(_no_separation("metric", tested))
    elif isinstance(comp, SectionError):
        parts.append(_("No comparison: {reason}.").format(reason=comp.reason))
    tree = results.get("tree")
    h = getattr(tree, "holdout", None) if isinstance(tree, TreeResult) else None
    if h and h.get("error_rate") is not None and h.get("condition"):
        q = fam.adjusted(("tree",)) if fam is not None and ("tree",) in fam.q else None
        parts.append(_("The decision tree's riskiest leaf ({condition}) does not hold up on "
                     "held-out cases: error rate {error_rate:.0%} (n={n}) against a "
                     "{baseline_error_rate:.0%} baseline").format(condition=h['condition'], error_rate=h['error_rate'], n=h['n'], baseline_error_rate=h['baseline_error_rate'])
                     + (_(", adjusted p {q}").format(q=fmt.pval(q)) if q is not None else "") + ".")
    ver = results.get("versions")
    if isinstance(ver, VersionsResult) and ver.changes and not any(c["regression"] for c in ver.changes):
        parts.append(_("No metric regressed significantly between engine versions."))
    return ("" if language() == "zh_CN" else " ").join(parts) or _("There is not enough evidence to point at an engine module.")
