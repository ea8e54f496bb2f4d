"""Issue 33 (second round's finding): a run pair and its evals' pair answer the same items, and
the report printed their paired table twice; it is shown once, the second pair refers to it."""
from explorer.core.report_compare import md_compare
from explorer.widgets.painters.compare import compare_html

ITEMS = {"paired": 316, "both_right": 117, "a_only_right": 75, "b_only_right": 29,
         "both_wrong": 95, "mcnemar_p": 7.4e-06, "accuracy_a": [0.608, 0.553, 0.66],
         "accuracy_b": [0.462, 0.408, 0.517], "difference": [-0.146, -0.206, -0.082],
         "warnings": []}


def _doc():
    pair = {"a": "A", "b": "B", "kind": "evals", "metrics": [], "notes": [], "items": ITEMS}
    return {"runs": [], "workloads": [], "unmatched": [], "sweeps": [],
            "pairs": [pair, {**pair, "a": "run A", "b": "run B"},
                      {**pair, "a": "C", "b": "D", "items": {**ITEMS, "both_wrong": 94}}]}


def test_paired_items_are_tabled_once():
    html = compare_html(_doc())
    assert html.count("The same paired items as above.") == 1
    assert html.count(">316<") == 2     # the first and the third pair's tables, not the second
    md = md_compare(_doc())
    assert md.count("The same paired items as above.") == 1
