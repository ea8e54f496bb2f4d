"""Reading arrival traces for the replay and writing a replay into the store as a run."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError, NoData
from .model import EngineConfig, ReplayResult, TraceRequest
from explorer.core.i18n import _, ngettext


def read_mooncake(path: str | Path, skipped: list | None = None) -> list[TraceRequest]:
    """Read a Mooncake trace (kvcache-ai/Mooncake FAST25-release/traces/*.jsonl): one JSON
    object a line with `timestamp` (ms from the trace start -> arrival_s = timestamp / 1000),
    `input_length`, `output_length` (tokens) and optional `hash_ids` (ids of 512-token prompt
    blocks). request_id is the 1-based line number, as the Mooncake trace format loader names
    them. Blank lines are skipped.

    Bad lines (not JSON, e.g. the cut last line of a truncated download; a missing or negative
    field; hash_ids not a list of integers) are skipped, as `inspect` skips them: each becomes an
    InputError(path, message, line, field) appended to `skipped` when a list is given, else one
    RuntimeWarning names them. Raises InputError when the file cannot be opened or holds no
    usable request (the message then names the first bad line).
    """
    p = Path(path)
    out: list[TraceRequest] = []
    bad: list[InputError] = []
    try:
        fh = open(p, "rb")
    except OSError as e:
        raise InputError(p, f"cannot open: {e.strerror or e}") from None
    loads = json.loads
    with fh:
        for ln, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                out.append(_mooncake_record(p, ln, loads, raw))
            except InputError as e:
                bad.append(e)
    if not out:
        if bad:
            raise InputError(p, ngettext("no usable request ({n} bad line; the first: {first})",
                                         "no usable request ({n} bad lines; the first: {first})",
                                         len(bad)).format(n=len(bad), first=bad[0]),
                             bad[0].line, bad[0].field)
        raise InputError(p, _("no request in the file"))
    if bad:
        if skipped is not None:
            skipped.extend(bad)
        else:
            import warnings
            more = _(" and {n} more").format(n=len(bad) - 1) if len(bad) > 1 else ""
            warnings.warn(f"{p}: " + ngettext("skipped {n} bad line: {first}{more}",
                                              "skipped {n} bad lines: {first}{more}",
                                              len(bad)).format(n=len(bad), first=bad[0], more=more),
                          RuntimeWarning, stacklevel=2)
    return out


def _mooncake_record(p: Path, ln: int, loads, raw: bytes) -> TraceRequest:
    """One Mooncake line -> TraceRequest; raises InputError(p, message, ln, field)."""
    try:
        rec = loads(raw)
    except ValueError as e:
        raise InputError(p, f"not JSON ({e})", ln) from None
    if not isinstance(rec, dict):
        raise InputError(p, "expected a JSON object", ln)
    try:
        ts, n_in, n_out = rec["timestamp"], rec["input_length"], rec["output_length"]
    except KeyError as e:
        raise InputError(p, "missing", ln, e.args[0]) from None
    for name, v in (("timestamp", ts), ("input_length", n_in), ("output_length", n_out)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0:
            raise InputError(p, f"expected a non-negative number, got {v!r}", ln, name)
    h = rec.get("hash_ids") or ()
    if not isinstance(h, (list, tuple)) or not all(type(x) is int for x in h):
        raise InputError(p, "expected a list of integers", ln, "hash_ids")
    return TraceRequest(str(ln), ts / 1000.0, int(n_in), int(n_out), tuple(h), 512)


def requests_from_store(store, run_id: str, limit: int | None = None) -> list[TraceRequest]:
    """The arrival trace of an observed run in the store: arrival_s, prompt_tokens,
    completion_tokens (as output_tokens) and extra.hash_ids where the format kept them (the
    Mooncake loader does; hash blocks of the run's config.hash_block_tokens, default 512).
    Requests without arrival_s or prompt_tokens are left out; completion_tokens missing -> 1.
    limit: only the first `limit` requests by arrival. Raises NoData when the run has no
    usable request."""
    cfg = store.df("SELECT config FROM runs WHERE run_id = ?", [run_id])
    hbt = 512
    if len(cfg) and cfg["config"].iloc[0]:
        try:
            hbt = int(json.loads(cfg["config"].iloc[0]).get("hash_block_tokens", 512))
        except (ValueError, TypeError, AttributeError):
            hbt = 512
    df = store.df("SELECT request_id, arrival_s, prompt_tokens, completion_tokens, "
                  "json_extract(extra, '$.hash_ids') AS hash_ids FROM requests "
                  "WHERE run_id = ? AND arrival_s IS NOT NULL AND prompt_tokens IS NOT NULL "
                  "ORDER BY arrival_s" + (" LIMIT ?" if limit else ""),
                  [run_id, int(limit)] if limit else [run_id])
    if df.empty:
        raise NoData(_("run {run_id} has no request with an arrival time and a prompt length").format(run_id=run_id))
    out = []
    for rid, a, p, c, h in df.itertuples(index=False):
        hs: tuple = ()
        if isinstance(h, str) and h:
            try:
                hs = tuple(int(x) for x in json.loads(h))
            except (ValueError, TypeError):
                hs = ()
        c = 1 if c is None or pd.isna(c) else max(1, int(c))
        out.append(TraceRequest(str(rid), float(a), int(p), c, hs, hbt))
    return out


def write_run(store, result: ReplayResult, *, label: str, engine: str = "replay",
              engine_version: str | None = None, benchmark: str | None = None,
              source_path: str | None = None, config: dict | None = None,
              simulated: bool = True) -> str:
    """Write a replay into the store as a new run: one `runs` row (format "replay",
    simulated=true, config = the EngineConfig settings merged with `config`, plus the summary
    under "summary"), its `requests` rows, `request_events` and `token_latencies` (when
    recorded). run_id is "replay:<label>" made unique with store.new_id. Returns the run_id.
    source_path, when it names an existing file, also fills source_sha256."""
    from ..store import sha256_of

    run_id = store.new_id("runs", "run_id", f"replay:{label}")
    cfg: dict[str, Any] = dict(result.config.to_dict()) if isinstance(result.config, EngineConfig) else {}
    if config:
        cfg.update(config)
    cfg["summary"] = {k: (None if isinstance(v, float) and v != v else v)
                      for k, v in result.summary.items()}
    sha = None
    if source_path and Path(source_path).is_file():
        sha = sha256_of(source_path)
    store.add_run(run_id, source_path=source_path, source_sha256=sha, format="replay",
                  engine=engine, engine_version=engine_version, label=label,
                  benchmark=benchmark, config=cfg, simulated=simulated)
    rq = result.requests.copy()
    rq.insert(0, "run_id", run_id)
    store.append("requests", rq)
    if len(result.events):
        ev = result.events.copy()
        ev.insert(0, "run_id", run_id)
        store.append("request_events", ev)
    if result.token_latencies is not None and len(result.token_latencies):
        tl = result.token_latencies.copy()
        tl.insert(0, "run_id", run_id)
        store.append("token_latencies", tl)
    return run_id


def summary_jsonable(summary: dict) -> dict:
    """The summary with numpy scalars made plain and NaN as None (for json.dumps)."""
    out = {}
    for k, v in summary.items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, float) and v != v:
            v = None
        out[k] = v
    return out
