"""A run's workload: what it was asked to do, never how it did it (DESIGN "Comparing runs").

The workload of a run is (dataset or benchmark, model, request rate or concurrency, input and
output length). Each part comes from the run's settings (`runs.config`, written by the readers:
request_rate / concurrency / dataset / input_len / output_len under any of the spellings in
KEYS) and, for the lengths, from its requests (median prompt and completion tokens of the
successful requests). The user's `workload` (the Runs tab, `set_workload`) wins over all of it.

Runs with the same key parts (dataset, model, rate, concurrency) are one workload when their
median lengths are within LENGTH_TOLERANCE of each other (a tokenizer or a few truncated answers
never split a workload; 10000-in and 30000-in always do). An output length that no setting asked
for and that is only measured is how the engine answered (aibrix's KV-offload configurations
stop at a median of 51 tokens where the others give 100): a confounder the pair names, not a
different workload. What is left of a run's settings once
the workload is taken out (a configuration name, max_num_seqs, ...) is its `setting`: runs of one
workload, engine, version and setting are repeats of one configuration.
"""
from __future__ import annotations

import json
import math
from typing import Any

from explorer.core.i18n import N_, _

# the spellings of each workload setting in runs.config (readers keep the tool's own key)
KEYS = {
    "dataset": ("dataset", "dataset_name", "dataset_path", "data", "benchmark", "task"),
    "model": ("model", "model_id", "model_name", "served_model_name", "tokenizer"),
    "request_rate": ("request_rate", "request_rate_qps", "qps", "rate", "arrival_rate"),
    "concurrency": ("concurrency", "max_concurrency", "num_concurrent_requests", "parallel",
                    "num_clients", "batch_size"),
    "input_len": ("input_len", "random_input_len", "input_length", "input_tokens", "isl",
                  "prompt_tokens", "mean_input_tokens", "sonnet_input_len"),
    "output_len": ("output_len", "random_output_len", "output_length", "output_tokens", "osl",
                   "max_tokens", "mean_output_tokens", "sonnet_output_len"),
}
USER_KEY = "workload"            # runs.config key of the user's workload name
LENGTH_TOLERANCE = 0.15          # relative difference of median lengths within one workload


def _num(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def parse_config(text: Any) -> dict:
    if isinstance(text, dict):
        return text
    if not text:
        return {}
    try:
        out = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def _lookup(config: dict, key: str) -> tuple[str | None, Any]:
    """(the config key used, its value) of workload part `key`, searching one nested level."""
    flat = dict(config)
    for v in config.values():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                flat.setdefault(k2, v2)
    for k in KEYS[key]:
        if flat.get(k) not in (None, "", [], {}):
            return k, flat[k]
    return None, None


def _dataset(benchmark: str | None, config: dict) -> str | None:
    """The benchmark name without the segments that name the run's own settings (aibrix's
    "ps_experiment/naive/0.5" is dataset "ps_experiment" with config "naive" at 0.5 QPS)."""
    if not benchmark:
        return None
    own = {str(v) for v in config.values() if isinstance(v, (str, int, float))}
    own |= {f"{_num(v):g}" for v in config.values() if _num(v) is not None}
    parts = [p for p in str(benchmark).split("/") if p not in own]
    return "/".join(parts) or str(benchmark)


def run_workload(run: dict, lengths: dict | None = None) -> dict:
    """{dataset, model, request_rate, concurrency, input_len, output_len, source, user} of one
    run (a row of `runs` with its config; lengths: {input_len, output_len} medians of its
    requests). source says where each part came from ("config: <key>", "requests", "run")."""
    config = parse_config(run.get("config"))
    out: dict[str, Any] = {"user": config.get(USER_KEY) or None}
    source: dict[str, str] = {}
    for part in ("dataset", "model", "request_rate", "concurrency", "input_len", "output_len"):
        k, v = _lookup({c: x for c, x in config.items() if c != USER_KEY}, part)
        if part in ("request_rate", "concurrency", "input_len", "output_len"):
            v = _num(v)
        if v is not None:
            source[part] = f"config: {k}"
        elif part in ("input_len", "output_len") and lengths and _given(lengths.get(part)):
            v, source[part] = float(lengths[part]), "requests"
        elif part == "dataset":
            v = _dataset(run.get("benchmark") if _given(run.get("benchmark")) else None, config)
            if v is not None:
                source[part] = "run"
        elif part == "model" and _given(run.get("model")):
            v, source[part] = run["model"], "run"
        out[part] = v if _given(v) else None
    out["source"] = source
    return out


def setting(run: dict) -> dict:
    """The run's settings that are not its workload (configuration name, max_num_seqs, ...)."""
    config = parse_config(run.get("config"))
    used = {k for ks in KEYS.values() for k in ks} | {USER_KEY}
    return {k: v for k, v in sorted(config.items()) if k not in used
            and isinstance(v, (str, int, float, bool))}


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= LENGTH_TOLERANCE * max(abs(a), abs(b), 1.0)


def _given(v: Any) -> bool:
    """A value that is there: not None, not NaN (a run without a model or requests read from
    the store gave NaN, shown as "nan, nan" in the Runs and Compare tabs)."""
    return v is not None and not (isinstance(v, float) and v != v) and v != ""


def _fmt(v: Any) -> str:
    if v is None:
        return "?"
    return f"{v:,g}" if isinstance(v, float) else str(v)   # 21,073 tokens, as every count


def describe(w: dict) -> str:
    """One line: "ps_experiment, 21073 in / 100 out tokens, 0.5 req/s"."""
    if w.get("user"):
        return str(w["user"])
    parts = [str(x) for x in (w.get("dataset"), w.get("model")) if _given(x)]
    if w.get("input_len") is not None and (w.get("output_len") is None
                                           or _measured(w, "output_len")):
        parts.append(_("{i} tokens in").format(i=_fmt(w.get("input_len"))))
    elif w.get("input_len") is not None or w.get("output_len") is not None:
        parts.append(_("{i} in / {o} out tokens").format(i=_fmt(w.get("input_len")),
                                                        o=_fmt(w.get("output_len"))))
    if w.get("request_rate") is not None:
        parts.append(_("{x} req/s").format(x=_fmt(w["request_rate"])))
    if w.get("concurrency") is not None:
        parts.append(_("concurrency {x}").format(x=_fmt(w["concurrency"])))
    return ", ".join(parts) or _("unknown workload")


PART_NAMES = {"dataset": N_("dataset"), "model": N_("model"),
              "request_rate": N_("request rate"), "concurrency": N_("concurrency"),
              "input_len": N_("input length"), "output_len": N_("output length"),
              "user": N_("workload")}


def _measured(w: dict, part: str) -> bool:
    return (w.get("source") or {}).get(part) == "requests"


def differences(a: dict, b: dict) -> list[dict]:
    """How two workloads differ: [{part, a, b}] (lengths only beyond the tolerance). An output
    length both runs only measured (no setting asked for it) is how the engine answered, not
    what it was asked: a confounder (confounders()), never a workload difference."""
    if a.get("user") or b.get("user"):  # the user's name says it all
        return [] if a.get("user") == b.get("user") else [
            {"part": "user", "a": a.get("user"), "b": b.get("user")}]
    out = []
    for part in ("dataset", "model", "request_rate", "concurrency", "input_len",
                 "output_len"):
        if part == "output_len" and _measured(a, part) and _measured(b, part):
            continue
        x, y = a.get(part), b.get(part)
        same = _close(x, y) if part in ("input_len", "output_len") else x == y
        if not same:
            out.append({"part": part, "a": x, "b": y})
    return out


def confounders(a: dict, b: dict) -> list[dict]:
    """Measured output lengths that differ beyond the tolerance: [{part, a, b}]."""
    x, y = a.get("output_len"), b.get("output_len")
    if _measured(a, "output_len") and _measured(b, "output_len") and not _close(x, y):
        return [{"part": "output_len", "a": x, "b": y}]
    return []


def describe_differences(diffs: list[dict]) -> str:
    """"input length 10000 vs 30000; output length 500 vs 100"."""
    return "; ".join(_("{part} {a} vs {b}").format(part=_(PART_NAMES[d["part"]]), a=_fmt(d["a"]),
                                                  b=_fmt(d["b"])) for d in diffs)


def group(workloads: dict[str, dict]) -> dict[str, str]:
    """{run_id: workload id} ("w1", "w2", ...): runs whose workloads have no difference
    (differences() == []) with the group's first run, in run order."""
    groups: list[tuple[str, dict]] = []
    out = {}
    for run_id, w in workloads.items():
        for gid, first in groups:
            if not differences(first, w):
                out[run_id] = gid
                break
        else:
            gid = f"w{len(groups) + 1}"
            groups.append((gid, w))
            out[run_id] = gid
    return out


def set_workload(store, run_id: str, name: str | None) -> None:
    """The user's workload name of one run ('' or None clears it), kept in runs.config (so a
    saved session keeps it); runs given the same name are one workload."""
    config = parse_config(store.scalar("SELECT config FROM runs WHERE run_id = ?", [run_id]))
    name = (name or "").strip()
    if name:
        config[USER_KEY] = name
    else:
        config.pop(USER_KEY, None)
    store.execute("UPDATE runs SET config = ? WHERE run_id = ?",
                  [json.dumps(config) if config else None, run_id])
