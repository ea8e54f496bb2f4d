"""AIPerf accuracy export (`accuracy_export.jsonl`, `aiperf profile --accuracy-benchmark ...`).

Source (ai-dynamo/aiperf, src/aiperf/accuracy/models.py `AccuracyRecordsData`, written one line
per graded response by accuracy/jsonl_writer.py, profiling phase only): `session_num`,
`conversation_id`, `x_request_id` (the X-Request-ID of the request that answered, the same id
as `metadata.x_request_id` in profile_export.jsonl), `worker_id`, `benchmark_phase`,
`timestamp_ns` (grading time = the request's end), `task`, `grader_name`, `passed` (the grader's
`correct`), `unparsed` (the answer needed the grader's regex fallback; a correct unparsed answer
still passes), `confidence`, `expected`, `actual` (the extracted answer), `explanation`,
`model_output`, `model_thinking`.

Each line is one case of the eval `aiperf:accuracy:<folder>`: correct = passed, request_id =
x_request_id, so a case binds exactly (level 1) to its request when the folder's
profile_export.jsonl is loaded too. category = task (else the grader), reference = expected,
prediction = model_output (the extracted answer, unparsed, confidence, explanation and the
grader kept in extra). The model and benchmark come from the sibling profile_export_aiperf.json
(`input_config.endpoint.model_names`, `input_config.accuracy.benchmark`) when present.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..i18n import _
from .base import Sniff, iter_jsonl
from ._common import text
from .generic_eval import insert_cases, parse_correct, register_eval

NAME = "aiperf_accuracy"
KIND = "eval"
_KEYS = ("x_request_id", "passed", "grader_name")


def detect(sniff: Sniff) -> float:
    """0.95 when the first JSON line has x_request_id, passed and grader_name."""
    obj = sniff.first_json_line()
    if not obj or sniff.is_dir:
        return 0.0
    return 0.95 if all(k in obj for k in _KEYS) else 0.0


def _sidecar(path: Path) -> tuple[str | None, str | None]:
    """(model, accuracy benchmark) from profile_export_aiperf.json beside the file."""
    try:
        with open(path.with_name("profile_export_aiperf.json"), encoding="utf-8") as fh:
            cfg = json.load(fh).get("input_config") or {}
    except (OSError, ValueError, AttributeError):
        return None, None
    models = (cfg.get("endpoint") or {}).get("model_names") or [None]
    acc = cfg.get("accuracy") or {}
    return text(models[0]), text(acc.get("benchmark") if isinstance(acc, dict) else None)


def load(path: Path, store, report) -> None:
    """Load one accuracy export as one eval whose cases carry their request ids."""
    model, bench = _sidecar(path)
    rows = []
    for line, obj in iter_jsonl(path, report):
        if obj.get("benchmark_phase") not in (None, "profiling"):
            report.skip(_("not a profiling-phase record"), line=line, field_name="benchmark_phase")
            continue
        try:
            correct = parse_correct(obj.get("passed"))
            if correct is None:
                raise ValueError(_("missing"))
        except ValueError as e:
            report.skip(str(e), line=line, field_name="passed")
            continue
        rid = text(obj.get("x_request_id"))
        ts = obj.get("timestamp_ns")
        rows.append({
            "local_id": rid or f"line{line}", "_line": line, "correct": correct,
            "request_id": rid, "model": model, "benchmark": bench or text(obj.get("grader_name")),
            "category": text(obj.get("task")) or text(obj.get("grader_name")),
            "reference": text(obj.get("expected")), "prediction": text(obj.get("model_output")),
            "timestamp_s": ts / 1e9 if isinstance(ts, (int, float)) else None,
            "extra": {k: obj.get(k) for k in ("actual", "unparsed", "confidence", "explanation",
                                               "grader_name", "conversation_id", "session_num",
                                               "model_thinking") if obj.get(k) is not None},
        })
    if not rows:
        raise InputError(path, _("no usable accuracy records") + (
            _("; first problem: {reason}").format(reason=report.skipped_reasons[0])
            if report.skipped_reasons else ""))
    report.columns = {"passed": "correct", "x_request_id": "request_id", "expected": "reference",
                      "model_output": "prediction", "task": "category",
                      "timestamp_ns": "timestamp_s (/1e9)"}
    eval_id = register_eval(store, report, path, NAME,
                            f"aiperf:accuracy:{path.parent.name or path.stem}",
                            model=model, benchmark=bench)
    insert_cases(store, report, eval_id, rows)
