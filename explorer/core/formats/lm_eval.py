"""lm-evaluation-harness per-sample logs (`samples_<task>_<datetime>.jsonl`, --log_samples).

Source: JSONL, one document a line: `doc_id`, `doc` (the dataset row), `target`,
`arguments` (`gen_args_0.arg_0` is the prompt as sent), `resps`, `filtered_resps` (the
answer after the task's filters), `filter`, `metrics` (names of the per-sample metrics, each
also a top-level key, e.g. `exact_match`, `acc`), `doc_hash`, `prompt_hash` (the harness's
own hash, kept in extra; ours is association.prompt_hash of arg_0). A sample is correct when
its first listed metric is >= 0.5 (metrics are 0/1 per sample for exact_match / acc).
The task comes from the file name; the model from the sibling results_<datetime>.json
(`model_name`, else `config.model_args` pretrained=..., else the task config's metadata).
cases.category = the doc's subject / type / category field when present, else the task.
A task with several filters (GSM8K's strict-match and flexible-extract) logs each doc once per
filter (`filter`); each filter is its own eval, `lm_eval:<task>:<filter>`, its cases keyed by
doc_id, so the filters' accuracies (lm-eval's `<metric>,<filter>` in results_*.json) are never
pooled. A file with one filter keeps `lm_eval:<task>`.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import InputError
from .base import Sniff, iter_jsonl, side_json
from ._common import first_problem
from .generic_eval import insert_cases, parse_correct, register_eval
from ..i18n import _

NAME = "lm_eval"
KIND = "eval"
_NAME_RE = re.compile(r"^samples_(.+?)_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)$")
_PREFERRED = ("exact_match", "acc", "acc_norm", "pass@1", "em", "f1")


def detect(sniff: Sniff) -> float:
    """0.95 when the first JSON line has doc_id, doc and resps / filtered_resps."""
    obj = sniff.first_json_line()
    if not obj or sniff.is_dir:
        return 0.0
    if "doc_id" in obj and "doc" in obj and ("filtered_resps" in obj or "resps" in obj):
        return 0.95
    return 0.0


def _task_and_stamp(path: Path) -> tuple[str, str | None]:
    m = _NAME_RE.match(path.stem)
    return (m.group(1), m.group(2)) if m else (path.stem, None)


def _model(path: Path, task: str, stamp: str | None) -> str | None:
    cands = ([path.with_name(f"results_{stamp}.json")] if stamp else []) + sorted(
        path.parent.glob("results_*.json"))
    for c in cands:
        res = side_json(c)
        if res is None:
            continue
        if res.get("model_name"):
            return str(res["model_name"])
        args = (res.get("config") or {}).get("model_args")
        if isinstance(args, str):
            m = re.search(r"pretrained=([^,]+)", args)
            if m:
                return m.group(1)
        md = ((res.get("configs") or {}).get(task) or {}).get("metadata") or {}
        if md.get("pretrained"):
            return str(md["pretrained"])
    return None


def _prompt(args) -> str | None:
    if not isinstance(args, dict):
        return None
    g = args.get("gen_args_0") or next(iter(args.values()), None)
    if isinstance(g, dict):
        p = g.get("arg_0")
        return p if isinstance(p, str) else None
    if isinstance(g, (list, tuple)) and g and isinstance(g[0], str):
        return g[0]
    return None


def _first_text(x):
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    return x if isinstance(x, str) else (None if x is None else json.dumps(x))


def load(path: Path, store, report) -> None:
    """Load one samples file as one eval per filter (see the module docstring)."""
    task, stamp = _task_and_stamp(path)
    model = _model(path, task, stamp)
    rows = []
    for line, obj in iter_jsonl(path, report):
        metrics = obj.get("metrics") if isinstance(obj.get("metrics"), list) else []
        names = [m for m in metrics if m in obj] or [m for m in _PREFERRED if m in obj]
        if not names:
            report.skip(_("no per-sample metric"), line=line, field_name="metrics")
            continue
        try:
            correct = parse_correct(obj[names[0]])
            if correct is None:
                raise ValueError("missing")
        except ValueError as e:
            report.skip(str(e), line=line, field_name=names[0])
            continue
        doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else {}
        category = next((str(doc[k]) for k in ("subject", "type", "category") if doc.get(k)),
                        task)
        filt = str(obj.get("filter") or "none")
        rows.append({
            "local_id": str(obj.get("doc_id", line)), "_line": line, "_filter": filt,
            "correct": correct, "model": model,
            "benchmark": task, "category": category, "prompt": _prompt(obj.get("arguments")),
            "prediction": _first_text(obj.get("filtered_resps", obj.get("resps"))),
            "reference": None if obj.get("target") is None else str(obj.get("target")),
            "extra": {"metric": names[0], "filter": filt, "doc_hash": obj.get("doc_hash"),
                      "lm_eval_prompt_hash": obj.get("prompt_hash")},
        })
    if not rows:
        raise InputError(path, _("no usable sample rows") + first_problem(report))
    report.columns = {_("<first metric>"): "correct", "arguments.gen_args_0.arg_0": "prompt",
                      "filtered_resps": "prediction", "target": "reference"}
    by_filter: dict[str, list[dict]] = {}
    for r in rows:
        by_filter.setdefault(r.pop("_filter"), []).append(r)
    for filt, frows in by_filter.items():
        base = f"lm_eval:{task}" if len(by_filter) == 1 else f"lm_eval:{task}:{filt}"
        eval_id = register_eval(store, report, path, NAME, base, model=model, benchmark=task)
        insert_cases(store, report, eval_id, frows)
