"""Identification: the backdoor adjustment set DoWhy finds on the causal graph, or, when there
is none, a sentence naming the unobserved common causes to blame. DoWhy and networkx are
imported inside the functions (importing DoWhy takes seconds)."""
from __future__ import annotations

import warnings

import pandas as pd

from ..causal_graph import CausalGraph
from .exceptions import WhatIfError
from explorer.core.i18n import _, ngettext


def backdoor_set(graph, g, data: pd.DataFrame, treatment: str, outcome: str,
                 observed_cols) -> list[str]:
    """The backdoor adjustment set DoWhy identifies on graph `g` (names as str).
    Raises WhatIfError naming the unobserved culprits when the effect is not identifiable."""
    from dowhy import CausalModel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CausalModel(data=data.iloc[:0], treatment=treatment, outcome=outcome, graph=g)
        estimand = model.identify_effect(proceed_when_unidentifiable=True)
    bd = estimand.get_backdoor_variables()
    if estimand.estimands.get("backdoor") is None or bd is None:
        raise WhatIfError(_why_unidentifiable(graph, treatment, outcome, set(observed_cols)))
    return [str(c) for c in bd]


def _why_unidentifiable(graph: CausalGraph, treatment: str, outcome: str,
                        observed: set[str]) -> str:
    """The user-facing reason backdoor identification failed, naming the unobserved nodes that
    reach both the treatment and the outcome through unobserved nodes only (so no observed
    variable can block them)."""
    import networkx as nx
    g = graph.to_networkx()
    hidden = {n for n in g.nodes if n not in observed or n in graph.latent}
    h = g.subgraph(hidden | {treatment, outcome}).copy()
    h.remove_edges_from(list(h.out_edges(treatment)))
    culprits = sorted(u for u in hidden - {treatment, outcome}
                      if nx.has_path(h, u, treatment) and nx.has_path(h, u, outcome))
    msg = (_("The effect of {treatment} on {outcome} cannot be identified by backdoor adjustment "
           "with this graph: no set of observed variables blocks every backdoor path.").format(treatment=treatment, outcome=outcome))
    if culprits:
        msg += ngettext(" Unobserved common cause: {causes}. Measure it, or edit the graph if you "
                        "believe it does not reach both variables.",
                        " Unobserved common causes: {causes}. Measure them, or edit the graph if "
                        "you believe they do not reach both variables.",
                        len(culprits)).format(causes=", ".join(culprits))
    return msg
