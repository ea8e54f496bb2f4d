"""Cohort(eval_id=...): one eval's cases only, in the frame and in every section; the report's
--eval option (eval id, model or a unique part of it) on the two real MMLU-Pro evals."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from explorer.__main__ import main
from explorer.core.analysis import (Cohort, cluster_table, cohort_frame, compare_versions,
                                    default_cluster, sla_attainment, summarize_cohort)
from explorer.core.sections import run_all
from explorer.core.errors import NoData

RNG = np.random.default_rng(5)
N = 80


def _cases(eval_id, p_correct):
    return pd.DataFrame({
        "case_id": [f"{eval_id}:{i}" for i in range(N)], "eval_id": eval_id, "model": eval_id.upper(),
        "category": RNG.choice(["alg", "geo"], N), "correct": RNG.random(N) < p_correct,
        "prompt_tokens": RNG.integers(20, 400, N), "completion_tokens": RNG.integers(5, 300, N)})


A, B = _cases("small", 0.4), _cases("large", 0.8)
for df in (A, B):
    df["cluster"] = np.where(df["correct"], None, df["category"])


@pytest.fixture(scope="module")
def loaded():
    from explorer.core.store import Store
    s = Store()
    s.append("cases", pd.concat([A, B], ignore_index=True))
    # eval "small" is bound to run r1 (version 1.0), eval "large" to run r2 (version 2.0)
    for run, ver, df in (("r1", "1.0", A), ("r2", "2.0", B)):
        s.add_run(run, engine_version=ver, benchmark="bench")
        ids = [f"{run}-{i}" for i in range(N)]
        s.append("requests", pd.DataFrame({"run_id": run, "request_id": ids,
                                           "ttft_ms": RNG.exponential(300, N),
                                           "tpot_ms": RNG.normal(30, 4, N),
                                           "arrival_s": np.arange(N) * 0.5}))
        s.append("case_links", pd.DataFrame({"case_id": df["case_id"], "run_id": run,
                                             "request_id": ids, "level": 1}))
    yield s
    s.close()


def test_defaults_unchanged():
    c = Cohort("x", "all-correct", None)
    assert (c.cluster, c.control, c.selection, c.eval_id) == ("x", "all-correct", None, None)
    assert Cohort().to_dict()["eval_id"] is None


def test_frame_and_summary_honour_the_eval(loaded):
    f = cohort_frame(loaded, Cohort("alg", eval_id="small"))
    bad = A[~A.correct & (A.cluster == "alg")]
    ctrl = A[A.correct & (A.category == "alg")]
    assert sorted(f.loc[f.grp == "bad", "case_id"]) == sorted(bad.case_id)
    assert sorted(f.loc[f.grp == "control", "case_id"]) == sorted(ctrl.case_id)
    pooled = cohort_frame(loaded, Cohort("alg"))
    assert (pooled.grp == "bad").sum() == len(bad) + (~B.correct & (B.cluster == "alg")).sum()
    s = summarize_cohort(loaded, Cohort("alg", eval_id="small"))
    assert s.share_of_badcases == pytest.approx(len(bad) / (~A.correct).sum())
    rows = cluster_table(loaded, eval_id="large")
    want = B[~B.correct].groupby("cluster").size()
    assert {r["cluster"]: r["badcases"] for r in rows} == want.to_dict()
    assert default_cluster(loaded, eval_id="large") == want.sort_values(ascending=False).index[0]
    with pytest.raises(NoData, match="eval 'nope' has no case"):
        summarize_cohort(loaded, Cohort(eval_id="nope"))


def test_sections_honour_the_eval(loaded):
    out = run_all(loaded, Cohort("alg", eval_id="small"), {"sections": ["comparison", "versions", "sla"]})
    bad = A[~A.correct & (A.cluster == "alg")]
    ctrl = A[A.correct & (A.category == "alg")]
    row = out["comparison"].row("completion_tokens")
    assert (row.n_bad, row.n_control) == (len(bad), len(ctrl))
    # versions and SLA: only the run bound to eval "small" (one version: no change)
    v = compare_versions(loaded, Cohort(eval_id="small"))
    assert v.versions == ("1.0",) and v.changes == ()
    assert v.accuracy[0]["accuracy"] == pytest.approx(A.correct.mean())
    assert [r["key"] for r in sla_attainment(loaded, Cohort(eval_id="small")).by["run"]] == ["r1"]
    assert compare_versions(loaded).versions == ("1.0", "2.0")


def test_report_eval_option_on_real_mmlu_pro(real, tmp_path, capsys):
    folder = real / "mmlu_pro_outputs"
    f8 = folder / "Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json"
    raw = pd.DataFrame(json.loads(f8.read_text(encoding="utf-8")))
    wrong = raw[raw["pred"] != raw["answer"]]
    by_cat = wrong.groupby("src").size().sort_values(ascending=False)
    rc = main(["report", str(folder), "--eval", "8B", "--out", str(tmp_path), "--no-whatif"])
    assert rc == 0
    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert doc["meta"]["cohort"]["eval_id"].endswith("Meta-Llama-3_1-8B-Instruct")
    assert [(c["cluster"], c["badcases"]) for c in doc["clusters"]] == list(by_cat.items())
    top = by_cat.index[0]
    assert doc["cohort"]["badcases"] == by_cat.iloc[0]
    assert doc["cohort"]["share_of_badcases"] == pytest.approx(by_cat.iloc[0] / len(wrong))
    rows = {r["metric"]: r for r in doc["comparison"]}
    b = wrong.loc[wrong.src == top, "generated_text"].str.len().to_numpy(float)
    c = raw.loc[(raw.pred == raw.answer) & (raw.src == top), "generated_text"].str.len().to_numpy(float)
    r = rows["prediction_chars"]
    assert (r["n_bad"], r["n_control"]) == (len(b), len(c))
    assert r["p_value"] == pytest.approx(stats.mannwhitneyu(b, c).pvalue)
    assert "Eval: mmlu_pro:Meta-Llama-3_1-8B-Instruct" in (tmp_path / "report.md").read_text(encoding="utf-8")
    # "Llama" names both evals: a usage error listing them
    rc = main(["report", str(folder), "--eval", "Llama", "--out", str(tmp_path / "x")])
    assert rc == 2 and "matches several evals" in capsys.readouterr().err


def test_heatmap_of_an_unbound_eval_says_why(store):
    from explorer.core.analysis import compute_heatmap
    store.add_run("r", engine_version="1.0")
    store.append("requests", pd.DataFrame({"run_id": "r", "request_id": ["1", "2"],
                                           "ttft_ms": [1.0, 2.0], "tpot_ms": [3.0, 4.0]}))
    store.append("cases", pd.DataFrame({"case_id": ["solo:1", "solo:2"], "eval_id": "solo",
                                         "category": "alg", "correct": [False, True],
                                         "cluster": ["alg", None]}))
    with pytest.raises(NoData, match="eval 'solo'"):
        compute_heatmap(store, Cohort("alg", eval_id="solo"), {"level": "request",
                                                                "x_metric": "ttft_ms",
                                                                "y_metric": "tpot_ms",
                                                                "value_metric": "ttft_ms"})
