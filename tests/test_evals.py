"""Eval formats on the real public files (read in place), expectations recomputed from the raw
files with json and checked against the published numbers."""
from __future__ import annotations

import json

import pytest

from explorer.core.formats import rank_formats
from explorer.core.pipeline import prepare
from explorer.core.store import Store

MMLU = "mmlu_pro_outputs/Meta-Llama-3_1-{}-Instruct_mmlu_hs_college_math.json"
GSM8K = "gsm8k_model_solutions/example_model_solutions.jsonl"
HELM = "every_eval_ever/helm_mmlu_philosophy_gpt2"


@pytest.fixture(scope="module")
def loaded(real):
    """The real folders that hold evals, loaded as a user would drop them, then prepared
    (the trace folders are left out to keep the suite fast; detection against every format
    is checked in test_detection_prefers_the_eval_formats)."""
    s = Store()
    reports = s.load_paths([real / "mmlu_pro_outputs", real / "gsm8k_model_solutions",
                            real / "every_eval_ever"])
    result = prepare(s)
    yield s, reports, result
    s.close()


def _counts(store, eval_id):
    return tuple(store.execute("SELECT count(*), count(*) FILTER (WHERE correct) FROM cases "
                               "WHERE eval_id = ?", [eval_id]).fetchall()[0])


@pytest.mark.parametrize("size,published", [("8B", 146), ("70B", 192)])
def test_mmlu_pro(real, loaded, size, published):
    s, reports, _ = loaded
    raw = json.loads((real / MMLU.format(size)).read_text())
    expected = sum(r["pred"] == r["answer"] for r in raw)
    assert expected == published and len(raw) == 316
    assert _counts(s, f"mmlu_pro:Meta-Llama-3_1-{size}-Instruct") == (316, published)
    cats = s.df("SELECT category, count(*) n FROM cases WHERE eval_id = ? GROUP BY 1",
                [f"mmlu_pro:Meta-Llama-3_1-{size}-Instruct"])
    raw_cats = {}
    for r in raw:
        raw_cats[r["src"]] = raw_cats.get(r["src"], 0) + 1
    assert dict(zip(cats.category, cats.n)) == raw_cats


def test_gsm8k_one_eval_per_model(real, loaded):
    s, reports, _ = loaded
    lines = [json.loads(x) for x in (real / GSM8K).read_text().splitlines() if x.strip()]
    models = [k for k, v in lines[0].items() if isinstance(v, dict) and "is_correct" in v]
    expected = {m: sum(bool(x[m]["is_correct"]) for x in lines) for m in models}
    assert list(expected.values()) == [286, 515, 458, 742] and len(lines) == 1319
    for m, n in expected.items():
        assert _counts(s, f"gsm8k:{m}") == (1319, n)
    assert s.df("SELECT count(*) n FROM evals WHERE format = 'gsm8k'").n[0] == 4


def test_lm_eval_samples(real, loaded):
    s, reports, _ = loaded
    path = next((real / "every_eval_ever").glob("samples_*.jsonl"))
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    expected = sum(float(r[r["metrics"][0]]) >= 0.5 for r in rows)
    assert (len(rows), expected) == (10, 0)
    assert _counts(s, "lm_eval:math_perturbed_full") == (10, 0)
    ev = s.df("SELECT model FROM evals WHERE eval_id = 'lm_eval:math_perturbed_full'")
    assert ev.model[0].startswith("RylanSchaeffer/")


def test_helm_run_binds_exactly(real, loaded):
    s, reports, result = loaded
    stats = json.loads((real / HELM / "per_instance_stats.json").read_text())
    state = json.loads((real / HELM / "scenario_state.json").read_text())

    def stat(e, name):
        return next(x for x in e["stats"] if x["name"]["name"] == name)

    expected_correct = sum(stat(e, "exact_match")["sum"] >= 1 for e in stats)
    assert (len(stats), expected_correct) == (10, 1)
    eval_id = "helm:helm_mmlu_philosophy_gpt2"
    assert _counts(s, eval_id) == (10, 1)
    run_id = s.df("SELECT run_id FROM runs WHERE format = 'helm'").run_id.tolist()
    assert len(run_id) == 1
    req = s.df("SELECT request_id, e2e_ms, prompt_tokens, completion_tokens, arrival_s "
               "FROM requests WHERE run_id = ?", run_id).set_index("request_id")
    assert len(req) == 10
    when = {rs["instance"]["id"]: rs["result"]["request_datetime"]
            for rs in state["request_states"]}
    for e in stats:
        r = req.loc[e["instance_id"]]
        assert r.e2e_ms == pytest.approx(stat(e, "inference_runtime")["sum"] * 1000)
        assert r.prompt_tokens == stat(e, "num_prompt_tokens")["sum"]
        assert r.completion_tokens == stat(e, "num_completion_tokens")["sum"]
        assert r.arrival_s == when[e["instance_id"]]
    links = s.df("SELECT l.case_id, l.request_id, l.level, c.request_id AS case_req "
                 "FROM case_links l JOIN cases c USING (case_id) WHERE c.eval_id = ?", [eval_id])
    assert len(links) == 10 and set(links.level) == {1}
    assert (links.request_id == links.case_req).all()
    assert set(links.request_id) == {e["instance_id"] for e in stats}
    # the GUI's cluster header: HELM badcases fall in their category (the MMLU subject)
    assert result.per_cluster["philosophy"].label() == "9/9 (100%)"


def test_detection_prefers_the_eval_formats(real):
    for rel, name in [(MMLU.format("8B"), "mmlu_pro"), (GSM8K, "gsm8k"), (HELM, "helm"),
                      (HELM + "/per_instance_stats.json", "helm")]:
        assert rank_formats(real / rel)[0][1] == name
    path = next((real / "every_eval_ever").glob("samples_*.jsonl"))
    assert rank_formats(path)[0][1] == "lm_eval"
    # the HELM folder's other files are not loaded a second time
    helm_inputs = [r for r in loaded_reports(real) if "helm_mmlu" in r.path]
    assert len(helm_inputs) == 1


def loaded_reports(real):
    s = Store()
    try:
        return s.load_paths([real / "every_eval_ever"])
    finally:
        s.close()


def test_generic_csv_with_correctness_column(tmp_path):
    p = tmp_path / "my_eval.csv"
    p.write_text("id,prompt,prediction,is_correct,category,cluster,request_id,timestamp\n"
                 "1,What is 2+2?,5,false,arith,计算题中间步骤出错,req-a,1700000000\n"
                 "2,Capital of France?,Paris,true,geo,,,1700000001000\n"
                 "3,3*3?,10,0,arith,,,2023-11-14T22:13:22Z\n"
                 "4,bad row,x,maybe,arith,,,\n", encoding="utf-8")
    ranked = rank_formats(p)
    assert ranked[0][1] == "generic_eval"
    s = Store()
    rep = s.load_file(p)
    assert rep.error is None and (rep.rows_loaded, rep.rows_skipped) == (3, 1)
    assert "line 5" in rep.skipped_reasons[0] and "is_correct" in rep.skipped_reasons[0]
    df = s.df("SELECT * FROM cases ORDER BY case_id")
    assert df.correct.tolist() == [False, True, False]
    assert df.timestamp_s.tolist() == [1700000000.0, 1700000001.0, 1700000002.0]
    assert df.cluster[0] == "计算题中间步骤出错" and df.request_id[0] == "req-a"
    prepare(s)
    df = s.df("SELECT case_id, cluster FROM cases WHERE NOT correct ORDER BY 1")
    assert df.cluster.tolist() == ["计算题中间步骤出错", "arith"]  # the input cluster wins
    s.close()


@pytest.mark.parametrize("kind", ["jsonl", "json", "parquet"])
def test_generic_jsonl_json_list_and_parquet(tmp_path, kind):
    import pandas as pd
    rows = [{"question_id": i, "question": f"q {i}", "exact_match": float(i % 3 == 0),
             "subject": "algebra" if i % 2 else "geometry",
             "x_request_id": f"r{i}", "ts": 1_700_000_000_000 + i} for i in range(9)]
    p = tmp_path / f"cases.{kind}"
    if kind == "jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows))
    elif kind == "json":
        p.write_text(json.dumps(rows, indent=1))
    else:
        pd.DataFrame(rows).to_parquet(p)
    assert rank_formats(p)[0][1] == "generic_eval"
    s = Store()
    rep = s.load_file(p)
    assert rep.error is None and rep.rows_loaded == 9
    df = s.df("SELECT * FROM cases ORDER BY timestamp_s")
    assert df.correct.sum() == sum(r["exact_match"] >= 0.5 for r in rows) == 3
    assert df.request_id.tolist() == [r["x_request_id"] for r in rows]
    assert df.timestamp_s.tolist() == [1_700_000_000 + i / 1000 for i in range(9)]
    assert sorted(set(df.category)) == ["algebra", "geometry"]
    s.close()


def test_generic_without_correctness_is_not_an_eval(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("request_id,ttft_ms,prompt_tokens,success\na,12.5,100,true\n")
    assert dict((n, c) for c, n in rank_formats(p)).get("generic_eval", 0) == 0


def test_bad_files_name_file_and_line(tmp_path):
    p = tmp_path / "Model-X_mmlu_math.json"
    p.write_text('[{"question_id": 1, "answer": "A", "pred": "A", "src": "x",\n  oops}]')
    s = Store()
    rep = s.load_file(p)
    assert rep.error and str(p) in rep.error and ":2:" in rep.error
    assert s.count("cases") == 0
    s.close()


def test_opencompass_predictions_with_results_details(tmp_path):
    pred = tmp_path / "outputs" / "x" / "predictions" / "qwen-7b"
    res = tmp_path / "outputs" / "x" / "results" / "qwen-7b"
    pred.mkdir(parents=True)
    res.mkdir(parents=True)
    records = {str(i): {"origin_prompt": [{"role": "HUMAN", "prompt": f"What is {i}+{i}?"}],
                        "prediction": str(2 * i + (i % 2)), "gold": str(2 * i)}
               for i in range(6)}
    (pred / "gsm8k.json").write_text(json.dumps(records, indent=4))
    details = [{"pred": [r["prediction"]], "answer": r["gold"],
                "correct": [r["prediction"] == r["gold"]]} for r in records.values()]
    (res / "gsm8k.json").write_text(json.dumps({"accuracy": 50.0, "details": details}))
    s = Store()
    rep = s.load_file(pred / "gsm8k.json")
    assert rep.format == "opencompass" and rep.error is None
    assert _counts(s, "opencompass:qwen-7b/gsm8k") == (6, 3)
    s.close()


@pytest.mark.parametrize("kind", ["csv", "tsv", "parquet"])
def test_generic_eval_sql_path_matches_the_record_path(tmp_path, monkeypatch, kind):
    """The vectorised loader (DuckDB) and the per-record parsers give the same cases, skips
    and reasons on awkward values: spaces, ISO and ms timestamps, scores, repeated ids,
    blank and whitespace-only text, extra columns."""
    import pandas as pd
    from explorer.core.formats import generic_eval
    rows = [["id", "question", "is_correct", "subject", "ts", "input_tokens", "note", "n"],
            ["a", "Q one", "true", "alg", "1700000000", "12", "x", "1"],
            ["b", "  Q  TWO ", " yes ", " ", "1700000001000", "7.0", "", ""],
            ["c", "q3", "0.7", "geo", "2023-11-14T22:13:22Z", "", "é \"q\"", "2"],
            ["a", "dup", "false", "alg", "", "", "", ""],
            ["", "no id", "0", "alg", "nan", "3", "", "4"],
            ["e", "bad", "maybe", "alg", "", "", "", ""],
            ["f", "bad tokens", "1", "alg", "", "2.5", "", ""],
            ["g", "score", "1.5", "alg", "", "", "", ""],
            ["h", "\u3000", "PASS", "\t", "+12", "+4", "y", ""]]
    p = tmp_path / f"ev.{kind}"
    if kind == "parquet":
        pd.DataFrame(rows[1:], columns=rows[0]).to_parquet(p)
    else:
        sep = "\t" if kind == "tsv" else ","
        p.write_text("\n".join(sep.join(f'"{v}"' if '"' in v or sep in v else v
                                        for v in (c.replace('"', '""') for c in r))
                               for r in rows) + "\n", encoding="utf-8")
    from explorer.core.formats import _eval_sql
    calls, real = [], _eval_sql.load_table
    monkeypatch.setattr(_eval_sql, "load_table", lambda *a: calls.append(1) or real(*a))
    seen = {}
    for path in ("sql", "records"):
        if path == "records":
            monkeypatch.setattr(generic_eval, "_load_sql", lambda *a: False)
        s = Store()
        rep = s.load_file(p)
        assert rep.error is None
        df = s.df("SELECT * FROM cases ORDER BY case_id")
        df["extra"] = [None if pd.isna(v) else json.loads(v) for v in df["extra"]]
        seen[path] = (rep.rows_loaded, rep.rows_skipped, rep.skipped_reasons,
                      df.astype(object).where(df.notna(), None).to_dict("records"))
        s.close()
    assert seen["sql"] == seen["records"]
    assert seen["sql"][:2] == (5, 4) and calls == [1]
