"""Names the user reads. Metrics: the one display-name table (LABELS, label, unit) that the
panels, the reports and report.md share ("scheduling delay (ms)", never "queue_ms").
Files: short names for input files that stay distinct: the fewest trailing path parts that tell
each path from every other one ("v0.2.1/naive_output_1.csv" and "v0.3.0/naive_output_1.csv",
never two "naive_output_1.csv"), as editors name tabs of files that share a name. Qt-free:
the Inputs panel, the reports and the dashboard footer show the same names."""
from __future__ import annotations

from pathlib import PurePath

from .i18n import N_, _, language
from .schema import CONTEXT_METRICS, REQUEST_METRICS

COUNT_FEATURES = ("num_preemptions", "prompt_tokens", "completion_tokens", "cached_prompt_tokens")

LABELS = {
    "kv_cache_hit_rate": N_("KV-cache hit rate"),
    "num_preemptions": N_("preemptions"),
    "tpot_ms": N_("TPOT"),
    "batch_size": N_("batch size"),
    "ttft_ms": N_("TTFT"),
    "queue_ms": N_("scheduling delay"),
    "e2e_ms": N_("E2E latency"),
    "prefill_ms": N_("prefill"),
    "decode_ms": N_("decode"),
    "prompt_tokens": N_("prompt tokens"),
    "completion_tokens": N_("output tokens"),
    "cached_prompt_tokens": N_("cached prompt tokens"),
    "engine_running": N_("engine running requests"),
    "engine_waiting": N_("engine waiting requests"),
    "engine_kv_usage": N_("engine KV-cache usage"),
    "engine_prefix_hit_rate": N_("engine prefix-cache hit rate"),
    "batch_entropy": N_("batch-size entropy"),
    "batch_size_entropy": N_("batch-size entropy"),
    "itl_ms": N_("ITL"),
    "prompt_chars": N_("prompt length"),
    "prediction_chars": N_("answer length"),
    "badcase_share": N_("badcase share"),
    "finish_reason_length": N_("finish reason length"),
    "errored": N_("errored"),
    "preempted": N_("preempted"),
}


def unit(metric: str) -> str:
    """The unit of a metric ("ms", "ms/token", "" for ratios and counts), as the reader reads it:
    text lengths in "chars" / 字符 (the conclusion's word), entropies in bits / 比特."""
    if metric in ("batch_size_entropy", "batch_entropy"):
        return _("bits")
    if metric in REQUEST_METRICS:
        return REQUEST_METRICS[metric]
    if metric in CONTEXT_METRICS:
        return CONTEXT_METRICS[metric]
    if metric.endswith("_chars"):
        return _("chars")
    if metric.endswith("_ms"):
        return "ms"
    if metric.endswith("_s"):
        return "s"
    return ""


def label(metric: str, with_unit: bool = True) -> str:
    """Readable name of a metric, with its unit in brackets: "TPOT (ms/token)"."""
    name = _(LABELS[metric]) if metric in LABELS else metric.replace("_", " ")
    u = unit(metric)
    return f"{name} ({u})" if with_unit and u and not name.endswith(u) else name


def condition_text(feature: str, op: str, threshold: float, fmt=None) -> str:
    """A split condition in words: 'TPOT > 18.3 ms/token'; counts read as counts
    ("preemptions = 0", "preemptions ≥ 1", never "preemptions <= 0.5" or "<= 0")."""
    fmt = fmt or (lambda v, _m: f"{v:g}")
    name = label(feature, False)
    if feature in COUNT_FEATURES:
        k = int(threshold // 1)  # x <= 2.5 is x <= 2; x > 2.5 is x >= 3
        if op in ("<=", "≤"):
            return f"{name} = 0" if k <= 0 else f"{name} ≤ {k:,}"
        return f"{name} ≥ {k + 1:,}"
    return f"{name} {'≤' if op in ('<=', '≤') else '>'} {fmt(threshold, feature)}"


def distinct_names(paths: list[str]) -> dict[str, str]:
    """path -> its shortest distinguishing tail of path parts ('/'-joined). Equal paths share
    a name; a path that is a folder keeps its own name."""
    parts = {p: PurePath(str(p).rstrip("/") or str(p)).parts or (str(p),) for p in paths}
    depth = {p: 1 for p in parts}
    while True:
        tails: dict[tuple, set[str]] = {}
        for p, ps in parts.items():
            tails.setdefault(ps[-depth[p]:], set()).add(p)
        clash = [p for group in tails.values() if len(group) > 1 for p in group
                 if depth[p] < len(parts[p])]
        if not clash:
            break
        for p in clash:
            depth[p] += 1
    return {p: "/".join(ps[-depth[p]:]).replace("//", "/") for p, ps in parts.items()}


# the counted nouns in the current language ("{n} cases" -> "{n} 个 case")
PLURALS = (N_("{n} cases"), N_("{n} badcases"), N_("{n} preemptions"), N_("{n} inter-token gaps"),
           N_("{n} requests"), N_("{n} tokens"), N_("{n} runs"), N_("{n} files"), N_("{n} rows"),
           N_("{n} tests"), N_("{n} evals"), N_("{n} benchmarks"), N_("{n} engines"))


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """'1 case', '2 cases', '1,204 requests' (nouns: an irregular plural); in Chinese the
    catalogue's "{n} cases" ("{n} 个 case")."""
    key = "{n} " + (nouns or noun + "s")
    if language() != "en" and key in PLURALS:
        return _(key).format(n=f"{n:,}")
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def more(names: list[str], shown: int, sep: str = ", ") -> str:
    """The first `shown` names joined, then "and N more" for the rest."""
    head = sep.join(names[:shown])
    rest = len(names) - shown
    return _("{head} and {rest} more").format(head=head, rest=f"{rest:,}") if rest > 0 else head



# What every place that shows the simulated demo says about it (report meta, window, About).
DEMO_NOTE = N_("Simulated demo workload: a synthetic multi-turn arrival trace fitted to the public "
               "Mooncake conversation trace, replayed through Trace Explorer's engine model for two "
               "engine versions, with generated maths eval cases and a planted effect; no real "
               "engine produced these numbers.")
