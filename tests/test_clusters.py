"""Badcase clusters: default by category, input clusters win, automatic TF-IDF clustering on a
text with a known grouping, renames kept with the session, and the per-cluster summary."""
from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from explorer.core.clusters import (assign_default_clusters, auto_cluster, cluster_summary,
                                    rename_cluster)
from explorer.core.errors import NoData
from explorer.core.pipeline import prepare
from explorer.core.store import Store

TOPICS = {
    "geometry": "triangle angle circle radius area polygon hypotenuse perimeter",
    "probability": "dice coin probability random expected outcome chance draws",
    "calculus": "derivative integral limit tangent slope continuous function series",
}


def _topic_store(seed=1, per_topic=12):
    rng = random.Random(seed)
    rows, truth = [], {}
    for t, words in TOPICS.items():
        w = words.split()
        for i in range(per_topic):
            cid = f"e:{t}{i}"
            rows.append({"case_id": cid, "eval_id": "e", "correct": False,
                         "category": "math", "prompt": "Solve: " + " ".join(rng.choices(w, k=8)),
                         "prediction": "The answer is " + " ".join(rng.choices(w, k=4))})
            truth[cid] = t
    rows.append({"case_id": "e:ok", "eval_id": "e", "correct": True, "category": "math",
                 "prompt": "fine", "prediction": "fine"})
    s = Store()
    s.append("cases", pd.DataFrame(rows))
    return s, truth


def test_default_clusters_are_categories(real):
    s = Store()
    path = real / "mmlu_pro_outputs" / "Meta-Llama-3_1-8B-Instruct_mmlu_hs_college_math.json"
    s.load_file(path)
    assert assign_default_clusters(s) == 316 - 146
    raw = json.loads(path.read_text())
    bad = {}
    for r in raw:
        if r["pred"] != r["answer"]:
            bad[r["src"]] = bad.get(r["src"], 0) + 1
    summ = cluster_summary(s)
    assert {c.name: c.badcases for c in summ} == bad
    assert sum(c.share for c in summ) == pytest.approx(1.0)
    assert all(c.bound == 0 and c.binding_rate == 0 for c in summ)
    assert s.df("SELECT count(*) n FROM cases WHERE correct AND cluster IS NOT NULL").n[0] == 0
    assert assign_default_clusters(s) == 0  # idempotent
    s.close()


def test_badcases_without_category_are_uncategorised():
    s = Store()
    s.append("cases", pd.DataFrame({"case_id": ["a", "b"], "correct": [False, True]}))
    assign_default_clusters(s)
    assert [c.name for c in cluster_summary(s)] == ["uncategorised"]
    s.close()


def test_auto_cluster_recovers_known_topics():
    s, truth = _topic_store()
    names = auto_cluster(s, seed=0)
    assert len(names) == 3
    got = s.df("SELECT case_id, cluster FROM cases WHERE NOT correct")
    by_cluster = got.assign(topic=got.case_id.map(truth)).groupby("cluster").topic.agg(set)
    assert all(len(t) == 1 for t in by_cluster)          # every cluster is one topic
    for name, topics in by_cluster.items():              # named by that topic's words
        assert any(w in TOPICS[next(iter(topics))].split() for w in name.split(" / "))
    assert s.get_setting("clusters.auto")["k"] == 3
    assert s.df("SELECT cluster FROM cases WHERE correct").cluster.isna().all()
    # deterministic for a seed; an explicit k is honoured
    again = auto_cluster(s, seed=0)
    assert again == names
    assert len(auto_cluster(s, k=2)) == 2
    s.close()


def test_auto_cluster_handles_chinese_text_and_no_badcases():
    s = Store()
    rows = [{"case_id": f"c{i}", "correct": False,
             "prompt": ("计算题中间步骤出错 乘法 进位" if i % 2 else "单位换算 公里 米"),
             "prediction": "答案"} for i in range(8)]
    s.append("cases", pd.DataFrame(rows))
    names = auto_cluster(s)
    assert len(names) == 2
    s2 = Store()
    with pytest.raises(NoData):
        auto_cluster(s2)
    s.close()
    s2.close()


def test_rename_is_kept_with_the_session_and_applies_to_later_loads(tmp_path):
    s = Store()
    s.append("cases", pd.DataFrame({"case_id": ["a", "b", "c"], "correct": [False] * 3,
                                    "category": ["algebra", "algebra", "geometry"]}))
    prepare(s)
    rename_cluster(s, "algebra", "计算题中间步骤出错")
    rename_cluster(s, "计算题中间步骤出错", "carry errors")   # chain collapses
    with pytest.raises(KeyError):
        rename_cluster(s, "nope", "x")
    with pytest.raises(ValueError):
        rename_cluster(s, "geometry", "  ")
    path = tmp_path / "session.duckdb"
    s.save_as(path)
    s.close()
    s = Store.open(path)
    assert {c.name: c.badcases for c in cluster_summary(s)} == {"carry errors": 2, "geometry": 1}
    # a case loaded later in the old cluster gets the new name
    s.append("cases", pd.DataFrame({"case_id": ["d"], "correct": [False],
                                    "category": ["algebra"]}))
    prepare(s)
    assert {c.name: c.badcases for c in cluster_summary(s)} == {"carry errors": 3, "geometry": 1}
    # renaming back works without a cycle
    rename_cluster(s, "carry errors", "algebra")
    prepare(s)
    assert {c.name: c.badcases for c in cluster_summary(s)} == {"algebra": 3, "geometry": 1}
    s.close()


def test_summary_counts_bound_badcases():
    s = Store()
    s.add_run("r")
    s.append("requests", pd.DataFrame({"run_id": ["r"] * 3, "request_id": ["x", "y", "z"]}))
    s.append("cases", pd.DataFrame({
        "case_id": ["a", "b", "c", "d", "e"], "correct": [False, False, False, True, False],
        "cluster": ["k1", "k1", "k1", None, "k2"], "request_id": ["x", "y", None, "z", None]}))
    result = prepare(s)
    summ = {c.name: c for c in cluster_summary(s)}
    assert (summ["k1"].badcases, summ["k1"].bound, summ["k1"].label()) == (3, 2, "2/3 (67%)")
    assert summ["k1"].share == pytest.approx(0.75) and summ["k2"].share == pytest.approx(0.25)
    assert result.per_cluster["k1"].label() == "2/3 (67%)"
    assert (result.bound, result.total) == (3, 5)
    s.close()
