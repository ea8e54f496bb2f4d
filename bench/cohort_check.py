"""The report's cohort against an independent DuckDB recomputation on the files themselves
(issue 37: "100M requests + 1M cases: ... its cohort equal to a DuckDB recomputation").

    .venv/bin/python bench/cohort_check.py REPORT.json REQUESTS.parquet CASES.csv [--memory-limit 4GB]

The recomputation reads the Parquet request file and the case CSV of
/work/shared/bench/make_scale_data.py with plain DuckDB (none of the product's code, SQL or
store): the largest badcase cluster (ties by name), its badcases, their categories, the
same-category control (correct cases of those categories), how many of each are bound (the
case's request_id is a request of the file) and, per engine metric, the bound cases' count and
mean in both groups. It prints the report's values beside the recomputed ones and exits 1
when any differs (counts exactly, means within 1e-9 relative).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

METRICS = ("ttft_ms", "tpot_ms", "e2e_ms", "queue_ms", "kv_cache_hit_rate", "num_preemptions",
           "batch_size")


def recompute(requests: str, cases: str, memory_limit: str | None = None) -> dict:
    """The cohort of the largest cluster, same-category control, from the files (see module)."""
    import duckdb
    con = duckdb.connect()
    if memory_limit:
        con.execute("SET memory_limit = ?", [memory_limit])
    con.execute("CREATE TABLE c AS SELECT CAST(case_id AS VARCHAR) AS case_id, "
                "CAST(request_id AS VARCHAR) AS request_id, CAST(category AS VARCHAR) AS category, "
                "NULLIF(CAST(cluster AS VARCHAR), '') AS cluster, CAST(correct AS BOOLEAN) AS correct "
                "FROM read_csv(?, all_varchar = true)", [cases])
    cluster = con.execute("SELECT cluster FROM c WHERE NOT correct AND cluster IS NOT NULL "
                          "GROUP BY cluster ORDER BY count(*) DESC, cluster LIMIT 1").fetchone()[0]
    cats = [r[0] for r in con.execute(
        "SELECT DISTINCT category FROM c WHERE NOT correct AND cluster = ? ORDER BY 1",
        [cluster]).fetchall()]
    con.execute("CREATE TABLE g AS SELECT case_id, request_id, "
                "CASE WHEN NOT correct THEN 'bad' ELSE 'control' END AS grp FROM c "
                "WHERE (NOT correct AND cluster = $k) OR (correct AND list_contains($cats, category))",
                {"k": cluster, "cats": cats})
    avgs = ", ".join(f"count(r.{m}) AS n_{m}, avg(r.{m}) AS mean_{m}" for m in METRICS)
    # one scan of the file's columns; request ids are unique in these files, so a semi-join
    # and a join agree (checked: `bound` counts distinct cases)
    rows = con.execute(
        f"SELECT g.grp, count(DISTINCT g.case_id) AS cases, "
        f"count(DISTINCT CASE WHEN r.request_id IS NOT NULL THEN g.case_id END) "
        f"AS bound, {avgs} FROM g LEFT JOIN (SELECT request_id, {', '.join(METRICS)} "
        f"FROM read_parquet(?)) r ON r.request_id = g.request_id GROUP BY g.grp",
        [requests]).df().set_index("grp")
    all_bad = con.execute("SELECT count(*) FROM c WHERE NOT correct").fetchone()[0]
    out = {"cluster": cluster, "category": cats[0] if len(cats) == 1 else cats,
           "badcases": int(rows.loc["bad", "cases"]), "bound": int(rows.loc["bad", "bound"]),
           "control_cases": int(rows.loc["control", "cases"]),
           "control_bound": int(rows.loc["control", "bound"]),
           "share_of_badcases": int(rows.loc["bad", "cases"]) / all_bad}
    for m in METRICS:
        for grp in ("bad", "control"):
            out[f"{m}.n_{grp}"] = int(rows.loc[grp, f"n_{m}"])
            out[f"{m}.{grp}_mean"] = float(rows.loc[grp, f"mean_{m}"])
    return out


def product_sections(requests: str, cases: str, memory_limit: str | None = None) -> dict:
    """The report's cohort and comparison sections as `trace-explorer report` computes them
    (the files loaded with --in-place auto, bound, the largest cluster, cohort rows straight
    from SQL), without the other sections: {"cohort": ..., "comparison": ...}."""
    from explorer.core import inplace, memory, sections
    from explorer.core.analysis import Cohort
    from explorer.core.analysis.cohort import cohort_frame, default_cluster
    from explorer.core.pipeline import prepare
    from explorer.core.store import Store
    memory.set_limit(memory_limit)
    inplace.set_mode("auto")
    store = Store()
    failed = [r.error for r in store.load_paths([requests, cases]) if r.error]
    if failed:
        raise SystemExit(f"load failed: {failed}")
    prepare(store)
    cohort = Cohort(default_cluster(store))
    frame = cohort_frame(store, cohort, cached=False)
    res = sections.run(store, cohort, {}, keys=["cohort", "comparison"], frame=frame, threads=1)
    return {k: (v.to_dict() if hasattr(v, "to_dict") else v) for k, v in res.items()}


def from_report(doc: dict) -> dict:
    """The same quantities as the report states them (cohort and comparison sections)."""
    c = doc["cohort"]
    out = {k: c[k] for k in ("cluster", "category", "badcases", "bound", "control_cases",
                             "control_bound", "share_of_badcases")}
    rows = {r["metric"]: r for r in doc["comparison"]} if isinstance(doc["comparison"], list) else {}
    for m in METRICS:
        r = rows.get(m, {})
        for grp in ("bad", "control"):
            out[f"{m}.n_{grp}"] = r.get(f"n_{grp}")
            out[f"{m}.{grp}_mean"] = r.get(f"{grp}_mean")
    return out


def same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (a is not None and b is not None
                and math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12))
    return a == b


def compare(report: dict, files: dict) -> list[tuple[str, object, object, bool]]:
    """[(quantity, report's, recomputed, equal)] for every quantity."""
    return [(k, report.get(k), files[k], same(report.get(k), files[k])) for k in files]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("requests")
    ap.add_argument("cases")
    ap.add_argument("--memory-limit", default=None)
    ap.add_argument("--product", metavar="OUT.json",
                    help="compute REPORT's two sections with the product first (load, bind, "
                         "cohort, comparison only) and write them to OUT.json")
    ap.add_argument("--recomputed", metavar="FILE",
                    help="keep the recomputation in FILE (JSON) and reuse it when FILE exists; "
                         "with REPORT '-': only recompute")
    a = ap.parse_args(argv)
    if a.product:
        t = time.perf_counter()
        doc = product_sections(a.requests, a.cases, a.memory_limit)
        with open(a.product, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, default=str)
        print(f"product's cohort and comparison {time.perf_counter() - t:.1f} s -> {a.product}")
        a.report = a.product
    t = time.perf_counter()
    if a.recomputed and os.path.exists(a.recomputed):
        with open(a.recomputed, encoding="utf-8") as f:
            files = json.load(f)
    else:
        files = recompute(a.requests, a.cases, a.memory_limit)
        if a.recomputed:
            with open(a.recomputed, "w", encoding="utf-8") as f:
                json.dump(files, f, ensure_ascii=False, indent=1)
    took = time.perf_counter() - t
    if a.report == "-":
        print(json.dumps(files, ensure_ascii=False, indent=1))
        print(f"recomputation {took:.1f} s")
        return 0
    with open(a.report, encoding="utf-8") as f:
        rep = from_report(json.load(f))
    rows = compare(rep, files)
    print(f"{'quantity':32} {'report':>24} {'DuckDB on the files':>24}  equal")
    for k, x, y, ok in rows:
        print(f"{k:32} {str(x):>24} {str(y):>24}  {'yes' if ok else 'NO'}")
    bad = [k for k, _, _, ok in rows if not ok]
    print(f"recomputation {took:.1f} s; {len(rows) - len(bad)}/{len(rows)} equal"
          + (f"; differ: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
