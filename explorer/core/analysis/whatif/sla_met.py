"""The SLA outcome of the what-if: default thresholds (ms) and the 0/1 `sla_met` column that
run_whatif derives when it is asked about `sla_met` and the frame has none."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .exceptions import WhatIfError
from explorer.core.i18n import _

#: Default SLA thresholds of `sla_met` and whatif_scale when analysis.sla is not importable;
#: otherwise its DEFAULT_THRESHOLDS are used, so the what-if and the SLA panel agree.
DEFAULT_SLA = {"ttft_ms": 500.0, "tpot_ms": 50.0}


def default_sla() -> dict[str, float]:
    """The SLA thresholds used when none are given: analysis.sla.DEFAULT_THRESHOLDS (ms)."""
    try:
        from ..sla import DEFAULT_THRESHOLDS
        return dict(DEFAULT_THRESHOLDS)
    except Exception:  # noqa: BLE001 - that module is another engineer's; fall back
        return dict(DEFAULT_SLA)


def add_sla_met(frame: pd.DataFrame, thresholds: dict[str, float] | None = None) -> pd.DataFrame:
    """Copy of frame with `sla_met` = 1 when every threshold metric is at or below its
    threshold (ms), 0 when one is above, NULL when one is missing. Default: default_sla(),
    limited to the metrics the frame has. Raises WhatIfError when it has none of them."""
    thresholds = thresholds or default_sla()
    th = {k: v for k, v in thresholds.items() if k in frame.columns}
    if not th:
        raise WhatIfError(_("SLA attainment needs one of ") + ", ".join(thresholds)
                          + _(" in the data"))
    out = frame.copy()
    ok = pd.Series(True, index=frame.index)
    miss = pd.Series(False, index=frame.index)
    for k, v in th.items():
        col = pd.to_numeric(frame[k], errors="coerce")
        miss |= col.isna()
        ok &= col.fillna(np.inf) <= v
    out["sla_met"] = pd.array(np.where(miss, pd.NA, ok.astype(int)), dtype="Int64")
    return out
