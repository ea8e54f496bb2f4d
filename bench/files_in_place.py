"""Benchmark for docs/files-in-place.md: what querying the Parquet file in place (a DuckDB view
with the column mapping in SQL) buys against copying it into the store (CREATE TABLE AS), with
DuckDB alone, each mode in its own process (peak RSS = the child's ru_maxrss).

    .venv/bin/python bench/files_in_place.py DIR [--modes table,view] [--memory-limit 50%]
    .venv/bin/python bench/files_in_place.py DIR --modes copy,inplace   # the product

Modes table / view: DuckDB alone (below). Modes copy / inplace: the product itself
(explorer.core.inplace): Store.load_paths of requests.parquet and cases.csv with --in-place
never / always, the binding (pipeline.prepare), then the cohort of the first cluster
(analysis.cohort_frame) and the per-run P50 / P99 TTFT over `requests`; the results (rows
bound, cohort size, quantiles) must be equal in both modes.

DIR holds requests.parquet and cases.csv from /work/shared/bench/make_scale_data.py DIR N.
Per mode: the time to make `requests` (copy or view), a binding-like join (cases to requests by
request id, kept as links: what the store would keep), a cohort-like aggregate (the linked
requests' TTFT / TPOT quantiles per cluster), a whole-table aggregate (per-run P50 / P99 of
TTFT: the versions section) and the peak resident memory.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

# the column mapping in SQL, as a generic-table file would get it (a renamed source column
# scaled to canonical units is the same shape: `ttft_s * 1000.0 AS ttft_ms`)
MAPPING = ("CAST(run_id AS VARCHAR) AS run_id, CAST(request_id AS VARCHAR) AS request_id, "
           "CAST(arrival_s AS DOUBLE) AS arrival_s, CAST(prompt_tokens AS INTEGER) AS prompt_tokens, "
           "CAST(completion_tokens AS INTEGER) AS completion_tokens, "
           "CAST(kv_cache_hit_rate AS DOUBLE) AS kv_cache_hit_rate, "
           "CAST(num_preemptions AS INTEGER) AS num_preemptions, CAST(batch_size AS INTEGER) AS batch_size, "
           "CAST(ttft_ms AS DOUBLE) AS ttft_ms, CAST(tpot_ms AS DOUBLE) AS tpot_ms, "
           "CAST(queue_ms AS DOUBLE) AS queue_ms, CAST(e2e_ms AS DOUBLE) AS e2e_ms")

QUERIES = {
    "bind": "CREATE TABLE links AS SELECT c.case_id, r.run_id, r.request_id FROM cases c "
            "JOIN requests r ON r.request_id = c.request_id",
    "cohort": "SELECT c.correct, count(*) AS n, "
              "quantile_cont(r.ttft_ms, [0.5, 0.9, 0.99]) AS ttft, "
              "quantile_cont(r.tpot_ms, [0.5, 0.9, 0.99]) AS tpot, round(avg(r.kv_cache_hit_rate), 9) AS kv "
              "FROM links l JOIN cases c USING (case_id) "
              "JOIN requests r ON r.run_id = l.run_id AND r.request_id = l.request_id "
              "GROUP BY ALL ORDER BY ALL",
    "versions": "SELECT run_id, count(*), quantile_cont(ttft_ms, [0.5, 0.99]) FROM requests "
                "GROUP BY run_id ORDER BY run_id",
}


def child(folder: str, mode: str, limit: str) -> dict:
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{limit}'")
    con.execute("SET temp_directory = '/tmp/te-bench-spill'")
    con.execute("SET allocator_background_threads = true")
    pq = os.path.join(folder, "requests.parquet")
    out: dict = {"mode": mode}
    t = time.perf_counter()
    con.execute(f"CREATE TABLE cases AS SELECT * FROM read_csv('{folder}/cases.csv')")
    out["cases_s"] = time.perf_counter() - t
    t = time.perf_counter()
    kind = "TABLE" if mode == "table" else "VIEW"
    con.execute(f"CREATE {kind} requests AS SELECT {MAPPING} FROM read_parquet('{pq}')")
    out["requests_s"] = time.perf_counter() - t
    out["rss_after_requests_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results = {}
    for name, sql in QUERIES.items():
        t = time.perf_counter()
        got = con.execute(sql).fetchall()
        out[f"{name}_s"] = time.perf_counter() - t
        results[name] = got if name != "bind" else con.execute(
            "SELECT count(*) FROM links").fetchall()
    out["total_s"] = sum(v for k, v in out.items() if k.endswith("_s"))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["results"] = json.loads(json.dumps(results, default=str))
    return out


def product(folder: str, mode: str, limit: str) -> dict:
    """The product's load + binding + a cohort and a whole-table aggregate, in place or copied."""
    from explorer.core import inplace, memory
    memory.set_limit(limit)
    inplace.set_mode("always" if mode == "inplace" else "never")
    from explorer.core.pipeline import prepare
    from explorer.core.store import Store
    out: dict = {"mode": mode}
    t = time.perf_counter()
    s = Store()
    reports = s.load_paths([os.path.join(folder, "requests.parquet"), os.path.join(folder, "cases.csv")])
    assert not any(r.error for r in reports), [r.error for r in reports]
    out["requests_s"] = time.perf_counter() - t
    out["rss_after_requests_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    prepare(s)
    out["bind_s"] = time.perf_counter() - t
    t = time.perf_counter()
    cohort = s.df("SELECT c.correct, count(*) AS n, quantile_cont(r.ttft_ms, [0.5, 0.9, 0.99]) AS q "
                  "FROM case_best_link l JOIN cases c USING (case_id) JOIN requests r "
                  "ON r.run_id = l.run_id AND r.request_id = l.request_id GROUP BY ALL ORDER BY ALL")
    out["cohort_s"] = time.perf_counter() - t
    t = time.perf_counter()
    versions = s.df("SELECT run_id, count(*) AS n, quantile_cont(ttft_ms, [0.5, 0.99]) AS q "
                    "FROM requests GROUP BY run_id ORDER BY run_id")
    out["versions_s"] = time.perf_counter() - t
    out["total_s"] = sum(v for k, v in out.items() if k.endswith("_s"))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["results"] = json.loads(json.dumps({"links": s.count("case_links"),
                                            "cohort": cohort.to_dict("list"),
                                            "versions": versions.to_dict("list")}, default=str))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--modes", default="table,view")
    ap.add_argument("--memory-limit", default="50%")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    limit = a.memory_limit
    if limit.endswith("%"):
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        limit = f"{int(ram * float(limit[:-1]) / 100) // 2**20}MiB"
    if a.child:
        run = product if a.child in ("copy", "inplace") else child
        print(json.dumps(run(a.folder, a.child, limit)))
        return 0
    rows = []
    for mode in a.modes.split(","):
        r = subprocess.run([sys.executable, __file__, a.folder, "--child", mode,
                            "--memory-limit", limit], capture_output=True, text=True, check=True)
        rows.append(json.loads(r.stdout))
    same = len({json.dumps(r["results"], sort_keys=True) for r in rows}) == 1
    keys = ["requests_s", "bind_s", "cohort_s", "versions_s", "total_s", "peak_rss_mb"]
    print("mode   " + "  ".join(f"{k:>12}" for k in keys))
    for r in rows:
        print(f"{r['mode']:<6} " + "  ".join(f"{r[k]:>12.2f}" for k in keys))
    print(f"same results in every mode: {same}; memory_limit {limit}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
