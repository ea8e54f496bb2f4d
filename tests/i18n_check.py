"""English left in a Chinese rendering: runs of Latin-letter words that read as an English
phrase, outside data (cluster names, file names, ids), metric names and units. Shared by the
zh_CN tests of the reports and of the window."""
from __future__ import annotations

import re

# Words engineers keep in Latin letters (GLOSSARY-zh.md), units, statistics, engine flags.
LATIN_TERMS = {
    "ttft", "tpot", "itl", "e2e", "kv", "cache", "p99", "p90", "p50", "qps", "sla", "badcase",
    "badcases", "trace", "traces", "cluster", "clusters", "case", "cases", "eval", "evals",
    "benchmark", "benchmarks", "run", "runs", "prefix", "caching", "prefill", "decode", "chunked",
    "goodput", "token", "tokens", "ms", "req", "requests", "what-if", "whatif", "cohort", "mann",
    "whitney", "fisher", "cohen's", "hedges'", "benjamini", "hochberg", "bh", "dowhy", "vllm",
    "sglang", "batch", "size", "offload", "swap", "swapped", "fuzzy", "join", "prompt", "system",
    "few-shot", "max_tokens", "lru", "fifo", "json", "md", "html", "pdf", "png", "svg", "id",
    "sha", "gb", "blocks", "block", "cpu", "gpu", "p", "d", "n", "or", "s", "trace-explorer",
    "report", "inspect", "replay", "sglang-calibrated", "stop", "mooncake", "jsonl", "csv",
    "lm-eval", "mmlu-pro", "llama", "instruct", "demo", "engine", "metrics", "logistic",
}
PHRASE = re.compile(r"[A-Za-z][A-Za-z'_-]*(?:[ ,]+[A-Za-z][A-Za-z'_-]*){3,}")


def english_phrases(text: str, data: set[str] = frozenset()) -> list[str]:
    """Phrases of 4+ Latin words, not all of them field terms, after removing the data
    strings (exact substrings) from the text."""
    for d in sorted((d for d in data if d), key=len, reverse=True):
        text = text.replace(d, " ")
    # a tag starts with a letter, / or !: "p \< 0.001 ... \> 2" in Markdown is text, not a tag
    text = re.sub(r"`[^`]*`|<[A-Za-z/!][^<>]*>|&\w+;|\S+\.(?:json|md|csv|jsonl|html|pdf|png)\b|--[\w-]+",
                  " ", text)
    out = []
    for m in PHRASE.finditer(text):
        words = [w.strip(",").lower() for w in m.group(0).split() if w.strip(",")]
        plain = [w for w in words if w not in LATIN_TERMS]
        if len(plain) >= 2:
            out.append(m.group(0))
    return out


# Figure text is cut into short pieces (axis labels, ticks, legend entries, one SVG <text> per
# run of a font): a phrase test misses "266 neighbours" or "0.64 to 0.88". Figures are held to
# every Latin word: each must be a field term, a statistic's name, data or an identifier.
FIGURE_TERMS = LATIN_TERMS | {
    "mann-whitney", "benjamini-hochberg", "hedges", "bits", "bootstrap", "ci", "r", "u", "e",
    "g", "h", "k", "l", "m", "a", "si", "or", "batching",
}
WORD = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z'-]*")


def english_words(text: str, data: set[str] = frozenset()) -> list[str]:
    """Latin words of a figure's text that are neither field terms (FIGURE_TERMS) nor data
    (exact substrings removed first), identifiers (metric keys with '_', engine --flags) nor
    units; sorted, once each."""
    for d in sorted((d for d in data if d), key=len, reverse=True):
        text = text.replace(d, " ")
    text = re.sub(r"--[\w-]+|\b\w*_\w*\b|\b\w*\d\w*\b", " ", text)
    words = {w.strip("'-") for w in WORD.findall(text)}
    return sorted(w for w in words if w and w.lower() not in FIGURE_TERMS
                  and not all(p.lower() in FIGURE_TERMS for p in w.split("-") if p))
