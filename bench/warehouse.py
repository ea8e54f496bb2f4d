"""Benchmark: the same analysis from a warehouse (Spark Connect) and from the embedded DuckDB,
on N synthetic requests in Parquet (1M by default; --requests 10000000 for 10M) and a small
eval (20k cases, bound by request id).

    .venv/bin/python bench/warehouse.py [--requests 1000000] [--cases 20000] [--url sc://...]

Needs the spark extra and Java 17. Without --url a local Spark Connect server is started
(spark:local, --memory for its driver) and its start-up is timed apart. Prints, per engine, the
wall time of load + bind + analysis (cohort, comparison, tree, heatmap, versions, SLA, SLA over
time; --sections to choose); for Spark also the rows the client fetched (target: the cohort's
rows plus aggregates, under 20 % of the table at 1M), the rows the engine read from the table's
storage (passes = rows / table rows; target <= 5) and from its in-memory cache of the table. DuckDB's time includes reading the
Parquet file into its store (what the embedded engine has to do first).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from analysis import build  # noqa: E402  (bench/analysis.py: the synthetic store)

from explorer.core.analysis import Cohort  # noqa: E402
from explorer.core.sections import run_all  # noqa: E402
from explorer.core.store import Store  # noqa: E402

SECTIONS = ("cohort", "comparison", "tree", "heatmap", "versions", "sla", "sla_diagnosis")


def write_inputs(n_req: int, n_cases: int, folder: Path):
    """(Parquet of the requests with their run fields, cases frame with request ids)."""
    s = build(n_req, n_cases)
    pq = folder / "requests.parquet"
    s.con.execute(f"COPY (SELECT r.*, ru.engine_version, ru.benchmark, ru.engine FROM requests r "
                  f"JOIN runs ru USING (run_id)) TO '{pq}' (FORMAT parquet)")
    cases = s.con.execute("SELECT c.* EXCLUDE (request_id), l.request_id FROM cases c "
                          "JOIN case_links l USING (case_id)").df()
    s.close()
    return pq, cases


def local_cases(cases) -> Store:
    st = Store()
    st.add_eval("e")
    st.append("cases", cases)
    return st


def run_duckdb(pq: Path, cases, sections=SECTIONS) -> dict:
    from explorer.core import pipeline
    t0 = time.perf_counter()
    st = local_cases(cases)
    st.con.execute("INSERT INTO requests BY NAME SELECT * EXCLUDE (engine_version, benchmark, "
                   f"engine) FROM read_parquet('{pq}')")
    st.con.execute("INSERT INTO runs BY NAME SELECT run_id, any_value(engine_version) AS "
                   "engine_version, any_value(benchmark) AS benchmark, any_value(engine) AS engine "
                   f"FROM read_parquet('{pq}') GROUP BY run_id")
    t_load = time.perf_counter()
    res = pipeline.prepare(st)
    t_bind = time.perf_counter()
    out = run_all(st, Cohort("kv"), {"sections": sections})
    t_end = time.perf_counter()
    st.close()
    return {"load": t_load - t0, "bind": t_bind - t_load, "analysis": t_end - t_bind,
            "total": t_end - t0, "bound": res.bound, "results": out}


def run_spark(url: str, pq: Path, cases, sections=SECTIONS) -> dict:
    from explorer.core.warehouse import open_warehouse
    t0 = time.perf_counter()
    ws = open_warehouse(local_cases(cases), url, f"parquet:{pq}")
    t_bind = time.perf_counter()
    out = run_all(ws, Cohort("kv"), {"sections": sections})
    t_end = time.perf_counter()
    meta = ws.engine_meta()
    ws.close()
    return {"bind": t_bind - t0, "analysis": t_end - t_bind, "total": t_end - t0,
            "bound": ws.binding.bound, "meta": meta, "results": out}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--cases", type=int, default=20_000)
    ap.add_argument("--url", help="a running Spark Connect server (default: start one)")
    ap.add_argument("--memory", default="3g", help="driver memory of the local server")
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated")
    a = ap.parse_args()
    sections = tuple(x for x in a.sections.split(",") if x)
    folder = Path(tempfile.mkdtemp(prefix="te-bench-wh-"))
    t = time.perf_counter()
    pq, cases = write_inputs(a.requests, a.cases, folder)
    print(f"inputs: {a.requests:,} requests ({pq.stat().st_size / 1e6:.0f} MB Parquet), "
          f"{len(cases):,} cases, in {time.perf_counter() - t:.1f} s")
    d = run_duckdb(pq, cases, sections)
    print(f"duckdb: total {d['total']:.1f} s (read Parquet {d['load']:.1f}, bind {d['bind']:.1f}, "
          f"analysis {d['analysis']:.1f}); bound {d['bound']:,}")
    server = None
    url = a.url
    if url is None:
        from explorer.core.warehouse import LocalSpark
        t = time.perf_counter()
        server = LocalSpark(memory=a.memory).start()
        url = server.url
        print(f"spark:local server started in {time.perf_counter() - t:.1f} s")
    try:
        s = run_spark(url, pq, cases, sections)
    finally:
        if server is not None:
            server.stop()
    m = s["meta"]
    share = m["rows_fetched"] / m["table_rows"]
    print(f"spark:  total {s['total']:.1f} s (connect + bind {s['bind']:.1f}, analysis "
          f"{s['analysis']:.1f}); bound {s['bound']:,}; {m['queries']} queries, engine time "
          f"{m['seconds']:.1f} s")
    print(f"rows fetched {m['rows_fetched']:,} of {m['table_rows']:,} ({share:.1%}; target < 20 %); "
          f"rows read from the table's storage {m['rows_scanned']:,} "
          f"({m['rows_scanned'] / m['table_rows']:.1f} passes; target <= 5), from the engine's "
          f"cache of it {m.get('rows_cache_read', 0):,} "
          f"({m.get('rows_cache_read', 0) / m['table_rows']:.1f} passes)")
    same = all(type(d["results"].get(k)) is type(s["results"].get(k)) for k in sections)
    print("sections with a result on both engines:", same,
          {k: type(s["results"].get(k)).__name__ for k in sections})
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0 if share < 0.2 else 1


if __name__ == "__main__":
    sys.exit(main())
