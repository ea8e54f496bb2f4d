"""Value types of the replay engine: the trace request, the engine settings, the result.

Timing defaults (EngineConfig.step_*) are calibrated on the real SGLang bench_one_batch file
../shared/data/real/sglang_bench_one_batch/result_bs1_128.jsonl (sgl-project/sglang,
comm_overlap/benchmark/result_bs1_128.jsonl): see `DEFAULT_TIMING` and
tests/test_replay_timing.py, which refits them from that file by least squares.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd



@dataclass(frozen=True)
class TraceRequest:
    """One request of an arrival trace.

    arrival_s: seconds from the trace's epoch; prompt_tokens / output_tokens: token counts
    (output_tokens >= 1 is what the engine generates before it stops: the trace's natural
    output length, so the replayed request finishes with finish_reason "stop");
    hash_ids: ids of consecutive prompt blocks of `hash_block_tokens` tokens each (Mooncake:
    512; equal ids at equal positions after equal prefixes = shared content; the last block may
    be partial); empty = the prompt shares nothing with any other request.
    session_id: conversation id where the trace has one (kept, not used by the engine).
    """
    request_id: str
    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    hash_ids: tuple[int, ...] = ()
    hash_block_tokens: int = 512
    session_id: str | None = None


# Per-iteration time model:
#   step_ms = step_base_ms + step_per_decode_seq_ms * decode_seqs
#             + step_per_prefill_token_ms * prefill_tokens
#             + step_prefill_base_ms  (only when the step runs any prefill)
# Calibrated on sglang_bench_one_batch/result_bs1_128.jsonl (32 rows: batch 1/16/64/128 x input
# 256/512 x output 32/256, two groups):
#   - decode: ordinary least squares of median_decode_latency (ms) on batch_size over all 32
#     rows -> intercept 3.9755 ms, slope 0.017457 ms per running sequence (TPOT 3.99 ms at batch
#     1, 6.21 ms at batch 128; the file shows 3.8 .. 6.3 ms);
#   - prefill: ordinary least squares of prefill_latency (ms) on batch_size * input_len over the
#     8 (batch, input) configurations, each taken as the median of its 4 rows (3 rows are
#     warm-up outliers, up to 3.3x their siblings) -> slope 0.0085175 ms per prefill token,
#     intercept 14.710 ms, of which step_base_ms is already paid by every step: the rest,
#     10.735 ms, is the prefill launch overhead.
DEFAULT_TIMING = {
    "step_base_ms": 3.9755,
    "step_per_decode_seq_ms": 0.017457,
    "step_per_prefill_token_ms": 0.0085175,
    "step_prefill_base_ms": 10.735,
}

EVICTION_POLICIES = ("lru", "lfu", "fifo", "s3fifo")


@dataclass(frozen=True)
class EngineConfig:
    """Settings of the simulated vLLM-v1-like engine.

    num_gpu_blocks: KV-cache capacity in blocks (None = infinite, never evicts or preempts);
    block_size: tokens per KV block (vLLM --block-size, 16); max_num_seqs: running requests at
    most (vLLM --max-num-seqs); max_num_batched_tokens: tokens per engine step (chunked prefill
    budget, vLLM --max-num-batched-tokens); eviction: one of EVICTION_POLICIES (vLLM's own is
    "lru"); step_*: the per-iteration time model in ms (see DEFAULT_TIMING for its source).
    Raises ValueError from validate() on impossible settings.
    """
    num_gpu_blocks: int | None = None
    block_size: int = 16
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    eviction: str = "lru"
    step_base_ms: float = DEFAULT_TIMING["step_base_ms"]
    step_per_decode_seq_ms: float = DEFAULT_TIMING["step_per_decode_seq_ms"]
    step_per_prefill_token_ms: float = DEFAULT_TIMING["step_per_prefill_token_ms"]
    step_prefill_base_ms: float = DEFAULT_TIMING["step_prefill_base_ms"]
    #: ms per context token of each decoding sequence per step: the KV cache a decode step
    #: reads (KV bytes per token / the GPU's memory bandwidth, see kv_read_ms_per_token); 0 =
    #: not modelled (the SGLang default's short contexts fold it into step_per_decode_seq_ms)
    step_per_kv_token_ms: float = 0.0
    #: chunked prefill (vLLM V1 always; V0 with --enable-chunked-prefill): prompts are cut to
    #: the token budget and decodes ride along. False: vLLM V0's default scheduler, whole
    #: prompts in prefill-only steps during which no request decodes (engine._step_v0)
    chunked_prefill: bool = True

    def validate(self) -> None:
        """Raise ValueError naming the first setting that cannot work."""
        if self.num_gpu_blocks is not None and self.num_gpu_blocks < 1:
            raise ValueError(f"num_gpu_blocks must be >= 1 or None (infinite), got {self.num_gpu_blocks}")
        if self.block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {self.block_size}")
        if self.max_num_seqs < 1:
            raise ValueError(f"max_num_seqs must be >= 1, got {self.max_num_seqs}")
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError("max_num_batched_tokens must be >= max_num_seqs (as vLLM requires), "
                             f"got {self.max_num_batched_tokens} < {self.max_num_seqs}")
        if self.eviction not in EVICTION_POLICIES:
            raise ValueError(f"eviction must be one of {', '.join(EVICTION_POLICIES)}, got {self.eviction!r}")
        for k in ("step_base_ms", "step_per_decode_seq_ms", "step_per_prefill_token_ms",
                  "step_prefill_base_ms", "step_per_kv_token_ms"):
            if getattr(self, k) < 0:
                raise ValueError(f"{k} must be >= 0, got {getattr(self, k)}")
        if self.step_base_ms + self.step_per_decode_seq_ms <= 0:
            raise ValueError("a decode step must take some time (step_base_ms + step_per_decode_seq_ms > 0)")

    def label(self) -> str:
        """A short human label of the settings, e.g. "replay lru 4096x16 blocks, seqs 256,
        batched 8192"."""
        cap = "inf" if self.num_gpu_blocks is None else str(self.num_gpu_blocks)
        return (f"replay {self.eviction} {cap}x{self.block_size} blocks, "
                f"seqs {self.max_num_seqs}, batched {self.max_num_batched_tokens}"
                + ("" if self.chunked_prefill else ", no chunked prefill"))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


EVENT_KINDS = ("arrived", "queued", "scheduled", "first_token", "preempted", "resumed",
               "finished", "error")


@dataclass(frozen=True)
class ReplayResult:
    """What simulate() returns.

    requests: one row per trace request, canonical `requests` columns (request_id, arrival_s,
        prompt_tokens, completion_tokens, cached_prompt_tokens, kv_cache_hit_rate, ttft_ms,
        tpot_ms, e2e_ms, queue_ms, prefill_ms, decode_ms, num_preemptions, batch_size,
        finish_reason, error), no run_id; times in ms, arrival_s in s from the trace epoch.
        cached_prompt_tokens / kv_cache_hit_rate are those of the request's first admission.
    events: request_id, ts_s, kind (EVENT_KINDS), detail.
    token_latencies: request_id, token_index, itl_ms, or None (simulate(record_itl=False)).
    summary: dict, see simulate().
    config: the EngineConfig used.
    """
    requests: pd.DataFrame
    events: pd.DataFrame
    token_latencies: pd.DataFrame | None
    summary: dict
    config: EngineConfig = field(default_factory=EngineConfig)


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, dtype_bytes: int = 2) -> int:
    """KV-cache bytes of one token: K and V x layers x KV heads x head dim x bytes per element
    (Llama-3.1-8B's config.json: 32 layers, 8 KV heads, head dim 4096 / 32 = 128, bf16 ->
    131,072 bytes)."""
    return 2 * layers * kv_heads * head_dim * dtype_bytes


def kv_read_ms_per_token(bytes_per_token: float, hbm_bytes_per_s: float) -> float:
    """ms a decode step spends reading one context token's KV cache from HBM at the GPU's peak
    memory bandwidth (a lower bound: real kernels reach less than peak). Raises ValueError."""
    if bytes_per_token <= 0 or hbm_bytes_per_s <= 0:
        raise ValueError("KV bytes per token and memory bandwidth must be positive")
    return bytes_per_token / hbm_bytes_per_s * 1000.0


def blocks_for_gb(gb: float, bytes_per_token: float, block_size: int = 16) -> int:
    """KV blocks that fit in `gb` GB (1e9 bytes) at `bytes_per_token` KV bytes per token
    (e.g. 2 (K, V) x layers x KV heads x head dim x bytes per element). Raises ValueError."""
    if gb <= 0 or bytes_per_token <= 0 or block_size < 1:
        raise ValueError("the KV capacity in GB, the bytes per token and the block size must be positive")
    n = int(gb * 1e9 // (bytes_per_token * block_size))
    if n < 1:
        raise ValueError(f"{gb} GB holds less than one block of {block_size} tokens")
    return n
