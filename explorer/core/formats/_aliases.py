"""The alias table of the generic CSV / Parquet / JSONL trace format.

A source column is matched after normalisation (lower case; spaces, '-', '.', '/' -> '_'):
first against FULL_NAMES (names that carry their own unit), else split into base + unit
suffix and the base looked up in ALIASES. Unit suffixes (UNIT_SUFFIXES) give the scale to the
canonical unit: times -> ms (`_s`, `_sec`, `_seconds` x1000; `_ms` x1; `_us` /1000; `_ns` /1e6),
arrival -> s, rates `_pct` / `_percent` /100. A time column without a unit suffix has its unit
guessed from the data and the guess is written into the load report (see BARE_TIME_SECONDS_BELOW).

| canonical            | aliases (base names)                                                  |
|----------------------|-----------------------------------------------------------------------|
"""
from __future__ import annotations

import re
from functools import lru_cache

# canonical column -> base names (without unit suffix)
ALIASES: dict[str, tuple[str, ...]] = {
    "request_id": ("request_id", "req_id", "requestid", "id", "x_request_id", "gen_ai_request_id",
                   "trace_id", "rid", "uuid"),
    "arrival_s": ("arrival", "arrival_s", "arrival_time", "arrived_at", "timestamp", "ts",
                  "start_time", "launch_time", "send_time", "request_start", "created",
                  "created_at", "time", "submit_time"),
    "prompt_tokens": ("prompt_tokens", "input_tokens", "input_len", "input_length", "prompt_len",
                      "prompt_length", "num_prompt_tokens", "num_input_tokens", "context_tokens",
                      "isl", "input_sequence_length", "number_input_tokens", "n_prompt_tokens"),
    "completion_tokens": ("completion_tokens", "output_tokens", "output_len", "output_length",
                          "generation_tokens", "generated_tokens", "num_output_tokens",
                          "num_completion_tokens", "osl", "output_sequence_length",
                          "number_output_tokens", "decode_tokens", "n_completion_tokens"),
    "cached_prompt_tokens": ("cached_prompt_tokens", "cached_tokens", "num_cached_tokens",
                             "prefix_cached_tokens", "cache_hit_tokens", "cache_read_input_tokens"),
    "kv_cache_hit_rate": ("kv_cache_hit_rate", "cache_hit_rate", "prefix_cache_hit_rate",
                          "prefix_hit_rate", "kv_hit_rate", "hit_rate"),
    "ttft_ms": ("ttft", "time_to_first_token", "first_token_latency", "first_token_time"),
    "tpot_ms": ("tpot", "time_per_output_token", "inter_token_latency", "itl", "mean_itl",
                "avg_itl", "tbt", "time_between_tokens", "decode_per_token", "tpot_avg", "avg_tpot",
                "mean_tpot", "mean_tbt", "avg_tbt"),
    "e2e_ms": ("e2e", "e2e_latency", "end_to_end_latency", "e2el", "latency", "request_latency",
               "total_latency", "response_time", "ttlt", "time_to_last_token"),
    "queue_ms": ("queue", "queue_time", "queue_latency", "time_in_queue", "queueing_time",
                 "queuing_time", "scheduling_delay", "sched_delay", "waiting_time", "wait_time",
                 "queueing_delay", "queuing_delay", "queue_delay"),
    "prefill_ms": ("prefill", "prefill_time", "prefill_latency", "time_in_prefill"),
    "decode_ms": ("decode", "decode_time", "decode_latency", "time_in_decode", "generation_time"),
    "num_preemptions": ("num_preemptions", "preemptions", "preemption_count", "num_preempted",
                        "preempted"),
    "batch_size": ("batch_size", "running_batch", "mean_batch_size", "avg_batch_size",
                   "running_batch_size"),
    "finish_reason": ("finish_reason", "stop_reason"),
    "error": ("error", "error_msg", "error_message", "err", "error_code", "error_type"),
    "prompt_hash": ("prompt_hash",),
    "tenant": ("tenant", "tenant_id", "user_id", "user", "customer", "customer_id"),
}
# full normalised names that carry an unusual unit: name -> (canonical, scale)
FULL_NAMES: dict[str, tuple[str, float]] = {
    "decode_ms_per_token": ("tpot_ms", 1.0),
    "ms_per_token": ("tpot_ms", 1.0),
    "time_per_output_token_ms": ("tpot_ms", 1.0),
}
# run-level columns: a single distinct value becomes runs.<field>
RUN_FIELDS: dict[str, tuple[str, ...]] = {
    "model": ("model", "model_name", "model_id", "served_model_name"),
    "engine": ("engine", "backend", "server"),
    "engine_version": ("engine_version", "version", "vllm_version", "sglang_version"),
    "benchmark": ("benchmark", "dataset", "dataset_name", "workload"),
}
# A request's own outcome (not an answer's correctness): a failure value ("false", "error",
# "timeout", an HTTP status >= 400, ...) gives the row an error when no error column says more.
OUTCOME = ("success", "succeeded", "is_success", "status", "status_code", "http_status",
           "request_status")
OUTCOME_FAILURES = ("false", "0", "no", "error", "failed", "failure", "fail", "timeout",
                    "cancelled", "canceled", "aborted")
# Correctness columns: they make a table an EVAL file, not a trace (one list, read by the
# generic trace table's detector and by the generic eval loader). `reward` is what RL / verifier
# pipelines write (1.0 / 0.0), `resolved` SWE-bench style harnesses; no "success" / "ok":
# traces use those for the request's own outcome.
CORRECTNESS = ("correct", "is_correct", "acc", "accuracy", "exact_match", "em", "passed",
               "is_right", "label_correct", "reward", "pass", "is_passed", "resolved",
               "is_resolved", "solved")
# Names that are correctness only when every value seen is 0 / 1 (or true / false): a `score`
# column elsewhere holds a grade or a latency score.
BINARY_CORRECTNESS = ("score",)

TIME_MS = ("ttft_ms", "tpot_ms", "e2e_ms", "queue_ms", "prefill_ms", "decode_ms")
UNIT_SUFFIXES: dict[str, float] = {  # scale to ms
    "ms": 1.0, "msec": 1.0, "millis": 1.0, "milliseconds": 1.0,
    "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0,
    "us": 1e-3, "usec": 1e-3, "micros": 1e-3, "ns": 1e-6, "nsec": 1e-6, "nanos": 1e-6,
}
PERCENT_SUFFIXES = ("pct", "percent", "perc")
# a time column without a unit suffix is taken as seconds when its median lies below this
# (ms otherwise): a median TTFT / E2E under 20 ms or a TPOT under 1 ms is implausible in ms.
BARE_TIME_SECONDS_BELOW = {"tpot_ms": 1.0, "default": 20.0}

_INDEX = {base: canon for canon, bases in ALIASES.items() for base in bases}


@lru_cache(maxsize=8192)  # every detector and loader asks again for the same few names
def normalise(name: str) -> str:
    """Lower-case a column name and turn spaces, '-', '.', '/', ':', brackets into '_'."""
    return re.sub(r"[\s\-./:()\[\]]+", "_", str(name).strip().lower()).strip("_")


@lru_cache(maxsize=8192)
def match(name: str) -> tuple[str, float | None, str] | None:
    """(canonical column, scale or None when the unit must be guessed, unit text) for a source
    column name, or None when it maps to nothing. Arrival scales convert to seconds."""
    n = normalise(name)
    if n in FULL_NAMES:
        canon, scale = FULL_NAMES[n]
        return canon, scale, "ms"
    if n in _INDEX and _INDEX[n] not in TIME_MS and _INDEX[n] != "arrival_s":
        return _INDEX[n], 1.0, ""
    base, _, unit = n.rpartition("_")
    if base and base in _INDEX:
        canon = _INDEX[base]
        if canon in TIME_MS and unit in UNIT_SUFFIXES:
            return canon, UNIT_SUFFIXES[unit], unit
        if canon == "arrival_s" and unit in UNIT_SUFFIXES:
            return canon, UNIT_SUFFIXES[unit] / 1000.0, unit
        if canon == "kv_cache_hit_rate" and unit in PERCENT_SUFFIXES:
            return canon, 0.01, "%"
    if n in _INDEX:
        return _INDEX[n], None, ""  # time without a unit suffix: guess from the data
    return None


def run_field(name: str) -> str | None:
    """The runs column a source column names (model, engine, ...), or None."""
    n = normalise(name)
    for f, names in RUN_FIELDS.items():
        if n in names:
            return f
    return None


def is_correctness(name: str) -> bool:
    """True for a correctness column (an eval file's label) by its name alone."""
    return normalise(name) in CORRECTNESS


def _binary(v) -> bool:
    if isinstance(v, bool):
        return True
    s = str(v).strip().lower()
    return s in ("0", "1", "0.0", "1.0", "true", "false")


def correctness_column(columns, records=()) -> str | None:
    """The correctness column among `columns` (the actual name): the first CORRECTNESS name
    present, else a BINARY_CORRECTNESS column whose values in `records` (dicts; None / '' pass
    over) are all 0 / 1 / true / false, with at least one value; None when there is none."""
    by_norm = {}
    for c in columns:
        by_norm.setdefault(normalise(c), c)
    for n in CORRECTNESS:
        if n in by_norm:
            return by_norm[n]
    for n in BINARY_CORRECTNESS:
        c = by_norm.get(n)
        if c is None:
            continue
        vals = [r.get(c) for r in records if r.get(c) is not None and str(r.get(c)).strip() != ""]
        if vals and all(_binary(v) for v in vals):
            return c
    return None


def _table() -> str:
    return "\n".join(f"| {c:<20} | {', '.join(b):<69} |" for c, b in ALIASES.items())


__doc__ += _table() + "\n"
