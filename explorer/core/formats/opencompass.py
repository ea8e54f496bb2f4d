"""OpenCompass predictions (outputs/<exp>/predictions/<model>/<dataset>.json).

Source: a JSON object keyed by the sample index ("0", "1", ...), each value {origin_prompt
(text, or a list of {role, prompt} turns), prediction, gold (or reference), ...}. Correctness
comes from the record itself (`correct` / `is_correct`, as written by evaluators that dump
details) or else from the matching results file written with --dump-eval-details
(outputs/<exp>/results/<model>/<dataset>.json, `details`: a list or an index-keyed object
whose entries carry `correct`, a bool or a list of bools where all must hold). Without
either the file cannot be used (there is no safe way to grade free text here).
The model is the predictions sub-folder name; the benchmark (and category) the dataset abbr.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import InputError
from .base import Sniff, read_json, side_json
from .generic_eval import insert_cases, parse_correct, register_eval
from ..i18n import _

NAME = "opencompass"
KIND = "eval"
_KEY = re.compile(r'^\{\s*"0"\s*:\s*\{')


def detect(sniff: Sniff) -> float:
    """0.9 for a JSON object keyed "0", "1", ... whose records hold origin_prompt and
    prediction."""
    if sniff.is_dir or not _KEY.match(sniff.head.lstrip()):
        return 0.0
    first = sniff.head[:8000]
    return 0.9 if '"origin_prompt"' in first and '"prediction"' in first else 0.0


def _prompt_text(p) -> str | None:
    if isinstance(p, str):
        return p
    if isinstance(p, list):
        return "\n".join(str(t.get("prompt", t.get("content", ""))) if isinstance(t, dict)
                         else str(t) for t in p)
    return None


def _details(path: Path) -> dict[str, object]:
    """index -> correctness value from the sibling results file's `details`, or {}."""
    parts = path.resolve().parts
    if "predictions" not in parts:
        return {}
    i = len(parts) - 1 - parts[::-1].index("predictions")
    res = Path(*parts[:i], "results", *parts[i + 1:])
    det = (side_json(res) or {}).get("details")
    if isinstance(det, list):
        det = {str(i): v for i, v in enumerate(det)}
    if not isinstance(det, dict):
        return {}
    return {str(k): v.get("correct", v.get("is_correct")) for k, v in det.items()
            if isinstance(v, dict)}


def _as_bool(v) -> bool | None:
    if isinstance(v, list):
        vals = [parse_correct(x) for x in v]
        return None if not vals or any(x is None for x in vals) else all(vals)
    return parse_correct(v)


def load(path: Path, store, report) -> None:
    """Load one predictions file as one eval (eval_id 'opencompass:<model>/<dataset>')."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, _("expected a JSON object keyed by sample index"))
    details = _details(path)
    model = path.parent.name if path.parent.name not in ("", "predictions") else None
    dataset = path.stem
    rows = []
    for k, rec in data.items():
        if not isinstance(rec, dict):
            report.skip(_("not a prediction record"), field_name=k)
            continue
        raw = rec.get("correct", rec.get("is_correct", details.get(str(k))))
        try:
            correct = _as_bool(raw)
        except ValueError as e:
            report.skip(str(e), field_name=f"{k}.correct")
            continue
        if correct is None:
            report.skip(_("no correctness (record or results/ details)"), field_name=k)
            continue
        gold = rec.get("gold", rec.get("reference", rec.get("references")))
        pred = rec.get("prediction")
        rows.append({"local_id": k, "correct": correct, "model": model, "benchmark": dataset,
                     "category": dataset, "prompt": _prompt_text(rec.get("origin_prompt")),
                     "prediction": pred if isinstance(pred, str) or pred is None
                     else json.dumps(pred, ensure_ascii=False),
                     "reference": None if gold is None else
                     (gold if isinstance(gold, str) else json.dumps(gold, ensure_ascii=False))})
    if not rows:
        raise InputError(path, _("no record with a correctness value (OpenCompass predictions "
                                 "need `correct` in the record or a results/ file written with "
                                 "--dump-eval-details)"))
    report.columns = {"origin_prompt": "prompt", "prediction": "prediction",
                      "gold": "reference", "correct | results/details[i].correct": "correct"}
    base = f"opencompass:{model}/{dataset}" if model else f"opencompass:{dataset}"
    eval_id = register_eval(store, report, path, NAME, base, model=model, benchmark=dataset)
    insert_cases(store, report, eval_id, rows)
