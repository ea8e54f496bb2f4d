"""Replay an arrival trace through a vLLM-v1-like engine model (paged KV cache with prefix
caching and pluggable eviction, continuous batching with chunked prefill, recompute
preemption, a per-step time model calibrated on SGLang bench_one_batch).

Public API (../team INTERFACES.md "Replay engine"):
    TraceRequest, EngineConfig, DEFAULT_TIMING, simulate, ReplayResult, Cancelled,
    write_run, read_mooncake, EVICTION_POLICIES
See engine.py for the semantics and their vLLM sources.
"""
from ..errors import Cancelled  # the project's one cancellation type, re-exported
from .engine import simulate
from .io import read_mooncake, requests_from_store, write_run
from .model import (DEFAULT_TIMING, blocks_for_gb, EVENT_KINDS, EVICTION_POLICIES, EngineConfig,
                    ReplayResult, TraceRequest)
from .policies import POLICIES, EvictionPolicy
from .timing import TimingFit, fit_timing

__all__ = ["TraceRequest", "EngineConfig", "DEFAULT_TIMING", "EVENT_KINDS", "EVICTION_POLICIES",
           "Cancelled", "ReplayResult", "simulate", "write_run", "read_mooncake",
           "requests_from_store", "POLICIES", "EvictionPolicy", "blocks_for_gb",
           "fit_timing", "TimingFit"]
