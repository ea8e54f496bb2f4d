"""OpenTelemetry OTLP/JSON span exports of LLM requests (vLLM `--otlp-traces-endpoint`, any
server using the OTel GenAI semantic conventions).

Source: OTLP/JSON (opentelemetry-proto, `{"resourceSpans": [{"resource": {"attributes"},
"scopeSpans": [{"spans": [...]}]}]}`), one document per file or one per line (the collector's
file exporter). Attributes are `{"key", "value": {"stringValue" | "intValue" | "doubleValue" |
"boolValue" | "arrayValue"}}`. A span is a request when it is named `llm_request` (vLLM,
vllm/tracing.py SpanAttributes) or carries gen_ai.latency.* / gen_ai.usage.* attributes.
Mapping (latencies are seconds in the source):
  gen_ai.request.id -> request_id (else gen_ai.response.id, the completion's id that GenAI
  client spans carry, e.g. chatcmpl-…; else the span id); gen_ai.usage.prompt_tokens |
  gen_ai.usage.input_tokens -> prompt_tokens; gen_ai.usage.completion_tokens |
  gen_ai.usage.output_tokens -> completion_tokens; gen_ai.usage.cache_read.input_tokens ->
  cached_prompt_tokens and kv_cache_hit_rate = cached / prompt (NULL when cached exceeds
  prompt, as in generic_table); gen_ai.latency.
  time_to_first_token -> ttft_ms, .e2e -> e2e_ms, .time_in_queue -> queue_ms,
  .time_in_model_prefill -> prefill_ms, .time_in_model_decode -> decode_ms (all x1000);
  without gen_ai.latency.e2e, e2e_ms = the span's duration (end - start: a GenAI client span
  covers the whole call, the semantic conventions' gen_ai.client.operation.duration; vLLM's
  llm_request span runs from the request's arrival to its end);
  tpot_ms = decode_ms / (completion_tokens - 1), else (e2e - ttft) / (completion_tokens - 1);
  startTimeUnixNano -> arrival_s (unix s); gen_ai.response.finish_reasons -> finish_reason;
  status ERROR -> error; span events -> request_events (name as kind, timeUnixNano -> ts_s),
  plus arrived / first_token / finished derived from the span when no event gives them.
A span with a value out of range (_common.RANGES: a negative latency or token count, a token
count beyond the store's INTEGER) is skipped with its line (collector JSONL) and attribute.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..i18n import N_, _
from ..errors import InputError
from .base import Sniff, read_json
from ._common import (RowError, check_ranges, insert_events, insert_requests, integer,
                      no_rows, num, register_run, text)

NAME = "otlp"
KIND = "trace"

_LAT = {"gen_ai.latency.time_to_first_token": "ttft_ms", "gen_ai.latency.e2e": "e2e_ms",
        "gen_ai.latency.time_in_queue": "queue_ms",
        "gen_ai.latency.time_in_model_prefill": "prefill_ms",
        "gen_ai.latency.time_in_model_decode": "decode_ms"}
_PROMPT = ("gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens")
_COMPLETION = ("gen_ai.usage.completion_tokens", "gen_ai.usage.output_tokens")
_CACHED = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens")


def detect(sniff: Sniff) -> float:
    """High when the head is OTLP/JSON (resourceSpans) with gen_ai.* attributes or llm_request."""
    h = sniff.head
    if '"resourceSpans"' not in h and '"resource_spans"' not in h:
        return 0.0
    if '"llm_request"' in h or '"gen_ai.' in h:
        return 0.95
    return 0.5


def _value(v: dict):
    if not isinstance(v, dict):
        return v
    for k in ("stringValue", "doubleValue", "boolValue"):
        if k in v:
            return v[k]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [_value(x) for x in (v["arrayValue"].get("values") or [])]
    return None


def _attrs(lst) -> dict:
    return {a.get("key"): _value(a.get("value")) for a in (lst or []) if isinstance(a, dict)}


def _documents(path: Path) -> list[tuple[int | None, dict]]:
    """One OTLP/JSON document, or one per line (collector JSONL; the first line may be of any
    length). A UTF-8 byte-order mark is ignored."""
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        first = fh.readline().strip()
        second = next((ln for ln in fh if ln.strip()), "")
    if second and first.startswith("{") and first.endswith("}"):
        docs = []
        with open(path, encoding="utf-8-sig") as fh:
            for no, ln in enumerate(fh, 1):
                if ln.strip():
                    try:
                        docs.append((no, json.loads(ln)))
                    except ValueError as e:
                        raise InputError(path, _("invalid JSON ({error})").format(error=str(e)[:60]), line=no) from None
        return docs
    return [(None, read_json(path))]


def _first(attrs: dict, keys):
    for k in keys:
        if attrs.get(k) is not None:
            return k, attrs[k]
    return None, None


class SpanRows:
    """The request rows and timeline events of the LLM request spans of one file (this format
    and otel_console): a span that is not an LLM request or has a bad field is skipped with its
    line; the model is the first span's."""

    def __init__(self, report):
        self.report = report
        self.rows: list[dict] = []
        self.events: list = []
        self.model = None

    def add(self, sp: dict, line: int | None) -> bool:
        """Add the span `sp` (OTLP/JSON shape); False when it was skipped."""
        try:
            row, evs = _span(sp)
        except RowError as e:
            self.report.skip(e.reason, line=line, field_name=e.field)
            return False
        if row is None:
            self.report.skip(_("span {name} is not an LLM request").format(name=repr(sp.get("name"))), line=line)
            return False
        model = row.pop("_model", None)
        self.model = self.model or model
        self.rows.append(row)
        self.events += evs
        return True


def load(path: Path, store, report) -> None:
    """Load every LLM request span of an OTLP/JSON export as one run."""
    spans = SpanRows(report)
    engine = version = None
    for line, doc in _documents(path):
        if not isinstance(doc, dict):
            raise InputError(path, _("expected an OTLP/JSON object"), line=line)
        for rs in doc.get("resourceSpans") or doc.get("resource_spans") or []:
            res = _attrs((rs.get("resource") or {}).get("attributes"))
            engine = engine or text(res.get("service.name"))
            version = version or text(res.get("service.version"))
            for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
                for sp in ss.get("spans") or []:
                    spans.add(sp, line)
    if not spans.rows:
        raise no_rows(path, report, N_("LLM request span"))
    run_id = register_run(store, report, path, NAME, f"otlp:{path.stem}", engine=engine or "vllm",
                          engine_version=version, model=spans.model)
    insert_requests(store, report, run_id, spans.rows)
    insert_events(store, run_id, spans.events)
    report.columns.update({
        "gen_ai.request.id": _("request_id (else gen_ai.response.id, else the span id)"),
        "gen_ai.usage.prompt_tokens": "prompt_tokens",
        "endTimeUnixNano - startTimeUnixNano": _("e2e_ms when no gen_ai.latency.e2e"),
        "gen_ai.usage.completion_tokens": "completion_tokens",
        "gen_ai.usage.cache_read.input_tokens": "cached_prompt_tokens; kv_cache_hit_rate = cached / prompt",
        **{k: f"{c} (x1000)" for k, c in _LAT.items()},
        "gen_ai.latency.time_in_model_decode, completion_tokens": "tpot_ms = decode / (completion - 1)",
        "startTimeUnixNano": "arrival_s (/1e9, unix s)", "events": "request_events"})


def _span(sp: dict):
    a = _attrs(sp.get("attributes"))
    is_llm = sp.get("name") == "llm_request" or any(
        k.startswith(("gen_ai.latency.", "gen_ai.usage.")) for k in a)
    if not is_llm:
        return None, []
    rid = (text(a.get("gen_ai.request.id")) or text(a.get("gen_ai.response.id"))
           or text(sp.get("spanId")))
    if not rid:
        raise RowError("gen_ai.request.id", "missing (and no spanId)")
    row = {"request_id": rid}
    fields: dict = {}  # canonical column -> attribute (and scale), for the range check's reasons
    for k, c in _LAT.items():
        row[c] = num(a.get(k), k, 1000.0)
        fields[c] = (k, 1000.0)
    for c, keys in (("prompt_tokens", _PROMPT), ("completion_tokens", _COMPLETION),
                    ("cached_prompt_tokens", _CACHED)):
        k, v = _first(a, keys)
        row[c] = integer(v, k) if k else None
        fields[c] = k or keys[0]
    cached, prompt = row["cached_prompt_tokens"], row["prompt_tokens"]
    if cached is not None and prompt and 0 <= cached <= prompt:
        # NULL (not clipped to 1) when a span claims more cached than prompt tokens, as in
        # generic_table
        row["kv_cache_hit_rate"] = cached / prompt
    start = num(sp.get("startTimeUnixNano"), "startTimeUnixNano", 1e-9)
    end = num(sp.get("endTimeUnixNano"), "endTimeUnixNano", 1e-9)
    if row["e2e_ms"] is None and start is not None and end is not None:
        row["e2e_ms"] = (end - start) * 1000.0
        fields["e2e_ms"] = ("endTimeUnixNano - startTimeUnixNano", 1e-6)
    out = row["completion_tokens"]
    if out and out > 1:
        if row["decode_ms"] is not None:
            row["tpot_ms"] = row["decode_ms"] / (out - 1)
            fields["tpot_ms"] = ("gen_ai.latency.time_in_model_decode / "
                                 f"({fields['completion_tokens']} - 1)", 1000.0)
        elif row["e2e_ms"] is not None and row["ttft_ms"] is not None:
            row["tpot_ms"] = (row["e2e_ms"] - row["ttft_ms"]) / (out - 1)
            fields["tpot_ms"] = ("(gen_ai.latency.e2e - gen_ai.latency.time_to_first_token) / "
                                 f"({fields['completion_tokens']} - 1)", 1000.0)
    check_ranges(row, fields)
    row["arrival_s"] = start
    fr = a.get("gen_ai.response.finish_reasons") or a.get("gen_ai.response.finish_reason")
    row["finish_reason"] = ",".join(map(str, fr)) if isinstance(fr, list) else text(fr)
    status = sp.get("status") or {}
    if status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR"):
        row["error"] = text(status.get("message")) or "span status ERROR"
    row["_model"] = text(a.get("gen_ai.response.model") or a.get("gen_ai.request.model"))
    extra = {k: v for k, v in a.items() if k not in _LAT and k not in _PROMPT + _COMPLETION + _CACHED
             and k != "gen_ai.request.id"}
    extra.update({"trace_id": sp.get("traceId"), "span_id": sp.get("spanId")})
    extra["gen_ai.request.id"] = a.get("gen_ai.request.id")
    row["extra"] = extra
    evs, kinds = [], set()
    for ev in sp.get("events") or []:
        t = num(ev.get("timeUnixNano"), "events.timeUnixNano", 1e-9)
        kind = str(ev.get("name") or "event").strip().lower().replace(" ", "_")
        kinds.add(kind)
        detail = _attrs(ev.get("attributes"))
        evs.append((rid, t, kind, json.dumps(detail) if detail else None))
    if start is not None:
        if "arrived" not in kinds:
            evs.append((rid, start, "arrived", None))
        if "first_token" not in kinds and row["ttft_ms"] is not None:
            evs.append((rid, start + row["ttft_ms"] / 1000, "first_token", None))
    if end is not None and not kinds & {"finished", "error"}:
        evs.append((rid, end, "error" if row.get("error") else "finished", row.get("error")))
    return row, evs
