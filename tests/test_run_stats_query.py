"""queries/compare_run_stats.sql (the Runs statistics: one list-form quantile_cont per column)
against an independent recomputation with pandas / numpy (np.percentile's default linear
interpolation, which is DuckDB's quantile_cont), every output value of every run."""
import math

import numpy as np
import pandas as pd
import pytest

COLUMNS = ["run_id", "n", "n_failed",
           "ttft_ms_mean", "ttft_ms_median", "ttft_ms_p90", "ttft_ms_p99",
           "tpot_ms_mean", "tpot_ms_median", "tpot_ms_p90", "tpot_ms_p99",
           "e2e_ms_mean", "e2e_ms_median", "e2e_ms_p90", "e2e_ms_p99",
           "prompt_tokens_sum", "completion_tokens_sum", "input_len", "output_len", "span_s",
           "n_good"]
TTFT_SLO, TPOT_SLO = 150.0, 6.0


def _requests():
    g = np.random.default_rng(11)
    parts = []
    for run, n in (("a", 997), ("b", 40), ("one", 1), ("failed", 25), ("ties", 12)):
        df = pd.DataFrame({
            "run_id": run, "request_id": [f"{run}{i}" for i in range(n)],
            "arrival_s": np.sort(g.uniform(0, 60, n)), "ttft_ms": g.gamma(2, 60, n),
            "tpot_ms": g.gamma(2, 3, n), "e2e_ms": g.gamma(3, 500, n),
            "prompt_tokens": g.integers(1, 4000, n), "completion_tokens": g.integers(1, 800, n),
            "error": np.where(g.random(n) < 0.08, "timeout", None)})
        if run == "failed":
            df["error"] = "HTTP 500"
        if run == "ties":  # repeated values and an even count: interpolation between equals
            df["ttft_ms"] = np.repeat([10.0, 20.0], 6)
            df["error"] = None
        if run == "a":  # TPOT missing on some (one-token answers): NULL, left out of its stats
            df.loc[df.index % 17 == 0, "tpot_ms"] = np.nan
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


def _expected(req: pd.DataFrame) -> dict[str, dict]:
    out = {}
    for run, d in req.groupby("run_id"):
        ok = d[d["error"].isna()]
        row = {"run_id": run, "n": len(ok), "n_failed": int(d["error"].notna().sum())}
        for m in ("ttft_ms", "tpot_ms", "e2e_ms"):
            v = ok[m].dropna().to_numpy()
            row[f"{m}_mean"] = v.mean() if len(v) else None
            for stat, q in (("median", 50), ("p90", 90), ("p99", 99)):
                row[f"{m}_{stat}"] = float(np.percentile(v, q)) if len(v) else None
        for c, med in (("prompt_tokens", "input_len"), ("completion_tokens", "output_len")):
            row[f"{c}_sum"] = int(ok[c].sum()) if len(ok) else None
            row[med] = float(np.median(ok[c])) if len(ok) else None
        row["span_s"] = float((d["arrival_s"] + d["e2e_ms"] / 1000.0).max() - d["arrival_s"].min())
        row["n_good"] = int(((ok["ttft_ms"] <= TTFT_SLO)
                             & (ok["tpot_ms"].fillna(0) <= TPOT_SLO)).sum())
        out[run] = row
    return out


@pytest.fixture()
def store():
    from explorer.core.store import Store
    s = Store()
    yield s
    s.close()


def test_run_statistics_equal_an_independent_recomputation(store):
    req = _requests()
    store.append("requests", req)
    runs = ["a", "b", "one", "failed", "ties"]
    got = store.query("compare_run_stats", {"run_ids": runs + ["absent"],
                                            "ttft_slo_ms": TTFT_SLO, "tpot_slo_ms": TPOT_SLO})
    assert list(got.columns) == COLUMNS
    want = _expected(req)
    assert sorted(got["run_id"]) == sorted(runs)
    for r in got.to_dict("records"):
        w = want[r["run_id"]]
        for c in COLUMNS:
            x, y = r[c], w[c]
            if y is None:
                assert x is None or (isinstance(x, float) and math.isnan(x)), (r["run_id"], c, x)
            elif isinstance(y, int):
                assert x == y, (r["run_id"], c, x, y)
            elif isinstance(y, float):
                assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12), (r["run_id"], c, x, y)
            else:
                assert x == y
    # the cases that tell the quantiles apart: one value is every quantile; ties interpolate
    one = got.set_index("run_id").loc["one"]
    assert one["ttft_ms_median"] == one["ttft_ms_p90"] == one["ttft_ms_p99"] == one["ttft_ms_mean"]
    ties = got.set_index("run_id").loc["ties"]
    assert (ties["ttft_ms_median"], ties["ttft_ms_p90"]) == (15.0, 20.0)  # between 6th and 7th
    assert got.set_index("run_id").loc["failed", "n"] == 0


def test_one_list_form_quantile_per_column():
    """The query holds each column's values once: one quantile_cont per column (five), the
    three TTFT / TPOT / E2E quantiles in one list-form call each."""
    import re
    from explorer.core.sqlutil import load_query
    sql = re.sub(r"--[^\n]*", "", load_query("compare_run_stats"))
    calls = re.findall(r"quantile_cont\((\w+),", sql)
    assert sorted(calls) == sorted(set(calls)) and len(calls) == 5
    assert sql.count("[0.5, 0.9, 0.99]") == 3
