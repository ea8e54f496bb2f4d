"""The window's data, Qt-free: what explorer.session's worker jobs compute and send on the
results bus (its topics and value types: explorer/core/bus.py): the analyses of a cohort
through the one pipeline (analyse, analyse_section), the selection's payload, the case and
request rows, the counts and the clusters; a failed analysis as Failure. Runs in workers;
unit-tested without Qt (explorer.session re-exports every name)."""
from __future__ import annotations

import copy
import dataclasses
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Iterable

import pandas as pd

from explorer.core import sections
from explorer.core.bus import Failure, Published, published
from explorer.core.i18n import _
from explorer.core.names import DEMO_NOTE
from explorer.core.sqlutil import load_query
from explorer.core.store import Store

if TYPE_CHECKING:  # the job's context (explorer.workers.JobContext): cancelled(), publish()
    from typing import Protocol

    class JobContext(Protocol):
        def cancelled(self) -> bool: ...
        def publish(self, partial: Any) -> None: ...

log = logging.getLogger(__name__)

ANALYSIS_KEYS = sections.keys("cohort", "store")  # the window's analyses: cohort ... engine
CASE_LIMIT = 5000  # rows fetched for the case table
REQUEST_LIMIT = 500  # rows of a heatmap cell's request list
REQUEST_COLUMNS = ["run_id", "request_id", "arrival_s", "ttft_ms", "tpot_ms", "queue_ms",
                   "e2e_ms", "num_preemptions", "kv_cache_hit_rate"]


def to_payload(value: Any) -> Any:
    """A result object -> its JSON-able dict; an exception -> Failure."""
    if isinstance(value, BaseException):
        from explorer.core.errors import NoData
        return Failure(str(value) or type(value).__name__, isinstance(value, NoData))
    if hasattr(value, "reason") and hasattr(value, "section") and hasattr(value, "kind"):
        return Failure(str(value.reason), value.kind != "error")  # analysis.SectionError
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


def frame_bytes(frame) -> int:
    """The memory a cohort frame holds (pandas memory_usage(deep=True): strings included);
    0 for anything else (a Failure)."""
    return int(frame.memory_usage(deep=True).sum()) if isinstance(frame, pd.DataFrame) else 0


def fetch_meta(store: Store) -> dict:
    """Counts and the simulated flag of what is loaded."""
    con = store.con
    sim = con.execute("SELECT coalesce(bool_or(simulated), false) FROM runs").fetchall()[0][0] or \
        con.execute("SELECT coalesce(bool_or(simulated), false) FROM evals").fetchall()[0][0]
    note = _(DEMO_NOTE) if sim else None  # shown in the current language
    return {"simulated": bool(sim), "demo_note": note,
            "cases": store.count("cases"), "requests": store.count("requests"),
            "runs": store.count("runs")}


def fetch_evals(store: Store, con=None) -> list[dict]:
    """The loaded evals: [{eval_id, model, cases}], for the window's eval picker."""
    df = (con or store.con).execute(
        "SELECT eval_id, any_value(model) AS model, count(*) AS n FROM cases "
        "WHERE eval_id IS NOT NULL GROUP BY eval_id ORDER BY eval_id").df()
    return [{"eval_id": str(e), "model": None if pd.isna(m) else str(m), "cases": int(n)}
            for e, m, n in zip(df["eval_id"], df["model"], df["n"])]


def fetch_clusters(store: Store, eval_id: str | None = None) -> list[dict]:
    """Badcase clusters (explorer.core.clusters.cluster_summary) as dicts, largest first;
    eval_id: those of one eval (analysis.cohort.cluster_table)."""
    if eval_id is not None:
        from explorer.core.analysis.cohort import cluster_table
        return [dict(r, name=r.get("cluster")) for r in cluster_table(store, eval_id=eval_id)]
    from explorer.core.clusters import cluster_summary
    rows = [dataclasses.asdict(c) for c in cluster_summary(store)]
    for r in rows:
        r.setdefault("name", r.get("cluster"))
    return rows


def fetch_cases(store: Store, case_ids: Iterable[str] | None, frame: pd.DataFrame | None = None,
                limit: int = CASE_LIMIT, con=None) -> pd.DataFrame:
    """Case rows for the case table: case_id, prompt, prediction, correct, cluster, category,
    run_id, request_id, level (the strongest link), ambiguous (for an unbound case that several
    requests fit equally well: why, and the candidates where known). case_ids None -> no rows. con: a cursor
    of the store (Store.cursor) when called from a thread other than the store's."""
    cols = ["case_id", "prompt", "prediction", "correct", "cluster", "category", "model",
            "run_id", "request_id", "level"]
    ids = list(case_ids or [])[:limit]
    if not ids:
        return pd.DataFrame(columns=cols + ["ambiguous"])
    # the best link (queries/case_best_link.sql, the view's text) of these cases' links only:
    # a case's best link depends on its own links alone, and the view ranked every link of the
    # store on each call (5,000 of 100k cases at 1M requests: 28 ms CPU vs 50 ms)
    df = (con or store.con).execute(
        "WITH k AS (SELECT unnest(?::VARCHAR[]) AS case_id),"
        " case_links AS (SELECT * FROM main.case_links WHERE case_id IN (SELECT case_id FROM k)),"
        f" l AS (\n{load_query('case_best_link')}\n)"
        " SELECT c.case_id, c.prompt, c.prediction, c.correct, c.cluster, c.category, c.model,"
        " l.run_id, l.request_id, l.level"
        " FROM cases c SEMI JOIN k USING (case_id) LEFT JOIN l USING (case_id)"
        " ORDER BY c.correct, c.case_id", [ids]).df()
    from explorer.core.association import ambiguous_detail, ambiguous_text
    amb = {d["case_id"]: d for d in ambiguous_detail(store, con=con)}
    df["ambiguous"] = [None if c not in amb or pd.notna(r) else
                       ambiguous_text(amb[c]) + (": " + ", ".join(amb[c]["requests"])
                                                 if amb[c].get("requests") else "")
                       # lists: iterating pandas' Arrow-backed strings costs ~1 µs a value
                       for c, r in zip(df["case_id"].tolist(), df["request_id"].tolist())]
    return df[cols + ["ambiguous"]]


def fetch_requests(store: Store, keys: pd.DataFrame, limit: int = REQUEST_LIMIT) -> pd.DataFrame:
    """Rows of the requests table for the (run_id, request_id) pairs in `keys` (the first
    `limit`): REQUEST_COLUMNS, times in ms (arrival_s in s), in the order of `keys`."""
    keys = keys[["run_id", "request_id"]].head(limit)
    if keys.empty:
        return pd.DataFrame(columns=REQUEST_COLUMNS)
    cols = ", ".join(f"r.{c}" for c in REQUEST_COLUMNS)
    df = store.df(
        f"SELECT {cols} FROM (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) AS request_id,"
        " unnest(range(?)) AS k) q JOIN requests r USING (run_id, request_id) ORDER BY q.k",
        [keys["run_id"].astype(str).tolist(), keys["request_id"].astype(str).tolist(), len(keys)])
    return df[REQUEST_COLUMNS]


def _on_cursor(store: Store, read):
    """read(view) with `view` the store seen through a cursor of its own (Store.cursor), so
    a reader that uses store.con runs on this thread beside the store's own connection (a
    DuckDB connection must not be shared between threads). For reads only."""
    con = store.cursor()
    try:
        view = copy.copy(store)
        view.con = con
        return read(view)
    finally:
        con.close()


def select_payload(store: Store, cohort, frame, ids, objects: dict, params: dict):
    """The "selection" payload (analysis.selected.analyse_selection: the selection against the
    rest of the cohort and the control, its heatmap cells, versions, SLA and conclusion), a
    Failure when it raised, or None without a cohort frame."""
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return None
    from explorer.core.analysis.selected import analyse_selection
    try:
        return analyse_selection(store, cohort, frame, ids, objects, params)
    except Exception as e:  # noqa: BLE001 - shown in the panels
        log.exception("selection analysis failed")
        return to_payload(e)


def analyse(store: Store, cohort, params: dict, cache: dict, ctx: JobContext | None = None,
            keys: tuple[str, ...] = ANALYSIS_KEYS):
    """The window's analyses of `cohort`: sections.run over the sections of groups
    "cohort" and "store" (ANALYSIS_KEYS), the one pipeline `report` also runs. What is the
    window's own: `cache` (kept per store content: the sections declaring what they depend on,
    e.g. versions and SLA per eval, are reused when only the cluster changed), two threads for
    the frame-only sections, the case rows fetched meanwhile on a cursor of their own, the
    partial results published through ctx once cohort, comparison and tree are there, and the
    heatmap's cells of the cohort's cases. keys: the sections to run (default ANALYSIS_KEYS; the
    window defers those on tabs nobody sees, Session.deferred). Returns (payload, result objects,
    the frame's bytes): a section's payload is its bus.Published (or Failure); frame_bytes, counted on the case rows' thread once they are fetched
    (0.45-0.8 s at 10M requests, mostly the object columns, hidden behind the analyses)."""

    from explorer.core.analysis import SectionError, cohort_frame
    objects: dict[str, Any] = {}
    out: dict[str, Any] = {}
    ok = lambda: {k: v for k, v in objects.items() if not isinstance(v, SectionError)}  # noqa: E731
    try:
        frame = cohort_frame(store, cohort)
    except Exception as e:  # noqa: BLE001 - shown in the panels
        frame, out["frame"] = None, to_payload(e)
    else:
        out["frame"] = frame
    ids = frame["case_id"].tolist() if isinstance(frame, pd.DataFrame) else []
    cases = None  # the case rows, fetched on a cursor of their own beside the analyses

    def on_result(key: str, result) -> None:
        objects[key], out[key] = result, published(key, to_payload(result), result)
        if key == "tree":
            out["cases"] = cases.result()
            if ctx is not None:
                ctx.publish((dict(out), ok()))

    con = store.cursor()
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="cases") as ex:
            cases = ex.submit(fetch_cases, store, ids, con=con)
            nbytes = ex.submit(frame_bytes, frame)
            sections.run(store, cohort, params, keys=keys, cache=cache, threads=2,
                         oom_is_section_error=True,
                         cancelled=ctx.cancelled if ctx is not None else None,
                         on_result=on_result, frame=frame)
            out.setdefault("cases", cases.result())
    finally:
        con.close()
    _with_case_cells(out, objects, frame)
    return out, ok(), nbytes.result()


def _with_case_cells(out: dict, objects: dict, frame) -> None:
    """The heatmap's Published with its cells of the cohort's cases (the selection outline)
    in its view."""
    hm = out.get("heatmap")
    if isinstance(hm, Published) and isinstance(hm.view, dict) and \
            isinstance(frame, pd.DataFrame) and len(frame):
        from explorer.core.analysis.selected import cell_counts  # the cohort's cases per cell
        out["heatmap"] = dataclasses.replace(
            hm, view={**hm.view, "case_cells": cell_counts(objects["heatmap"], frame)})


def analyse_section(store: Store, cohort, params: dict, cache: dict, key: str,
                    ctx: JobContext | None = None):
    """One section the window deferred (its tab was behind another), computed when asked:
    the same pipeline, cache and parameters as analyse(). Returns (payload, result object)."""
    from explorer.core.analysis import cohort_frame
    frame, given = None, {}
    if key == "heatmap":  # the one that needs the frame after it ran (its cases' cells); SLA
        try:               # and engine never read it, so the pipeline builds none for them
            frame = given["frame"] = cohort_frame(store, cohort)
        except Exception:  # noqa: BLE001 - the section says why (sections.Run.frame)
            given["frame"] = None
    res = sections.run(store, cohort, params, keys=(key,), cache=cache,
                       cancelled=ctx.cancelled if ctx is not None else None,
                       oom_is_section_error=True, **given)[key]
    out = {key: published(key, to_payload(res), res)}
    _with_case_cells(out, {key: res}, frame)
    return out[key], res
