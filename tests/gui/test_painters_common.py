"""Number formats every panel and report uses (widgets/painters/common)."""
from __future__ import annotations

import pytest

from explorer.widgets.painters.common import ratio, share


@pytest.mark.parametrize("v,text", [(0.913, "91%"), (0.0, "0%"), (1.0, "100%"), (0.0025, "<1%"),
                                    (0.997, ">99%"), (0.005, "<1%"), (0.015, "2%"),
                                    (None, "–")])
def test_share_never_rounds_a_nonzero_share_to_zero_or_a_partial_one_to_all(v, text):
    assert share(v) == text


@pytest.mark.parametrize("k,n,text", [(21, 23, "21/23 (91%)"), (9, 3588, "9/3,588 (<1%)"),
                                      (0, 3275, "0/3,275 (0%)"), (3, 0, "3/0")])
def test_ratio_separates_thousands(k, n, text):
    assert ratio(k, n) == text


def test_input_names_drop_the_prefix_their_folder_shares():
    """QA could not tell 'Meta-Lla…ath.json' (8B) from 'Meta-Lla…ath.json' (70B) in a narrow
    Inputs dock: what differs comes first."""
    from explorer.widgets.inputs import _short_names
    got = _short_names(["/r/m/Meta-Llama-3_1-8B-Instruct_math.json",
                        "/r/m/Meta-Llama-3_1-70B-Instruct_math.json",
                        "/r/a/aibrix_k8s_naive_0.1.csv", "/r/a/aibrix_k8s_naive_1.3.csv",
                        "/x/alone.json"])
    assert list(got.values()) == ["…8B-Instruct_math.json", "…70B-Instruct_math.json",
                                  "…0.1.csv", "…1.3.csv", "alone.json"]


def test_input_names_keep_the_folder_that_tells_siblings_apart():
    """132 aibrix CSVs: two releases' naive_output_1.csv must not show as the same name."""
    from explorer.widgets.inputs import _short_names
    got = _short_names(["/d/ps_v0.2.1/naive_output_1.csv", "/d/ps_v0.3.0/naive_output_1.csv",
                        "/d/ps_v0.3.0/prefix_output_1.csv"])
    assert list(got.values()) == ["ps_v0.2.1/naive_output_1.csv", "ps_v0.3.0/naive_output_1.csv",
                                  "prefix_output_1.csv"]
