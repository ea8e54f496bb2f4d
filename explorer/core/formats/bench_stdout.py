"""Serving benchmark result blocks as printed to stdout, the form pasted into most regression
reports: `vllm bench serve` / benchmarks/benchmark_serving.py and `python -m
sglang.bench_serving`.

A block starts at the line `===== Serving Benchmark Result =====` and holds `Label: value`
lines under `---- Section ----` rules, printed with "{:<40} {:<10}" (vllm/benchmarks/serve.py
and sglang/bench_serving.py, print_benchmark_result); it ends at a rule of '=' only, at a line
of anything else, or at the end of the file (pasted excerpts are often cut short). A prefix
common to the block's lines ("# ", "> ", "| ") is tolerated. Each block is one run with no
request rows; its numbers become `run_metrics` through the same keys as the saved result JSON
(the vocabulary, resources/metrics.toml), so `Mean TPOT (ms)` means what `mean_tpot_ms` means: the
benchmark's per-request (latency - ttft) / (output_len - 1), averaged over the requests with
more than one output token; `ITL` is every gap between streamed chunks, pooled; `E2E Latency`
(SGLang) and `E2EL` (vLLM) the request latency. Values are as printed (2 decimals).

Engine: the block's `Backend:` line (SGLang prints it; sglang* -> sglang, vllm* -> vllm, other
backends by name); without one, SGLang's own rows (`Concurrency:`, `(retokenized)`, `E2E
Latency`) mean sglang, else vllm. `Traffic request rate`, `Burstiness factor` and
`Maximum request concurrency` printed just before the block (vLLM) or inside it (SGLang) go to
runs.config. Lines the reader does not know are kept in config["other"] and listed in the load
report's columns as _("(not mapped)").
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from .base import Sniff, split_lines
from ._common import register_run
from ._results import insert_run_metrics, published_rows
from ._vocab import read_name
from ..i18n import _

NAME = "bench_stdout"
KIND = "trace"

_PREFIX = r"(?P<pre>[#>|]?\s*)"
HEADER = re.compile(rf"^{_PREFIX}=+\s*Serving Benchmark Result\s*=+\s*$")
RULE_END = re.compile(r"^=+\s*$")
SECTION = re.compile(r"^-{3,}.*-{3,}$")
ROW = re.compile(r"^(?P<label>[^:]+?):\s*(?P<value>\S.*?)\s*$")
CONFIG = {"backend": "backend", "traffic request rate": "request_rate",
          "burstiness factor": "burstiness", "maximum request concurrency": "max_concurrency",
          "max request concurrency": "max_concurrency",
          "request rate configured (rps)": "request_rate"}
_SGLANG_ROWS = ("concurrency", "(retokenized)", "e2e latency")  # rows only SGLang prints


def detect(sniff: Sniff) -> float:
    """High when a line of the head is the 'Serving Benchmark Result' rule."""
    if sniff.is_binary or sniff.is_dir:
        return 0.0
    return 0.9 if any(HEADER.match(ln) for ln in split_lines(sniff.head)) else 0.0


def _number(text: str):
    try:
        x = float(text)
    except ValueError:
        return text
    return int(x) if x.is_integer() and "." not in text else x


def parse_blocks(lines: list[str]) -> list[dict]:
    """[{"line": header line number, "values": {result key: number}, "config": {...},
    "other": {label: text}, "engine_hint": bool}] for every result block in `lines`."""
    blocks, before = [], {}
    i = 0
    while i < len(lines):
        m = HEADER.match(lines[i])
        if not m:
            row = ROW.match(lines[i].strip())
            if row and row["label"].strip().lower() in CONFIG:
                before[CONFIG[row["label"].strip().lower()]] = _number(row["value"].split()[0])
            i += 1
            continue
        pre = m["pre"]
        block = {"line": i + 1, "values": {}, "config": dict(before), "other": {},
                 "sglang_rows": False}
        before = {}
        i += 1
        while i < len(lines):
            raw = lines[i].rstrip("\n")
            if pre.strip() and raw.startswith(pre.strip()):
                raw = raw[len(pre.strip()):]
            s = raw.strip()
            if HEADER.match(lines[i]) or RULE_END.match(s):
                break
            if not s or SECTION.match(s):
                i += 1
                continue
            row = ROW.match(s)
            if not row:
                break
            label, value = row["label"].strip(), row["value"].strip()
            low = label.lower()
            if low not in CONFIG and read_name(label):  # the vocabulary: resources/metrics.toml
                block["values"][label] = _number(value.split()[0])
                block["sglang_rows"] |= any(w in low for w in _SGLANG_ROWS)
            elif low in CONFIG:
                block["config"][CONFIG[low]] = _number(value.split()[0])
            else:
                block["other"][label] = value
            i += 1
        blocks.append(block)
    return blocks


def _engine(block: dict) -> str:
    backend = str(block["config"].get("backend") or "").lower()
    for name in ("sglang", "vllm", "lmdeploy", "tgi", "trt", "tensorrt"):
        if backend.startswith(name):
            return "tensorrt-llm" if name in ("trt", "tensorrt") else name
    if backend and backend not in ("openai", "openai-chat"):
        return backend
    return "sglang" if block["sglang_rows"] else "vllm"


def load(path: Path, store, report) -> None:
    """One run per printed result block (no request rows); its numbers go to run_metrics."""
    from .base import check_document_size
    check_document_size(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = split_lines(fh.read())
    blocks = [b for b in parse_blocks(lines) if b["values"]]
    if not blocks:
        raise InputError(path, _("a 'Serving Benchmark Result' header but no result line under it"))
    for b in blocks:
        engine = _engine(b)
        src = Path(getattr(store, "source_of", Path)(path))  # a UTF-16 file loads from a copy elsewhere
        label = f"{src.parent.name}/{src.stem}" + (f" (line {b['line']})" if len(blocks) > 1
                                                   else "")
        cfg = {**b["config"], **b["values"], "printed_block_line": b["line"]}
        if b["other"]:
            cfg["other"] = b["other"]
        run_id = register_run(store, report, path, NAME, f"{engine}:{path.stem}", engine=engine,
                              label=label, benchmark="serving", config=cfg)
        insert_run_metrics(store, run_id, published_rows(b["values"], completed=next(
            (v for k, v in b["values"].items() if read_name(k).stat == "completed"), None)))
        for k in b["values"]:
            report.columns.setdefault(k, "run_metrics")
        for k in b["other"]:
            report.columns.setdefault(k, _("(not mapped)"))
