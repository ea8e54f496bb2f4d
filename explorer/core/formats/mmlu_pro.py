"""MMLU-Pro per-question output JSON (TIGER-AI-Lab/MMLU-Pro evaluate_from_*.py results).

Source: a JSON list, one object per question: `question_id`, `question`, `options` (list, or
its text), `answer` (letter), `answer_index`, `cot_content`, `category`, `src` (original
source, e.g. ori_mmlu-college_mathematics), `pred` (the extracted letter, null when none
could be extracted), `generated_text` (or `model_outputs`). A question is correct when
`pred == answer` (MMLU-Pro's own rule; a null pred is wrong). cases.category = `src`
(falling back to `category`); the benchmark is "mmlu_pro"; the model comes from the file name
(text before "_mmlu" / "_<n>shots", without "model_outputs_"). prompt = the question.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from .base import Sniff, read_json
from .generic_eval import insert_cases, register_eval
from ..i18n import _

NAME = "mmlu_pro"
KIND = "eval"


def detect(sniff: Sniff) -> float:
    """0.9 when the file is a JSON list whose first object has question_id, answer and pred."""
    head = sniff.head.lstrip()
    if sniff.is_dir or not head.startswith("["):
        return 0.0
    first = head[:4000]
    if all(f'"{k}"' in first for k in ("question_id", "answer", "pred")):
        return 0.9 if ('"src"' in first or '"options"' in first) else 0.6
    return 0.0


def model_from_name(path: Path) -> str | None:
    """'Meta-Llama-3_1-8B-Instruct' from 'Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json'
    (or from the folder 'model_outputs_<model>_5shots')."""
    for name in (path.stem, path.parent.name):
        name = re.sub(r"^model_outputs_", "", name)
        m = re.match(r"^(.+?)(?:_mmlu.*|_\d+shots?.*)$", name, re.I)
        if m:
            return m.group(1)
    return None


def load(path: Path, store, report) -> None:
    """Load one output file as one eval (eval_id 'mmlu_pro:<model>')."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(path, _("expected a JSON list of question records"))
    model = model_from_name(path)
    rows = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict) or "answer" not in rec or "question_id" not in rec:
            report.skip(_("not a question record with question_id and answer"), field_name=f"[{i}]")
            continue
        pred, answer = rec.get("pred"), rec.get("answer")
        rows.append({
            "local_id": rec["question_id"], "correct": pred is not None and pred == answer,
            "model": model, "benchmark": "mmlu_pro",
            "category": rec.get("src") or rec.get("category"),
            "prompt": rec.get("question"),
            "prediction": rec.get("generated_text") or rec.get("model_outputs"),
            "reference": answer,
            "extra": {"pred": pred, "answer_index": rec.get("answer_index"),
                      "category": rec.get("category"), "index": i},
        })
    if not rows:
        raise InputError(path, _("no usable question records"))
    report.columns = {"pred == answer": "correct", "src": "category", "question": "prompt",
                      "generated_text": "prediction", "answer": "reference"}
    eval_id = register_eval(store, report, path, NAME, f"mmlu_pro:{model or path.stem}",
                            model=model, benchmark="mmlu_pro")
    insert_cases(store, report, eval_id, rows)
