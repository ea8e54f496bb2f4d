"""Published aggregates of any tool with a [tool.*] entry in resources/metrics.toml, read by
structure, not by a module per tool: JSON / YAML trees, statistics tables, `Key: value` lines.

- tree: a key the vocabulary reads as a metric whose value is a map of statistics (`"ttft":
  {"avg": .., "p99": .., "unit": "ms"}`; GuideLLM's `successful` / `percentiles` levels are
  descended, the entry's `skip` keys not), or a flat key that says its statistic itself
  (`mean_ttft_ms`, `time_to_first_token.p99`). `runs` names a list (GuideLLM's benchmarks: a
  sweep is several runs) or a map (lm-eval's results per task) of runs; `paths` pins numbers
  whose key alone says nothing (inference-perf's `successes.count`).
- table: CSV sections (a metric column and statistic columns, or Metric,Value), and printed
  ASCII / box-drawing / Markdown tables; a value may carry its unit ("20.45 ms"); a numeric
  column that is no statistic (TGI's Batch Size) splits the table into one run per value.
- lines: `Key: value unit` lines (MLPerf `Key : value`, trtllm-bench, LMDeploy's
  `first token latency(s)(min, max, ave): a, b, c`); a section title's unit ("-- Request
  Latency Breakdown (ms) --") applies to the lines under it; a leading log timestamp is cut.

Each number becomes a run_metrics row (metric, stat, value in the metric's canonical unit,
unit); settings named in the vocabulary's [config] (or the entry's config paths) go to
runs.config under their canonical key (docs/formats.md). A file with nothing the vocabulary
reads fails with what was looked for.
"""
from __future__ import annotations

import csv
import io
import re
from fnmatch import fnmatch
from pathlib import Path

from ..errors import InputError
from ..i18n import _
from ._common import insert_requests, register_run
from ._results import insert_run_metrics
from ._vocab import (
    TOOLS,
    config_key,
    named,
    normalise,
    number,
    read_name,
    scale_to,
    stat_of,
)
from .base import Sniff, read_json, value_at

NAME = "published"
KIND = "trace"
_RULE = set("-=+|:─━═│┃║╞╡╪╤╧╒╕╘╛├┤┼┬┴┌┐└┘╔╗╚╝╠╣╬╦╩╟╢╫ \t")
_BAR = re.compile(r"\s*[|│┃║]\s*")
_KV = re.compile(r"^(?P<key>[^:：]{2,100}?)\s*[:：]\s*(?P<val>\S.*?)\s*$")
_STAMP = re.compile(r"^\[?\d{4}-\d\d-\d\d[ T][\d:.,]+\]?\s*(?:\[?[A-Z]+\]?\s*)?(?:[\w.]+:\d+\s*-?\s*)?")
_MULTI = re.compile(r"(percentile)?\s*[(\[]([^()\[\]]*,[^()\[\]]*)[)\]]", re.IGNORECASE)


def _named(path: Path, t: dict) -> bool:
    """The file's name (or folder/name) is one the entry's tool writes (not just *.json)."""
    return any(fnmatch(path.name, g) or fnmatch(f"{path.parent.name}/{path.name}", g)
               for g in t.get("files", ()) if g[:2] != "*.")


def tool_of(sniff: Sniff) -> tuple[float, str] | None:
    """(confidence, tool) of the [tool.*] entry whose markers the head holds best."""
    if sniff.is_binary or sniff.is_dir or len(sniff.records(2)) > 1 and sniff.first_json_line():
        return None  # JSONL: per-request records, not one document of aggregates
    best = None
    for name, t in TOOLS.items():
        hits = sum(m in sniff.head for m in t.get("markers", ()))
        if not hits or not all(r in sniff.head for r in t.get("require", ())):
            continue
        score = 0.6 + 0.1 * min(hits, 2) + (0.15 if _named(sniff.path, t) else 0.0)
        if best is None or score > best[0]:
            best = (score, name)
    return best


def pass_over(path: Path) -> str | None:
    """Why a file found in a folder is not loaded on its own: the aggregates of an entry with
    `beside` (AIPerf's profile_export_aiperf.*) next to that per-request file load with it."""
    for t in TOOLS.values():
        other = t.get("beside", "").format(name=path.name)
        if other and (path.parent / other).is_file() and _named(path, t) and any(
                fnmatch(path.name, g) for g in t.get("beside_for", ["*"])):
            return _("an aggregate summary of {file} beside it: its numbers load with that "
                     "file, as its run's published aggregates").format(file=other)
    return None


def detect(sniff: Sniff) -> float:
    """The best tool entry's confidence (markers found, its file name), 0 when none."""
    found = tool_of(sniff)
    return found[0] if found else 0.0


def _scalar(v):
    if isinstance(v, list) and len(v) == 1:
        v = v[0]
    return v if isinstance(v, (str, int, float, bool)) else None


def _row(rows, cols, src: str, nm, x: float) -> None:
    rows.append((nm.metric, nm.stat, x * nm.scale, nm.unit))
    cols.setdefault(src, f"run_metrics {nm.metric} {nm.stat}" +
                    (f" (x{nm.scale:g})" if nm.scale != 1 else ""))


def _stat_leaves(d: dict, t: dict, path: str):
    """(statistic, value, source path) under a metric's map: numbers whose key is a
    statistic, through levels that are not (GuideLLM's successful / percentiles)."""
    for k, v in d.items():
        if k in t.get("skip", ()) or f"{path}.{k}" in t.get("paths", {}):
            continue
        st = stat_of(k, t)
        x = number(v)[0] if not isinstance(v, (dict, list, str)) else None
        if st and x is not None:
            yield st, x, f"{path}.{k}"
        elif isinstance(v, dict) and getattr(read_name(k, "mean", None, t.get("_name")),
                                             "stat", None) != "mean":
            yield from _stat_leaves(v, t, f"{path}.{k}")  # not another metric's map


def tree_rows(node, tool: str | None, cols: dict, path: str = "") -> list[tuple]:
    """run_metrics rows (metric, stat, value, unit) a JSON / YAML tree publishes (module doc)."""
    t = TOOLS.get(tool or "", {})
    rows: list[tuple] = []
    if isinstance(node, list) and t.get("stat_rows"):  # one statistic a record (evalscope)
        for i, rec in enumerate(r for r in node if isinstance(r, dict)):
            st = stat_of(str(rec.get(t["stat_rows"], "")), t)
            for k, v in rec.items():
                x = number(v)[0] if st and not isinstance(v, str) else None
                nm = read_name(str(k), st, None, tool) if x is not None else None
                if nm:
                    _row(rows, cols, f"[{i}].{k}", nm, x)
    if not isinstance(node, dict):
        return rows
    for dotted, target in (t.get("paths", {}).items() if not path else ()):
        v = _scalar(value_at(node, dotted))
        x = number(v)[0] if v is not None and not isinstance(v, str) else None
        nm = named(*target.split(".", 1), None, tool) if x is not None else None
        if nm:
            _row(rows, cols, dotted, nm, x)
    for k, v in node.items():
        p = f"{path}.{k}" if path else str(k)
        if p in t.get("paths", {}):
            continue
        if str(k) in t.get("skip", ()):
            continue
        if isinstance(v, dict) and any(
                isinstance(c, dict) and getattr(read_name(str(ck), "mean", None, tool), "stat",
                                                None) == "mean" for ck, c in v.items()):
            rows += tree_rows(v, tool, cols, p)  # a group of metric maps (inference-perf's
            continue                             # successes.latency), not one metric's map
        if isinstance(v, dict):
            unit = next((v[u] for u in ("unit", "units") if isinstance(v.get(u), str)), None)
            leaves = list(_stat_leaves(v, t, p)) if read_name(k, "mean", unit, tool) else []
            plain = read_name(k, None, unit, tool)
            if leaves and plain and {s for s, _, _ in leaves} <= {"mean", "value"}:
                _row(rows, cols, leaves[0][2], plain, leaves[0][1])  # one number: pinned stat
                continue
            got = [(read_name(k, s, unit, tool), x, src) for s, x, src in leaves]
            for nm, x, src in got:
                if nm:
                    _row(rows, cols, src, nm, x)
            if not any(nm for nm, _, _ in got):
                rows += tree_rows(v, tool, cols, p)
        elif not isinstance(v, (list, str)):
            x = number(v)[0]
            nm = read_name(str(k), None, None, tool) if x is not None else None
            if nm:
                _row(rows, cols, p, nm, x)
    return rows


def _config(trees: list, tool: str | None, pairs=()) -> dict:
    """runs.config under canonical keys: the entry's config paths (first tree that has them),
    then settings whose name the vocabulary's [config] knows (top-level keys, printed pairs)."""
    t = TOOLS.get(tool or "", {})
    cfg = {}
    for key, paths in t.get("config", {}).items():
        for p in paths:
            v = next((v for v in (_scalar(value_at(tr, p)) for tr in trees) if v is not None),
                     None)
            if v is None:
                v = next((val for k, val in pairs if normalise(k) == normalise(p)), None)
            if v is not None:
                cfg[key] = v
                break
    for tr in trees:
        for k, v in (tr.items() if isinstance(tr, dict) else ()):
            if _scalar(v) is not None and config_key(k) and config_key(k) not in cfg:
                cfg[config_key(k)] = _scalar(v)
    for k, v in pairs:
        if config_key(k) and config_key(k) not in cfg:
            cfg[config_key(k)] = v
    return {k: (number(v)[0] if isinstance(v, str) and number(v)[0] is not None
                and not number(v)[1] else v) for k, v in cfg.items()}


def request_rows(sub, tool: str, cols: dict, report) -> list[dict]:
    """Per-request records a run carries (the entry's `requests`: a path to a list, or to a map
    of status -> list, `successful` the ones without error), each key mapped by the request
    tables' aliases (the entry's `request_columns` first; `request_units` for bare times);
    a value out of range skips its record (_common.RANGES)."""
    from ._aliases import match
    from ._common import RowError, check_ranges, num
    t = TOOLS[tool]
    got = value_at(sub, t["requests"]) if t.get("requests") else None
    groups = got.items() if isinstance(got, dict) else [("successful", got)]
    rows = []
    for status, recs in groups:
        for i, rec in enumerate(recs if isinstance(recs, list) else []):
            if not isinstance(rec, dict):
                continue
            row, fields = {"error": None if status == "successful" else status}, {}
            for k, v in rec.items():
                canon = t.get("request_columns", {}).get(k)
                m = (canon, 1.0, "") if canon else match(k)
                if not m or m[0] in row or isinstance(v, (dict, list)) or k in t.get(
                        "request_ignore", ()):
                    continue
                scale = m[1] if m[1] is not None else scale_to(
                    t.get("request_units", {}).get(k), "ms")
                try:
                    row[m[0]] = (str(v) if m[0] == "request_id" else
                                 num(v, k, scale if m[0].endswith("_ms") else 1.0))
                except RowError as e:
                    report.skip(e.reason, field_name=f"{t['requests']}.{status}[{i}].{k}")
                    break
                fields[m[0]] = (k, scale) if m[0].endswith("_ms") else k
                cols.setdefault(f"{t['requests']}[].{k}", m[0])
            else:
                try:
                    rows.append(check_ranges(row, fields))
                except RowError as e:
                    report.skip(e.reason, field_name=f"{t['requests']}.{status}[{i}].{e.field}")
    return rows


def _read_tree(path: Path):
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml  # pyyaml, only for YAML files
        try:
            with open(path, encoding="utf-8-sig") as fh:
                return yaml.safe_load(fh)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise InputError(path, _("invalid YAML ({error})").format(
                error=getattr(e, "problem", None) or type(e).__name__),
                line=mark.line + 1 if mark else None) from None
    return read_json(path)


def _tree_runs(obj, tool: str) -> list[tuple[str | None, object]]:
    where = TOOLS[tool].get("runs")
    runs = value_at(obj, where) if where else None
    if isinstance(runs, list):
        return [(f"{i}", r) for i, r in enumerate(runs) if isinstance(r, dict)]
    if isinstance(runs, dict):
        return [(str(k), r) for k, r in runs.items() if isinstance(r, dict)]
    return [(None, obj)]


def table_runs(lines: list[str], tool: str | None, cols: dict) -> dict[tuple, list]:
    """{(group column, value) or (): run_metrics rows} of the statistics tables in `lines`."""
    out: dict[tuple, list] = {}
    header = None
    for ln in lines + [""]:
        s = ln.strip()
        if not s:
            header = None
            continue
        if set(s) <= _RULE:
            continue
        if _BAR.search(s):
            cells = _BAR.split(s.strip("|│┃║ \t"))
        elif "," in s:
            cells = next(csv.reader(io.StringIO(s)))
        else:
            header = None
            continue
        cells = [c.strip() for c in cells]
        if header is None:
            header = cells
            continue
        _table_row(header, cells, tool, cols, out)
    return out


def _table_row(header, cells, tool, cols, out) -> None:
    t = TOOLS.get(tool or "", {})
    if t.get("wide"):  # one run a row, a metric a column (perf_analyzer's -f CSV)
        g = next((j for j, h in enumerate(header) if config_key(h) and j < len(cells)), None)
        rows = out.setdefault((header[g], cells[g]) if g is not None else (), [])
        for j, (h, cell) in enumerate(zip(header, cells)):
            x = number(cell)[0] if j != g else None
            nm = read_name(h, None, None, tool) if x is not None else None
            if nm:
                _row(rows, cols, h, nm, x)
        return
    stats = {j: stat_of(h, t) or ("value" if h.strip().lower() == "value" else None)
             for j, h in enumerate(header)}
    unit_col = next((j for j, h in enumerate(header) if h.strip().lower() == "unit"), None)
    name_j = next((j for j in range(len(header)) if not stats[j] and j != unit_col), 0)
    group = next(((header[j], cells[j]) for j in range(len(header))  # TGI's Batch Size
                  if j != name_j and not stats[j] and config_key(header[j]) and j < len(cells)
                  and number(cells[j])[0] is not None and not number(cells[j])[1]), ())
    name = cells[name_j] if name_j < len(cells) else ""
    for j, st in stats.items():
        if not st or j >= len(cells):
            continue
        x, u = number(cells[j])
        u = u or (cells[unit_col] if unit_col is not None and unit_col < len(cells) else None)
        nm = read_name(name, st, u or None, tool) if x is not None and name else None
        if nm:
            _row(out.setdefault(group, []), cols, f"{name} / {header[j]}", nm, x)


def multiheader_runs(lines: list[str], tool: str, cols: dict) -> list[tuple]:
    """GuideLLM's CSV: `header_rows` header rows (group, '<Status> <unit>' or field, statistic
    or unit), one benchmark a row; a 'Percentiles' cell lists `percentile_list`."""
    t = TOOLS[tool]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    n = t.get("header_rows", 3)
    heads = list(zip(*[r + [""] * (len(rows[0]) - len(r)) for r in rows[:n]]))
    out = []
    for i, rec in enumerate(r for r in rows[n:] if any(c.strip() for c in r)):
        got, pairs = [], []
        for (group, mid, last), cell in zip(heads, rec):
            status, _, unit = mid.partition(" ") if stat_of(last, t) or last == "Percentiles" \
                else ("", "", last)
            if status.lower() in t.get("skip", ()):
                continue
            if last == "Percentiles":
                vals = [number(v)[0] for v in cell.strip("[] ").split(",")]
                items = [(st, x) for st, x in zip(t.get("percentile_list", ()), vals)]
            else:
                items = [(stat_of(last, t) or None, number(cell)[0])]
            name = group if stat_of(last, t) or last == "Percentiles" else mid
            for st, x in items:
                nm = x is not None and (read_name(name, st, unit or None, tool) or read_name(
                    f"{group} {unit}", st, None, tool) or read_name(f"{group} {mid}", st, None, tool))
                if nm:
                    _row(got, cols, f"{group} / {mid} / {last}", nm, x)
                elif x is None and cell.strip():
                    pairs.append((f"{group}.{mid}", cell.strip()))
        out.append((str(i), got, _config([], tool, pairs)))
    return out


def _ffill(cells: list[str]) -> list[str]:
    out: list[str] = []
    for c in cells:  # "Request Latency |||": a title spans the empty cells after it
        out.append(c or (out[-1] if out else ""))
    return out


def _stacked(block, n, title, t, tool, cols, out) -> None:
    heads, i = None, 0
    while i < len(block):
        if block[i][0] == block[0][0]:  # a header section ("Benchmark") starts
            heads, i = [_ffill(r) for r in block[i:i + n]], i + n
            continue
        row, i = block[i], i + 1
        for j, cell in enumerate(row[1:], 1):
            g, mid, last = (h[j] if j < len(h) else "" for h in heads)
            st = stat_of(last, t)
            x = number(re.sub(r"\s*±.*$|\*$", "", cell))[0] if st else None
            nm = x is not None and (read_name(g, st, mid, tool) or read_name(
                f"{g} {mid}", st, None, tool) or read_name(mid, st, None, tool))
            if nm:
                _row(out.setdefault(row[0], []), cols, f"{title}: {g} / {mid} / {last}", nm, x)


def stacked_runs(lines: list[str], tool: str, cols: dict) -> dict[str, list]:
    """{benchmark: rows} of printed tables with `header_rows` header rows (group, unit,
    statistic; GuideLLM's console), one benchmark a row; only the tables whose title (the line
    before) names one of `tables`; "23.5 ± 1.1" and "28.0*" are read as 23.5 and 28.0."""
    t, n = TOOLS[tool], TOOLS[tool].get("header_rows", 3)
    out: dict[str, list] = {}
    title, block = "", []
    for ln in lines + [""]:
        s = ln.strip()
        if s.startswith("|") and not set(s) <= _RULE:
            block.append([c.strip() for c in s[1:-1 if s.endswith("|") else None].split("|")])
            continue
        if s and set(s) <= _RULE:
            continue
        if block and any(w in title for w in t.get("tables", ())):
            _stacked(block, n, title, t, tool, cols, out)
        block, title = [], s or ("" if block else title)
    return out


def line_rows(lines: list[str], tool: str | None, cols: dict) -> tuple[list, list]:
    """(run_metrics rows, (key, value text) pairs read as no metric) of `Key: value` lines."""
    rows, pairs, section_unit = [], [], None
    for ln in lines:
        s = _STAMP.sub("", ln.strip()).strip("#>|* \t")
        m = _KV.match(s)
        if not m:
            units = re.findall(r"\(([^()]+)\)", s)
            if s and units:
                section_unit = units[-1]
            continue
        key, val = m["key"].strip(), m["val"]
        multi = _MULTI.search(key)
        if multi:
            base = (key[:multi.start()] + key[multi.end():]).strip()
            words = [w.strip() for w in multi[2].split(",")]
            stats = [stat_of(("p" + w) if multi[1] and w[:1].isdigit() else w) for w in words]
            vals = [number(v)[0] for v in re.split(r"[,\s]+", val.strip("[]() ")) if v]
            for st, x in zip(stats, vals):
                nm = read_name(base, st, None, tool) if st and x is not None else None
                if nm:
                    _row(rows, cols, f"{key} [{st}]", nm, x)
            continue
        x, u = number(val)
        if x is None and val.endswith(")"):  # "5938 usec (standard deviation 1394 usec)"
            x, u = number(re.sub(r"\s*\(.*\)$", "", val))
        nm = read_name(key, None, u or section_unit, tool) if x is not None else None
        if nm is None and x is not None and u:
            nm = read_name(key, None, None, tool)
        if nm:
            _row(rows, cols, key, nm, x)
        else:
            pairs.append((key, val.strip()))
    return rows, pairs


def _segments(lines: list[str], key: str | None) -> list[tuple[str | None, list[str]]]:
    """The lines cut at each `key: value` line: [(value or None before the first, lines)]."""
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for ln in lines:
        m = _KV.match(_STAMP.sub("", ln.strip()).strip("#>|* \t")) if key else None
        if m and normalise(m["key"]) == normalise(key):
            out.append((m["val"].strip(), []))
        else:
            out[-1][1].append(ln)
    return out


def _structure(path: Path, sniff: Sniff, tool: str) -> str:
    st = TOOLS[tool].get("structure", "auto")
    if st != "auto":
        return st
    head = sniff.head.lstrip()
    if re.match(r"\{|\[\s*[{\]]", head) or path.suffix.lower() in (".yaml", ".yml", ".json"):
        return "tree"
    return "table" if path.suffix.lower() == ".csv" or _BAR.search(head) else "lines"


def load(path: Path, store, report) -> None:
    """One run per run the file holds (module doc), its aggregates in run_metrics."""
    sniff = Sniff.of(path)
    found = tool_of(sniff)
    if not found:
        raise InputError(path, _("no [tool.*] entry of the metric vocabulary matches its content"))
    tool = found[1]
    t = TOOLS[tool]
    structure = _structure(path, sniff, tool)
    runs: list[tuple[str | None, list, dict]] = []
    if structure == "tree":
        obj = _read_tree(path)
        for label, sub in _tree_runs(obj, tool):
            at = value_at(sub, t["metrics_at"]) if t.get("metrics_at") else sub
            rows = tree_rows(at, tool, report.columns)
            for other in (t.get("with_files", ()) if len(_tree_runs(obj, tool)) == 1 else ()):
                if (path.parent / other).is_file():  # its other aggregates, one run
                    rows += tree_rows(_read_tree(path.parent / other), tool, report.columns)
            runs.append((label, rows, _config([sub, obj], tool),
                         request_rows(sub, tool, report.columns, report)))
    else:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            lines = fh.read().replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if structure == "multiheader":
            runs = multiheader_runs(lines, tool, report.columns)
        elif structure == "stacked":
            runs = [(k, v, {}) for k, v in stacked_runs(lines, tool, report.columns).items()]
        elif structure == "table":
            for group, rows in table_runs(lines, tool, report.columns).items():
                cfg = ({config_key(group[0]) or normalise(group[0]): number(group[1])[0]}
                       if group else {})
                runs.append((" ".join(group) or None, rows, cfg))
        else:  # `run_key`: a `Key: value` line that starts the next run (perf_analyzer's
            key, shared = t.get("run_key"), []  # "Request concurrency: 2"); before it: shared
            for label, seg in _segments(lines, key):
                rows, pairs = line_rows(seg, tool, report.columns)
                shared = pairs if label is None else shared
                first = [(key, label)] if label is not None else []
                runs.append((label and f"{key} {label}", rows, _config([], tool, first + pairs
                                                                       + shared)))
    runs = [r + ([],) * (4 - len(r)) for r in runs if r[1]]
    if not runs:
        raise InputError(path, _("looks like {tool} output but holds no number the metric "
                                 "vocabulary reads (resources/metrics.toml)").format(tool=tool))
    for label, rows, cfg, requests in runs:
        cfg = {"tool": tool, **cfg}
        run_id = register_run(store, report, path, NAME, f"{tool}:{path.stem}",
                              engine=t.get("engine") or None,
                              model=str(cfg["model"]) if cfg.get("model") is not None else None,
                              label=f"{path.stem} {label}" if label else path.stem,
                              benchmark=t.get("benchmark") or tool, config=cfg)
        report.rows_loaded += insert_run_metrics(store, run_id, rows)
        insert_requests(store, report, run_id, requests)
