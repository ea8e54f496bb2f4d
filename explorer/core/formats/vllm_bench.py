"""vLLM `vllm bench serve --save-result` JSON (also benchmarks/benchmark_serving.py).

One JSON object per file (see _serving for the fields and the metric definitions). Without
`--save-detailed` the file holds only aggregates: the run is registered with them in
runs.config and `run_metrics`, and no request rows. A JSON list of such objects is the
`summary.json` that `vllm bench sweep serve` writes per parameter combination
(vllm/benchmarks/sweep/serve.py: the run=N.json results with run_number and the swept
parameters added): one run each, labelled '<folder> run=N'.
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
    """Load a vLLM serving benchmark result as one run (engine "vllm"), or each result of a
    sweep summary list as one run."""
    obj = read_json(path)
    objs = obj if isinstance(obj, list) else [obj]
    if not objs or not all(_serving.is_result(o) for o in objs):
        raise InputError(path, "not a vLLM serving benchmark result (no ttfts / mean_ttft_ms)")
    for i, o in enumerate(objs):
        try:
            _serving.load_result(o, path, store, report, NAME, "vllm", f"vllm:{path.stem}",
                                 label=_serving.sweep_label(o, path))
        except RowError as e:
            where = f"[{i}]." if isinstance(obj, list) else ""
            raise InputError(path, e.reason, field=f"{where}{e.field}") from None
