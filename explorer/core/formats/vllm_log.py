"""vLLM server log: the periodic engine-stat lines (into engine_stats).

Sources (the logger's own format strings):
- V0, vllm/engine/metrics.py LoggingStatLogger.log: "Avg prompt throughput: %.1f tokens/s, Avg
  generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: %d reqs, Pending: %d reqs,
  GPU KV cache usage: %.1f%%, CPU KV cache usage: %.1f%%." (early releases without the final
  ".", vllm#3094), then, only when a prefix cache is on, a separate line "Prefix cache hit rate:
  GPU: %.2f%%, CPU: %.2f%%" whose -1 "no data" value prints as -100.00%; its CPU value (no
  engine_stats column) becomes run_metrics prefix_cache_hit_rate_cpu: last and max logged.
- V1, vllm/v1/metrics/loggers.py LoggingStatLogger: "Engine %03d: Avg prompt throughput: ...,
  Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate:
  %.1f%%" (later releases append e.g. "External prefix cache hit rate", "MFU: ...": ignored).
Each line carries "LEVEL MM-DD HH:MM:SS" (or a full "YYYY-MM-DD HH:MM:SS" when the logging
format was changed); see _stats.clock for ts_s.
Mapping: prompt_tps / gen_tps (tokens/s), running, waiting (= Pending or Waiting), swapped,
kv_usage_gpu / kv_usage_cpu and prefix_cache_hit_rate as fractions in [0, 1] (the log prints
percent); a negative hit rate (the -1 sentinel) is NULL. engine = the V1 engine index ("0",
"1", ...: the data-parallel rank, as Prometheus labels it), NULL for V0; two engines logging at
the same second stay two rows. A V0 prefix line fills the hit rate of the stat line just before
it (same engine, within 1 s), else stands as a row of its own. Other lines are passed over,
except the server's own statement of its version and model, which fill the run:
"vLLM API server version %s" (vllm/entrypoints/openai/api_server.py) and "Initializing an LLM
engine (v%s) with config: model=%r, ..." (V0, vllm/engine/llm_engine.py) / "Initializing a V1
LLM engine (v%s) with config: model='…', ..." (vllm/v1/engine/core.py); the first one found
wins, and the run's version source names its line.
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from ..i18n import N_, _, line_text
from .base import Sniff
from ._common import register_run
from ._stats import clock, insert_stats

NAME = "vllm_log"
KIND = "stats"

_STAT = re.compile(r"Avg prompt throughput:\s*(?P<ptps>[-\d.eE+]+) tokens/s")
_PREFIX_V0 = re.compile(r"Prefix cache hit rate: GPU:\s*(?P<gpu>-?[\d.]+)%(?:,\s*CPU:\s*(?P<cpu>-?[\d.]+)%)?")
_ENGINE = re.compile(r"Engine (\d+):\s*$")
_VERSION = re.compile(r"vLLM API server version (?P<v>\d+\.\d+[\w.+-]*)|"
                      r"Initializing an? (?:V1 )?LLM engine \(v(?P<e>\d+\.\d+[\w.+-]*)\)")
_MODEL = re.compile(r"with config: model=['\"](?P<m>[^'\"]+)['\"]")
_TS = re.compile(r"(?:\b(\d{4})-)?\b(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?\b")
_FIELDS = {
    "gen_tps": (r"Avg generation throughput:\s*([-\d.eE+]+)", 1.0),
    "running": (r"Running:\s*(\d+)", 1.0),
    "swapped": (r"Swapped:\s*(\d+)", 1.0),
    "waiting": (r"(?:Pending|Waiting):\s*(\d+)", 1.0),
    "kv_usage_gpu": (r"GPU KV cache usage:\s*([\d.]+)%", 0.01),
    "kv_usage_cpu": (r"CPU KV cache usage:\s*([\d.]+)%", 0.01),
    "prefix_cache_hit_rate": (r"(?<![Ee]xternal )(?<!MM )(?:GPU )?[Pp]refix cache hit rate:"
                              r"\s*(-?[\d.]+)%", 0.01),
}
_RX = {k: (re.compile(p), s) for k, (p, s) in _FIELDS.items()}
_NAMES = {"prompt_tps": "Avg prompt throughput", "gen_tps": "Avg generation throughput",
          "running": "Running", "swapped": "Swapped", "waiting": "Pending / Waiting",
          "kv_usage_gpu": "GPU KV cache usage %", "kv_usage_cpu": "CPU KV cache usage %",
          "prefix_cache_hit_rate": "Prefix cache hit rate %"}


def detect(sniff: Sniff) -> float:
    """High when the head holds vLLM's "Avg prompt throughput: ... Running: ..." lines."""
    if sniff.is_binary:
        return 0.0
    if "Avg prompt throughput:" in sniff.head and "Running:" in sniff.head:
        return 0.9
    if "Prefix cache hit rate: GPU:" in sniff.head:
        return 0.8
    return 0.0


def _when(raw: str, end: int, line: int, report) -> tuple[datetime, bool] | None:
    """(time of the line, whether it names the year), or None after recording a skip."""
    t = None
    for t in _TS.finditer(raw[:end]):
        pass  # the last stamp before the message (a "(APIServer pid=…)" prefix has none)
    if t is None:
        report.skip(_("stat line without a 'MM-DD HH:MM:SS' time"), line=line)
        return None
    yr, mo, d, hh, mi, ss, frac = t.groups()
    try:
        return datetime(int(yr or 2000), int(mo), int(d), int(hh), int(mi), int(ss),
                        int((frac or "0")[:6].ljust(6, "0"))), yr is not None
    except ValueError as e:
        report.skip(_("bad time ({error})").format(error=e), line=line)
        return None


def _self_statement(raw: str, line: int, said: dict) -> None:
    """Fill said["version"] (with its source) and said["model"] from the server's own lines
    (the first of each wins)."""
    if "version" not in said and ("API server version" in raw or "LLM engine (v" in raw):
        v = _VERSION.search(raw)
        if v:
            said["version"] = v.group("v") or v.group("e")
            said["version_source"] = _("file content ({where})").format(
                where=f"{line_text(line)}{v.group(0)}".strip())
    if "model" not in said and "with config: model=" in raw:
        mm = _MODEL.search(raw)
        if mm:
            said["model"] = mm.group("m")


def _pct(value: str, scale: float) -> float | None:
    """A logged percentage as a fraction; a negative value (vLLM's -1 "no data") is None."""
    x = float(value) * scale
    return None if x < 0 else x


def load(path: Path, store, report) -> None:
    """Load the stat lines of one vLLM log as one run's engine_stats, one row per engine and
    logging interval."""
    recs: list[dict] = []
    said: dict = {}  # version / model the server logged about itself, with the line
    cpu: list[float] = []  # V0's CPU prefix-cache hit rates (engine_stats has no column)
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for line, raw in enumerate(fh, 1):
            m = _STAT.search(raw)
            p = None if m else _PREFIX_V0.search(raw)
            if not (m or p):
                _self_statement(raw, line, said)
                continue
            start = (m or p).start()
            got = _when(raw, start, line, report)
            if got is None:
                continue
            e = _ENGINE.search(raw[:start])
            engine = str(int(e.group(1))) if e else None
            if p:
                hit = _pct(p.group("gpu"), 0.01)
                if p.group("cpu") and _pct(p.group("cpu"), 0.01) is not None:
                    cpu.append(_pct(p.group("cpu"), 0.01))
                last = next((r for r in reversed(recs) if r["engine"] == engine), None)
                if (last is not None and "ptps" in last and last["prefix_cache_hit_rate"] is None
                        and abs((got[0] - last["when"]).total_seconds()) <= 1):
                    last["prefix_cache_hit_rate"] = hit
                else:
                    recs.append({"when": got[0], "dated": got[1], "engine": engine,
                                 "prefix_cache_hit_rate": hit})
                continue
            row = {"when": got[0], "dated": got[1], "engine": engine, "ptps": True,
                   "prompt_tps": float(m.group("ptps"))}
            for k, (rx, scale) in _RX.items():
                f = rx.search(raw, m.start())
                row[k] = (_pct(f.group(1), scale) if scale != 1.0 else float(f.group(1))) if f else None
            recs.append(row)
    dated = bool(recs) and all(r["dated"] for r in recs)
    ts, cfg = clock([r["when"] for r in recs], "date" if dated else "month-day") if recs else ([], {})
    for r, t in zip(recs, ts):
        r["ts_s"] = t
    engines = sorted({r["engine"] for r in recs if r["engine"] is not None})
    if engines:
        cfg["engines"] = engines
    run_id = register_run(store, report, path, NAME, f"vllm_log:{path.stem}", engine="vllm",
                          benchmark=None, config=cfg, engine_version=said.get("version"),
                          version_source=said.get("version_source"), model=said.get("model"))
    insert_stats(store, report, path, run_id, recs, N_("engine-stat"))
    if cpu:  # the last value logged (V0's block manager: over every query since the start)
        from ._results import insert_run_metrics
        insert_run_metrics(store, run_id, [("prefix_cache_hit_rate_cpu", "last", cpu[-1], "ratio"),
                                           ("prefix_cache_hit_rate_cpu", "max", max(cpu), "ratio")])
        report.columns["Prefix cache hit rate: CPU %"] = _(
            "run_metrics prefix_cache_hit_rate_cpu last, max (/100)")
    report.columns["MM-DD HH:MM:SS"] = ("ts_s (unix s)" if dated
                                        else _("ts_s (seconds since the first stat line)"))
    if engines:
        report.columns["Engine NNN"] = _("engine (data-parallel rank)")
    for col, src in _NAMES.items():
        if any(r.get(col) is not None for r in recs):
            report.columns[src] = col + (_(" (/100; -1 sentinel -> NULL)") if src.endswith("%") else "")
