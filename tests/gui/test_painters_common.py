"""Number formats every panel and report uses (widgets/painters/common)."""
from __future__ import annotations

import pytest

from widgets.painters.common import ratio, share


@pytest.mark.parametrize("v,text", [(0.913, "91%"), (0.0, "0%"), (1.0, "100%"), (0.0025, "<1%"),
                                    (0.997, ">99%"), (0.005, "<1%"), (0.015, "2%"),
                                    (None, "–")])
def test_share_never_rounds_a_nonzero_share_to_zero_or_a_partial_one_to_all(v, text):
    assert share(v) == text


@pytest.mark.parametrize("k,n,text", [(21, 23, "21/23 (91%)"), (9, 3588, "9/3,588 (<1%)"),
                                      (0, 3275, "0/3,275 (0%)"), (3, 0, "3/0")])
def test_ratio_separates_thousands(k, n, text):
    assert ratio(k, n) == text
