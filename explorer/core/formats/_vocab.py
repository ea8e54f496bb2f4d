"""The metric vocabulary (resources/metrics.toml) and the name reader every format shares.

`read_name("Mean TTFT (ms)")`, `read_name("ttft", stat_hint="p99")`, `read_name("request_latency",
unit_hint="ns")`, `read_name("平均首Token时延")` -> Name(metric, stat, scale, unit): the canonical
metric, its statistic, the factor that converts the published value into the metric's canonical
unit, and the unit as written. A name is read as [statistic] metric-name [unit]: a statistic
word anywhere ("mean", "avg", "P99", "99.00 percentile", "最大值"), a unit in brackets or as the
last word(s) ("(ms)", "_ms", "(tokens/sec)"), and the rest looked up in the vocabulary; a
bracket that is no unit is part of the name ("Total generated tokens (retokenized)",
"[TTFT] P99"). `number("1,234.5 ms")` -> (1234.5, "ms"). See docs/formats.md.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

VOCAB = tomllib.loads(resources.files("explorer.resources").joinpath("metrics.toml")
                      .read_text(encoding="utf-8"))
METRICS: dict[str, dict] = VOCAB["metric"]
TOOLS: dict[str, dict] = VOCAB["tool"]
for _k, _t in TOOLS.items():
    _t["_name"] = _k
_UNITS: dict[str, tuple[str, float]] = {k: (v[0], float(v[1])) for k, v in VOCAB["unit"].items()}
_CANON_UNIT = {"ms": ("time", 1e-3), "s": ("time", 1.0), "req/s": ("req_rate", 1.0),
               "tok/s": ("tok_rate", 1.0), "requests": ("count", 1.0),
               "tokens": ("count", 1.0), "ratio": ("ratio", 1.0)}
_STATS = {sp: canon for canon, sps in VOCAB["stat"].items() for sp in sps}
_CJK_STATS = sorted((sp for sp in _STATS if not sp.isascii()), key=len, reverse=True)
_NOT_METRIC = set(VOCAB["not_metric"]["names"])


@lru_cache(maxsize=8192)  # every detector and loader asks again for the same few names
def normalise(name: str) -> str:
    """Lower-case a name and turn spaces, '-', '.', '/', ':', brackets into '_'."""
    return re.sub(r"[\s\-./:()\[\]]+", "_", str(name).strip().lower()).strip("_")


def _index() -> dict[str, tuple[str, str | None]]:
    out = {}
    for metric, entry in METRICS.items():
        for n in entry.get("names", ()):
            out.setdefault(n, (metric, None))
        for n, stat in entry.get("pinned", {}).items():
            out[n] = (metric, stat)
    return out


_INDEX = _index()
_PNN = re.compile(r"(?<![a-z0-9])p(\d+(?:\.\d+)?)(?![a-z0-9]|\.\d)")
_PCTL = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:th|st|nd|rd)?[\s_]*(?:percentile|%ile|分位)"
                   r"|percentile[\s_]*(\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Name:
    metric: str
    stat: str
    scale: float       # published value x scale = value in the metric's canonical unit
    unit: str          # the canonical unit
    source_unit: str   # the unit as the tool wrote it ("" when none was said or assumed)


def pstat(x: str) -> str:
    """'p' + a percentile without trailing zeros: '99.00' -> 'p99', '99.9' -> 'p99.9'."""
    return "p" + (f"{float(x):g}")


def stat_of(word: str, tool: dict | None = None) -> str | None:
    """The canonical statistic a column / key names ('avg' -> 'mean', 'P99' -> 'p99'), or None."""
    w = str(word).strip().lower()
    if tool and w in tool.get("stats", {}):
        return tool["stats"][w]
    if w in _STATS:
        return _STATS[w]
    m = re.fullmatch(r"p(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)(?:th|%)?[\s_]*(?:percentile)?", w)
    if m and (m.group(1) or w.endswith(("percentile", "th", "%"))):
        return pstat(m.group(1) or m.group(2))
    return {"value": "value"}.get(w)


def scale_to(unit_word: str | None, canonical: str) -> float | None:
    """Factor from a unit as written to the canonical unit; None when the dimensions differ."""
    if not unit_word:
        return 1.0
    got = _UNITS.get(normalise(unit_word)) or _UNITS.get(str(unit_word).strip().lower())
    want = _CANON_UNIT.get(canonical)
    if got is None or want is None:
        return None
    return float(f"{got[1] / want[1]:.15g}") if got[0] == want[0] else None  # 1e-9/1e-3 = 1e-6


def _split_stat(s: str, tool: dict | None) -> tuple[str, str | None]:
    m = _PCTL.search(s) or _PNN.search(s)
    if m:
        return (s[:m.start()] + " " + s[m.end():]), pstat(next(g for g in m.groups() if g))
    for sp in _CJK_STATS:
        if sp in s:
            return s.replace(sp, " ", 1), _STATS[sp]
    toks = normalise(s).split("_")
    for i, t in enumerate(toks):
        st = stat_of(t, tool) if t not in ("value",) else None
        if st:
            return "_".join(toks[:i] + toks[i + 1:]), st
    return s, None


def _lookup(n: str, tool: dict | None) -> tuple[str, str | None] | None:
    if tool and n in tool.get("rename", {}):
        return tool["rename"][n], None
    return _INDEX.get(n)


@lru_cache(maxsize=16384)
def _read(raw: str, stat_hint: str | None, unit_hint: str | None, tool_name: str | None):
    tool = TOOLS.get(tool_name) if tool_name else None
    text = str(raw).strip()
    unit = unit_hint
    kept = []
    for b in re.findall(r"[(\[]([^()\[\]]*)[)\]]", text):  # (ms) is a unit, (retokenized) a word
        if normalise(b) in _UNITS or b.strip().lower() in _UNITS:
            unit = b
        else:
            kept.append(b)
    base = re.sub(r"[(\[][^()\[\]]*[)\]]", " ", text) + " " + " ".join(kept)
    if tool and tool.get("drop"):  # a tool's own filler words (LLMPerf's results_ / _quantiles_)
        base = "_".join(w for w in normalise(base).split("_") if w not in tool["drop"])
    n = normalise(base)
    if n in _NOT_METRIC or (tool and n in tool.get("ignore", ())):
        return None
    cands = [(normalise(text), stat_hint, unit_hint), (n, stat_hint, unit)]  # "Decode (token)"
    rest, st = _split_stat(base.lower(), tool)
    if st:
        cands.append((normalise(rest), st, unit))
    for name, stt, u in list(cands[1:]):
        toks = name.split("_")
        for k in (3, 2, 1):  # a unit as the last words: ttft_ms, output_tokens_per_s
            if len(toks) > k and "_".join(toks[-k:]) in _UNITS:
                cands.append(("_".join(toks[:-k]), stt, "_".join(toks[-k:])))
                break
    for name, stt, u in cands:
        found = _lookup(name, tool)
        if not found:
            continue
        metric, pinned = found
        entry = METRICS.get(metric, {})
        stat = pinned or stt or entry.get("default_stat")
        if not stat or (tool and name in tool.get("ignore", ())):
            return None
        if not u and tool:
            u = tool.get("units", {}).get(name) or tool.get("units", {}).get(metric)
        scale = scale_to(u, entry.get("unit", ""))
        if scale is None:
            alt = _lookup(f"{name}_throughput", tool)  # a rate under a latency's name (TGI)
            if alt and scale_to(u, METRICS[alt[0]]["unit"]) is not None:
                metric, entry = alt[0], METRICS[alt[0]]
                scale = scale_to(u, entry["unit"])
            else:
                continue
        return Name(metric, stat, scale, entry.get("unit", ""), u or "")
    return None


def named(metric: str, stat: str, unit: str | None = None, tool: str | None = None) -> Name | None:
    """The Name of a canonical metric and statistic (a tool entry's `paths`), its unit the one
    given, else the tool's for that metric, else the canonical one."""
    entry = METRICS.get(metric)
    u = unit or (TOOLS.get(tool or "", {}).get("units", {}).get(metric))
    scale = scale_to(u, entry["unit"]) if entry else None
    return Name(metric, stat, scale, entry["unit"], u or "") if scale is not None else None


def read_name(raw: str, stat_hint: str | None = None, unit_hint: str | None = None,
              tool: str | None = None) -> Name | None:
    """The vocabulary's reading of a published name (see the module doc), or None. stat_hint:
    the statistic a column header or tree key beside the name says; unit_hint: a unit written
    elsewhere (a `unit` field, a section title); tool: a [tool.*] entry's renames, units and
    statistic spellings apply first."""
    if "," in str(raw) and not re.search(r"[(\[][^)\]]*,", str(raw)):  # lm-eval "acc,none"
        head, _, flt = str(raw).partition(",")
        got = _read(head, stat_hint, unit_hint, tool)
        return got and Name(got.metric, f"{got.stat}@{flt.strip()}", got.scale, got.unit,
                            got.source_unit)
    return _read(str(raw), stat_hint, unit_hint, tool)


_NUM = re.compile(r"^\s*([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")


def number(v) -> tuple[float | None, str]:
    """(value, unit written after it) of a published value: 12.5, "1,234.56", "20.45 ms",
    "45.3%", "N/A" (None)."""
    if isinstance(v, bool):
        return None, ""
    if isinstance(v, (int, float)):
        return (float(v) if math.isfinite(v) else None), ""
    m = _NUM.match(str(v))
    if not m or not m.group(1) or m.group(1) in "+-.":
        return None, ""
    try:
        x = float(m.group(1).replace(",", ""))
    except ValueError:
        return None, ""
    return (x if math.isfinite(x) else None), m.group(2)


def config_key(raw: str) -> str | None:
    """The canonical runs.config key a setting's name stands for (vocabulary [config])."""
    n = normalise(raw)
    for key, names in VOCAB["config"].items():
        if n in names:
            return key
    return None
