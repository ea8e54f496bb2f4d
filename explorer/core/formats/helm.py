"""HELM run directories (stanford-crfm/helm benchmark_output/runs/<suite>/<run>/).

A HELM run carries both sides, so it loads as one eval AND one run, bound exactly:
- per_instance_stats.json: a list of {instance_id, train_trial_index, perturbation?, stats:
  [{name: {name, split}, count, sum, mean, ...}]}. Correctness = the mean of the first of
  exact_match, quasi_exact_match, prefix_exact_match, quasi_prefix_exact_match, math_equiv,
  math_equiv_chain_of_thought, f1_score (>= 0.5 is correct). Requests: num_prompt_tokens ->
  prompt_tokens, num_completion_tokens (else num_output_tokens) -> completion_tokens,
  inference_runtime (s) -> e2e_ms (x1000), finish_reason_* (the one with sum 1) ->
  finish_reason; HELM's client batch_size stat is kept in extra.
- scenario_state.json: request_states [{instance {id, input.text, references [{output.text,
  tags}], split, perturbation?}, train_trial_index, request {prompt, model}, result
  {completions [{text}], request_time (s), request_datetime (unix s)}}]: prompt (as sent),
  prediction (first completion), reference (the references tagged "correct"), arrival_s =
  request_datetime; events arrived / finished (arrival + inference_runtime).
- run_spec.json (optional): name, adapter_spec.model, scenario_spec.args.subject (category);
  scenario.json (optional): the benchmark name.
The request id is the instance id (with "/t<trial>" and "/<perturbation>" only when needed to
make it unique); cases.request_id is that same id and cases.extra.run_id names the run, so
association binds every case at level 1 to its own run's request.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..association import prompt_hash
from ..errors import InputError
from .base import Sniff, read_json, side_json
from ._common import first_problem
from .generic_eval import insert_cases, register_eval
from ..i18n import _

NAME = "helm"
KIND = "eval"
CLAIMS_FOLDER = True
_CORRECTNESS = ("exact_match", "quasi_exact_match", "prefix_exact_match",
                "quasi_prefix_exact_match", "math_equiv", "math_equiv_chain_of_thought",
                "f1_score")
_FINISH = ("length", "stop", "endoftext", "unknown")


def _run_dir(path: Path) -> Path | None:
    d = path if path.is_dir() else path.parent
    if (d / "per_instance_stats.json").is_file() and (d / "scenario_state.json").is_file():
        return d
    return None


def input_root(path: Path) -> Path:
    """The run folder a per_instance_stats.json loads (the store hashes it: the file and its
    folder are the same input); `path` itself when it is not in a run folder."""
    return _run_dir(Path(path)) or Path(path)


def detect(sniff: Sniff) -> float:
    """0.95 for a folder holding per_instance_stats.json and scenario_state.json, and for the
    per_instance_stats.json file of such a folder (so walking a parent folder loads the run
    once); 0 otherwise."""
    if sniff.is_dir:
        return 0.95 if _run_dir(sniff.path) else 0.0
    if sniff.path.name == "per_instance_stats.json" and _run_dir(sniff.path):
        return 0.95 if '"instance_id"' in sniff.head else 0.5
    return 0.0


def _key(instance_id, trial, perturbation) -> tuple:
    name = perturbation.get("name") if isinstance(perturbation, dict) else None
    return (str(instance_id), int(trial or 0), name)


def _stats(entry: dict) -> dict[str, dict]:
    out = {}
    for s in entry.get("stats") or []:
        nm = s.get("name") or {}
        if isinstance(nm, dict) and nm.get("name") and not nm.get("perturbation"):
            out.setdefault(nm["name"], s)
    return out


def _mean(stat: dict | None) -> float | None:
    if not stat or not stat.get("count"):
        return None
    if stat.get("mean") is not None:
        return float(stat["mean"])
    return float(stat["sum"]) / float(stat["count"])


class _Run(NamedTuple):
    """What the run folder says of the whole run (run_spec.json, scenario.json, the adapter)."""
    adapter: dict
    model: str | None
    benchmark: str | None
    subject: str | None
    label: str


def _read_run(d: Path) -> tuple[list, dict]:
    """per_instance_stats.json (a list) and scenario_state.json (with request_states)."""
    per_instance = read_json(d / "per_instance_stats.json")
    state = read_json(d / "scenario_state.json")
    if not isinstance(per_instance, list):
        raise InputError(d / "per_instance_stats.json", _("expected a JSON list of instances"))
    if not isinstance(state, dict) or not isinstance(state.get("request_states"), list):
        raise InputError(d / "scenario_state.json", _("no request_states list"))
    return per_instance, state


def _run_meta(d: Path, state: dict) -> _Run:
    spec = side_json(d / "run_spec.json") or {}
    scen = side_json(d / "scenario.json") or {}
    adapter = spec.get("adapter_spec") or state.get("adapter_spec") or {}
    return _Run(adapter=adapter, model=adapter.get("model"),
                benchmark=scen.get("name") or (spec.get("name", "").split(":")[0] or None),
                subject=((spec.get("scenario_spec") or {}).get("args") or {}).get("subject"),
                label=spec.get("name") or d.name)


def _request_states(state: dict) -> dict[tuple, dict]:
    """_key -> the first request state of that instance, trial and perturbation."""
    states = {}
    for rs in state["request_states"]:
        inst = rs.get("instance") or {}
        states.setdefault(_key(inst.get("id"), rs.get("train_trial_index"),
                               inst.get("perturbation")), rs)
    return states


def _has_trials(per_instance: list) -> bool:
    """More than one train_trial_index among the instances: request ids then name the trial."""
    keys = [_key(e.get("instance_id"), e.get("train_trial_index"), e.get("perturbation"))
            for e in per_instance if isinstance(e, dict)]
    return len({k[1] for k in keys}) > 1


def _count(value: float | None) -> int | None:
    return None if value is None else int(round(value))


def _instance_rows(rid: str, st: dict[str, dict], metric: str, rs: dict, run: _Run,
                   run_id: str) -> tuple[dict, dict, list[tuple]]:
    """The case, the request and the request events of one instance with its stats `st`,
    correctness `metric` and request state `rs` ({} when the scenario state lacks it)."""
    req, res = rs.get("request") or {}, rs.get("result") or {}
    inst = rs.get("instance") or {}
    comps = res.get("completions") or []
    pred = comps[0].get("text") if comps and isinstance(comps[0], dict) else None
    refs = [((r.get("output") or {}).get("text")) for r in inst.get("references") or []
            if "correct" in (r.get("tags") or [])]
    arrival = res.get("request_datetime")
    arrival = float(arrival) if isinstance(arrival, (int, float)) else None
    runtime = _mean(st.get("inference_runtime"))
    if runtime is None and isinstance(res.get("request_time"), (int, float)):
        runtime = float(res["request_time"])
    pt = _mean(st.get("num_prompt_tokens"))
    ct = _mean(st.get("num_completion_tokens"))
    if ct is None:
        ct = _mean(st.get("num_output_tokens"))
    finish = next((f for f in _FINISH if (_mean(st.get(f"finish_reason_{f}")) or 0) >= 1),
                  None)
    prompt = req.get("prompt")
    case = {
        "local_id": rid, "correct": _mean(st[metric]) >= 0.5, "model": run.model,
        "benchmark": run.benchmark, "category": run.subject or run.benchmark, "prompt": prompt,
        "prediction": pred, "reference": " | ".join(r for r in refs if r) or None,
        "request_id": rid, "timestamp_s": arrival,
        "prompt_tokens": _count(pt), "completion_tokens": _count(ct),
        "extra": {"run_id": run_id, "metric": metric, "split": inst.get("split"),
                  "question": (inst.get("input") or {}).get("text")},
    }
    request = {
        "run_id": run_id, "request_id": rid, "arrival_s": arrival,
        "prompt_tokens": _count(pt), "completion_tokens": _count(ct),
        "e2e_ms": None if runtime is None else runtime * 1000.0,
        "finish_reason": finish, "prompt_hash": prompt_hash(prompt),
        "extra": json.dumps({"helm_batch_size": _mean(st.get("batch_size")),
                             "cached": res.get("cached")}),
    }
    events = []
    if arrival is not None:
        events.append((run_id, rid, arrival, "arrived", None))
        if runtime is not None:
            events.append((run_id, rid, arrival + runtime, "finished", finish))
    return case, request, events


def _rows(per_instance: list, state: dict, run: _Run, run_id: str,
          report) -> tuple[list[dict], list[dict], list[tuple]]:
    """Cases, requests and request events of every instance with a correctness stat; the
    others are skipped in `report` with their index."""
    states = _request_states(state)
    trials = _has_trials(per_instance)
    cases, requests, events = [], [], []
    for i, entry in enumerate(per_instance):
        if not isinstance(entry, dict) or entry.get("instance_id") is None:
            report.skip(_("instance without instance_id"), field_name=f"[{i}]")
            continue
        key = _key(entry["instance_id"], entry.get("train_trial_index"),
                   entry.get("perturbation"))
        st = _stats(entry)
        metric = next((m for m in _CORRECTNESS if _mean(st.get(m)) is not None), None)
        if metric is None:
            report.skip(_("no correctness stat ({stats}, ...)").format(stats=", ".join(_CORRECTNESS[:3])),
                        field_name=f"[{i}].stats")
            continue
        rid = key[0] + (f"/t{key[1]}" if trials else "") + (f"/{key[2]}" if key[2] else "")
        case, request, evs = _instance_rows(rid, st, metric, states.get(key, {}), run, run_id)
        cases.append(case)
        requests.append(request)
        events += evs
    return cases, requests, events


def _store_run(store, report, path: Path, run_id: str, run: _Run, requests: list[dict],
               events: list[tuple]) -> None:
    """The run, its requests and its request events."""
    store.add_run(run_id, source_path=str(path), source_sha256=report.sha256, format=NAME,
                  engine=run.adapter.get("model_deployment"), model=run.model, label=run.label,
                  benchmark=run.benchmark,
                  config={"adapter_spec": run.adapter} if run.adapter else None)
    report.run_ids.append(run_id)
    rq = pd.DataFrame(requests)
    for c in ("prompt_tokens", "completion_tokens"):
        rq[c] = pd.array(rq[c].tolist(), dtype="Int64")
    for c in ("arrival_s", "e2e_ms"):
        rq[c] = pd.to_numeric(rq[c]).astype("float64")
    store.append("requests", rq)
    if events:
        store.append("request_events", pd.DataFrame(
            events, columns=["run_id", "request_id", "ts_s", "kind", "detail"]))


def load(path: Path, store, report) -> None:
    """Load one HELM run directory (or its per_instance_stats.json) as an eval and a run."""
    d = _run_dir(Path(path))
    if d is None:
        raise InputError(path, _("not a HELM run folder (needs per_instance_stats.json and "
                                 "scenario_state.json)"))
    per_instance, state = _read_run(d)
    run = _run_meta(d, state)
    run_id = store.new_id("runs", "run_id", f"helm:{d.name}")
    cases, requests, events = _rows(per_instance, state, run, run_id, report)
    if not cases:
        raise InputError(d / "per_instance_stats.json", _("no instance with a correctness stat")
                         + first_problem(report))
    _store_run(store, report, path, run_id, run, requests, events)
    report.columns = {"stats.<" + "|".join(_CORRECTNESS[:2]) + "|...>": "correct",
                      "stats.num_prompt_tokens": "prompt_tokens",
                      "stats.num_completion_tokens": "completion_tokens",
                      "stats.inference_runtime": "e2e_ms (x1000)",
                      "result.request_datetime": "arrival_s", "request.prompt": "prompt",
                      "instance_id": "request_id"}
    eval_id = register_eval(store, report, path, NAME, f"helm:{d.name}", model=run.model,
                            benchmark=run.benchmark)
    insert_cases(store, report, eval_id, cases)
