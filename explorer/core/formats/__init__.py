"""Input formats, one module each, found automatically.

A format module defines:

    NAME: str                         # e.g. "llmperf"
    KIND: str                         # "trace" | "eval" | "stats"
    def detect(sniff: Sniff) -> float # confidence 0..1 from the content (not only the name)
    def load(path: Path, store: Store, report: LoadReport) -> None
        # inserts rows with store.append(...), registers runs / evals, fills report
        # (rows_loaded, skip(...), columns, run_ids, eval_ids); raises InputError for a file
        # it cannot use at all. Runs inside a transaction the store rolls back on error.
    CLAIMS_FOLDER = True              # optional: detect() also judges folders (HELM runs)
    def input_root(path: Path) -> Path  # optional: what load(path) reads when that is more
        # than `path` (a HELM per_instance_stats.json loads its whole run folder); the store
        # hashes that, so the file and its folder are one input (provenance, duplicates)

Modules whose name starts with "_" or is "base" are helpers, not formats.
"""
from __future__ import annotations

import importlib
import json
import pkgutil
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from ..errors import InputError, UnknownFormat
from ..i18n import _
from .base import Sniff, read_json

MIN_CONFIDENCE = 0.3


@lru_cache(maxsize=1)
def all_formats() -> tuple[ModuleType, ...]:
    """Every format module in this package, imported once."""
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "detect") and hasattr(mod, "load"):
            mods.append(mod)
    from ._records import formats  # the [records.*] vocabulary entries, one format each
    mods += formats()
    return tuple(sorted(mods, key=lambda m: m.NAME))


def get_format(name: str) -> ModuleType:
    """The format module called `name`. Raises KeyError listing the known names."""
    for m in all_formats():
        if m.NAME == name:
            return m
    raise KeyError(f"unknown format {name!r}; known: {', '.join(m.NAME for m in all_formats())}")


def rank_formats(path: str | Path, sniff: Sniff | None = None) -> list[tuple[float, str]]:
    """(confidence, format name) for every format, best first (for `inspect` and tests).
    sniff: the Sniff of `path` when the caller has read it already."""
    sniff = sniff or Sniff.of(Path(path))
    scores = []
    for m in all_formats():
        if sniff.is_dir and not getattr(m, "CLAIMS_FOLDER", False):
            continue
        try:
            scores.append((float(m.detect(sniff)), m.NAME))
        except Exception:  # a detector must never break detection of the others
            scores.append((0.0, m.NAME))
    return sorted(scores, reverse=True)


def detect_format(path: str | Path) -> ModuleType:
    """The format module most confident about `path`. Raises UnknownFormat (names the file)."""
    p = Path(path)
    ranked = rank_formats(p)
    if not ranked or ranked[0][0] < MIN_CONFIDENCE:
        sniff = Sniff.of(p)
        broken = json_syntax_error(p, sniff)
        if broken is not None:
            raise broken
        from ._encoding import compressed_kind
        why = ((compressed_kind(p) or _("binary content")) if sniff.is_binary
               else _("no known trace or eval format matches its content") + "; " + _resembles(
                   sniff, ranked))
        raise UnknownFormat(p, _("unrecognised file: {why}").format(why=why))
    return get_format(ranked[0][1])


def json_syntax_error(path: Path, sniff: Sniff) -> InputError | None:
    """The syntax error (base.read_json's, with its line) of a file that is JSON cut short or
    broken, not JSONL; else None. Said instead of "unrecognised file", which sent the user to
    write a vocabulary entry for a file that is simply damaged."""
    head = sniff.head.lstrip("\ufeff \t\r\n")
    if sniff.is_binary or sniff.is_dir or head[:1] not in ("{", "["):
        return None
    try:
        json.loads(head.split("\n", 1)[0])
        return None  # one JSON value per line: JSONL, whatever its later lines hold
    except ValueError:
        pass
    try:
        read_json(path)
    except InputError as e:
        return e if e.line is not None else None  # too large / not UTF-8: said by the others
    return None


def _resembles(sniff: Sniff, ranked: list[tuple[float, str]]) -> str:
    """What detection looked for and the closest thing the content resembles."""
    import re
    from ._vocab import TOOLS, read_name
    looked = _("looked for {n} formats and the {m} tools of the metric vocabulary "
               "(resources/metrics.toml)").format(n=len(ranked), m=len(TOOLS))
    if ranked and ranked[0][0] > 0:
        return looked + "; " + _("closest: {name} (confidence {score:.2f}, {need:.2f} needed)"
                                 ).format(name=ranked[0][1], score=ranked[0][0],
                                          need=MIN_CONFIDENCE)
    words = re.findall(r"[A-Za-z_][\w .\-]{1,40}?(?=\s*[\"':,=|]|\s*\()", sniff.head[:16384])
    known = sorted({nm.metric for nm in (read_name(w.strip(), "mean") for w in set(words)) if nm})
    if known:
        return looked + "; " + _("it names metrics the vocabulary knows ({metrics}) but no "
                                 "tool's markers: a [tool.*] entry would read it").format(
            metrics=", ".join(known[:6]))
    return looked + "; " + _("none of them resembles it")


def claims_folder(path: str | Path) -> bool:
    """True when some folder format (e.g. a HELM run directory) recognises this folder."""
    ranked = rank_formats(path)
    return bool(ranked) and ranked[0][0] >= MIN_CONFIDENCE
