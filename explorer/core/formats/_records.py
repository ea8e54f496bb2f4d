"""Per-request trace files with fixed, known columns, read from vocabulary entries.

Each `[records.NAME]` entry of resources/metrics.toml is one format (NAME shown as the format):
its file kind (csv / jsonl / json: a JSON list, each record named by its position "[3].ttft_s"),
the columns that identify it (`require`, `bonus` raising the
confidence), and `fields`: canonical column -> [source column, scale] (`wall` parses a wall
clock, arrival_s then counts from the first row and runs.started_at keeps that clock; `ints` an
integer list). `error_from` = [code field, message field]: a record whose code is set failed
("code: message") and its zero latencies were never measured (NULL); `published` = [file
relative to it, its [tool.*] entry, config keys, engine key]: that file's aggregates become the
run's run_metrics and its model / settings the run's. The tools' own meanings and sources are in each entry's comment. A row with an
unreadable value or one outside _common.RANGES is skipped with its line and field.
"""
from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pandas as pd

from ..i18n import N_, _
from ._common import (RowError, field_text, first_problem, insert_requests, integer, no_rows, num,
                      prompt_hash, range_problems, read_text_csv, register_run, text)
from ..errors import InputError
from ._vocab import VOCAB
from .base import Sniff, iter_jsonl, read_json, side_json, value_at

_INTS = {"prompt_tokens", "completion_tokens"}
# the column notes the entries give, kept here so the catalogues extract them
_TEXTS = (N_("arrival_s (seconds since the first row; started_at)"), N_("(row number)"),
          N_("arrival_s (s since the trace start)"), N_("error (failed request)"),
          N_("(line number)"), N_("arrival_s (client clock)"), N_("(list position)"),
          N_("expected a JSON list of question records"), N_("no usable question records"),
          N_("not a question record with question_id and answer"), N_("no usable accuracy records"),
          N_("not a profiling-phase record"), N_("expected a JSON list of records"),
          N_("no model entry with is_correct"), N_("is_correct is not true/false"),
          N_("no problem with a model's is_correct"),
          N_("run_metrics (LLMPerf's summary of this run)"), N_("expected a list of integers"))


def _keys(sniff: Sniff, kind: str) -> set[str]:
    if kind == "json":  # a list of objects: the keys quoted in its head
        return (set(re.findall(r'"([^"\\]{1,64})"\s*:', sniff.head))
                if sniff.head.lstrip().startswith("[") else set())
    if kind == "jsonl":
        return set(sniff.first_json_line() or ())
    lines = [] if sniff.is_binary else sniff.first_lines(1)
    return {c.strip().strip('"').lower() for c in lines[0].split(",")} if lines else set()


def _arith(node):
    import ast
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Add, ast.Div)):
        a, b = _arith(node.left), _arith(node.right)
        return a - b if isinstance(node.op, ast.Sub) else a + b if isinstance(
            node.op, ast.Add) else a / b
    raise ValueError(node)


def _get(rec: dict, src: str):
    """A source column, a dotted path into a record, or arithmetic (+ - /) over such paths
    ("end_time - start_time"); None when a part is missing, not a number, or divides by 0."""
    if src in rec or not re.search(r"[.\[]| [-+/] ", src):
        return rec.get(src)
    if not re.search(r" [-+/] ", src):
        return value_at(rec, src)
    import ast

    def put(m):
        v = value_at(rec, m.group(0))
        if isinstance(v, str) and v.strip():  # a CSV cell: text, read as a number
            v = num(v, m.group(0))
        return repr(float(v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else "x"
    expr = re.sub(r"[A-Za-z_][\w.]*(?:\[-?\d+\])?", put, src)
    if "x" in expr:
        return None
    try:
        return _arith(ast.parse(expr, mode="eval").body)
    except (ValueError, ZeroDivisionError, SyntaxError):
        return None


def _value(rec: dict, canon: str, spec: list, need: tuple = ()):
    src, how = spec[0], spec[1] if len(spec) > 1 else 1.0
    if len(spec) > 2 and not (num(_get(rec, spec[2]), spec[2]) or 0) > 0:
        return None  # [source, scale, guard]: only where the guard is above 0
    v = _get(rec, src)
    if how == "wall":
        if pd.isna(v):
            raise RowError(src, _("not a timestamp: {value}").format(value=repr(rec.get("_raw_" + src))))
        return v
    if how == "ints":
        if v is not None and (not isinstance(v, list) or not all(isinstance(h, int) for h in v)):
            raise RowError(src, _(_TEXTS[-1]))
        return v
    if how == "hash":
        return prompt_hash(v)
    if how == "text":
        return text(v)
    if how == "raw":
        return v
    return integer(v, src) if canon in _INTS or how == "int" else num(v, src, float(how),
                                                                        required=canon in need)


def _records(path: Path, spec: dict, report):
    if spec["kind"] == "json":
        data = read_json(path)
        if not isinstance(data, list):
            raise InputError(path, _(spec.get("not_list", "expected a JSON list of records")))
        for i, rec in enumerate(data):
            if isinstance(rec, dict):
                yield i, rec
            else:
                report.skip(_(spec.get("bad_record", "not a JSON object")), field_name=f"[{i}]")
        return
    if spec["kind"] == "jsonl":
        yield from iter_jsonl(path, report)
        return
    df = read_text_csv(path, spec["require_load"])
    for col, f in spec["fields"].items():  # wall clocks parsed vectorised, raw kept for the reason
        if len(f) > 1 and f[1] == "wall":
            df["_raw_" + f[0]] = df[f[0]]
            df[f[0]] = pd.to_datetime(df[f[0]], errors="coerce", format="mixed")
    for i, rec in enumerate(df.to_dict("records")):
        yield i + 2, rec


def _loader(name: str, spec: dict):
    def load(path: Path, store, report) -> None:
        rows, extras, n, need = [], spec.get("extra", {}), 0, tuple(spec.get("required", ()))
        check = {c: (f[0], f[1]) if len(f) > 1 and f[1] != 1.0 else f[0]
                 for c, f in spec["fields"].items() if len(f) == 1 or isinstance(f[1], float)}
        listed = spec["kind"] == "json"
        for line, rec in _records(path, spec, report):
            n += 1
            at = f"[{line}]." if listed else ""  # a list's records are named by position
            row = {"request_id": _request_id(rec, spec, n if spec["kind"] == "csv" else line)}
            bad = []  # every unreadable field, then every value out of range, in one reason
            for c, f in [*spec["fields"].items(), *(("extra." + k, f) for k, f in extras.items())]:
                try:
                    row[c] = _value(rec, c.removeprefix("extra."), f, () if c[:6] == "extra." else need)
                except RowError as e:
                    row[c] = None
                    p = (e.field if str(e.field).startswith("[") else at + str(e.field), e.reason)
                    bad += [p] if p not in bad else []
            ex = {k[6:]: row.pop(k) for k in list(row) if k[:6] == "extra."}
            row["extra"] = {k: v for k, v in ex.items() if v is not None} or None
            bad += range_problems({k: v for k, v in row.items() if k in check},
                                  {c: (at + f[0], f[1]) if isinstance(f, tuple) else at + f
                                   for c, f in check.items()})
            if bad:
                report.skip("; ".join([bad[0][1]] + [field_text(f) + w for f, w in bad[1:]]),
                            line=None if listed else line, field_name=bad[0][0])
                continue
            code_f, msg_f = spec.get("error_from", (None, None))
            if code_f and rec.get(code_f) is not None:
                msg = text(rec.get(msg_f))
                row["error"] = f"{rec[code_f]}: {msg}" if msg else str(rec[code_f])
                row.update((c, None) for c in row if c.endswith("_ms") and row[c] == 0)
            err = spec.get("error_when_zero")
            if err and row.get(err[0]) == 0:
                row["error"] = err[1]
            rows.append(row)
        if not rows:
            raise no_rows(path, report)
        config, started = dict(spec.get("config", {})), None
        if "sum_check" in spec:  # a published total that differs from the parts: kept, counted
            key, name_ = spec["sum_check"]
            config[name_] = sum(1 for r in rows if (r["extra"] or {}).get(key) not in (
                None, r["prompt_tokens"] + r["completion_tokens"]) and None not in (
                r["prompt_tokens"], r["completion_tokens"]))
        if spec["fields"].get("arrival_s", [None, None])[1:] == ["wall"]:
            t0 = min(r["arrival_s"] for r in rows)
            for r in rows:
                r["arrival_s"] = (r["arrival_s"] - t0).total_seconds()
            started = t0.to_pydatetime()
        models = {(r["extra"] or {}).get("model") for r in rows} - {None}
        pub, engine = _published(path, spec), spec.get("engine")
        if pub:
            config.update((k, pub[0][k]) for k in spec["published"][2] if k in pub[0])
            engine = pub[0].get(spec["published"][3]) or engine
            models = {pub[0]["model"]} if pub[0].get("model") else models
        named = _named(store, path, spec)
        config.update((k, named[k]) for k in named["groups"])
        run_id = register_run(store, report, path, name,
                              _first(spec.get("run_id", ()), named) or f"{name}:{path.stem}",
                              engine=engine or _engine_of(path, spec), started_at=started,
                              model=models.pop() if len(models) == 1 else None,
                              benchmark=_first(spec.get("benchmark", ["{stem}"]), named),
                              config=config or None)
        insert_requests(store, report, run_id, rows)
        if pub:  # the tool's own aggregates of these requests
            from ._results import insert_run_metrics
            from .published import tree_rows
            insert_run_metrics(store, run_id, tree_rows(pub[0], spec["published"][1], {}))
            report.columns[pub[1]] = _(_TEXTS[-2])
        report.columns.update({_(k): _(v) for k, v in spec["columns"].items()})
    return load


def _request_id(rec: dict, spec: dict, n: int) -> str:
    """`request_id = "u{user_id}-q{question_id}"`: the record's columns, when it has them all;
    else the row / line number."""
    try:
        return spec["request_id"].format_map(rec) if "request_id" in spec else str(n)
    except KeyError:
        return str(n)


def _named(store, path: Path, spec: dict) -> dict:
    """What the file's path says: {stem}, {version} (the path's engine version), {experiment}
    (the folder without `folder = [pattern cut, default]`) and the groups of the first `names`
    pattern matching the stem (numbers as floats, unmatched groups None; kept in runs.config)."""
    from ._common import _version
    src = Path(getattr(store, "source_of", Path)(path))  # the input a UTF-8 copy stands for
    out = {"stem": src.stem, "folder": src.parent.name or None,
           "version": _version(store, path, None, None)[0]}
    if "folder" in spec:
        out["experiment"] = re.sub(spec["folder"][0], "", src.parent.name) or spec["folder"][1]
    pats = [re.compile(p) for p in spec.get("names", ())]
    out["groups"] = list(dict.fromkeys(g for p in pats for g in p.groupindex))
    m = next((m for n in (src.stem, src.parent.name) for p in pats if (m := p.match(n))), None)
    for g in out["groups"]:
        v = m.groupdict().get(g) if m else None
        out[g] = float(v) if v and re.fullmatch(r"\d+(?:\.\d+)?", v) else v
    return out


def _first(templates, named: dict) -> str | None:
    """The first template (a string or a list) whose names are all known (not None)."""
    known = {k: v for k, v in named.items() if v is not None}
    for t in [templates] if isinstance(templates, str) else templates:
        try:
            return t.format_map(known)
        except KeyError:
            continue
    return None


def _engine_of(path: Path, spec: dict) -> str | None:
    """`engine = "stem"`: the file name's first word names it (LLMPerf's <provider>_...)."""
    return path.stem.split("_")[0] if spec.get("engine_from") == "stem" else None


def _published(path: Path, spec: dict) -> tuple[dict, str] | None:
    """(the published aggregates beside the file, their name relative to it), or None."""
    if not spec.get("published"):
        return None
    rel = spec["published"][0].format(name=path.name)
    other = path.parent / rel
    if spec.get("published_under") and path.parent.name != spec["published_under"]:
        return None
    got = side_json(other)
    return None if got is None else (got, rel.lstrip("./"))


def _format(name: str, spec: dict) -> ModuleType:
    need = {c.lower() for c in spec["require"]}
    bonus = {c.lower() for c in spec.get("bonus", ())}
    base, high = spec["confidence"]

    def detect(sniff: Sniff) -> float:
        keys = {k.lower() for k in _keys(sniff, spec["kind"])}
        more = bonus & keys if spec.get("bonus_any") else bonus <= keys
        if spec.get("per_key") and not _units(sniff.first_json_line() or {}, spec):
            return 0.0
        return 0.0 if not need <= keys else high if more else base

    spec.setdefault("require_load", spec["require"])
    mod = ModuleType(f"{__name__}.{name}", spec.get("doc", name))
    mod.NAME, mod.KIND, mod.detect, mod.load = name, "trace", detect, _loader(name, spec)
    return mod


def _case_value(rec: dict, sub: dict, alts: list, named: dict, as_text: bool, **at):
    """The first alternative that holds a value: a record field (`*.f`: of the per_key
    sub-record; a number after it: divided by it), `@name` (what the path or the sidecar
    says), `=text`, or a template of {line} / {n} (the n-th record read)."""
    v = None
    for i, a in enumerate(alts):
        if isinstance(a, float):
            continue
        div = alts[i + 1] if i + 1 < len(alts) and isinstance(alts[i + 1], float) else None
        v = (named.get(a[1:]) if a[:1] == "@" else a[1:] if a[:1] == "=" else
             a.format(**at) if "{" in a else value_at(sub, a[2:]) if a[:2] == "*." else
             value_at(rec, a))
        if div is not None:
            v = v / div if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        elif as_text:
            v = text(v)
        if v:
            return v
    return v


def _correct(sub: dict, c: list, spec: dict):
    """[field] read as a correctness value, [field, "bool"] a JSON true / false, or
    [a, "==", b]. Raises ValueError (the reason) when unreadable or missing."""
    from .generic_eval import parse_correct
    v = sub.get(c[0])
    if len(c) == 3:
        return v is not None and v == sub.get(c[2])
    if c[1:] == ["bool"] and not isinstance(v, bool):
        raise ValueError(_(spec["bad_correct"]))
    if parse_correct(v) is None:
        raise ValueError(_("missing"))
    return parse_correct(v)


def _units(rec: dict, spec: dict) -> list[tuple[str | None, dict]]:
    """(key, sub-record) pairs a record holds: itself, or with `per_key` each value that is a
    map holding that key (GSM8K's one answer per model)."""
    pk = spec.get("per_key")
    if not pk:
        return [(None, rec)]
    return [(k, v) for k, v in rec.items() if isinstance(v, dict) and pk in v]


def _case_loader(name: str, spec: dict):
    """`[cases.NAME]`: an eval of a file's records, one case a record (or, with `per_key`,
    one eval per key and a case per record under it); see docs/formats.md."""
    def load(path: Path, store, report) -> None:
        from .generic_eval import insert_cases, register_eval
        named = _named(store, path, spec)
        side = spec.get("sidecar")
        if side:
            got = side_json(path.with_name(side[0]))
            named.update((k, None if got is None else text(value_at(got, p)))
                         for k, p in side[1].items())
        groups, need, n = {}, spec.get("record_require", ()), 0
        for line, rec in _records(path, spec, report):
            at = None if spec["kind"] == "json" else line
            units = _units(rec, spec)
            if not units or not all(k in rec for k in need):
                report.skip(_(spec["bad_record"]), line=at,
                            field_name=f"[{line}]" if spec["kind"] == "json" else None)
                continue
            key, allowed, why = spec.get("only", (None, (), ""))
            if key and rec.get(key) not in (None, *allowed):
                report.skip(_(why), line=at, field_name=key)
                continue
            for unit, sub in units:
                c = spec["correct"]
                try:
                    correct = _correct(sub, c, spec)
                except ValueError as e:
                    report.skip(str(e), line=at, field_name=f"{unit}.{c[0]}" if unit else c[0])
                    continue
                nm = {**named, "model": unit} if unit else named
                row = {k: _case_value(rec, sub, a, nm, spec.get("text", False), line=line, n=n)
                       for k, a in spec["fields"].items()}
                ex = {k: line if k == "(position)" else rec.get(k) for k in spec.get("extra", ())}
                ex = {k if k != "(position)" else "index": v for k, v in ex.items()
                      if v is not None or spec.get("extra_nulls")}
                row.update(correct=correct, _line=at, **({"extra": ex} if "extra" in spec else {}))
                groups.setdefault(unit, []).append(row)
            n += 1
        if not groups:
            raise InputError(path, _(spec["empty"]) + (
                first_problem(report) if spec.get("empty_says_why") else ""))
        report.columns = dict(spec["columns"])
        for unit, rows in groups.items():
            nm = {**named, "model": unit} if unit else named
            eval_id = register_eval(store, report, path, name, _first(spec["eval_id"], nm),
                                    model=nm.get("model"), benchmark=_first(
                                        spec.get("benchmark", ["{benchmark}"]), nm))
            insert_cases(store, report, eval_id, rows)
    return load


def formats() -> list[ModuleType]:
    """One format per `[records.*]` vocabulary entry (traces) and per `[cases.*]` (evals)."""
    mods = [_format(n, dict(s)) for n, s in VOCAB.get("records", {}).items()]
    for n, s in VOCAB.get("cases", {}).items():
        mods.append(_format(n, dict(s)))
        mods[-1].KIND, mods[-1].load = "eval", _case_loader(n, dict(s))
    return mods
