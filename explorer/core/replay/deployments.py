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

The decode step's KV read (EngineConfig.step_per_kv_token_ms) comes from the same manifests:
the model is Llama-3.1-8B-Instruct (its config.json: 32 layers, 8 KV heads, head dim 128,
bf16: 131,072 KV bytes a token) and the pods' node affinity names the GPU: `Tesla-A100-80G` in
v0.2.1's k8s_stack.yaml, `Tesla-A100-80G` or `NVIDIA-H20-SXM5-96GB` in v0.3.0's
aibrix_naive.yaml. Peak HBM bandwidth from NVIDIA's datasheets: A100 80GB SXM 2,039 GB/s,
H20 4.0 TB/s. `gpus` lists the manifest's choices by release (engine_version); the first is
the point estimate, the others an interval validate.py replays (the source cannot tell them).
The engine of `naive` (k8s_stack.yaml, the pods behind vllm-engine-service) differs by release
(ENGINES), and so does its scheduler:
* v0.2.1: image aibrix/vllm-openai:v0.7.0, args `--enable-chunked-prefill "false"`, no
  VLLM_USE_V1 in the env. vLLM 0.7.0 runs its V0 engine unless VLLM_USE_V1=1 (V1 was an opt-in
  alpha then), so V0 without chunked prefill: SchedulerConfig.__post_init__ sets
  max_num_batched_tokens = max(max_model_len, 2048) = 32,000 (`--max-model-len 32000`),
  max_num_seqs defaults to 256, and its default scheduler (vllm/core/scheduler.py
  _schedule_default) prefills whole prompts first and "Don't schedule decodes if prefills are
  scheduled": a decode waits every prefill of its pod out (EngineConfig.chunked_prefill False).
* v0.3.0: image aibrix/vllm-openai:v0.8.5 ("0.8.5-upstream" in the README), args
  `--no-enable-chunked-prefill`, no VLLM_USE_V1: vLLM 0.8 runs V1 by default, and its
  EngineArgs._set_default_args_v1 sets enable_chunked_prefill = True unconditionally ("V1
  always uses chunked prefills"), so the flag has no effect; for the OpenAI API server on a GPU
  of >= 70 GiB it sets max_num_batched_tokens 8192 and max_num_seqs 1024. The A100 was only
  exempted from that (back to 2048 / 256, "see PR #17885") by vllm-project/vllm PR #17885,
  opened 2025-05-09, after v0.8.5 (taken up by downstreams on 2025-04-29), so both of the
  manifest's GPUs (A100-80G: 80 GiB; H20: 96 GiB) got 8192 / 1024.
(The v0.3.0 KV-offload configurations set VLLM_USE_V1=0 and the lmcache images are other
builds: their engines are not listed here.)
"""
from __future__ import annotations

from ..i18n import N_
from .model import kv_bytes_per_token

_PS = "vllm-project/aibrix benchmarks/scenarios/ps-experiment (k8s_stack.yaml etc.: replicas: 8)"
#: (name, peak HBM bandwidth bytes/s, HBM bytes) from NVIDIA's A100 and H20 datasheets
#: (2,039 GB/s, 80 GB; 4.0 TB/s, 96 GB; GB read as GiB, as the driver reports them)
A100_80G = ("A100-80G", 2.039e12, 80 * 2 ** 30)
H20 = ("H20", 4.0e12, 96 * 2 ** 30)
#: vLLM's --gpu-memory-utilization default (the manifests do not set it)
GPU_MEMORY_UTILIZATION = 0.9
#: Llama-3.1-8B's weights in bf16: 8,030,261,248 parameters x 2 bytes
_LLAMA_8B_WEIGHTS = 8_030_261_248 * 2
_LLAMA_8B = kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128, dtype_bytes=2)
_GPUS = {"0.2.1": (A100_80G,), "0.3.0": (A100_80G, H20)}
#: what every ps-experiment configuration shares: its pods, model and GPUs
_PS_PODS = {"replicas": 8, "source": _PS, "kv_bytes_per_token": _LLAMA_8B, "gpus": _GPUS,
            "weights_bytes": _LLAMA_8B_WEIGHTS}
_K8S = "k8s_stack.yaml of llama-8b-v"
#: the scheduler facts of `naive`'s vLLM by release (module doc): EngineConfig fields
ENGINES = {
    "0.2.1": {"vllm": "0.7.0 (V0)", "chunked_prefill": False, "max_num_batched_tokens": 32000,
              "max_num_seqs": 256, "source": _K8S + "0.2.1: vllm-openai:v0.7.0, "
              "--enable-chunked-prefill false, --max-model-len 32000"},
    "0.3.0": {"vllm": "0.8.5 (V1)", "chunked_prefill": True, "max_num_batched_tokens": 8192,
              "max_num_seqs": 1024, "source": _K8S + "0.3.0: vllm-openai:v0.8.5 (V1 forces "
              "chunked prefill; >= 70 GiB GPU: 8192 tokens, 1024 seqs)"},
}
KNOWN = {
    ("aibrix", "ps_experiment/naive/"): {**_PS_PODS, "routing": "connection", "engines": ENGINES,
                                         "router": N_("Kubernetes Service (kube-proxy)")},
    ("aibrix", "ps_experiment/"): {**_PS_PODS, "routing": None,
                                   "router": N_("a router the replay does not model")},
}


def deployment_of(store, run_id: str) -> dict | None:
    """{replicas, routing, source, router, kv_bytes_per_token, gpus, engine} of the run's
    deployment when KNOWN has it (the most specific prefix wins), else None; gpus: the (name,
    HBM bytes/s) choices of the run's release (engine_version), () when the release is not
    listed; engine: that release's ENGINES entry ({} when not listed)."""
    df = store.df("SELECT engine, benchmark, engine_version FROM runs WHERE run_id = ?", [run_id])
    if df.empty:
        return None
    eng, bench, ver = (str(x) if x is not None else "" for x in df.iloc[0])
    hits = [(len(pre), d) for (e, pre), d in KNOWN.items()
            if e == eng and (bench + "/").startswith(pre)]
    if not hits:
        return None
    d = dict(max(hits, key=lambda h: h[0])[1])
    d["gpus"] = tuple(d.get("gpus", {}).get(ver, ()))
    d["engine"] = dict(d.pop("engines", {}).get(ver, {}))
    return d


def kv_blocks(dep: dict, gpu: tuple, block_size: int = 16) -> int | None:
    """KV-cache blocks a pod of the deployment holds on `gpu`: (gpu_memory_utilization x HBM -
    weights) / (KV bytes a token x block_size), as vLLM sizes its cache after profiling (the
    profile run's activations are not subtracted: an upper bound, a few % high). None when
    the deployment lacks a fact."""
    if len(gpu) < 3 or not dep.get("weights_bytes") or not dep.get("kv_bytes_per_token"):
        return None
    free = GPU_MEMORY_UTILIZATION * gpu[2] - dep["weights_bytes"]
    return max(1, int(free // (dep["kv_bytes_per_token"] * block_size)))


#: EngineConfig fields an ENGINES entry may set
SCHEDULER_FIELDS = ("chunked_prefill", "max_num_batched_tokens", "max_num_seqs")


def with_kv_read(dep: dict | None, config, gpu: tuple | None = None, capacity: bool = True):
    """config with the deployment's engine facts on `gpu` (default its first): its scheduler
    (ENGINES: chunked prefill, token budget, max_num_seqs) where config leaves EngineConfig's
    default, the KV read of a decode step (step_per_kv_token_ms, model.kv_read_ms_per_token)
    where config leaves it 0, and the KV-cache capacity (num_gpu_blocks, kv_blocks) where
    config leaves it infinite (None) and `capacity` is true (False: an infinite cache the
    caller chose stays); else config unchanged. The one place the replay (CLI,
    panel) and the validation take a known deployment's engine from."""
    from dataclasses import replace

    from .model import EngineConfig, kv_read_ms_per_token
    default = EngineConfig()
    eng = (dep or {}).get("engine") or {}
    changes = {k: eng[k] for k in SCHEDULER_FIELDS
               if k in eng and getattr(config, k) == getattr(default, k)}
    if changes:
        config = replace(config, **changes)
    if not dep or not dep.get("gpus") or not dep.get("kv_bytes_per_token"):
        return config
    gpu = gpu or dep["gpus"][0]
    if config.step_per_kv_token_ms == 0:
        config = replace(config, step_per_kv_token_ms=kv_read_ms_per_token(
            dep["kv_bytes_per_token"], gpu[1]))
    if config.num_gpu_blocks is None and capacity:
        n = kv_blocks(dep, gpu, config.block_size)
        if n is not None:
            config = replace(config, num_gpu_blocks=n)
    return config
