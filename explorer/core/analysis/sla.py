"""SLA attainment and goodput (DESIGN `sla`), over every loaded request.

Thresholds are upper bounds per request metric; the documented defaults are TTFT <= 500 ms and
TPOT <= 50 ms (DEFAULT_THRESHOLDS, editable through params["thresholds"]). A request meets the
SLA when it did not error and every thresholded metric is within its bound; an errored request
(error not empty) fails; a request missing a thresholded metric without an error is not judged
(counted in n_unjudged, left out of the share). Attainment = met / judged. Goodput (DistServe,
Zhong et al. 2024): met requests per second (goodput_rps) and their completion tokens per second
(goodput_tps) over the wall time of the runs (first arrival to last completion). Broken down by
run, engine version, eval category (through the cases bound to the requests) and tenant
(requests.tenant, where the trace has a user / tenant id). Aggregated in DuckDB
(queries/analysis_sla.sql).
"""
from __future__ import annotations

from ..errors import NoData
from ..schema import REQUEST_METRICS
from ..sqlutil import load_query, quote_ident
from .results import SlaResult, num
from explorer.core.i18n import _, ngettext

DEFAULT_THRESHOLDS = {"ttft_ms": 500.0, "tpot_ms": 50.0}
BREAKDOWNS = ("run", "version", "category", "tenant")


def sla_attainment(store, cohort=None, params: dict | None = None) -> SlaResult:
    """Attainment and goodput overall and by run / version / category / tenant.

    params: thresholds {metric: max value} (default DEFAULT_THRESHOLDS; metrics must be numeric
    request columns). The SLA is about every request served: of the cohort only its eval_id is
    used (when set, the runs bound to that eval's cases and their categories).
    Raises ValueError for an unknown metric or a non-numeric threshold, NoData when no request
    is loaded or none can be judged."""
    p = params or {}
    thr = dict(p.get("thresholds") or DEFAULT_THRESHOLDS)
    if not thr:
        raise ValueError("at least one SLA threshold is needed")
    eval_id = getattr(cohort, "eval_id", None)
    params_sql: dict = {} if eval_id is None else {"eval_id": eval_id}
    conds, present = [], []
    for i, (m, t) in enumerate(sorted(thr.items())):
        if m not in REQUEST_METRICS:
            raise ValueError(f"unknown SLA metric {m!r}; choose from {', '.join(REQUEST_METRICS)}")
        try:
            params_sql[f"t{i}"] = float(t)
        except (TypeError, ValueError):
            raise ValueError(f"SLA threshold for {m} must be a number, not {t!r}") from None
        conds.append(f"{quote_ident(m)} <= $t{i}")
        present.append(f"{quote_ident(m)} IS NOT NULL")
    total = store.con.execute("SELECT count(*) FROM requests").fetchall()[0][0]
    if not total:
        raise NoData(_("no trace is loaded, so there is no request to hold to an SLA"))
    errored = "(r.error IS NOT NULL AND trim(r.error) <> '')"
    judged = f"({errored} OR ({' AND '.join('r.' + c for c in present)}))"
    met = f"(NOT {errored} AND {' AND '.join('r.' + c for c in conds)})"
    sql = load_query("analysis_sla").replace("__JUDGED__", judged).replace("__MET__", met)
    sql = sql.replace("__EVAL__", "" if eval_id is None else "AND c.eval_id = $eval_id").replace(
        "__RUNS__", "" if eval_id is None else "WHERE run_id IN (SELECT DISTINCT run_id FROM cat)")
    df = store.con.execute(sql, params_sql).df()
    if eval_id is not None and (df.empty or not (df["dim"] == "all").any()):
        raise NoData(_("no trace request is bound to a case of eval {eval_id!r}, so there is "
                     "no request of it to hold to an SLA").format(eval_id=eval_id))
    groups: dict[str, list[dict]] = {"all": [], **{k: [] for k in BREAKDOWNS}}
    for r in df.to_dict("records"):
        key = r["key"]
        if key is not None and not isinstance(key, str) and key != key:  # NaN from pandas
            key = None
        groups[r["dim"]].append({
            "key": key, "n": int(r["n"]), "n_met": int(r["n_met"]),
            "n_unjudged": int(r["n_unjudged"]), "share": num(r["share"]),
            "goodput_rps": num(r["goodput_rps"]), "goodput_tps": num(r["goodput_tps"]),
            "span_s": num(r["span_s"])})
    overall = groups.pop("all")[0]
    if overall["n"] == 0:
        missing = [m for m in thr if not store.con.execute(
            f"SELECT count({quote_ident(m)}) FROM requests").fetchall()[0][0]]
        raise NoData(_("no request can be judged against the SLA: the traces do not record "
                       "{columns}").format(columns=", ".join(missing)) if missing else
                     _("no request can be judged against the SLA"))
    overall.pop("key")
    by = {name: [r for r in groups[name] if name in ("run", "version") or r["key"] is not None]
          for name in BREAKDOWNS}
    return SlaResult(thresholds={m: float(t) for m, t in thr.items()}, attainment=overall, by=by)


REPORT_GROUPS = 12  # rows per breakdown in a report's table: the largest groups (all in report.json)


def for_cohort_runs(sla: dict, runs) -> tuple[dict, str]:
    """The `sla` section as the reports print it (table and picture): the per-run rows only
    for `runs`, the runs that served the cohort's cases (None keeps every run), and one
    sentence summarising the runs left out ('' when none is)."""
    if runs is None or not isinstance(sla, dict) or "run" not in (sla.get("by") or {}):
        return sla, ""
    keep = {str(r) for r in runs}
    rows = sla["by"]["run"]
    other = [r for r in rows if str(r.get("key")) not in keep]
    if not other:
        return sla, ""
    out = {**sla, "by": {**sla["by"], "run": [r for r in rows if str(r.get("key")) in keep]}}
    shares = [r["share"] for r in other if r.get("share") is not None]
    judged = sum(r.get("n") or 0 for r in other)
    from .. import fmt
    span = (_("attainment {low} to {high}").format(low=fmt.share(min(shares)),
                                                  high=fmt.share(max(shares)))
            if len(shares) > 1 else
            _("attainment {share}").format(share=fmt.share(shares[0])) if shares else
            _("no attainment"))
    return out, ngettext(
        "{n:,} other run served no case of this cohort: {span}, {judged:,} judged requests "
        "(every run is in report.json).",
        "{n:,} other runs served no case of this cohort: {span}, {judged:,} judged requests "
        "(every run is in report.json).", len(other)).format(n=len(other), span=span,
                                                            judged=judged)
