"""The conclusion's first sentences when the workload, not the engine, separates the badcases.

- lengths: a prompt or output length row (workload.WORKLOAD_METRICS) that differs (BH-adjusted
  p < alpha and |Hedges' g| >= MIN_EFFECT["hedges_g"]): "The badcases are the long prompts:
  ...";
- explained: the engine rows whose raw difference passes the same gates but does not hold at
  equal workload (workload.holds_adjusted): "at equal prompt length (category, eval, engine
  version) the KV-cache hit rate and TTFT do not differ (adjusted p ...)".
"""
from __future__ import annotations

from .. import fmt
from ..i18n import N_, _, join_list, ngettext
from ..names import label
from .evidence import MIN_EFFECT, share_big
from .workload import WORKLOAD_METRICS, holds_adjusted

_PROMPT = ("prompt_tokens", "prompt_chars")


def _big(row) -> bool:
    """The row's raw effect reaches the floor (Hedges' g; a share: evidence.share_big)."""
    if row.kind == "categorical":
        return share_big(row.bad_mean, row.control_mean, row.n_bad, row.n_control)
    g = row.hedges_g if row.hedges_g is not None else row.cohens_d
    return g is not None and abs(g) >= MIN_EFFECT["hedges_g"]


def _differs(row, alpha: float) -> bool:
    return (row.p_adjusted is not None and row.p_adjusted < alpha and row.bad_mean is not None
            and row.control_mean is not None and row.bad_mean != row.control_mean and _big(row))


def workload_rows(comp, alpha: float) -> list:
    """The length rows that differ (one per aspect: tokens before characters)."""
    out, aspects = [], set()
    for r in comp.rows:
        if r.metric in WORKLOAD_METRICS and _differs(r, alpha):
            aspect = r.metric in _PROMPT
            if aspect not in aspects:
                aspects.add(aspect)
                out.append(r)
    return out


def explained_rows(comp, alpha: float, engine: frozenset) -> list:
    """The engine rows that differ raw but not at equal workload."""
    return [r for r in comp.rows if r.metric in engine and r.adjusted_test is not None
            and _differs(r, alpha) and not holds_adjusted(
                r, None, alpha, MIN_EFFECT["cohens_h" if r.kind == "categorical" else "hedges_g"])]


def lead_sentences(comp, alpha: float, engine: frozenset, named: bool = False) -> list[str]:
    """The sentences the narrative opens with (module doc); [] when neither applies. named: an
    engine module is named after them (its findings hold at equal workload)."""
    lengths = workload_rows(comp, alpha)
    explained = explained_rows(comp, alpha, engine)
    out = []
    if lengths:
        parts = []
        for r in lengths:
            long = r.bad_mean > r.control_mean
            what = ((_("the long prompts") if long else _("the short prompts"))
                    if r.metric in _PROMPT else
                    (_("the long answers") if long else _("the short answers")))
            parts.append(_("{what} ({metric} {bad} on average against {control} in the control, "
                           "{pct}, adjusted p {p})").format(
                               what=what, metric=label(r.metric, False),
                               bad=fmt.num(r.bad_mean, r.metric), control=fmt.num(
                                   r.control_mean, r.metric), pct=fmt.pct(r.diff_pct),
                               p=fmt.pval(r.p_adjusted)))
        out.append((_("The badcases are {parts}: a difference in what they were asked; the "
                      "engine findings below hold at equal workload.") if named else
                    _("The badcases are {parts}: a property of what they were asked, not of the "
                      "engine that served them.")).format(parts=join_list(parts)))
    if explained:
        covs = join_list([label(c, False) if c in WORKLOAD_METRICS else _(_COV.get(c, c))
                          for c in getattr(comp, "adjusted_for", ())]) or _("workload")
        items = [_("{metric} (raw {raw}, at equal workload {adj}, adjusted p {p})").format(
                     metric=label(r.metric, False), raw=fmt.pct(r.diff_pct),
                     adj=fmt.pct(r.adjusted_diff_pct), p=fmt.pval(r.adjusted_p_adjusted))
                 for r in explained[:4]]
        covs_in = getattr(comp, "adjusted_for", ())
        between = [_(_BETWEEN[k]) for k in ("engine_version", "eval_id") if k in covs_in]
        msg = (ngettext("At equal {covs}, {items} no longer separates the badcases from the "
                        "control: the raw difference comes from what the badcases were asked "
                        "and from which {between} they ran on; it lies between the {between}, "
                        "not within them.",
                        "At equal {covs}, {items} no longer separate the badcases from the "
                        "control: the raw differences come from what the badcases were asked "
                        "and from which {between} they ran on; they lie between the {between}, "
                        "not within them.", len(items)) if between else
               ngettext("At equal {covs}, {items} no longer separates the badcases from the "
                        "control: the raw difference comes from what the badcases were asked, "
                        "not from the engine.",
                        "At equal {covs}, {items} no longer separate the badcases from the "
                        "control: the raw differences come from what the badcases were asked, "
                        "not from the engine.", len(items)))
        out.append(msg.format(covs=covs, items=join_list(items),
                              between=join_list(between)))
    return out


_COV = {"category": N_("category"), "eval_id": N_("eval"), "engine_version": N_("engine version")}
_BETWEEN = {"engine_version": N_("engine versions"), "eval_id": N_("evals")}
