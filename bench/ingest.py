"""Ingest benchmark (run on demand, not a test): the Store loader against bare DuckDB.

    .venv/bin/python bench/ingest.py [--rows 1000000,10000000] [--repeat 3] [--keep DIR]
    .venv/bin/python bench/ingest.py --real ../shared/data/real [--repeat 3]

--real: loads every file of that folder (Store().load_paths([folder]), a fresh in-memory Store
each time: what dropping the folder on the app does, traces and evals) and prints the best
total wall time, the file count and the slowest files (many small files: per-file overhead of
detection, sha256, run registration and the inputs row).

For each size it generates a synthetic request table (canonical column names: request_id,
arrival_s, prompt_tokens, completion_tokens, cached_prompt_tokens, ttft_ms, tpot_ms, e2e_ms,
queue_ms, num_preemptions, batch_size, finish_reason) as Parquet and CSV in a temp dir (deleted
afterwards), then measures, each in a fresh subprocess:
  - store: explorer.core.store.Store().load_file(path)  (detection, sha256 provenance, the
    generic_table SELECT that renames / scales into INSERT INTO requests BY NAME, inputs row)
  - bare:  duckdb.connect().execute("CREATE TABLE t AS SELECT * FROM read_parquet(path)")
           (read_csv for CSV)
  - canonical: bare DuckDB INSERT INTO an empty canonical `requests` table (what the schema
    alone costs: run_id column, 7 all-NULL columns, NOT NULL checks)
  - sha256: the provenance hash the Store computes for every input
  - paths: Store().load_paths([path]), what the window and the report run: load_file, then
    Store.compact (a CHECKPOINT that compresses the in-memory tables once they grew by
    Store.COMPACT_BYTES: 10M rows yes, 1M no); its peak is the whole load's, its memory after
    (resident, 2 s later: DuckDB's allocator threads hand freed memory back) the store's size
Time is the wall time of the load call alone (imports and opening the connection / the Store
excluded; best of --repeat). Memory is the
peak resident set (resource.getrusage ru_maxrss) minus the peak before the load, compared with
the Arrow size of the table (pyarrow Table.nbytes); the whole-process peak is printed too. The
parent process stays small (generation and the Arrow size run in subprocesses) because Linux
carries ru_maxrss across fork + exec. Targets: store/bare time <= 1.3, store peak
<= 2 x Arrow size.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
mode, path, kind = sys.argv[1:4]
import duckdb
from explorer.core.store import Store
import explorer.core.formats as F
F.all_formats()
def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
fn = "read_parquet" if kind == "parquet" else "read_csv"
if mode in ("store", "paths"):
    s = Store()  # an open session store; opening it is not part of a load
elif mode in ("bare", "canonical"):
    con = duckdb.connect()
    if mode == "canonical":
        from explorer.core.schema import TABLES
        con.execute("CREATE TABLE requests (" + TABLES["requests"] + ")")
before = rss_mb()
t0 = time.perf_counter()
if mode == "store":
    r = s.load_file(path)
    assert r.error is None, r.error
elif mode == "paths":
    r = s.load_paths([path])[0]
    assert r.error is None, r.error
elif mode == "canonical":  # bare DuckDB writing the same canonical requests table
    con.execute(f"INSERT INTO requests BY NAME SELECT 'run' AS run_id, * FROM {{fn}}(?)", [path])
elif mode == "sha256":
    from explorer.core.store import sha256_of
    sha256_of(path)
else:
    con.execute(f"CREATE TABLE t AS SELECT * FROM {{fn}}(?)", [path])
dt = time.perf_counter() - t0
after = None
if mode == "paths":
    time.sleep(2)
    with open("/proc/self/status") as f:
        after = next(int(x.split()[1]) / 1024 for x in f if x.startswith("VmRSS"))
if mode in ("store", "paths"):
    n = s.count("requests")
elif mode == "sha256":
    n = int(sys.argv[4])
else:
    n = con.execute("SELECT count(*) FROM " + ("requests" if mode == "canonical" else "t")).fetchall()[0][0]
print(json.dumps({{"seconds": dt, "rows": n, "peak_mb": rss_mb(), "before_mb": before,
                  "after_mb": after}}))
"""


def generate(dirpath: Path, rows: int) -> dict[str, Path]:
    """Write rows synthetic requests as Parquet and CSV with DuckDB (no Python loop)."""
    import duckdb
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("SELECT setseed(0.42)")
    sel = f"""
        SELECT 'req-' || i AS request_id,
               i * 0.01 + random() * 0.01 AS arrival_s,
               CAST(16 + floor(random() * 4000) AS INTEGER) AS prompt_tokens,
               CAST(1 + floor(random() * 800) AS INTEGER) AS completion_tokens,
               CAST(floor(random() * 2000) AS INTEGER) AS cached_prompt_tokens,
               20 + random() * 500 AS ttft_ms,
               5 + random() * 40 AS tpot_ms,
               200 + random() * 20000 AS e2e_ms,
               random() * 100 AS queue_ms,
               CAST(floor(random() * random() * 3) AS INTEGER) AS num_preemptions,
               1 + random() * 255 AS batch_size,
               CASE WHEN random() < 0.9 THEN 'stop' ELSE 'length' END AS finish_reason
        FROM range({int(rows)}) t(i)"""
    out = {"parquet": dirpath / f"req_{rows}.parquet", "csv": dirpath / f"req_{rows}.csv"}
    con.execute(f"COPY ({sel}) TO '{out['parquet']}' (FORMAT parquet)")
    con.execute(f"COPY (SELECT * FROM read_parquet('{out['parquet']}')) TO '{out['csv']}' "
                "(FORMAT csv, HEADER)")
    con.close()
    return out


def arrow_mb(parquet: Path) -> float:
    """Arrow size of the table in MB (pyarrow Table.nbytes), read in a subprocess."""
    code = ("import sys, pyarrow.parquet as pq; "
            "print(pq.read_table(sys.argv[1]).nbytes / 2**20)")
    p = subprocess.run([sys.executable, "-c", code, str(parquet)], capture_output=True,
                       text=True, check=True)
    return float(p.stdout.strip())


def generate_in_child(dirpath: Path, rows: int) -> dict[str, Path]:
    """generate() in a subprocess. Linux keeps ru_maxrss across fork + exec, so the parent must
    stay small or every child would report the parent's peak as its own."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            "import ingest; from pathlib import Path; "
            "ingest.generate(Path(sys.argv[1]), int(sys.argv[2]))")
    subprocess.run([sys.executable, "-c", code, str(dirpath), str(rows)], check=True,
                   capture_output=True)
    return {"parquet": dirpath / f"req_{rows}.parquet", "csv": dirpath / f"req_{rows}.csv"}


def measure(mode: str, path: Path, kind: str, rows: int = 0) -> dict:
    code = CHILD.format(root=str(ROOT))
    p = subprocess.run([sys.executable, "-c", code, mode, str(path), kind, str(rows)],
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{mode} {path.name}: {p.stderr.strip()[-800:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="keep the generated files in this folder")
    ap.add_argument("--real", help="instead: time loading every file of this folder")
    args = ap.parse_args(argv)
    if args.real:
        return bench_real(Path(args.real), args.repeat)
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="te_ingest_"))
    tmp.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for rows in (int(x) for x in args.rows.split(",")):
            files = generate_in_child(tmp, rows)
            amb = arrow_mb(files["parquet"])
            for kind, path in files.items():
                best = {}
                modes = ("bare", "store", "canonical", "sha256", "paths")
                runs_by = {m: [] for m in modes}
                for _ in range(args.repeat):  # interleaved, so load from other users hits all
                    for mode in modes:
                        runs_by[mode].append(measure(mode, path, kind, rows))
                for mode, runs in runs_by.items():
                    assert all(r["rows"] == rows for r in runs), runs
                    best[mode] = {"seconds": min(r["seconds"] for r in runs),
                                  "peak_mb": min(r["peak_mb"] for r in runs),
                                  "load_mb": min(r["peak_mb"] - r["before_mb"] for r in runs),
                                  "after_mb": min((r["after_mb"] for r in runs
                                                   if r["after_mb"] is not None), default=None)}
                res = {"rows": rows, "format": kind, "file_mb": path.stat().st_size / 2**20,
                       "arrow_mb": amb, "bare": best["bare"], "store": best["store"],
                       "canonical": best["canonical"],
                       "time_ratio": best["store"]["seconds"] / best["bare"]["seconds"],
                       "store_load_mb_over_arrow": best["store"]["load_mb"] / amb,
                       "store_peak_mb_over_arrow": best["store"]["peak_mb"] / amb,
                       "bare_load_mb_over_arrow": best["bare"]["load_mb"] / amb,
                       "canonical_time_ratio": best["canonical"]["seconds"] / best["bare"]["seconds"],
                       "sha256_seconds": best["sha256"]["seconds"],
                       "paths": best["paths"]}
                results.append(res)
                print(f"{rows:>9,d} {kind:8s} file {res['file_mb']:7.1f} MB  arrow {amb:7.1f} MB | "
                      f"bare {best['bare']['seconds']:6.2f} s {best['bare']['load_mb']:7.0f} MB | "
                      f"store {best['store']['seconds']:6.2f} s {best['store']['load_mb']:7.0f} MB | "
                      f"time x{res['time_ratio']:.2f} (target <= 1.3), "
                      f"store memory {res['store_load_mb_over_arrow']:.2f} x arrow (target <= 2; "
                      f"whole-process peak {best['store']['peak_mb']:.0f} MB = "
                      f"{res['store_peak_mb_over_arrow']:.2f} x) | "
                      f"bare into the canonical table x{res['canonical_time_ratio']:.2f} "
                      f"{best['canonical']['load_mb']:.0f} MB, "
                      f"sha256 {res['sha256_seconds']:.2f} s | load_paths (with compact) "
                      f"{best['paths']['seconds']:.2f} s, peak {best['paths']['load_mb']:.0f} MB, "
                      f"resident after {best['paths']['after_mb']:.0f} MB", flush=True)
            if not args.keep:
                for p in files.values():
                    p.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(results, indent=1))
    return 0


def bench_real(folder: Path, repeat: int) -> int:
    """Best-of-`repeat` wall time of Store().load_paths([folder]) and the slowest files."""
    import time
    sys.path.insert(0, str(ROOT))
    from explorer.core.store import Store
    import explorer.core.formats as F
    F.all_formats()
    best, per = None, {}
    for _ in range(repeat):
        s = Store()
        times = {}
        last = [time.perf_counter(), None]

        def progress(i, n, path):
            now = time.perf_counter()
            if last[1] is not None:
                times[last[1]] = now - last[0]
            last[0], last[1] = now, path
        t0 = time.perf_counter()
        reports = s.load_paths([folder], progress=progress)
        dt = time.perf_counter() - t0
        times[last[1]] = time.perf_counter() - last[0]
        s.close()
        if best is None or dt < best:
            best, per = dt, times
    loaded = sum(1 for r in reports if not r.error and not getattr(r, "skipped_file", None))
    print(f"{len(reports)} files ({loaded} loaded) in {best:.2f} s (best of {repeat}), "
          f"{1000 * best / max(1, len(reports)):.1f} ms per file")
    for path, t in sorted(per.items(), key=lambda kv: -kv[1])[:5]:
        print(f"  {t * 1000:8.1f} ms  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
