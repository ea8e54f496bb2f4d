"""Binding eval cases to the inference requests that produced them (the `case_links` table).

Three levels (../shared/DESIGN.md "The store"):

1. **exact id**: cases.request_id equals a request's id, as stored or in the x-request-id /
   `gen_ai.request.id` forms trace formats keep in requests.extra, or after normalisation
   (lower case, no leading ``chatcmpl-`` / ``cmpl-`` / ``req-`` / ``request-``, no trailing
   per-prompt ``-0`` on long ids). An exact string match beats a normalised one. A HELM run's
   instance id is its request id.
2. **multi-condition fuzzy**: at least two of: same prompt hash (see `prompt_hash`), prompt
   tokens within `Tolerances.prompt_tokens`, case timestamp within `Tolerances.window_s` of the
   request's [arrival, arrival + E2E].
3. **single condition** (flagged weak): the prompt hash alone, or the time alone (tokens alone
   are never enough).

Safety rules (never bind to a wrong request): a candidate is dropped when a known fact
contradicts it (another model where both name one; tokens or time outside tolerance; hashes
that differ where the eval and run hash the same text; another run than the case's
``extra.run_id``; a case whose request id is not found in a run whose ids the eval shares).
Where several candidates are equally good (same level-1 id in two runs, or the same number of
fuzzy conditions met), or two cases pick the same request at level 2/3, the case stays unbound
and is listed in `AssociationResult.ambiguous`. Requests bound at level 1 are not offered to
the fuzzy levels. Everything runs inside DuckDB (queries/assoc_*.sql) with equi-joins on
prompt hash and on (time bucket, prompt tokens): no Python loop over rows.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .fmt import ratio
from .sqlutil import load_query, quote_ident

SETTING_KEY = "association.tolerances"
# Crowd guard of the fuzzy levels: evidence shared by more requests than this (one prompt hash,
# or one prompt length in one time bucket) cannot single out a request, so it yields no
# candidates; such a case stays unbound (it is not listed as ambiguous).
MAX_FANOUT = 64
AMBIGUOUS_KEY = "association.ambiguous"
# [{case_id, reason, candidates, requests}] of the ambiguous cases (see ambiguous_detail)
AMBIGUOUS_DETAIL_KEY = "association.ambiguous_detail"
REASONS = {"id": "its request id matches several requests",
           "fuzzy": "several requests meet the same number of conditions",
           "shared": "its one best request is also another case's"}
_TEMP_TABLES = ("_assoc_cases", "_assoc_runs", "_assoc_requests", "_assoc_keys", "_assoc_pairs", "_assoc_l1",
                "_assoc_fuzzy")


def normalise_prompt(text: Any) -> str:
    """The prompt text as hashed: lower-cased, every run of whitespace (any Unicode space,
    newline or tab) collapsed to one space, leading / trailing space removed.

    A chat prompt given as a list of messages ({"role", "content"} dicts or strings) is the
    contents joined by newlines; a content given as a list of parts uses their "text" fields.
    """
    if text is None:
        return ""
    if isinstance(text, (list, tuple)):
        parts = []
        for m in text:
            c = m.get("content", m.get("text", "")) if isinstance(m, dict) else m
            if isinstance(c, (list, tuple)):
                c = "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
            parts.append("" if c is None else str(c))
        text = "\n".join(parts)
    return " ".join(str(text).lower().split())


def prompt_hash(text: Any) -> str | None:
    """SHA-256 (hex, 64 characters) of the UTF-8 bytes of `normalise_prompt(text)`.

    The same function fills cases.prompt_hash and requests.prompt_hash, so a prompt that was
    re-whitespaced or re-cased on one side still matches. None for a missing or blank prompt.
    """
    norm = normalise_prompt(text)
    if not norm:
        return None
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Tolerances:
    """How loose the fuzzy levels may be. Defaults are chosen for one eval run replayed
    against one server's trace:

    prompt_tokens (tokens, default 2): |case prompt tokens - request prompt tokens| allowed;
        covers BOS / chat-template tokens counted on one side only.
    window_s (seconds, default 5.0): the case timestamp may lie this far before the request's
        arrival or after its end (arrival + E2E); covers clock skew between the eval host and
        the server and logging delay.
    time_base_margin_s (seconds, default 3600): an eval and a run are compared on time only
        when their time ranges overlap once widened by this much (otherwise they use different
        clocks / epochs, and time is treated as unknown rather than as a contradiction).
    level3_hash / level3_time (default True): which single condition may bind at level 3.
    """
    prompt_tokens: int = 2
    window_s: float = 5.0
    time_base_margin_s: float = 3600.0
    level3_hash: bool = True
    level3_time: bool = True

    def __post_init__(self):
        if self.prompt_tokens < 0 or self.window_s < 0 or self.time_base_margin_s < 0:
            raise ValueError("association tolerances must not be negative")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> "Tolerances":
        """Tolerances from a dict (unknown keys ignored, missing ones default)."""
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in (d or {}).items() if k in names})


def binding_label(bound: int, total: int) -> str:
    """The binding rate as shown to the user: "21/23 (91%)" (fmt.ratio, as every view writes
    it); "0/0" when there is nothing."""
    return ratio(bound, total)


@dataclass(frozen=True)
class BindingRate:
    """How many of a group of cases are bound. per_level maps 1, 2, 3 -> cases bound there."""
    bound: int
    total: int
    per_level: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0, 3: 0})

    @property
    def rate(self) -> float | None:
        """bound / total in [0, 1], None when total is 0."""
        return self.bound / self.total if self.total else None

    def label(self) -> str:
        """ "21/23 (91%)" (see binding_label)."""
        return binding_label(self.bound, self.total)

    def to_dict(self) -> dict:
        return {"bound": self.bound, "total": self.total, "rate": self.rate,
                "per_level": {str(k): v for k, v in self.per_level.items()}}


@dataclass(frozen=True)
class AssociationResult:
    """Outcome of bind_cases over all cases of the store.

    bound / total / rate: all cases (badcases and correct ones); per_level: {1: n, 2: n, 3: n};
    ambiguous: case_ids left unbound because several requests fit equally well;
    per_cluster: badcase cluster name -> BindingRate of its badcases;
    tolerances: the Tolerances used.
    """
    bound: int
    total: int
    rate: float | None
    per_level: dict[int, int]
    ambiguous: list[str]
    per_cluster: dict[str, BindingRate] = field(default_factory=dict)
    tolerances: Tolerances = field(default_factory=Tolerances)

    def label(self) -> str:
        return binding_label(self.bound, self.total)

    def to_dict(self) -> dict:
        return {"bound": self.bound, "total": self.total, "rate": self.rate,
                "per_level": {str(k): v for k, v in self.per_level.items()},
                "ambiguous": list(self.ambiguous),
                "per_cluster": {k: v.to_dict() for k, v in self.per_cluster.items()},
                "tolerances": self.tolerances.to_dict()}


_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _run(con, name: str, params: dict | None = None):
    """Execute queries/<name>.sql passing only the $parameters the query uses."""
    sql = load_query(name)
    body = "\n".join(ln.split("--")[0] for ln in sql.splitlines())
    used = set(_PARAM.findall(body))
    return con.execute(sql, {k: v for k, v in (params or {}).items() if k in used})


def _save_setting(con, key: str, value) -> None:
    """Store.set_setting on a given connection (bind_cases runs on its own cursor)."""
    con.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", [key, json.dumps(value)])


def stored_tolerances(store) -> Tolerances:
    """The tolerances saved with the session (Tolerances() when none were saved)."""
    return Tolerances.from_dict(store.get_setting(SETTING_KEY))


def _rate_rows(con) -> list[tuple]:
    """(cluster, bad, total, bound, level1, level2, level3) per cluster and correctness, from
    the current case_links (queries/assoc_binding_rate.sql)."""
    return _run(con, "assoc_binding_rate").fetchall()


def _rates(rows, badcases_only: bool) -> dict[str | None, BindingRate]:
    """cluster -> BindingRate over the rows of _rate_rows (only the badcases' rows with
    badcases_only); clusters in the rows' order."""
    sums: dict = {}
    for cluster, bad, *counts in rows:
        if bad or not badcases_only:
            sums[cluster] = [a + int(b) for a, b in zip(sums.get(cluster, [0] * 5), counts)]
    return {k: BindingRate(total=t, bound=b, per_level={1: l1, 2: l2, 3: l3})
            for k, (t, b, l1, l2, l3) in sums.items()}


def _overall(rates: dict) -> BindingRate:
    lv = {k: sum(r.per_level[k] for r in rates.values()) for k in (1, 2, 3)}
    return BindingRate(sum(r.bound for r in rates.values()),
                       sum(r.total for r in rates.values()), lv)


def binding_rates(store, badcases_only: bool = True, con=None) -> dict[str | None, BindingRate]:
    """cluster -> BindingRate from the current case_links (queries/assoc_binding_rate.sql).
    With badcases_only (default) only cases with correct = false count."""
    own = con is None
    con = store.cursor() if own else con
    try:
        rows = _rate_rows(con)
    finally:
        if own:
            con.close()
    return _rates(rows, badcases_only)


def overall_rate(store, badcases_only: bool = False, con=None) -> BindingRate:
    """One BindingRate over all cases (or all badcases)."""
    return _overall(binding_rates(store, badcases_only, con))


# assoc_fuzzy's result when no case is left for it (its columns and types)
_EMPTY_FUZZY = ("CREATE OR REPLACE TEMP TABLE _assoc_fuzzy (ck BIGINT, rk BIGINT, run_id VARCHAR, "
                "nconds INTEGER, n_best BIGINT, score DOUBLE)")


def _all_bound_by_id(con) -> bool:
    """True when every staged case has a level-1 candidate (assoc_fuzzy would match none)."""
    return not con.execute("SELECT EXISTS (SELECT 1 FROM _assoc_cases c ANTI JOIN _assoc_l1 l "
                           "USING (ck))").fetchall()[0][0]


# The first pass stages only the requests an id can name ($all = false): when the ids bind
# every case (an eval replayed against its own trace) the fuzzy levels never run and the other
# requests are never copied (1M requests: 0.35 s of CPU and every later join over them).
# Otherwise these stages run again over every request ($all = true) before assoc_fuzzy.
FUZZY_RESTAGE = ("assoc_requests", "assoc_level1")
# A case with an id that no request stores as it is (its match can only be normalised)
_ID_NOT_STORED = ("SELECT count(*) AS n FROM _assoc_cases c ANTI JOIN _assoc_keys k "
                  "ON k.id = c.request_id WHERE c.request_id IS NOT NULL")
# A case with an id and no exact candidate left (assoc_level1 dropped every request storing it)
_NO_EXACT_LEFT = ("SELECT count(*) AS n FROM _assoc_cases c ANTI JOIN "
                  "(SELECT ck FROM _assoc_l1 WHERE exact) l USING (ck) "
                  "WHERE c.request_id IS NOT NULL")


def stage_level1(run, count, params: dict) -> dict:
    """Stage the cases, runs, keys, requests and (eval, run) pairs and the level-1 candidates
    (_assoc_l1), the way bind_cases and the warehouse's bind_in_engine both do; returns the
    params to run FUZZY_RESTAGE with.

    run(name, params) creates the temp table of queries/<name>.sql; count(sql) -> the number
    a `SELECT count(*) AS n ...` returns. An exact id beats a normalised one (assoc_level1),
    so the keys are first the ids as stored ($norm = false): while every case's id names a
    request and some of those requests survive level 1's checks, no request id is normalised
    (at 10M requests that lower / trim / prefix strip cost 3.3 s of CPU). A case left without
    an exact candidate brings in the normalised keys, and level 1 runs on them from the start
    (then _assoc_l1 is what one pass over all the keys gives).
    """
    run("assoc_cases", params)
    run("assoc_runs", params)
    p = {**params, "norm": False}
    run("assoc_request_keys", p)
    if count(_ID_NOT_STORED):  # an id no request stores: normalise before staging
        p = {**params, "norm": True}
        run("assoc_request_keys", p)
    for name in ("assoc_requests", "assoc_pairs", "assoc_level1"):
        run(name, p)
    if not p["norm"] and count(_NO_EXACT_LEFT):  # each request storing a case's id contradicts it
        p = {**params, "norm": True}
        for name in ("assoc_request_keys", "assoc_requests", "assoc_level1"):
            run(name, p)
    return p


def binding_params(tol: Tolerances) -> dict:
    """The $parameters of the assoc_*.sql queries for these tolerances."""
    return {"tokens_tol": int(tol.prompt_tokens), "window_s": float(tol.window_s),
            "bucket_s": max(2.0 * float(tol.window_s), 1.0),
            "margin_s": float(tol.time_base_margin_s),
            "l3_hash": bool(tol.level3_hash), "l3_time": bool(tol.level3_time),
            "max_fanout": MAX_FANOUT, "all": False, "norm": False}


def _staged_every_request(con) -> bool:
    """True when the first pass already staged every request (e.g. every request keeps
    other ids in extra): the second pass would stage the same rows again."""
    return con.execute("SELECT (SELECT count(*) FROM _assoc_requests) = "
                       "(SELECT count(*) FROM requests)").fetchall()[0][0]


def bind_cases(store, tol: Tolerances | None = None) -> AssociationResult:
    """Bind every case of the store to at most one request; rewrites case_links.

    tol: Tolerances (default: the ones saved with the session, else the documented defaults);
    the ones used are saved with the session. Idempotent: running it twice gives the same
    links. The list of ambiguous case_ids is also saved (setting "association.ambiguous").
    Runs on its own cursor; the temp tables it stages are dropped before it returns.
    """
    tol = tol or stored_tolerances(store)
    params = binding_params(tol)
    con = store.cursor()
    try:
        params = stage_level1(lambda name, p: _run(con, name, p),
                              lambda sql: con.execute(sql).fetchall()[0][0], params)
        if _all_bound_by_id(con):  # nothing left to match: no fuzzy pass over the requests
            con.execute(_EMPTY_FUZZY)
        else:
            if not _staged_every_request(con):
                for name in FUZZY_RESTAGE:
                    _run(con, name, {**params, "all": True})
            _run(con, "assoc_fuzzy", params)
        ambiguous = _run(con, "assoc_ambiguous").df()
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM case_links")
            _run(con, "assoc_write_links")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        amb = sorted(set(ambiguous["case_id"].tolist()))
        detail = _ambiguous_detail(con, ambiguous)
        rows = _rate_rows(con)  # one pass for both (two passes: 0.5 s CPU at 1M cases)
        total = _overall(_rates(rows, badcases_only=False))
        per_cluster = {k: v for k, v in _rates(rows, badcases_only=True).items() if k is not None}
        _save_setting(con, SETTING_KEY, tol.to_dict())
        _save_setting(con, AMBIGUOUS_KEY, amb)
        _save_setting(con, AMBIGUOUS_DETAIL_KEY, detail)
    finally:
        for t in _TEMP_TABLES:
            con.execute(f"DROP TABLE IF EXISTS {quote_ident(t)}")
        con.close()
    return AssociationResult(bound=total.bound, total=total.total, rate=total.rate,
                             per_level=dict(total.per_level), ambiguous=amb,
                             per_cluster=per_cluster, tolerances=tol)


def _ambiguous_detail(con, ambiguous) -> list[dict]:
    """Per ambiguous case: reason ('id' / 'fuzzy' / 'shared'), candidates (their number) and,
    where the staged tables name them, the candidate requests as "run_id / request_id" (every
    request its id matches; the request another case also claims). Read while the temp tables
    of bind_cases exist."""
    named: dict = {}
    for case_id, reqs in con.execute(
            "SELECT c.case_id, list(r.run_id || ' / ' || r.request_id ORDER BY r.run_id, "
            "r.request_id) FROM _assoc_l1 l JOIN _assoc_cases c USING (ck) "
            "JOIN _assoc_requests r USING (rk) WHERE l.n_cand > 1 GROUP BY c.case_id").fetchall():
        named[(case_id, "id")] = reqs
    for case_id, req in con.execute(
            "SELECT c.case_id, r.run_id || ' / ' || r.request_id FROM _assoc_fuzzy f "
            "JOIN _assoc_cases c USING (ck) JOIN _assoc_requests r USING (rk) "
            "WHERE f.n_best = 1").fetchall():
        named[(case_id, "shared")] = [req]
    out, seen = [], set()
    for r in ambiguous.to_dict("records"):
        if r["case_id"] in seen:
            continue
        seen.add(r["case_id"])
        out.append({"case_id": r["case_id"], "reason": r["reason"],
                    "candidates": int(r["candidates"]),
                    "requests": named.get((r["case_id"], r["reason"]), [])[:20]})
    out.sort(key=lambda d: d["case_id"])
    return out


def ambiguous_detail(store, con=None) -> list[dict]:
    """[{case_id, reason, candidates, requests}] of the cases the last bind_cases left
    ambiguous (reason and candidates None for a session saved before they were kept).
    con: a cursor of the store when called from another thread."""
    detail = store.get_setting(AMBIGUOUS_DETAIL_KEY, None, con=con)
    if isinstance(detail, list):
        return [d for d in detail if isinstance(d, dict) and "case_id" in d]
    return [{"case_id": c, "reason": None, "candidates": None, "requests": []}
            for c in ambiguous_cases(store, con=con)]


def ambiguous_text(d: dict) -> str:
    """"ambiguous: 3 equally good requests (several requests meet the same number of
    conditions)" for one ambiguous_detail entry."""
    n = d.get("candidates")
    head = "ambiguous" + (f": {n} equally good requests" if n and d.get("reason") != "shared"
                          else (f": its best request is claimed by {n} cases"
                                if n and d.get("reason") == "shared" else ""))
    why = REASONS.get(d.get("reason") or "")
    return head + (f" ({why})" if why and d.get("reason") != "shared" else "")


def ambiguous_cases(store, con=None) -> list[str]:
    """The case_ids the last bind_cases left ambiguous (saved with the session)."""
    return list(store.get_setting(AMBIGUOUS_KEY, [], con=con) or [])
