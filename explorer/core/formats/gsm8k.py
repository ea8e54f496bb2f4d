"""GSM8K-style multi-model solutions (openai/grade-school-math example_model_solutions.jsonl).

Source: JSONL, one problem a line: `question`, `ground_truth`, and for each model variant a
key (e.g. "6b_finetuning") holding `{"is_correct": bool, "solution": str}`. Each model becomes
its own eval (eval_id 'gsm8k:<model>') with one case per problem (local id = the problem's
0-based line order); correct = `is_correct`. No category in the source (cases.category NULL).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .base import Sniff, iter_jsonl
from .generic_eval import insert_cases, register_eval
from ..i18n import _

NAME = "gsm8k"
KIND = "eval"


def _models(obj: dict) -> list[str]:
    return [k for k, v in obj.items() if isinstance(v, dict) and "is_correct" in v]


def detect(sniff: Sniff) -> float:
    """0.9 when the first JSON line has a question and at least one {is_correct, ...} model."""
    obj = sniff.first_json_line()
    if not obj or sniff.is_dir:
        return 0.0
    if _models(obj) and ("question" in obj or "problem" in obj):
        return 0.9
    return 0.0


def load(path: Path, store, report) -> None:
    """Load every model variant of the file as one eval each (via store.add_eval)."""
    per_model: dict[str, list[dict]] = {}
    n = 0
    for line, obj in iter_jsonl(path, report):
        models = _models(obj)
        if not models:
            report.skip(_("no model entry with is_correct"), line=line)
            continue
        q = obj.get("question", obj.get("problem"))
        for m in models:
            rec = obj[m]
            if not isinstance(rec.get("is_correct"), bool):
                report.skip(_("is_correct is not true/false"), line=line, field_name=f"{m}.is_correct")
                continue
            per_model.setdefault(m, []).append({
                "local_id": n, "_line": line, "correct": rec["is_correct"], "model": m,
                "benchmark": "gsm8k", "prompt": q, "prediction": rec.get("solution"),
                "reference": obj.get("ground_truth", obj.get("answer")),
            })
        n += 1
    if not per_model:
        raise InputError(path, _("no problem with a model's is_correct"))
    report.columns = {"question": "prompt", "<model>.is_correct": "correct",
                      "<model>.solution": "prediction", "ground_truth": "reference"}
    for m, rows in per_model.items():
        eval_id = register_eval(store, report, path, NAME, f"gsm8k:{m}", model=m,
                                benchmark="gsm8k")
        insert_cases(store, report, eval_id, rows)
