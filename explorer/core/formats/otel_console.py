"""OpenTelemetry spans as printed by the Python SDK's ConsoleSpanExporter (into requests).

Source: opentelemetry-sdk, opentelemetry/sdk/trace/__init__.py ReadableSpan.to_json(indent=4),
which ConsoleSpanExporter writes one span after another (stdout / a file), e.g.
  {"name": "llm_request", "context": {"trace_id": "0x…", "span_id": "0x…", "trace_state": "[]"},
   "kind": "SpanKind.SERVER", "parent_id": null, "start_time": "2024-10-04T05:16:47.340006Z",
   "end_time": "…Z", "status": {"status_code": "UNSET"}, "attributes": {"gen_ai.…": …},
   "events": [{"name": …, "timestamp": "…Z", "attributes": {…}}], "links": [],
   "resource": {"attributes": {"service.name": …}, "schema_url": ""}}
(older SDKs print the resource's attributes directly under "resource"). A file may hold one
span, many pretty-printed spans concatenated or one per line, or a JSON array of them; other
printed lines between spans are passed over. Attributes are plain JSON values here (OTLP wraps
them in {"stringValue": …}); each span is rewritten into the OTLP/JSON shape and mapped exactly
as explorer.core.formats.otlp maps it (vLLM's `llm_request` span, OpenTelemetry GenAI names:
gen_ai.usage.input_tokens, gen_ai.latency.*, ...). start_time -> arrival_s (unix s); a span
whose status_code is ERROR carries its description as the error.

Also the OpenTelemetry Collector's debug (formerly logging) exporter text, verbosity detailed
(exporter/debugexporter/internal/otlptext/traces.go): "ResourceSpans #N", "Resource attributes:"
(older: "Resource labels:"), "Span #N" with "Trace ID / ID / Name / Start time / End time /
Status code / Status message" lines ("2023-09-08 21:50:35.872800345 +0000 UTC"), then
"Attributes:" and "Events:" / "SpanEvent #N" with "-> key: Kind(value)" lines (Str, Int, Double,
Bool; older STRING, INT, ...), a log prefix (timestamp, "container | ") tolerated.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from ..i18n import N_, _
from ..errors import InputError
from .base import Sniff
from ._common import RowError, insert_events, insert_requests, no_rows, register_run, text
from .otlp import SpanRows

NAME = "otel_console"
KIND = "trace"

_CONTEXT = re.compile(r'"context"\s*:\s*\{\s*"trace_id"\s*:\s*"0x[0-9a-f]+"')


_TEXT_SPAN = re.compile(r"^\s*Trace ID\s+: [0-9a-f]{32}\s*$", re.M)
_PREFIX = re.compile(r"^(?:\S+\s+\|\s|\d{4}-\d\d-\d\dT\S+\s+\w+\s+(?:\S+\.go:\d+\s+)?)")
_ARROW = re.compile(r"^(\s*)-> ([^:]+): (?:(\w+)\((.*)\)|(.*))$")


def detect(sniff: Sniff) -> float:
    """High when the head holds a console-exported span (a "context" with a "0x…" trace_id
    and a "SpanKind.…" kind) or the Collector debug exporter's "Span #" / "Trace ID :" text."""
    if sniff.is_binary:
        return 0.0
    llm = '"gen_ai.' in sniff.head or '"llm_request"' in sniff.head
    if "Span #" in sniff.head and _TEXT_SPAN.search(sniff.head):
        return 0.9 if "gen_ai." in sniff.head or "llm_request" in sniff.head else 0.6
    if not _CONTEXT.search(sniff.head) or '"SpanKind.' not in sniff.head:
        return 0.0
    return 0.9 if llm else 0.6


def _text_ns(v: str, field: str) -> int:
    """'2023-09-08 21:50:35.872800345 +0000 UTC' -> unix ns (all nine digits kept)."""
    m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d+))? ([+-]\d{4})", v.strip())
    if not m:
        raise RowError(field, _("not a time: {value}").format(value=repr(v[:40])))
    dt = datetime.strptime(m[1] + m[3], "%Y-%m-%d %H:%M:%S%z")
    return int(dt.timestamp()) * 1_000_000_000 + int((m[2] or "0")[:9].ljust(9, "0"))


def _typed(kind: str | None, v: str):
    k = (kind or "").lower()
    try:
        return int(v) if k == "int" else float(v) if k == "double" else (
            v.lower() == "true") if k == "bool" else v
    except ValueError:
        return v


def _text_spans(doc: str) -> list[tuple[int, dict, dict]]:
    """(line, OTLP/JSON-shaped span, resource attributes) of every span of debug-exporter text."""
    out, res, sp, where, ev = [], {}, None, None, None
    for n, raw in enumerate(doc.splitlines(), 1):
        ln = _PREFIX.sub("", raw.rstrip())
        s = ln.strip()
        if s.startswith("ResourceSpans #"):
            res, where = {}, "res"
        elif s in ("Resource attributes:", "Resource labels:"):
            where = "res"
        elif s.startswith("Span #"):
            sp = {"attributes": {}, "events": [], "status": {}}
            out.append((n, sp, res))
            where = "span"
        elif sp is not None and s in ("Attributes:", "Events:"):
            where = s[:-1].lower()
        elif sp is not None and s.startswith("SpanEvent #"):
            ev = {"attributes": {}}
            sp["events"].append(ev)
            where = "event"
        elif where == "span" and " : " in ln + " ":
            k, _sep, v = (x.strip() for x in s.partition(":"))
            sp["_" + k.lower().replace(" ", "_")] = (v, n)
        elif (m := _ARROW.match(ln)) and where in ("res", "attributes", "event"):
            key, v = m[2].strip(), _typed(m[3], m[4] if m[3] else (m[5] or "").strip())
            if where == "res":
                res[key] = v
            elif where == "attributes":
                sp["attributes"][key] = v
            elif len(m[1]) > 6:  # an event attribute (indented under "-> Attributes:")
                ev["attributes"][key] = v
            elif key in ("Name", "Timestamp"):
                ev[key.lower()] = v
    return out


def _text_otlp(sp: dict) -> dict:
    """A debug-exporter span in the OTLP/JSON span shape that otlp._span reads."""
    get = {k[1:]: v for k, (v, _n) in ((k, v) for k, v in sp.items() if k.startswith("_"))}
    out = {"name": get.get("name"), "traceId": get.get("trace_id"), "spanId": get.get("id"),
           "startTimeUnixNano": _text_ns(get.get("start_time", ""), "Start time"),
           "endTimeUnixNano": _text_ns(get.get("end_time", ""), "End time"),
           "attributes": _attrs(sp["attributes"]),
           "events": [{"name": e.get("name"), "attributes": _attrs(e["attributes"]),
                       "timeUnixNano": _text_ns(e.get("timestamp", ""), "SpanEvent Timestamp")}
                      for e in sp["events"]]}
    if "error" in str(get.get("status_code", "")).lower():
        out["status"] = {"code": "ERROR", "message": get.get("status_message") or None}
    return out


def _spans(path: Path) -> list[tuple[int, dict]]:
    """(line where it starts, object) for every span object in the file."""
    from .base import check_document_size
    check_document_size(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            doc = fh.read()
    except UnicodeDecodeError as e:
        raise InputError(path, _("not UTF-8 text ({reason} at byte {byte})").format(reason=e.reason, byte=e.start)) from None
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        j = doc.find("{", i)
        k = doc.find("[", i)
        start = min(x for x in (j, k, len(doc)) if x >= 0)
        if start >= len(doc):
            return out
        try:
            obj, end = dec.raw_decode(doc, start)
        except ValueError:
            i = start + 1  # a brace in a printed line, not JSON
            continue
        line = doc.count("\n", 0, start) + 1
        for o in obj if isinstance(obj, list) else [obj]:
            if isinstance(o, dict) and isinstance(o.get("context"), dict):
                out.append((line, o))
        i = end


def _ns(iso, field: str) -> int | None:
    s = text(iso)
    if s is None:
        return None
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise RowError(field, _("not an ISO 8601 time: {value}").format(value=repr(s[:40]))) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(round(dt.timestamp() * 1e6)) * 1000


def _wrap(v) -> dict:
    """A plain JSON attribute value in OTLP's AnyValue shape."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [_wrap(x) for x in v]}}
    return {"stringValue": None if v is None else str(v)}


def _attrs(d) -> list[dict]:
    return [{"key": k, "value": _wrap(v)} for k, v in (d or {}).items()] if isinstance(d, dict) else []


def _otlp_span(o: dict) -> dict:
    """The console span `o` in the OTLP/JSON span shape that otlp._span reads."""
    ctx = o.get("context") or {}
    status = o.get("status") or {}
    sp = {"name": o.get("name"), "traceId": ctx.get("trace_id"), "spanId": ctx.get("span_id"),
          "startTimeUnixNano": _ns(o.get("start_time"), "start_time"),
          "endTimeUnixNano": _ns(o.get("end_time"), "end_time"),
          "attributes": _attrs(o.get("attributes")),
          "events": [{"name": e.get("name"), "timeUnixNano": _ns(e.get("timestamp"), "events.timestamp"),
                      "attributes": _attrs(e.get("attributes"))}
                     for e in o.get("events") or [] if isinstance(e, dict)]}
    if str(status.get("status_code", "")).upper().endswith("ERROR"):
        sp["status"] = {"code": "ERROR", "message": status.get("description")}
    return sp


def _resource(o: dict) -> dict:
    r = o.get("resource") or {}
    return r.get("attributes") if isinstance(r.get("attributes"), dict) else r


def load(path: Path, store, report) -> None:
    """Load every LLM request span of a console export as one run."""
    engine = version = None
    text_spans = _TEXT_SPAN.search(Sniff.of(path).head) is not None
    if text_spans:
        from .base import check_document_size
        check_document_size(path)
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            found = [(n, sp, (_text_otlp, res)) for n, sp, res in _text_spans(fh.read())]
    else:
        found = [(n, o, (_otlp_span, _resource(o))) for n, o in _spans(path)]
    if not found:
        raise InputError(path, _("no span object (with a \"context\") found"))
    spans = SpanRows(report)
    for line, o, (shape, res) in found:
        try:
            sp = shape(o)
        except RowError as e:  # a time that is not ISO 8601
            report.skip(e.reason, line=line, field_name=e.field)
            continue
        if not spans.add(sp, line):
            continue
        engine = engine or text(res.get("service.name"))
        version = version or text(res.get("service.version"))
    if not spans.rows:
        raise no_rows(path, report, N_("LLM request span"))
    if engine == "unknown_service":
        engine = None
    run_id = register_run(store, report, path, NAME, f"otel_console:{path.stem}", engine=engine,
                          engine_version=version, model=spans.model)
    insert_requests(store, report, run_id, spans.rows)
    insert_events(store, run_id, spans.events)
    report.columns.update({
        "attributes": _("as OTLP (see the otlp format: gen_ai.usage.*, gen_ai.latency.*)"),
        "start_time": "arrival_s (ISO 8601 -> unix s)", "end_time": _("finished event"),
        "status.status_code ERROR": "error", "events": "request_events"})
