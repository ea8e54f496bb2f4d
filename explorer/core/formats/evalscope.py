"""evalscope `reviews/<model>/<dataset>_<subset>.jsonl` (modelscope/evalscope, the 2026 layout of
examples/viz/*/reviews): one sample a line, carrying its correctness AND its request, so the file
loads as one eval and one run, bound exactly (cases.request_id = the request's id, as HELM).

A line: `index`, `target`, `messages` (the user prompt and the assistant reply, whose
`perf_metrics` are {latency, ttft, input_tokens, output_tokens, tpot}, seconds;
evalscope/api/messages/perf_metrics.py: ttft only when streaming, tpot = (latency - ttft) /
(output_tokens - 1)), `sample_score` {sample_id, score {value {metric: score}, prediction,
extracted_prediction, main_score_name}}. Correct when the main score (else the first) is >= 0.5.
Requests: e2e_ms = latency x 1000, ttft_ms, tpot_ms (x1000), prompt / completion tokens.
"""
from __future__ import annotations

from pathlib import Path

from ..i18n import _
from ._common import (
    RowError,
    check_ranges,
    insert_requests,
    integer,
    no_rows,
    num,
    register_run,
)
from .base import Sniff, iter_jsonl
from .generic_eval import insert_cases, parse_correct, register_eval

NAME = "evalscope"
KIND = "eval"


def detect(sniff: Sniff) -> float:
    """High when the first JSON line has sample_score and messages."""
    obj = sniff.first_json_line()
    return 0.95 if obj and "sample_score" in obj and "messages" in obj else 0.0


def _sample(rec: dict, line: int) -> tuple[dict, dict]:
    msgs = [m for m in rec.get("messages") or [] if isinstance(m, dict)]
    reply = next((m for m in reversed(msgs) if m.get("role") == "assistant"), {})
    user = next((m for m in msgs if m.get("role") == "user"), {})
    perf = reply.get("perf_metrics") or {}
    score = (rec.get("sample_score") or {}).get("score") or {}
    values = score.get("value") or {}
    main = score.get("main_score_name") or next(iter(values), None)
    if main not in values:
        raise RowError("sample_score.score.value", _("no score"))
    rid = str((rec.get("sample_score") or {}).get("sample_id", rec.get("index", line)))
    req = check_ranges({"request_id": rid,
                        "e2e_ms": num(perf.get("latency"), "perf_metrics.latency", 1000.0),
                        "ttft_ms": num(perf.get("ttft"), "perf_metrics.ttft", 1000.0),
                        "tpot_ms": num(perf.get("tpot"), "perf_metrics.tpot", 1000.0),
                        "prompt_tokens": integer(perf.get("input_tokens"), "perf_metrics.input_tokens"),
                        "completion_tokens": integer(perf.get("output_tokens"),
                                                     "perf_metrics.output_tokens")},
                       {"e2e_ms": ("perf_metrics.latency", 1000.0),
                        "ttft_ms": ("perf_metrics.ttft", 1000.0),
                        "tpot_ms": ("perf_metrics.tpot", 1000.0)})
    content = user.get("content")
    case = {"local_id": rid, "request_id": rid, "correct": parse_correct(values[main]),
            "model": reply.get("model"), "reference": str(rec.get("target")),
            "prompt": content if isinstance(content, str) else None,
            "prediction": score.get("extracted_prediction") or score.get("prediction"),
            "prompt_tokens": req["prompt_tokens"], "completion_tokens": req["completion_tokens"],
            "extra": {"metric": main, "score": values[main]}}
    return case, req


def load(path: Path, store, report) -> None:
    """One eval (the samples) and one run (their requests) per reviews file."""
    cases, reqs = [], []
    for line, rec in iter_jsonl(path, report):
        try:
            case, req = _sample(rec, line)
        except (RowError, ValueError) as e:
            report.skip(getattr(e, "reason", str(e)), line=line,
                        field_name=getattr(e, "field", None))
            continue
        cases.append({**case, "_line": line})
        reqs.append(req)
    if not cases:
        raise no_rows(path, report)
    model = next((c["model"] for c in cases if c["model"]), None)
    dataset = path.stem.rsplit("_", 1)[0]
    run_id = register_run(store, report, path, NAME, f"evalscope:{path.stem}", model=model,
                          benchmark=dataset, config={"tool": "evalscope", "dataset": dataset})
    insert_requests(store, report, run_id, reqs)
    report.rows_loaded = 0  # the samples count once, as cases
    for c in cases:
        c["extra"]["run_id"] = run_id
        c.pop("_line")
    eval_id = register_eval(store, report, path, NAME, f"evalscope:{path.stem}", model=model,
                            benchmark=dataset)
    insert_cases(store, report, eval_id, cases)
    report.columns.update({"sample_score.score.value": "correct",
                           "messages[assistant].perf_metrics.latency": "e2e_ms (x1000)",
                           "messages[assistant].perf_metrics.ttft": "ttft_ms (x1000)",
                           "messages[assistant].perf_metrics.tpot": "tpot_ms (x1000)",
                           "sample_score.sample_id": "request_id"})
