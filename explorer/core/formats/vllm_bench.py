"""vLLM `vllm bench serve --save-result` JSON (also benchmarks/benchmark_serving.py).

One JSON object per file (see _serving for the fields). Without `--save-detailed` the file
holds only aggregates: the run is registered with them in runs.config and no request rows.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .base import Sniff, read_json
from ._common import RowError
from . import _serving

NAME = "vllm_bench"
KIND = "trace"


def detect(sniff: Sniff) -> float:
    """High for one JSON object holding the serving benchmark's aggregate keys or arrays."""
    if _serving.flavour(sniff) != "vllm":
        return 0.0
    return 0.9 if ('"backend"' in sniff.head or '"model_id"' in sniff.head) else 0.7


def load(path: Path, store, report) -> None:
    """Load a vLLM serving benchmark result as one run (engine "vllm")."""
    obj = read_json(path)
    if not _serving.is_result(obj):
        raise InputError(path, "not a vLLM serving benchmark result (no ttfts / mean_ttft_ms)")
    try:
        _serving.load_result(obj, path, store, report, NAME, "vllm", f"vllm:{path.stem}")
    except RowError as e:
        raise InputError(path, e.reason, field=e.field) from None
