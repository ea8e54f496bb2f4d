"""run_all on an empty store, an all-NaN trace and with cancel: every section answers, a section
without data says why, nothing raises."""
import json

import numpy as np
import pandas as pd
import pytest

from explorer.core.analysis import Cancelled, Cohort, SectionError
from explorer.core.report import build_report, render_markdown
from explorer.core.sections import keys, run_all

SECTIONS = keys("cohort")  # the cohort's analyses, in the registry's order


def _dicts(res):
    return {k: v.to_dict() for k, v in res.items()}


def test_empty_store_every_section_says_why(store):
    res = run_all(store, Cohort())
    assert list(res) == list(SECTIONS)
    for name in ("cohort", "comparison", "tree", "heatmap", "versions", "sla"):
        assert isinstance(res[name], SectionError) and res[name].kind == "no_data", name
        assert res[name].reason
    assert "no eval cases" in res["cohort"].reason
    assert "no trace" in res["sla"].reason
    json.dumps(_dicts(res), allow_nan=False)


def test_all_nan_metrics(store):
    n = 20
    ids = [f"q{i}" for i in range(n)]
    store.add_run("r", engine_version="1")
    store.append("requests", pd.DataFrame({"run_id": "r", "request_id": ids, "arrival_s": np.arange(n) * 1.0,
                                           "ttft_ms": np.nan, "kv_cache_hit_rate": np.nan}))
    store.append("cases", pd.DataFrame({"case_id": ids, "category": "c", "correct": np.arange(n) % 3 > 0,
                                        "cluster": np.where(np.arange(n) % 3 > 0, None, "k")}))
    store.append("case_links", pd.DataFrame({"case_id": ids, "run_id": "r", "request_id": ids, "level": 1}))
    res = run_all(store, Cohort("k"))
    d = _dicts(res)
    json.dumps(d, allow_nan=False)
    assert d["cohort"]["bound"] == 7
    # no numeric metric has a value: only the "errored" signal row, with its reason
    assert [r["metric"] for r in d["comparison"]] == ["errored"]
    assert d["comparison"][0]["p_value"] is None and d["comparison"][0]["reason"]
    assert d["tree"]["status"] == "no_data" and d["heatmap"]["status"] == "no_data"
    assert d["sla"]["status"] == "no_data" and "ttft_ms" in d["sla"]["reason"]
    md = render_markdown(build_report(store, Cohort("k"), whatif=False).doc)
    assert md.count("_No data:") >= 4


def test_progress_and_cancel(store):
    seen = []
    run_all(store, Cohort(), progress=lambda d, n, s: seen.append((d, n, s)))
    assert [s for _, _, s in seen] == list(SECTIONS) + ["done"]
    calls = iter([False, False, True])
    with pytest.raises(Cancelled):
        run_all(store, Cohort(), cancelled=lambda: next(calls))


def test_sections_param_restricts(store):
    res = run_all(store, Cohort(), {"sections": ["sla", "conclusion"]})
    assert list(res) == ["sla", "conclusion"]
