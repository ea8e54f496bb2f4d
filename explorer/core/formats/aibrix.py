"""aibrix per-request benchmark CSV (vllm-project/aibrix, benchmarks/scenarios/ps-experiment).

Source format: columns prompt_tokens, generation_tokens, ttft (s), generation_time (s),
user_id, question_id, launch_time, finish_time (unix s). The file name is
`<config>_output_<qps>.csv` (configuration and request rate); the parent folder names the
release (ps_experiment_v0.3.0_20250519 -> engine_version "0.3.0").
Mapping: ttft_ms = ttft x 1000; tpot_ms = generation_time / (generation_tokens - 1) x 1000
(NULL for a single output token); decode_ms = generation_time x 1000; e2e_ms = (finish_time -
launch_time) x 1000; arrival_s = launch_time (unix s); tenant = user_id; request_id =
"u<user_id>-q<question_id>". benchmark = "<experiment>/<config>/<qps>" so that one
configuration at one rate compares across releases.
A row with text in a numeric column or a value out of range (_common.RANGES: a negative
latency or token count, finish_time before launch_time, a token count beyond the store's
INTEGER) is skipped once, its reason naming the line and every bad field.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..i18n import _
from .base import Sniff
from ._common import (no_rows, range_mask, range_problems, read_text_csv, register_run,
                      version_rule)

NAME = "aibrix"
KIND = "trace"
_COLS = ("prompt_tokens", "generation_tokens", "ttft", "generation_time")
_NUMERIC = ("prompt_tokens", "generation_tokens", "ttft", "generation_time", "launch_time",
            "finish_time")
# canonical column -> source column (and scale), named by the range check's reasons
_FIELDS = {"prompt_tokens": "prompt_tokens", "completion_tokens": "generation_tokens",
           "ttft_ms": ("ttft", 1000.0),
           "tpot_ms": ("generation_time / (generation_tokens - 1)", 1000.0),
           "decode_ms": ("generation_time", 1000.0), "e2e_ms": ("finish_time - launch_time", 1000.0)}


def detect(sniff: Sniff) -> float:
    """High when the CSV header has aibrix's prompt_tokens, generation_tokens, ttft,
    generation_time columns."""
    lines = sniff.first_lines(1)
    if not lines or lines[0].lstrip().startswith(("{", "[")):
        return 0.0
    cols = {c.strip().strip('"') for c in lines[0].split(",")}
    if all(c in cols for c in _COLS):
        return 0.95 if "launch_time" in cols else 0.8
    return 0.0


def parse_name(path: Path) -> tuple[str, float | None]:
    """(config, request rate in req/s) from `<config>_output_<qps>.csv`; (stem, None) else."""
    m = re.match(r"^(?P<cfg>.+?)_output_(?P<qps>\d+(?:\.\d+)?)$", path.stem)
    if not m:
        return path.stem, None
    return m.group("cfg"), float(m.group("qps"))


def load(path: Path, store, report) -> None:
    """Load one aibrix per-request CSV as one run (engine "aibrix")."""
    df = read_text_csv(path, _COLS)
    vals, wrong = {}, {}
    for c in _NUMERIC:
        if c not in df:
            vals[c] = pd.Series(float("nan"), index=df.index)
            continue
        raw = df[c].str.strip()
        vals[c] = pd.to_numeric(raw, errors="coerce")
        wrong[c] = vals[c].isna() & (raw != "")
    gen = vals["generation_tokens"]
    uid = df.get("user_id", pd.Series("", index=df.index))
    qid = df.get("question_id", pd.Series("", index=df.index))
    rid = ("u" + uid + "-q" + qid) if "user_id" in df and "question_id" in df else \
        (df.index + 1).astype(str).to_series(index=df.index)
    canon = pd.DataFrame({  # canonical units, token counts still float (checked before Int64)
        "request_id": rid.astype(str),
        "arrival_s": vals["launch_time"],
        "prompt_tokens": vals["prompt_tokens"].round(),
        "completion_tokens": gen.round(),
        "ttft_ms": vals["ttft"] * 1000.0,
        "tpot_ms": (vals["generation_time"] / (gen - 1)).where(gen > 1) * 1000.0,
        "decode_ms": vals["generation_time"] * 1000.0,
        "e2e_ms": (vals["finish_time"] - vals["launch_time"]) * 1000.0,
        "tenant": uid.where(uid != "", None) if "user_id" in df else None,
    })
    # a row with text in a numeric column or a value out of range (_common.RANGES) is skipped
    # once, its reason naming every bad field; reasons in line order
    bad = range_mask(canon)
    for m in wrong.values():
        bad |= m
    for i in bad[bad].index[:report.MAX_REASONS]:
        whys = [f"field '{c}': not a number: {df[c][i]!r}" for c, m in wrong.items() if m[i]]
        whys += [f"field '{n}': {w}" for n, w in range_problems(canon.loc[i].to_dict(), _FIELDS)]
        report.skip("; ".join(whys), line=int(i) + 2)
    report.rows_skipped += max(0, int(bad.sum()) - report.MAX_REASONS)
    if bad.all():
        raise no_rows(path, report)
    rows = canon[~bad].copy()
    for c in ("prompt_tokens", "completion_tokens"):
        rows[c] = rows[c].astype("Int64")
    config, qps = parse_name(path)
    found = version_rule(path)
    version = found[0] if found else None
    exp = re.sub(r"_v\d+(\.\d+)*.*$", "", path.parent.name) or "aibrix"
    run_id = register_run(store, report, path, NAME,
                          f"aibrix:{version + ':' if version else ''}{path.stem}",
                          engine="aibrix", engine_version=version, label=path.stem,
                          version_source=found[1] if found else None,
                          benchmark=f"{exp}/{config}/{qps:g}" if qps is not None else f"{exp}/{config}",
                          config={"config": config, "request_rate_qps": qps})
    rows.insert(0, "run_id", run_id)
    report.rows_loaded += store.append("requests", rows)
    report.columns.update({
        "ttft": "ttft_ms (x1000)",
        "generation_time, generation_tokens": "tpot_ms = generation_time / (generation_tokens - 1) (x1000)",
        "generation_time": "decode_ms (x1000)",
        "finish_time - launch_time": "e2e_ms (x1000)",
        "launch_time": "arrival_s (unix s)",
        "prompt_tokens": "prompt_tokens", "generation_tokens": "completion_tokens",
        "user_id": "tenant", "user_id, question_id": "request_id",
        _("(file name)"): "runs.config: config, request_rate_qps",
        _("(parent folder)"): "runs.engine_version",
    })
