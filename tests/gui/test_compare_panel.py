"""The Compare view: the window's comparison of two aibrix releases (the same numbers as
analysis.runcompare on the same store), and A against B picked by the user."""
from __future__ import annotations

import pytest

from tests.conftest import REAL
from tests.gui.conftest import on_screen

AIBRIX = REAL / "aibrix"
pytestmark = pytest.mark.skipif(not AIBRIX.is_dir(), reason=f"aibrix files missing: {AIBRIX}")
FILES = [AIBRIX / f"ps_experiment_v{v}/{c}_output_2.1.csv"
         for v, c in (("0.2.1_20250323", "naive"), ("0.3.0_20250519", "naive"),
                      ("0.3.0_20250519", "ps_stack"))]


def test_compare_view_shows_the_pairs_and_compares_what_is_picked(window, qtbot):
    from explorer.core.analysis.runcompare import compare_runs
    s = window.session
    s.load_paths([str(f) for f in FILES])
    qtbot.waitUntil(lambda: bool(s.data.get("runs")) and s.runner.pending() == 0, timeout=60000)
    on_screen(window, qtbot, "compare")
    panel = window.panels["compare"]
    qtbot.waitUntil(lambda: isinstance(panel.value, dict), timeout=60000)
    doc = compare_runs(s.store)
    html = panel.text.toHtml()
    p = next(p for p in doc["pairs"] if p["differs_in"] == ["engine_version"])
    m = next(m for m in p["metrics"] if (m["metric"], m["stat"]) == ("ttft_ms", "mean"))
    assert f"{m['diff_pct']:+.1f} %" in html and "spread unknown" in html
    assert panel.curves is None  # one rate: no sweep
    panel.a.setCurrentIndex(panel.a.findData("aibrix:0.3.0:naive_output_2.1"))
    panel.b.setCurrentIndex(panel.b.findData("aibrix:0.3.0:ps_stack_output_2.1"))
    assert panel.params() == {"runs": ["aibrix:0.3.0:naive_output_2.1",
                                       "aibrix:0.3.0:ps_stack_output_2.1"]}
    panel.go.click()
    qtbot.waitUntil(lambda: panel.go.isEnabled() and len(panel.value["pairs"]) == 1, timeout=60000)
    (only,) = panel.value["pairs"]
    assert only["runs_b"] == ["aibrix:0.3.0:ps_stack_output_2.1"]
    assert "ps_stack_output_2.1" in panel.text.toPlainText()
    panel.b.setCurrentIndex(0)  # every other run: A is the baseline
    assert panel.params() == {"baseline": "aibrix:0.3.0:naive_output_2.1"}


def test_flipped_items_are_selected_in_the_cases_table(window, qtbot):
    """The MMLU-Pro 8B / 70B outputs: the Compare view selects the flipped questions (75 + 29,
    recomputed here from the paired counts), each on the side that lost it."""
    from explorer.core.analysis.runcompare import compare_runs
    mmlu = REAL / "mmlu_pro_outputs"
    if not mmlu.is_dir():
        pytest.skip("MMLU-Pro outputs missing")
    s = window.session
    s.load_paths([str(mmlu)])
    qtbot.waitUntil(lambda: s.cluster is not None and s.runner.pending() == 0, timeout=60000)
    on_screen(window, qtbot, "compare")
    panel = window.panels["compare"]
    qtbot.waitUntil(lambda: isinstance(panel.value, dict), timeout=60000)
    (pair,) = compare_runs(s.store)["pairs"]
    it = pair["items"]
    assert panel.flipped.isEnabled()
    panel.flipped.click()
    qtbot.waitUntil(lambda: s.runner.pending() == 0 and s.selection is not None, timeout=60000)
    ids = set(panel.flipped_cases(panel.value))
    assert len(ids) == it["a_only_right"] + it["b_only_right"] == 104
    got = s.store.df("SELECT case_id, eval_id, correct FROM cases WHERE case_id IN "
                     "(SELECT unnest(?))", [sorted(ids)])
    assert len(got) == 104 and not got["correct"].any()  # each on the side that lost it
