"""vLLM `vllm bench serve --save-result` JSON (also benchmarks/benchmark_serving.py).

One JSON object per file (see _serving for the fields and the metric definitions). Without
`--save-detailed` the file holds only aggregates: the run is registered with them in
runs.config and `run_metrics`, and no request rows. A JSON list of such objects is the
`summary.json` that `vllm bench sweep serve` writes per parameter combination
(vllm/benchmarks/sweep/serve.py: the run=N.json results with run_number and the swept
parameters added): one run each, labelled '<folder> run=N'. A CSV whose header holds the
result keys (the sweep's experiment-level `summary.csv`, pandas' DataFrame of those results,
or a table users collect their results in) is one run per row, aggregates only; a folder walk
passes a sweep's summaries over (_sweep) so each run loads once, from its run=N.json.
"""
from __future__ import annotations

from pathlib import Path

import math

import pandas as pd

from ..errors import InputError
from .base import Sniff, read_json
from ._common import RowError
from . import _serving
from ..i18n import _

NAME = "vllm_bench"
KIND = "trace"


def detect(sniff: Sniff) -> float:
    """High for one JSON object holding the serving benchmark's aggregate keys or arrays, or
    a CSV whose header holds three of them (a table of results, one run a row)."""
    if _csv_header(sniff):
        return 0.8
    if _serving.flavour(sniff) != "vllm":
        return 0.0
    return 0.9 if ('"backend"' in sniff.head or '"model_id"' in sniff.head) else 0.7


def load(path: Path, store, report) -> None:
    """Load a vLLM serving benchmark result as one run (engine "vllm"), or each result of a
    sweep summary list as one run."""
    if _csv_header(Sniff.of(path)):
        return _load_csv(path, store, report)
    obj = read_json(path)
    objs = obj if isinstance(obj, list) else [obj]
    if not objs or not all(_serving.is_result(o) for o in objs):
        raise InputError(path, _("not a vLLM serving benchmark result (no ttfts / mean_ttft_ms)"))
    for i, o in enumerate(objs):
        try:
            _serving.load_result(o, path, store, report, NAME, "vllm", f"vllm:{path.stem}",
                                 label=_serving.sweep_label(o, path))
        except RowError as e:
            where = f"[{i}]." if isinstance(obj, list) else ""
            raise InputError(path, e.reason, field=f"{where}{e.field}") from None


def _csv_header(sniff: Sniff) -> list[str] | None:
    """The header of a CSV of serving results (three or more result keys), else None."""
    lines = sniff.first_lines(1)
    if sniff.is_binary or not lines or lines[0].lstrip().startswith(("{", "[")):
        return None
    cols = [c.strip().strip('"') for c in lines[0].split(",")]
    return cols if sum(k in cols for k in _serving.AGG_KEYS) >= 3 else None


def _swept(df: pd.DataFrame) -> list[str]:
    """The parameter columns whose value changes between rows (the sweep's parameters and
    run_number), for the labels: not a result, not a date."""
    from ._vocab import read_name
    return [c for c in df.columns if c not in ("date", "label") and not read_name(str(c))
            and df[c].nunique(dropna=False) > 1 and not str(c).endswith(("_throughput", "_ms"))]


def _load_csv(path: Path, store, report) -> None:
    """One run per row of a results CSV (aggregates only: run_metrics and runs.config)."""
    try:
        df = pd.read_csv(path, encoding="utf-8-sig")
    except (ValueError, pd.errors.ParserError) as e:
        raise InputError(path, _("cannot read as CSV ({error})").format(error=e)) from None
    df = df.drop(columns=[c for c in df.columns if str(c).startswith("Unnamed:")])
    if df.empty:
        raise InputError(path, _("a results table with a header and no row"))
    swept = _swept(df)
    for i, rec in enumerate(df.to_dict("records")):
        obj = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        label = " ".join([f"{path.stem} row {i + 1}"] + [f"{c}={obj[c]}" for c in swept])
        try:
            _serving.load_result(obj, path, store, report, NAME, "vllm", f"vllm:{path.stem}",
                                 line=i + 2, label=label)
        except RowError as e:
            raise InputError(path, e.reason, line=i + 2, field=e.field) from None
    report.columns[_("(each row)")] = _("one run: its result columns -> run_metrics")
