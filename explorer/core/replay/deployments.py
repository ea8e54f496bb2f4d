"""Deployments whose replica count and routing are published facts, not fits: a run of such a
benchmark is replayed with them instead of fitting the arrival model on a run that cannot show
it (validate.identifiability: a low-rate run never loads more than one engine).

KNOWN: (engine, benchmark prefix) -> the deployment. The aibrix prefix-sharing experiment
(vllm-project/aibrix benchmarks/scenarios/ps-experiment/llama-8b-v0.2.1 and -v0.3.0, commit
e996386): every serving configuration's manifest deploys 8 vLLM pods, one GPU each
(k8s_stack.yaml, aibrix_naive.yaml, ps_stack.yaml, aibrix_kvcache_*.yaml: `replicas: 8`).
The READMEs' run commands send `naive` to http://vllm-engine-service:80 (a ClusterIP
Kubernetes Service: kube-proxy picks a pod per connection), so its routing is "connection"
(replicas.py); the other configurations go through a router this model does not have
(production-stack's session-aware router, the aibrix gateway's HTTPRoute or prefix-cache
routing), so their routing is not known here (None: the caller's choice applies).
"""
from __future__ import annotations

from ..i18n import N_

_PS = "vllm-project/aibrix benchmarks/scenarios/ps-experiment (k8s_stack.yaml etc.: replicas: 8)"
KNOWN = {
    ("aibrix", "ps_experiment/naive/"): {"replicas": 8, "routing": "connection", "source": _PS,
                                         "router": N_("Kubernetes Service (kube-proxy)")},
    ("aibrix", "ps_experiment/"): {"replicas": 8, "routing": None, "source": _PS,
                                   "router": N_("a router the replay does not model")},
}


def deployment_of(store, run_id: str) -> dict | None:
    """{replicas, routing, source, router} of the run's deployment when KNOWN has it (the most
    specific prefix wins), else None."""
    df = store.df("SELECT engine, benchmark FROM runs WHERE run_id = ?", [run_id])
    if df.empty:
        return None
    eng, bench = (str(x) if x is not None else "" for x in df.iloc[0])
    hits = [(len(pre), d) for (e, pre), d in KNOWN.items()
            if e == eng and (bench + "/").startswith(pre)]
    return dict(max(hits, key=lambda h: h[0])[1]) if hits else None
