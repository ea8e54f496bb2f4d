"""SGLang benchmark JSONL: `bench_one_batch` results and `bench_serving` results.

bench_one_batch (sglang/bench_one_batch.py, --result-filename) appends one JSON row per
measurement: run_name, batch_size, input_len, output_len, prefill_latency (s),
median_decode_latency (s per decode step = TPOT), total_latency (s), throughputs. Each row is a
batch measurement; we store it as one request row of a single run: prompt_tokens = input_len,
completion_tokens = output_len, batch_size, prefill_ms = ttft_ms = prefill_latency x 1000,
tpot_ms = median_decode_latency x 1000, e2e_ms = total_latency x 1000, decode_ms = e2e - prefill;
the raw row is kept in extra. A row with a value out of range (_common.RANGES: a negative
latency, token count or batch size) is skipped with its line and field. Bare text lines (the real file has `torch:` / `te:` headers
between groups) are skipped with their text as the reason and label the rows that follow
(extra.group).

bench_serving (sglang/bench_serving.py, --output-file) appends one result object per line with
the same shape as vLLM's (see _serving): each line becomes one run.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..i18n import N_, _
from ..errors import InputError
from .base import Sniff
from ._common import (RowError, check_ranges, insert_requests, integer, no_rows, num,
                      register_run)
from . import _serving

NAME = "sglang"
KIND = "trace"

_ONE_BATCH = ("batch_size", "input_len", "output_len", "prefill_latency", "median_decode_latency")
# canonical column -> bench_one_batch field (and scale), named by the range check's reasons
_FIELDS = {"prompt_tokens": "input_len", "completion_tokens": "output_len",
           "batch_size": "batch_size", "prefill_ms": ("prefill_latency", 1000.0),
           "ttft_ms": ("prefill_latency", 1000.0), "tpot_ms": ("median_decode_latency", 1000.0),
           "e2e_ms": ("total_latency", 1000.0),
           "decode_ms": ("total_latency - prefill_latency", 1000.0)}


def detect(sniff: Sniff) -> float:
    """High when the first JSON line is a bench_one_batch row or the head is bench_serving
    JSONL (several result lines, or SGLang's own aggregate keys)."""
    obj = sniff.first_json_line()
    if obj and all(k in obj for k in _ONE_BATCH):
        return 0.95
    if _serving.flavour(sniff) == "sglang":
        return 0.85
    return 0.0


def _one_batch_row(rec: dict, group: str | None, seq: int) -> dict:
    bs = integer(rec.get("batch_size"), "batch_size")
    inp = integer(rec.get("input_len"), "input_len")
    out = integer(rec.get("output_len"), "output_len")
    prefill = num(rec.get("prefill_latency"), "prefill_latency", 1000.0, required=True)
    tpot = num(rec.get("median_decode_latency"), "median_decode_latency", 1000.0)
    total = num(rec.get("total_latency"), "total_latency", 1000.0)
    rid = f"{group + ':' if group else ''}bs{bs}_in{inp}_out{out}"
    return check_ranges({"request_id": f"{rid}#{seq}" if seq > 1 else rid,
                         "prompt_tokens": inp, "completion_tokens": out, "batch_size": bs,
                         "prefill_ms": prefill, "ttft_ms": prefill, "tpot_ms": tpot,
                         "e2e_ms": total,
                         "decode_ms": (total - prefill) if total is not None else None,
                         "extra": {"group": group, **rec}}, _FIELDS)


def _serving_label(rec: dict, path: Path, line: int) -> str:
    """'<file>:<line> <dataset> rate=<request_rate>': the lines of one file differ by them."""
    what = " ".join(f"{k}={rec[k]}" for k in ("dataset_name", "request_rate", "max_concurrency")
                    if rec.get(k) is not None)
    return f"{path.stem}:{line}" + (f" {what}" if what else "")


def load(path: Path, store, report) -> None:
    """Load a bench_one_batch file as one run, or each bench_serving line as one run."""
    one_batch, serving = [], []
    group = None
    seen: dict[str, int] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line, raw in enumerate(fh, 1):
            s = raw.strip()
            if not s:
                continue
            try:
                rec = json.loads(s)
            except ValueError:
                report.skip(_("text line {value}, not a JSON row").format(value=repr(s[:40])), line=line)
                if len(s) < 40 and s.endswith(":"):
                    group = s[:-1].strip()
                continue
            if not isinstance(rec, dict):
                report.skip(_("not a JSON object"), line=line)
                continue
            if all(k in rec for k in _ONE_BATCH[:3]):
                try:
                    key = f"{group}:{rec.get('batch_size')}:{rec.get('input_len')}:{rec.get('output_len')}"
                    seen[key] = seen.get(key, 0) + 1
                    one_batch.append(_one_batch_row(rec, group, seen[key]))
                except RowError as e:
                    report.skip(e.reason, line=line, field_name=e.field)
            elif _serving.is_result(rec):
                serving.append((line, rec))
            else:
                report.skip(_("neither a bench_one_batch row nor a bench_serving result"), line=line)
    if not one_batch and not serving:
        raise no_rows(path, report, N_("benchmark"))
    if one_batch:
        names = sorted({str(r["extra"].get("run_name")) for r in one_batch})
        run_id = register_run(store, report, path, NAME, f"sglang:{path.stem}", engine="sglang",
                              benchmark="bench_one_batch", label=", ".join(names),
                              config={"groups": sorted({r["extra"]["group"] or "" for r in one_batch})})
        insert_requests(store, report, run_id, one_batch)
        report.columns.update({
            "input_len": "prompt_tokens", "output_len": "completion_tokens",
            "batch_size": "batch_size",
            "prefill_latency": "prefill_ms, ttft_ms (x1000)",
            "median_decode_latency": "tpot_ms (x1000)",
            "total_latency": "e2e_ms (x1000); decode_ms = total - prefill",
            _("(row)"): "extra"})
    for line, rec in serving:
        try:
            _serving.load_result(rec, path, store, report, NAME, "sglang",
                                 f"sglang:{path.stem}:{line}", line=line,
                                 label=_serving_label(rec, path, line))
        except RowError as e:
            raise InputError(path, e.reason, line=line, field=e.field) from None
