"""Issue 33, item 5: an eval picker in the window (as `report --eval`) and each case's model
in the Cases table. On the two real MMLU-Pro outputs (Llama-3.1 8B and 70B), pooled by default,
picking the 8B eval makes the clusters and the cohort that eval's alone, recomputed here from
the store's cases with pandas."""
from __future__ import annotations

import pytest

from tests.gui.conftest import painted


def test_pick_one_model_of_two(real, window, qtbot):
    files = [real / "mmlu_pro_outputs" / f"Meta-Llama-3_1-{m}-Instruct_mmlu_hs_college_math.json"
             for m in ("8B", "70B")]
    if not all(f.exists() for f in files):
        pytest.skip("MMLU-Pro outputs not present")
    s = window.session
    window.load([str(f) for f in files])
    qtbot.waitUntil(lambda: len(s.data.get("evals") or []) == 2 and s.runner.pending() == 0,
                    timeout=120000)
    panel = window.panels["clusters"]
    assert panel.evals.count() == 3 and panel.evals.isVisibleTo(panel)
    cases = s.store.cursor().execute("SELECT eval_id, model, cluster, correct FROM cases").df()
    ev8 = next(e for e in cases["eval_id"].unique() if "8B" in e)
    with qtbot.waitSignal(s.cohortChanged, timeout=60000):
        panel.evals.setCurrentIndex(panel.evals.findData(ev8))
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.eval_id == ev8, timeout=120000)
    painted(window)
    mine = cases[(cases["eval_id"] == ev8) & ~cases["correct"]]
    want = mine.groupby("cluster").size().to_dict()
    got = {c["name"]: c["badcases"] for c in s.data["clusters"]}
    assert got == want
    header = {k: v for k, v, _ in window.panels["header"].items}
    assert header["Badcases"].startswith(f"{want[s.cluster]:,} ")
    # the Cases table names each case's model: only the 8B one now
    from explorer.widgets.cases import COLUMNS
    m = window.panels["cases"].model
    col = COLUMNS.index("model")
    models = {m.index(r, col).data() for r in range(m.rowCount())}
    assert m.rowCount() > 0 and models == {"Meta-Llama-3.1-8B-Instruct"} or \
        all("8B" in x for x in models), models
