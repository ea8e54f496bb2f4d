"""What happened to one request, token by token, and what ran beside it (Qt-free).

request_timeline() turns a request's `request_events` (and, where they are missing, its
`requests` row) into phases (queued / prefill / decode, with preempted gaps cut out), events and
its inter-token latency (ITL) sequence with the gaps above the run's p99 ITL flagged. All times
are ms from the request's arrival. neighbours() lists the other requests of the run in flight in
a window around it (the swimlane). typical_control_request() and worst_badcase() pick the two
requests the compare view and the report show.

Terms: TTFT = first token - arrival (includes queueing); queue_ms = scheduling delay (arrival ->
first scheduled); prefill = scheduled -> first token; decode = first token -> finished; ITL =
gap between consecutive output tokens; a preemption is the engine evicting a running request
(vLLM: KV-cache blocks exhausted) until it is resumed (rescheduled).

Performance: in big stores per-request lookups go through ART indexes on request_id that
ensure_indexes() creates once (queries/timeline_indexes.sql); the run-wide p99 ITL and longest
request are computed once per run and cached for the store's lifetime (a run's rows are written
once, when it is loaded). See bench/timeline.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from .errors import NoData
from .sqlutil import load_query, quote_ident
from explorer.core.i18n import N_, _, ngettext

# "unsplit": the request ran but the source has no first-token time (e.g. HELM runtimes, an
# E2E alone), so prefill and decode cannot be told apart
PHASES = ("queued", "prefill", "decode", "preempted", "unsplit")
_PHASE_NAMES = {"queued": N_("queued"), "prefill": N_("prefill"), "decode": N_("decode"),
                "preempted": N_("preempted"), "unsplit": N_("unsplit")}


def phase_name(kind: str) -> str:
    """A phase kind as the user reads it (the report's table): 'queued' / '排队'."""
    return _(_PHASE_NAMES[kind]) if kind in _PHASE_NAMES else kind
# event kinds that bound phases; any other kind is shown as a plain marker
_KNOWN_KINDS = ("arrived", "queued", "scheduled", "first_token", "preempted", "resumed",
                "finished", "error")


@dataclass(frozen=True)
class Phase:
    """One span of a request's life: kind in PHASES, start_ms / end_ms from arrival (ms).

    note says how the span was obtained when it was not read straight from two events
    (e.g. "queueing not separable: TTFT span" or "from queue_ms")."""
    kind: str
    start_ms: float
    end_ms: float
    note: str = ""

    @property
    def duration_ms(self) -> float:
        return self.end_ms - self.start_ms

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "start_ms": self.start_ms, "end_ms": self.end_ms,
                "duration_ms": self.duration_ms, "note": self.note}


@dataclass(frozen=True)
class Event:
    """One event: kind (arrived, scheduled, first_token, preempted, ...), t_ms from arrival,
    detail from the source (None when it gave none), derived=True when computed from the
    requests row rather than recorded."""
    kind: str
    t_ms: float
    detail: str | None = None
    derived: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "t_ms": self.t_ms, "detail": self.detail,
                "derived": self.derived}


@dataclass(frozen=True)
class ItlSeries:
    """Inter-token latencies of one request, in token order.

    token_index: the gap before output token i (formats start at 1); itl_ms: the gap (ms);
    t_ms: when that token arrived, ms from the request's arrival (first token + cumulative
    gaps); above_p99: itl_ms > the run's p99 ITL (all False when the run has no p99)."""
    token_index: tuple[int, ...] = ()
    itl_ms: tuple[float, ...] = ()
    t_ms: tuple[float, ...] = ()
    above_p99: tuple[bool, ...] = ()

    def __len__(self) -> int:
        return len(self.itl_ms)

    def to_dict(self) -> dict[str, Any]:
        return {"token_index": list(self.token_index), "itl_ms": list(self.itl_ms),
                "t_ms": list(self.t_ms), "above_p99": list(self.above_p99)}


@dataclass(frozen=True)
class Timeline:
    """A request's life on one time axis (ms from arrival).

    source: "events" when request_events were recorded for it, "derived" when it was built
    from the requests row alone (arrival_s, queue_ms, prefill_ms or ttft_ms, decode_ms or
    e2e_ms); notes say what was derived or missing. preemptions holds the preempted gaps
    (also among phases). end_ms: when it finished (None when unknown). metrics: the requests
    row (ms, tokens, rates as stored)."""
    run_id: str
    request_id: str
    source: str
    arrival_s: float | None
    phases: tuple[Phase, ...]
    events: tuple[Event, ...]
    itl: ItlSeries
    run_p99_itl_ms: float | None
    preemptions: tuple[Phase, ...]
    end_ms: float | None
    metrics: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def gaps_above_p99(self) -> int:
        return sum(self.itl.above_p99)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict: run_id, request_id, source, arrival_s, end_ms, phases, events, itl,
        run_p99_itl_ms, gaps_above_p99, preemptions, metrics, notes."""
        return {"run_id": self.run_id, "request_id": self.request_id, "source": self.source,
                "arrival_s": self.arrival_s, "end_ms": self.end_ms,
                "phases": [p.to_dict() for p in self.phases],
                "events": [e.to_dict() for e in self.events],
                "itl": self.itl.to_dict(), "run_p99_itl_ms": self.run_p99_itl_ms,
                "gaps_above_p99": self.gaps_above_p99,
                "preemptions": [p.to_dict() for p in self.preemptions],
                "metrics": {k: _jsonable(v) for k, v in self.metrics.items()},
                "notes": list(self.notes)}


RUN_STATS_CACHED = 256  # runs whose timeline statistics a store keeps (Store.cache)


INDEX_MIN_ROWS = 1_000_000


def ensure_indexes(store, con=None, min_rows: int = INDEX_MIN_ROWS) -> list[str]:
    """Create the timeline's request_id ART indexes (queries/timeline_indexes.sql) on the tables
    that hold at least min_rows rows; smaller tables scan in a few ms and stay unindexed (an
    index costs memory, slows later inserts and blocks ALTER TABLE). Called when a run is first
    opened. Returns the tables now indexed. A failure (e.g. a concurrent write) is not an error:
    lookups then scan, only slower."""
    con = con or store.con
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_indexes()").fetchall()}
    sql = "\n".join(ln.split("--")[0] for ln in load_query("timeline_indexes").splitlines())
    done = []
    for stmt in (x.strip() for x in sql.split(";")):
        if not stmt:
            continue
        table = stmt.split(" ON ")[1].split()[0]
        if table in have:
            done.append(table)
            continue
        try:
            if con.execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0] >= min_rows:
                con.execute(stmt)
                done.append(table)
        except duckdb.Error:
            continue
    return done


def _run_stats(store, run_id: str, con, index: bool = True) -> dict[str, float | None]:
    """{'p99_itl_ms', 'itl_n', 'max_duration_s'} for a run, cached per store and run.
    index: build the lookup indexes first (the window opens many timelines; a one-off
    timeline, as in a report, scans instead: an index on 10M requests costs seconds)."""
    c = store.cache("timeline_run_stats", RUN_STATS_CACHED)
    indexed = store.cache("timeline_indexed_runs", RUN_STATS_CACHED)
    if index and run_id not in indexed:  # first indexed use of a run
        ensure_indexes(store, con)
        indexed[run_id] = True
    if run_id not in c:
        p = store.query("timeline_run_itl_p99", {"run_id": run_id}, con=con).iloc[0]
        s = store.query("timeline_run_span", {"run_id": run_id}, con=con).iloc[0]
        c[run_id] = {"p99_itl_ms": _num(p["p99_itl_ms"]), "itl_n": int(p["n"]),
                     "max_duration_s": _num(s["max_duration_s"]) or 0.0}
    return c[run_id]


def run_p99_itl_ms(store, run_id: str, con=None) -> float | None:
    """The run's 99th-percentile ITL in ms (linear interpolation, as numpy.percentile), or None
    when the run has no token_latencies. Cached per store and run."""
    return _run_stats(store, run_id, con or store.con)["p99_itl_ms"]


# -- the timeline ------------------------------------------------------------------------------
def request_timeline(store, run_id: str, request_id: str, con=None, *,
                     index: bool = True) -> Timeline:
    """The timeline of one request (see Timeline). con: a worker's own cursor (store.cursor()).
    index=False: no lookup indexes are built (one-off use, e.g. the headless report).

    Raises NoData when the run has no such request. Events are placed relative to the request's
    arrival_s (request_events.ts_s and requests.arrival_s share the run's clock); without
    arrival_s, relative to its earliest event."""
    con = con or store.con
    _run_stats(store, run_id, con, index)  # first use: indexes (big stores) + run stats
    params = {"run_id": run_id, "request_id": request_id}
    row_df = store.query("timeline_request", params, con=con)
    if row_df.empty:
        raise NoData(_("request {request_id!r} is not in run {run_id!r}").format(request_id=request_id, run_id=run_id))
    row = {k: _num(v) if isinstance(v, (float, np.floating)) else _py(v)
           for k, v in row_df.iloc[0].items()}
    ev_df = store.query("timeline_events", params, con=con)
    itl_df = store.query("timeline_itl", params, con=con)
    stats = _run_stats(store, run_id, con, index)
    metrics = {k: v for k, v in row.items() if k not in ("run_id", "request_id")}
    arrival_s = row.get("arrival_s")

    notes: list[str] = []
    if len(ev_df):
        source = "events"
        events, phases, preempt, end_ms = _from_events(ev_df, row, arrival_s, notes)
    else:
        source = "derived"
        events, phases, preempt, end_ms = _derive(row, notes)

    first_token = next((e.t_ms for e in events if e.kind == "first_token"), None)
    if first_token is None:
        first_token = row.get("ttft_ms")
    itl = _itl_series(itl_df, first_token, stats["p99_itl_ms"], notes)
    if itl_df.empty:
        notes.append(_("no per-token latencies for this request"))
    if arrival_s is None:
        notes.append(_("no arrival_s: times are relative; the swimlane cannot place this request"))
    if source == "derived" and (row.get("num_preemptions") or 0) > 0:
        n = int(row["num_preemptions"])
        notes.append(ngettext("{n} preemption recorded; its time is unknown (no request_events)",
                              "{n} preemptions recorded; their times are unknown (no "
                              "request_events)", n).format(n=n))
    return Timeline(run_id=run_id, request_id=request_id, source=source, arrival_s=arrival_s,
                    phases=tuple(phases), events=tuple(events), itl=itl,
                    run_p99_itl_ms=stats["p99_itl_ms"], preemptions=tuple(preempt),
                    end_ms=end_ms, metrics=metrics, notes=tuple(notes))


def _from_events(ev: pd.DataFrame, row: dict, arrival_s: float | None, notes: list[str]):
    ts = ev["ts_s"].to_numpy(dtype=float)
    ref = arrival_s if arrival_s is not None else float(ts.min())
    events = [Event(str(k), float((t - ref) * 1000.0), _py(d))
              for t, k, d in zip(ts, ev["kind"], ev["detail"])]
    first = {}
    for e in events:
        first.setdefault(e.kind, e.t_ms)
    last_end = [e.t_ms for e in events if e.kind in ("finished", "error")]
    arrived = first.get("arrived", 0.0 if arrival_s is not None else min(e.t_ms for e in events))
    sched = first.get("scheduled")
    ft = first.get("first_token")
    end = max(last_end) if last_end else None
    if sched is None and row.get("queue_ms") is not None:
        sched = arrived + row["queue_ms"]
        events.append(Event("scheduled", sched, _("from queue_ms"), derived=True))
        notes.append(_("scheduled time derived from queue_ms"))
    if ft is None and row.get("ttft_ms") is not None:
        ft = row["ttft_ms"]
        events.append(Event("first_token", ft, _("from ttft_ms"), derived=True))
        notes.append(_("first token time derived from ttft_ms"))
    if end is None and row.get("e2e_ms") is not None:
        end = row["e2e_ms"]
        events.append(Event("finished", end, _("from e2e_ms"), derived=True))
        notes.append(_("finish time derived from e2e_ms"))
    events.sort(key=lambda e: (e.t_ms, _KNOWN_KINDS.index(e.kind)
                               if e.kind in _KNOWN_KINDS else len(_KNOWN_KINDS)))
    preempt = _preemptions(events, end)
    phases = _base_phases(arrived, sched, ft, end)
    return events, _cut(phases, preempt), preempt, end


def _preemptions(events: list[Event], end: float | None) -> list[Phase]:
    """Pair each 'preempted' event with the next 'resumed' (else the next scheduled /
    first_token / finished event, else the end)."""
    out = []
    for i, e in enumerate(events):
        if e.kind != "preempted":
            continue
        stop, note = None, ""
        for f in events[i + 1:]:
            if f.kind == "resumed":
                stop = f.t_ms
                break
            if f.kind in ("scheduled", "first_token", "finished", "error", "preempted"):
                stop, note = f.t_ms, _("no 'resumed' event: ends at '{kind}'").format(kind=f.kind)
                break
        if stop is None:
            stop, note = (end if end is not None else e.t_ms), _("never resumed")
        out.append(Phase("preempted", float(e.t_ms), float(max(stop, e.t_ms)),
                         note or (e.detail or "")))
    return out


def _base_phases(arrived: float, sched: float | None, ft: float | None,
                 end: float | None) -> list[Phase]:
    phases = []
    if sched is not None and sched >= arrived:
        phases.append(Phase("queued", arrived, sched))
    if ft is not None:
        start = sched if sched is not None and sched <= ft else arrived
        phases.append(Phase("prefill", start, ft,
                            "" if sched is not None else _("queueing not separable: TTFT span")))
        if end is not None and end >= ft:
            phases.append(Phase("decode", ft, end))
    elif end is not None:
        start = sched if sched is not None else arrived
        phases.append(Phase("unsplit", start, end,
                            _("no first-token time: prefill and decode not separable")
                            if sched is not None else
                            _("no first-token time: prefill and decode not separable, nor "
                              "queueing")))
    return phases


def _cut(phases: list[Phase], gaps: list[Phase]) -> list[Phase]:
    """Remove the preempted gaps from the phases they fall in and add them as phases."""
    out = []
    for p in phases:
        pieces = [(p.start_ms, p.end_ms)]
        for g in gaps:
            nxt = []
            for a, b in pieces:
                if g.end_ms <= a or g.start_ms >= b:
                    nxt.append((a, b))
                    continue
                if g.start_ms > a:
                    nxt.append((a, g.start_ms))
                if g.end_ms < b:
                    nxt.append((g.end_ms, b))
            pieces = nxt
        out += [Phase(p.kind, float(a), float(b), p.note) for a, b in pieces if b > a]
    out += [g for g in gaps if g.end_ms > g.start_ms]
    return sorted(out, key=lambda p: (p.start_ms, PHASES.index(p.kind)))


def _derive(row: dict, notes: list[str]):
    """Phases from the requests row alone (see request_timeline)."""
    q, pre, ttft = row.get("queue_ms"), row.get("prefill_ms"), row.get("ttft_ms")
    dec, e2e, tpot = row.get("decode_ms"), row.get("e2e_ms"), row.get("tpot_ms")
    n_out = row.get("completion_tokens")
    used = []
    sched = q
    if q is not None:
        used.append("queue_ms")
    ft = None
    if pre is not None:
        ft = (q or 0.0) + pre
        used.append("prefill_ms")
        if q is None and ttft is not None and ttft >= pre:
            sched = ttft - pre  # queueing = TTFT - prefill
            ft = ttft
            used.append("ttft_ms")
    elif ttft is not None:
        ft = ttft
        used.append("ttft_ms")
    end = None
    if e2e is not None:
        end = e2e
        used.append("e2e_ms")
    elif ft is not None and dec is not None:
        end = ft + dec
        used.append("decode_ms")
    elif ft is not None and tpot is not None and n_out:
        end = ft + tpot * max(int(n_out) - 1, 0)
        used.append("tpot_ms x (completion_tokens - 1)")
    events = [Event("arrived", 0.0, None, derived=True)]
    if sched is not None:
        events.append(Event("scheduled", sched, None, derived=True))
    if ft is not None:
        events.append(Event("first_token", ft, None, derived=True))
    if end is not None:
        events.append(Event("error" if row.get("error") else "finished", end,
                            row.get("error"), derived=True))
    notes.append(_("derived from the requests row (no request_events): {columns}").format(
        columns=", ".join(used) if used else _("no timing columns recorded")))
    return events, _base_phases(0.0, sched, ft, end), [], end


def _itl_series(itl_df: pd.DataFrame, first_token_ms: float | None, p99: float | None,
                notes: list[str]) -> ItlSeries:
    if itl_df.empty:
        return ItlSeries()
    idx = itl_df["token_index"].to_numpy()
    val = itl_df["itl_ms"].to_numpy(dtype=float)
    base = first_token_ms
    if base is None:
        base = 0.0
        notes.append(_("first token time unknown: token times start at arrival"))
    t = base + np.cumsum(val)
    above = val > p99 if p99 is not None else np.zeros(len(val), dtype=bool)
    return ItlSeries(tuple(int(i) for i in idx), tuple(float(v) for v in val),
                     tuple(float(x) for x in t), tuple(bool(a) for a in above))


# -- what ran beside it ------------------------------------------------------------------------
NEIGHBOUR_COLUMNS = ["request_id", "arrival_s", "start_s", "end_s", "e2e_ms", "prompt_tokens",
                     "completion_tokens", "batch_size", "num_preemptions", "kv_cache_hit_rate",
                     "tpot_ms", "is_badcase", "concurrency"]


def neighbours(store, run_id: str, request_id: str, window_s: float = 30.0,
               con=None) -> pd.DataFrame:
    """Other requests of the run in flight between the request's arrival - window_s and its
    end + window_s.

    Returns one row per neighbour, ordered by arrival: request_id, arrival_s (s, run clock),
    start_s / end_s (s relative to the selected request's arrival), e2e_ms, prompt_tokens,
    completion_tokens, batch_size, num_preemptions, kv_cache_hit_rate, tpot_ms, is_badcase
    (pandas boolean: True bound to a wrong case, False bound to correct ones, <NA> unbound),
    concurrency (requests in flight at this row's start, itself and the selected one included,
    counted among the window's requests). Empty (same columns) when the request has no
    arrival_s. Raises NoData when the run has no such request."""
    con = con or store.con
    _run_stats(store, run_id, con)
    row = store.query("timeline_request", {"run_id": run_id, "request_id": request_id}, con=con)
    if row.empty:
        raise NoData(_("request {request_id!r} is not in run {run_id!r}").format(request_id=request_id, run_id=run_id))
    r = row.iloc[0]
    a = _num(r["arrival_s"])
    if a is None:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in NEIGHBOUR_COLUMNS})
    dur = next((v for v in (_num(r["e2e_ms"]), _sum(r, "ttft_ms", "decode_ms"),
                            _sum(r, "queue_ms", "prefill_ms", "decode_ms"), _num(r["ttft_ms"]))
                if v is not None), 0.0) / 1000.0
    lo, hi = a - window_s, a + dur + window_s
    stats = _run_stats(store, run_id, con)
    df = store.query("timeline_neighbours", {"run_id": run_id, "lo_s": lo, "hi_s": hi,
                                             "scan_lo_s": lo - stats["max_duration_s"] - 1e-6},
                     con=con)
    starts = np.sort(df["arrival_s"].to_numpy(dtype=float))
    ends = np.sort(df["end_s"].to_numpy(dtype=float))
    s = df["arrival_s"].to_numpy(dtype=float)
    # in flight at s: started at or before s and not ended before s
    df["concurrency"] = (np.searchsorted(starts, s, "right")
                         - np.searchsorted(ends, s, "left")).astype(int)
    df = df[df["request_id"] != request_id].reset_index(drop=True)
    df["start_s"] = df["arrival_s"] - a
    df["end_s"] = df["end_s"] - a
    df["is_badcase"] = df["is_badcase"].astype("boolean")
    return df[NEIGHBOUR_COLUMNS]


def case_request(store, case_id: str, con=None) -> tuple[str, str] | None:
    """(run_id, request_id) a case is bound to (its strongest link), or None when unbound."""
    df = store.query("timeline_case_request", {"case_id": case_id}, con=con)
    return None if df.empty else (str(df["run_id"][0]), str(df["request_id"][0]))


# -- picking requests for compare and the report ------------------------------------------------
# worst_badcase's ranking, and the cohort-frame columns it reads (the output tokens qualify a
# TPOT).
WORST_RANKS = ("num_preemptions", "tpot_ms", "e2e_ms", "ttft_ms")
WORST_COLUMNS = ("grp", "run_id", "request_id") + WORST_RANKS + ("completion_tokens",)


def _bound(frame: pd.DataFrame, grp: str, metrics=()) -> pd.DataFrame:
    """The bound rows of group `grp`, one per request: run_id, request_id and those of
    `metrics` the frame has (only those columns: no row copy of the whole cohort frame)."""
    need = {"grp", "run_id", "request_id"}
    if not need <= set(frame.columns):
        raise ValueError(f"cohort frame lacks columns {sorted(need - set(frame.columns))}")
    keep = ((frame["grp"] == grp) & frame["run_id"].notna() & frame["request_id"].notna())
    cols = ["run_id", "request_id"] + [m for m in metrics if m in frame.columns]
    return frame.loc[keep.to_numpy(), cols].drop_duplicates(["run_id", "request_id"])


def typical_control_request(store, cohort_frame: pd.DataFrame) -> tuple[str, str]:
    """(run_id, request_id) of the bound control request whose TPOT is nearest the control
    group's median TPOT (ties: smallest run_id, request_id).

    cohort_frame: explorer.core.analysis.cohort_frame(store, cohort) (columns grp, run_id,
    request_id, tpot_ms, ...); TPOT missing from the frame is read from the store.
    Raises NoData when no bound control request has a TPOT."""
    ctl = _with_metric(store, _bound(cohort_frame, "control", ("tpot_ms",)),
                       "tpot_ms").dropna(subset=["tpot_ms"])
    if ctl.empty:
        raise NoData(_("no bound control request with a TPOT to compare with"))
    med = float(np.median(ctl["tpot_ms"].to_numpy(dtype=float)))
    ctl = ctl.assign(_d=(ctl["tpot_ms"].astype(float) - med).abs())
    best = ctl.sort_values(["_d", "run_id", "request_id"]).iloc[0]
    return str(best["run_id"]), str(best["request_id"])


MIN_TOKENS_FOR_TPOT = 8  # TPOT over fewer output tokens is dominated by one or two gaps


def worst_badcase(cohort_frame: pd.DataFrame) -> tuple[str, str]:
    """(run_id, request_id) of the cohort's worst bound badcase, ranked by (1) most preemptions,
    (2) highest TPOT among requests with at least MIN_TOKENS_FOR_TPOT output tokens (a TPOT
    over one or two gaps is not comparable; unknown token counts are kept), (3) longest E2E,
    (4) longest TTFT; missing values rank last, ties by run_id, request_id.
    Raises NoData when no badcase is bound to a request with any of those metrics."""
    b = _bound(cohort_frame, "bad", WORST_RANKS + ("completion_tokens",))
    keys = []
    for col in WORST_RANKS:
        if col not in b.columns:
            continue
        v = pd.to_numeric(b[col], errors="coerce")
        if col == "tpot_ms" and "completion_tokens" in b.columns:
            n = pd.to_numeric(b["completion_tokens"], errors="coerce")
            v = v.where(n.isna() | (n >= MIN_TOKENS_FOR_TPOT))
        b[f"_{col}"] = v
        keys.append(f"_{col}")
    if not keys or b[keys].isna().all(axis=None):
        raise NoData(_("no badcase of this cohort is bound to a request with preemptions, TPOT, "
                     "E2E or TTFT"))
    best = b.sort_values(keys + ["run_id", "request_id"], ascending=[False] * len(keys) + [True, True],
                         na_position="last").iloc[0]
    return str(best["run_id"]), str(best["request_id"])


def _with_metric(store, f: pd.DataFrame, col: str) -> pd.DataFrame:
    f = f.copy()
    if col in f.columns and f[col].notna().all():
        return f
    got = store.query("timeline_request_metrics",
                      {"run_ids": [str(x) for x in f["run_id"]],
                       "request_ids": [str(x) for x in f["request_id"]]})
    got = got[["run_id", "request_id", col]].rename(columns={col: "_m"})
    f = f.merge(got, on=["run_id", "request_id"], how="left")
    f[col] = f[col].fillna(f["_m"]) if col in f.columns else f["_m"]
    return f.drop(columns="_m")


# -- small helpers -----------------------------------------------------------------------------
def _num(v) -> float | None:
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _sum(r, *cols) -> float | None:
    vals = [_num(r[c]) for c in cols]
    return None if any(v is None for v in vals) else sum(vals)


def _py(v):
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v


def _jsonable(v):
    v = _py(v)
    if isinstance(v, float) and math.isnan(v):
        return None
    return v
