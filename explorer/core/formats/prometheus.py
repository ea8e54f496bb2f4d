"""Prometheus text exposition of vLLM (and SGLang) server metrics (into engine_stats).

Source: the Prometheus text format 0.0.4 (`name{label="v",...} value [timestamp_ms]`, with
`# HELP` / `# TYPE` comments) as served by vLLM's /metrics (vllm/engine/metrics.py,
vllm/v1/metrics/loggers.py). A file may hold one scrape or several concatenated: a new scrape
starts when a series repeats, or samples are grouped by their timestamp when they carry one.
Mapping, one row per scrape and engine (engine = vLLM V1's `engine` label, the data-parallel
rank, or SGLang's `dp_rank`; NULL when unlabelled); SGLang's per-rank copies of a gauge
(`tp_rank`, `pp_rank` labels: one engine) are averaged, then other label sets are summed for
counts and averaged for fractions:
  vllm:num_requests_running -> running; vllm:num_requests_waiting -> waiting;
  vllm:num_requests_swapped -> swapped; vllm:gpu_cache_usage_perc | vllm:kv_cache_usage_perc
  -> kv_usage_gpu (already 0..1); vllm:cpu_cache_usage_perc -> kv_usage_cpu;
  vllm:avg_prompt_throughput_toks_per_s / avg_generation_... (V0 gauges) -> prompt_tps / gen_tps;
  vllm:gpu_prefix_cache_hit_rate (V0 gauge; its -1 "no data" sentinel -> NULL) ->
  prefix_cache_hit_rate; SGLang: sglang:num_running_reqs, sglang:num_queue_reqs,
  sglang:token_usage, sglang:cache_hit_rate, sglang:gen_throughput.
Cumulative counters are differenced per engine between consecutive scrapes (a drop is a restart:
the count starts again from 0, as Prometheus' increase() treats it; the first scrape counts from
the server's start): num_preemptions = increase of vllm:num_preemptions_total;
prefix_cache_hit_rate (where no gauge gives it) = increase of vllm:prefix_cache_hits_total /
increase of vllm:prefix_cache_queries_total (V1; 0 queries: undefined, NULL);
prompt_tps / gen_tps (where no gauge gives them) = increase of vllm:prompt_tokens_total /
generation_tokens_total over the seconds between two timestamped scrapes.
ts_s = sample timestamp / 1000 (unix s), NULL when the scrape has none. Histogram means
(<name>_sum / <name>_count of the last scrape, e.g. TTFT) go to runs.config, and so do the
labels of info gauges such as vllm:cache_config_info (block_size, num_gpu_blocks,
enable_prefix_caching, gpu_memory_utilization, ...: the engine's configuration, as
config["cache_config"], per engine when labelled).
"""
from __future__ import annotations

import re
from pathlib import Path

from ..i18n import N_, _
from ._vocab import VOCAB
from .base import Sniff
from ._common import no_rows, register_run, text
from ._stats import insert_stats

NAME = "prometheus"
KIND = "stats"

_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+"
                     r"(?P<value>[-+]?(?:[0-9.]+(?:[eE][-+]?\d+)?|NaN|[Ii]nf))"
                     r"(?:\s+(?P<ts>-?\d+))?\s*$")
_RANKS = ("tp_rank", "pp_rank")  # label sets of one engine that repeat the same gauge
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
# The engines' metric names are data (resources/metrics.toml [prometheus]): gauges summed over
# an engine's label sets, gauges averaged, and cumulative counters (per engine, differenced
# between scrapes) whose first name present wins (vLLM renamed gpu_prefix_cache_* to
# prefix_cache_* and kept the old name for a while).
_NAMES = VOCAB["prometheus"]
SUMMED: dict[str, str] = _NAMES["summed"]
AVERAGED: dict[str, str] = _NAMES["averaged"]
PREEMPTIONS, PREFIX_HITS, PREFIX_QUERIES = (tuple(_NAMES["counters"][k])
                                            for k in ("preemptions", "prefix_hits", "prefix_queries"))
COUNTERS = frozenset(PREEMPTIONS + PREFIX_HITS + PREFIX_QUERIES + tuple(_NAMES["counters"]["tokens"]))


def detect(sniff: Sniff) -> float:
    """High when the head holds Prometheus samples of vllm:* (or sglang:*) metrics."""
    if sniff.is_binary:
        return 0.0
    lines = sniff.first_lines(200)
    samples = sum(bool(_SAMPLE.match(ln.strip())) for ln in lines if not ln.startswith("#"))
    engine = sum(ln.lstrip("# HELPTYPE").startswith(("vllm:", "sglang:")) or
                 ln.startswith(("vllm:", "sglang:")) for ln in lines)
    if samples and engine:
        return 0.9
    if samples and any(ln.startswith("# TYPE") for ln in lines):
        return 0.35
    return 0.0


def _parse(path: Path, report) -> list[list[tuple[str, dict, float, int | None]]]:
    scrapes: list[list] = [[]]
    seen: set = set()
    last_ts = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line, raw in enumerate(fh, 1):
            s = raw.strip()
            if not s or s.startswith("#"):
                continue
            m = _SAMPLE.match(s)
            if not m:
                report.skip(_("not a Prometheus sample: {value}").format(value=repr(s[:40])), line=line)
                continue
            labels = dict(_LABEL.findall(m.group("labels") or ""))
            ts = int(m.group("ts")) if m.group("ts") else None
            key = (m.group("name"), tuple(sorted(labels.items())))
            new = (ts is not None and last_ts is not None and ts != last_ts) or \
                  (ts is None and key in seen)
            if new and scrapes[-1]:
                scrapes.append([])
                seen = set()
            seen.add(key)
            last_ts = ts
            scrapes[-1].append((m.group("name"), labels, float(m.group("value")), ts))
    return [s for s in scrapes if s]


def _engine(labels: dict) -> str | None:
    """The engine a sample belongs to: vLLM V1's `engine` label (the data-parallel rank),
    SGLang's `dp_rank`; None when the scrape names none."""
    return text(labels.get("engine")) or text(labels.get("dp_rank"))


def _combine(by_series: dict[tuple, list[float]], summed: bool) -> float:
    """One value from the label sets of one engine: the ranks of one engine (tp_rank, pp_rank:
    SGLang exports a gauge per tensor-parallel rank, all describing the same batch) are
    averaged, then counts are summed over the remaining label sets and fractions averaged."""
    per = [sum(v) / len(v) for v in by_series.values()]
    return sum(per) if summed else sum(per) / len(per)


def _increase(now: float, before: float | None) -> float:
    """A counter's increase since the previous scrape (Prometheus' increase(): a drop is a
    restart, whose count starts again from 0); the value itself when there is no earlier one."""
    return now if before is None or now < before else now - before


def _scrape_rows(scrapes: list[list]) -> list[dict]:
    """One engine_stats row per scrape and engine (see the module doc for the mapping)."""
    rows, prev = [], {}
    for sc in scrapes:
        acc: dict[str | None, dict[str, dict[tuple, list[float]]]] = {}
        cum: dict[str | None, dict[str, float]] = {}
        ts = None
        for name, labels, value, t in sc:
            ts = t if t is not None else ts
            eng = _engine(labels)
            col = SUMMED.get(name) or AVERAGED.get(name)
            if col and value == value:  # NaN: no value
                if name in AVERAGED and col == "prefix_cache_hit_rate" and value < 0:
                    continue  # the -1 "no data" sentinel (prefix caching off, nothing queried)
                series = tuple(sorted((k, v) for k, v in labels.items() if k not in _RANKS))
                acc.setdefault(eng, {}).setdefault(col, {}).setdefault(series, []).append(value)
            elif name in COUNTERS:
                c = cum.setdefault(eng, {})
                c[name] = c.get(name, 0.0) + value
        for eng in sorted(set(acc) | set(cum), key=lambda e: (e is not None, e or "")):
            a, c = acc.get(eng, {}), cum.get(eng, {})
            row = {k: _combine(v, k in SUMMED.values()) for k, v in a.items()}
            before = prev.get(eng)
            for k, v in _counter_fields(c, before, ts).items():
                row.setdefault(k, v)  # a gauge (V0's hit rate, avg throughputs) wins
            prev[eng] = {**c, "_ts": ts}
            if row:
                row["ts_s"] = ts / 1000.0 if ts is not None else None
                row["engine"] = eng
                rows.append(row)
    return rows


def _counter_fields(c: dict[str, float], before: dict | None, ts) -> dict:
    """num_preemptions, prefix_cache_hit_rate and token throughputs from the cumulative
    counters of one engine, differenced against its previous scrape (`before`; None: the
    first scrape, whose counts run from the server's start)."""
    def inc(names) -> float | None:
        name = next((n for n in names if n in c), None)
        if name is None:
            return None
        return _increase(c[name], None if before is None else before.get(name))

    out = {}
    pre = inc(PREEMPTIONS)
    if pre is not None:
        out["num_preemptions"] = pre
    hits, queries = inc(PREFIX_HITS), inc(PREFIX_QUERIES)
    if hits is not None and queries:
        out["prefix_cache_hit_rate"] = hits / queries  # 0 queries: undefined (NULL)
    if before is not None and ts is not None and before.get("_ts") is not None and ts > before["_ts"]:
        dt = (ts - before["_ts"]) / 1000.0
        for names, col in ((("vllm:prompt_tokens_total",), "prompt_tps"),
                           (("vllm:generation_tokens_total",), "gen_tps")):
            d = inc(names)
            if d is not None:
                out[col] = d / dt
    return out


def _info(scrape: list, report) -> dict:
    """{"cache_config": {label: value}} from info gauges (`*_config_info`, value 1) of a
    scrape; {"cache_config": {engine: {...}}} when several engines label theirs."""
    found: dict[str, dict] = {}
    for name, labels, _value, _ts in scrape:
        if name.startswith(("vllm:", "sglang:")) and name.endswith("_config_info"):
            key = name.split(":", 1)[1][:-len("_info")]
            cfg = {k: v for k, v in labels.items() if k not in ("engine", "model_name")}
            found.setdefault(key, {})[labels.get("engine") or ""] = cfg
            report.columns[name] = _("runs.config.{key} (its labels: the engine's settings)").format(key=key)
    return {k: next(iter(v.values())) if len(v) == 1 else v for k, v in found.items()}


def load(path: Path, store, report) -> None:
    """Load each scrape of a metrics dump as engine_stats rows (one per engine) of one run."""
    scrapes = _parse(path, report)
    model = next((text(lb.get("model_name")) for sc in scrapes for _, lb, _, _ in sc
                  if text(lb.get("model_name"))), None)
    rows = _scrape_rows(scrapes)
    if not rows:
        raise no_rows(path, report, N_("engine metric (vllm:* / sglang:*)"))
    hist = {}
    for name, labels, value, _ts in scrapes[-1]:
        if name.endswith("_sum") and (name.startswith(("vllm:", "sglang:"))):
            hist.setdefault(name[:-4], [0.0, 0.0])[0] += value
        elif name.endswith("_count") and (name.startswith(("vllm:", "sglang:"))):
            hist.setdefault(name[:-6], [0.0, 0.0])[1] += value
    config = {f"{k}_mean": s / c for k, (s, c) in hist.items() if c > 0}
    config.update(_info(scrapes[-1], report))
    config["scrapes"] = len(scrapes)
    if all(r["ts_s"] is None for r in rows):
        config["clock"] = N_("none (samples carry no timestamp)")  # shown through _()
    else:
        config["clock"] = N_("unix (sample timestamps)")
    engines = sorted({r["engine"] for r in rows if r["engine"] is not None})
    if engines:
        config["engines"] = engines
    engine = "sglang" if any(n.startswith("sglang:") for sc in scrapes for n, *_ in sc) else "vllm"
    run_id = register_run(store, report, path, NAME, f"prometheus:{path.stem}", engine=engine,
                          model=model, config=config)
    insert_stats(store, report, path, run_id, rows, N_("engine metric (vllm:* / sglang:*)"))
    names = {n for sc in scrapes for n, *_ in sc}
    report.columns.update({n: c + (_(" (summed over label sets)") if n in SUMMED else "")
                           for n, c in {**SUMMED, **AVERAGED}.items() if n in names})
    for group, col in ((PREEMPTIONS, _("num_preemptions (increase since the previous scrape)")),
                       (PREFIX_HITS + PREFIX_QUERIES,
                        _("prefix_cache_hit_rate (increase of hits / of queries; 0 queries: NULL)")),
                       (("vllm:prompt_tokens_total", "vllm:generation_tokens_total"),
                        _("prompt_tps / gen_tps (increase / seconds between timestamped scrapes)"))):
        for n in group:
            if n in names:
                report.columns[n] = col
    if "vllm:gpu_prefix_cache_hit_rate" in names:
        report.columns["vllm:gpu_prefix_cache_hit_rate"] = _("prefix_cache_hit_rate (-1 sentinel -> NULL)")
    if engines:
        report.columns[_("engine / dp_rank label")] = "engine"
    report.columns[_("(sample timestamp ms)")] = "ts_s (/1000)"
