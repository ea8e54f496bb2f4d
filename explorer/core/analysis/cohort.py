"""The cohort: one cluster's badcases against a control group, one row per case.

Control groups:
- "same-category" (default): the correct cases whose category is one of the badcases'
  categories (a badcase without a category is matched by correct cases without one);
- "all-correct": every correct case in the store;
- "outside-cluster": the cases of the badcases' categories outside the cluster, correct ones
  and the other clusters' badcases. With one cluster's failures tied to the engine (say
  preemptions), the correct cases lack those requests, so a cluster of noise compared with
  them looks preempted more; against every case outside it, it does not (issue 35). Their
  `correct` stays False; `grp` and `badcase` say the group (badcase 0 in the control).

Engine metrics come from the request each case is bound to (case_links, best level first);
prompt_tokens / completion_tokens are the bound request's counts, else the case's own, so an
eval loaded without any trace still has case-level features to compare.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import schema
from ..errors import NoData
from ..selection import Predicate, named_params
from ..sqlutil import arrow_frame, load_query
from .results import CohortSummary
from explorer.core.i18n import _

CONTROLS = ("same-category", "all-correct", "outside-cluster")

# Engine metrics of the bound request (NULL when the case is not bound).
ENGINE_METRICS = ("kv_cache_hit_rate", "num_preemptions", "tpot_ms", "batch_size", "ttft_ms",
                  "queue_ms", "e2e_ms")
# The engine's state over the bound request's lifetime, from engine logs / scrapes
# (queries/request_engine_context.sql): a cohort compares on engine context even when the
# trace has no per-request cache metrics.
CONTEXT_METRICS = tuple(schema.CONTEXT_METRICS)
# Case-level features, present without any trace when the eval has them.
CASE_METRICS = ("prompt_tokens", "completion_tokens")
# Fallback case-level features (characters of prompt / prediction text).
TEXT_METRICS = ("prompt_chars", "prediction_chars")
EXTRA_METRICS = ("prefill_ms", "decode_ms", "cached_prompt_tokens", "arrival_s")

FRAME_COLUMNS = (("case_id", "grp", "badcase", "category", "cluster", "run_id", "request_id",
                  "level") + ENGINE_METRICS + CONTEXT_METRICS + CASE_METRICS + EXTRA_METRICS
                 + TEXT_METRICS
                 + ("finish_reason", "error", "tenant", "engine_version", "eval_id", "correct"))


@dataclass(frozen=True)
class Cohort:
    """What to analyse. cluster: a badcase cluster name (None = every badcase); control:
    "same-category", "all-correct" or "outside-cluster" (module doc); selection: a predicate over the case view
    (explorer.core.selection) that narrows both groups (None = no narrowing); eval_id: one
    eval (cases.eval_id, e.g. "mmlu_pro:Meta-Llama-3_1-8B-Instruct") whose cases form both
    groups (None = every loaded eval pooled). Raises ValueError for an unknown control."""
    cluster: str | None = None
    control: str = "same-category"
    selection: Predicate | None = None
    eval_id: str | None = None

    def __post_init__(self):
        if self.control not in CONTROLS:
            raise ValueError(f"control must be one of {', '.join(CONTROLS)}, not {self.control!r}")

    def to_dict(self) -> dict:
        return {"cluster": self.cluster, "control": self.control,
                "selection": self.selection.to_dict() if self.selection is not None else None,
                "eval_id": self.eval_id}


def cohort_sql(cohort: Cohort) -> tuple[str, dict]:
    """The cohort query (case view + queries/analysis_cohort.sql + selection) and its named
    parameters."""
    sql = f"WITH cv AS (\n{load_query('analysis_case_view')}\n)\n{load_query('analysis_cohort')}"
    params = {"cluster": cohort.cluster, "control": cohort.control,
              "eval_id": cohort.eval_id}
    sql = f"SELECT * FROM (\n{sql}\n) AS cohort"
    if cohort.selection is not None:
        frag, pl = cohort.selection.to_sql()
        frag, named = named_params(frag, pl, "sel")
        sql += f"\nWHERE {frag}"
        params.update(named)
    return sql, params


def _frame_select(sql: str, columns=FRAME_COLUMNS) -> str:
    """SELECT of `columns` (FRAME_COLUMNS or some of them, in their order; metrics cast to
    DOUBLE, badcase to INTEGER) over `sql`, in frame order (badcases first, then control,
    each by case_id)."""
    cols = []
    for c in columns:
        if c in ENGINE_METRICS + CONTEXT_METRICS + CASE_METRICS + EXTRA_METRICS + TEXT_METRICS + ("level",):
            cols.append(f"CAST({c} AS DOUBLE) AS {c}")
        elif c == "badcase":
            cols.append("CAST(badcase AS INTEGER) AS badcase")
        else:
            cols.append(c)
    return f"SELECT {', '.join(cols)} FROM (\n{sql}\n) AS f ORDER BY badcase DESC, case_id"


# The case view (every case that can enter a cohort, i.e. correct is not NULL) as a frame,
# computed once per store content and kept by the store (Store.cache("case_view"): one entry,
# (fingerprint, frame, empty frame)). A cluster change then only filters it (cohort_frame),
# instead of re-joining cases x case_links x requests x runs.
_VIEW_LOCK = threading.Lock()


def _view_cache(store):
    return store.cache("case_view", 1)

# What the case view depends on, cheaply (~10 ms at 1M requests / 100k cases): row counts of
# requests / inputs / cases (requests and cases are only added or deleted by loads, each of
# which records an `inputs` row; no code path updates a request's metrics in place), an
# order-independent hash sum over the cases columns that are updated in place (cluster, set
# and renamed by explorer.core.clusters), over case_links (rewritten by bind_cases) and over
# runs. A caller that updates other columns in place calls invalidate_case_view(store).
_FINGERPRINT_SQL = """
SELECT (SELECT count(*) FROM requests), (SELECT count(*) FROM inputs),
       (SELECT count(*) FROM runs), (SELECT sum(hash(run_id, engine_version)) FROM runs),
       (SELECT count(*) FROM cases),
       (SELECT sum(hash(case_id, cluster, correct, category)) FROM cases),
       (SELECT count(*) FROM case_links),
       (SELECT sum(hash(case_id, run_id, request_id, level, score)) FROM case_links)
"""


def case_view_fingerprint(store, con=None) -> tuple:
    """A tuple that changes whenever the case view (queries/analysis_case_view.sql) may change:
    see _FINGERPRINT_SQL. Costs one small query (no scan of the requests table)."""
    return tuple((con or store.con).execute(_FINGERPRINT_SQL).fetchall()[0])


def invalidate_case_view(store) -> None:
    """Drop the cached case view of `store` (the next cohort_frame rebuilds it). Only needed
    after updating requests in place; loads, renames and re-binding are detected by
    themselves."""
    with _VIEW_LOCK:
        _view_cache(store).clear()


def case_view_frame(store, con=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(view, empty): every case whose correctness is known, as cohort_frame rows (same
    columns, dtypes and order: badcases first, then correct cases, each by case_id; grp 'bad' |
    'control'), and the empty frame an empty cohort query returns; cached per store until
    case_view_fingerprint changes. Treat both as read-only."""
    con = con or store.con
    key = case_view_fingerprint(store, con)
    with _VIEW_LOCK:
        hit = _view_cache(store).get("view")
        if hit is not None and hit[0] == key:
            return hit[1], hit[2]
        sql = (f"WITH cv AS (\n{load_query('analysis_case_view')}\n)\n"
               "SELECT CASE WHEN cv.badcase = 1 THEN 'bad' ELSE 'control' END AS grp, cv.*\n"
               "FROM cv WHERE cv.badcase IS NOT NULL")
        df = arrow_frame(con.sql(_frame_select(sql)))
        df["badcase"] = df["badcase"].astype(int)
        # DuckDB gives an empty result other dtypes (object strings) than a filled one, so
        # an empty cohort is served from an empty result of the same query.
        empty = arrow_frame(con.sql(_frame_select(sql + " AND false")))
        empty["badcase"] = empty["badcase"].astype(int)
        _view_cache(store)["view"] = (key, df, empty)
        return df, empty


_SCRATCH = None  # DuckDB connection that evaluates selections over cached frames (lazy)


def _cohort_mask(view: pd.DataFrame, cohort: Cohort) -> np.ndarray:
    """Rows of the case view in the cohort, by the one definition of membership,
    queries/analysis_cohort.sql, run by DuckDB over the cached frame: `cv` is the frame's
    membership columns, `cases` the correctness the query reads for the badcases' categories
    (the frame holds every case whose correctness is known, badcase = NOT correct)."""
    cols = ["badcase", "eval_id", "cluster", "category"]
    cv = view[cols].assign(_k=np.arange(len(view)))
    cases = view[["eval_id", "cluster", "category"]].assign(correct=view["badcase"] == 0)
    params = {"cluster": cohort.cluster, "control": cohort.control, "eval_id": cohort.eval_id}
    con = _scratch()
    try:
        con.register("cv", cv)
        con.register("cases", cases)
        keep = con.execute(f"SELECT _k FROM (\n{load_query('analysis_cohort')}\n) AS m",
                           params).fetchnumpy()["_k"]
    finally:
        con.close()
    out = np.zeros(len(view), bool)
    out[np.asarray(keep, dtype=np.int64)] = True
    return out


def _scratch():
    """A cursor of the private in-memory DuckDB that evaluates SQL over cached frames (one
    database, made on first use; a cursor per call, so threads do not share one)."""
    import duckdb

    global _SCRATCH
    with _VIEW_LOCK:
        if _SCRATCH is None:
            _SCRATCH = duckdb.connect()
        return _SCRATCH.cursor()


def _columns_of(pred) -> set[str] | None:
    """The columns a selection predicate names (None for a predicate type it does not know)."""
    if hasattr(pred, "column"):
        return {pred.column}
    if hasattr(pred, "steps"):
        return {f for f, _, _ in pred.steps}
    if hasattr(pred, "part"):
        return _columns_of(pred.part)
    if hasattr(pred, "parts"):
        out: set[str] = set()
        for p in pred.parts:
            c = _columns_of(p)
            if c is None:
                return None
            out |= c
        return out
    return None


def _select_rows(view: pd.DataFrame, mask: np.ndarray, selection: Predicate) -> np.ndarray | None:
    """mask narrowed to the rows the selection predicate holds on, evaluated by DuckDB over
    the cached frame (SQL semantics: NULL is not selected); None when the predicate names a
    column the frame does not have (e.g. score, model)."""
    import duckdb

    cols = _columns_of(selection)
    if cols is None:
        cols = list(view.columns)
    elif not cols <= set(view.columns):
        return None
    frag, params = selection.to_sql()
    rows = np.flatnonzero(mask)
    sub = view[sorted(cols)].iloc[rows].assign(_k=np.arange(len(rows)))
    con = _scratch()
    try:
        con.register("_cohort", sub)
        keep = con.execute(f"SELECT _k FROM _cohort WHERE {frag}", params).fetchnumpy()["_k"]
    except duckdb.BinderException:
        return None
    finally:
        con.close()
    out = np.zeros(len(view), bool)
    out[rows[np.asarray(keep, dtype=np.int64)]] = True
    return out


def cohort_frame(store, cohort: Cohort, con=None, *, cached: bool = True,
                 columns=None) -> pd.DataFrame:
    """One row per case of the cohort, badcases first then control, each sorted by case_id.

    Columns: case_id, grp ('bad' | 'control'), badcase (int 0/1), category, cluster, run_id,
    request_id, level (NaN when unbound), the engine metrics (float, NaN when unbound or not
    recorded: kv_cache_hit_rate in [0, 1], num_preemptions, tpot_ms ms/token, batch_size,
    ttft_ms, queue_ms, e2e_ms, prefill_ms, decode_ms, cached_prompt_tokens, arrival_s seconds),
    prompt_tokens / completion_tokens (request's counts, else the case's own), prompt_chars /
    prediction_chars, finish_reason, error, tenant, engine_version, eval_id, correct.
    An empty cohort gives an empty frame with these columns (no error).

    cached=True (default) filters the per-store cached case view (case_view_frame), evaluating
    a selection with DuckDB over the filtered rows; cached=False (or a selection naming a
    case-view column the frame lacks) runs the cohort SQL (cohort_sql). Both give the same
    frame.

    columns: the columns wanted (None = all): the SQL path then fetches only those of
    FRAME_COLUMNS, plus case_id and badcase, in FRAME_COLUMNS order (a report whose sections
    read 26 of the 33 columns scans 5 fewer request columns at 10M requests); the cached path
    returns every column (its view holds them anyway). Raises ValueError for a name that is no
    frame column."""
    if columns is not None:
        unknown = sorted(set(columns) - set(FRAME_COLUMNS))
        if unknown:
            raise ValueError(f"not cohort frame columns: {', '.join(unknown)}")
        wanted = set(columns) | {"case_id", "badcase"}
        columns = tuple(c for c in FRAME_COLUMNS if c in wanted)
    if cached and not getattr(store, "remote", False):  # a warehouse: only the cohort's rows
        view, empty = case_view_frame(store, con)
        mask = _cohort_mask(view, cohort)
        if cohort.selection is not None and mask.any():
            picked = _select_rows(view, mask, cohort.selection)
            if picked is None:  # names a case-view column the frame lacks: the SQL path
                return cohort_frame(store, cohort, con, cached=False, columns=columns)
            mask = picked
        if not mask.any():
            return empty.copy()
        df = view[mask].reset_index(drop=True)
        if cohort.control == "outside-cluster" and cohort.cluster is not None:
            df = _regroup(df, cohort.cluster)
        # DuckDB gives a VARCHAR column with no value object dtype (None), not a string dtype
        for c in view.columns:
            if view[c].dtype != object and not pd.api.types.is_numeric_dtype(view[c].dtype) \
                    and not pd.api.types.is_bool_dtype(view[c].dtype) and df[c].isna().all():
                df[c] = pd.Series([None] * len(df), dtype=object)
        return df
    sql, params = cohort_sql(cohort)
    df = arrow_frame((con or store.con).sql(_frame_select(sql, columns or FRAME_COLUMNS),
                                            params=params))
    df["badcase"] = df["badcase"].astype(int)
    if cohort.control == "outside-cluster" and cohort.cluster is not None:
        df = _regroup(df, cohort.cluster)
    return df


def _regroup(df: pd.DataFrame, cluster: str) -> pd.DataFrame:
    """outside-cluster: the badcases of other clusters become control cases (grp, badcase 0),
    the frame again badcases first, then control, each by case_id."""
    other = ((df["badcase"] == 1) & (df["cluster"] != cluster)).to_numpy()
    if not other.any():
        return df
    df = df.copy()
    df.loc[other, "grp"] = "control"
    df.loc[other, "badcase"] = 0
    return df.sort_values(["badcase", "case_id"], ascending=[False, True],
                          kind="stable").reset_index(drop=True)


def scalar(con, sql: str, params=None):
    """First value of a one-row query, fetching the whole result (DuckDB 2 keeps a connection
    busy until its result is fully fetched)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0][0] if rows else None


def bound_mask(frame: pd.DataFrame) -> pd.Series:
    """Rows bound to a request."""
    return frame["request_id"].notna()


# The cohort-frame columns summarize_cohort reads.
SUMMARY_COLUMNS = ("case_id", "badcase", "category", "run_id", "request_id", "level")


def summarize_cohort(store, cohort: Cohort, frame: pd.DataFrame | None = None,
                     con=None) -> CohortSummary:
    """DESIGN `cohort` section. Raises NoData when the store holds no case, or the cluster has
    no badcase (the message lists the clusters there are)."""
    con = con or store.con
    total_cases = scalar(con, "SELECT count(*) FROM cases")
    if total_cases == 0:
        raise NoData(_("no eval cases are loaded: load an eval file (lm-eval samples, MMLU-Pro "
                     "outputs, a CSV with a correctness column, ...) to form a cohort"))
    ev = {"eval_id": cohort.eval_id}
    in_eval = "($eval_id IS NULL OR eval_id = $eval_id)"
    if cohort.eval_id is not None and not scalar(
            con, f"SELECT count(*) FROM cases WHERE {in_eval}", ev):
        known = [r[0] for r in con.execute(
            "SELECT DISTINCT eval_id FROM cases ORDER BY 1 LIMIT 12").fetchall()]
        raise NoData(_("eval {eval_id!r} has no case (evals: {x})").format(eval_id=cohort.eval_id, x=', '.join(known)))
    if frame is None:
        frame = cohort_frame(store, cohort, con)
    # masks and the few columns read, never a row copy of the whole frame (two of them took
    # 1.0 s at 10M requests / 900k cohort cases, 33 columns)
    is_bad = (frame["badcase"] == 1).to_numpy()
    is_ctrl = (frame["badcase"] == 0).to_numpy()
    bound = bound_mask(frame).to_numpy()
    n_bad, n_ctrl = int(is_bad.sum()), int(is_ctrl.sum())
    if n_bad == 0:
        names = [r[0] for r in con.execute(
            "SELECT cluster FROM cases WHERE correct = false AND cluster IS NOT NULL "
            f"AND {in_eval} GROUP BY cluster ORDER BY count(*) DESC, cluster LIMIT 12",
            ev).fetchall()]
        if cohort.cluster is not None:
            raise NoData(f"cluster {cohort.cluster!r} has no badcase"
                         + (f" (clusters: {', '.join(names)})" if names else ""))
        raise NoData(("the loaded evals have no badcase (every case is correct)"
                      if cohort.eval_id is None else
                      f"eval {cohort.eval_id!r} has no badcase (every case is correct)")
                     if cohort.selection is None else "the selection holds no badcase")
    all_bad = scalar(con, f"SELECT count(*) FROM cases WHERE correct = false AND {in_eval}", ev)
    cats = sorted({c for c in frame["category"][is_bad].dropna().unique()})
    category = cats[0] if len(cats) == 1 else (cats or None)
    nb = int((bound & is_bad).sum())
    levels = frame["level"][bound].dropna().astype(int).value_counts()
    link_levels = {str(k): int(levels.get(k, 0)) for k in (1, 2, 3)}
    note = None
    if int(bound.sum()) == 0:
        n_req = scalar(con, "SELECT count(*) FROM requests")
        note = (_("no trace is bound to these cases: no trace is loaded; only case-level "
                  "features (prompt / completion length) are compared") if n_req == 0 else
                _("no trace is bound to these cases: 1 request is loaded but none matched a "
                  "case; only case-level features (prompt / completion length) are compared")
                if n_req == 1 else
                _("no trace is bound to these cases: {n} requests are loaded but none matched a "
                  "case; only case-level features (prompt / completion length) are compared")
                .format(n=f"{n_req:,}"))
    return CohortSummary(
        cluster=cohort.cluster, category=category, badcases=n_bad,
        share_of_badcases=n_bad / all_bad if all_bad else None, bound=nb,
        binding_rate=nb / n_bad, control=cohort.control, control_cases=n_ctrl,
        control_bound=int((bound & is_ctrl).sum()), link_levels=link_levels,
        selection=cohort.selection.to_dict() if cohort.selection is not None else None,
        note=note, bound_versions=_bound_versions(con, frame["run_id"][bound & is_bad]),
        **_ambiguity(store, frame["case_id"], is_bad, is_ctrl))


def _ambiguity(store, case_ids: pd.Series, is_bad: np.ndarray, is_ctrl: np.ndarray) -> dict:
    """The cohort's ambiguous cases (association.ambiguous_detail): counts per group and the
    badcases' entries (at most 50). case_ids: the frame's case_id; is_bad / is_ctrl: its
    badcase / control rows."""
    from ..association import ambiguous_detail
    amb = {d["case_id"]: d for d in ambiguous_detail(store)}
    if not amb:
        return {}
    b = [amb[c] for c in case_ids[is_bad] if c in amb]
    return {"ambiguous_badcases": len(b),
            "ambiguous_control": int(case_ids[is_ctrl].isin(list(amb)).sum()),
            "ambiguous": tuple(b[:50])}


def _bound_versions(con, run_ids: pd.Series) -> tuple:
    """({benchmark, engine_version, badcases}, ...): the bound badcases (run_ids: the run of
    each one's request) counted per (benchmark, engine_version) of their request's run (runs
    table; None when not named), most badcases first."""
    per_run = run_ids.value_counts()
    if per_run.empty:
        return ()
    runs = con.execute("SELECT run_id, benchmark, engine_version FROM runs "
                       "WHERE list_contains($ids, run_id)",
                       {"ids": [str(r) for r in per_run.index]}).fetchall()
    counts: dict = {}
    for run_id, bench, ver in runs:
        counts[(bench, ver)] = counts.get((bench, ver), 0) + int(per_run[run_id])
    return tuple({"benchmark": b, "engine_version": v, "badcases": n} for (b, v), n in
                 sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0][0]), str(kv[0][1]))))


def cluster_table(store, con=None, eval_id: str | None = None) -> list[dict]:
    """Every badcase cluster: {cluster, badcases, share (0..1 of all badcases), bound,
    binding_rate, categories}, largest first (queries/analysis_clusters.sql). eval_id: only
    that eval's badcases (share of that eval's badcases); None = every eval."""
    df = store.query("analysis_clusters", {"eval_id": eval_id}, con=con)
    out = []
    for r in df.itertuples(index=False):
        out.append({"cluster": r.cluster, "badcases": int(r.badcases),
                    "share": float(r.share) if r.share == r.share else None,
                    "bound": int(r.bound), "binding_rate": float(r.bound) / int(r.badcases),
                    "categories": [c for c in (list(r.categories) if r.categories is not None
                                               else []) if c is not None]})
    return out


def default_cluster(store, con=None, eval_id: str | None = None) -> str | None:
    """The largest badcase cluster (ties by name) of every eval (or of `eval_id`), None when no
    badcase has a cluster."""
    rows = cluster_table(store, con, eval_id)
    return rows[0]["cluster"] if rows else None
