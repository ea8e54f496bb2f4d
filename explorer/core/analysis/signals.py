"""The categorical request signals that the comparison (compare.py) and its strata (strata.py)
both count: truncated at the length limit, errored, preempted. One module below both, so that
neither imports the other for them."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..i18n import N_

# signal name -> (description, function(frame) -> (has_signal bool array, judged bool array))
CATEGORICAL = {
    "finish_reason_length": N_("truncated at the length limit (finish_reason = length)"),
    "errored": N_("errored"),
    "preempted": N_("preempted at least once"),
}


def signal(frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    bound = frame["request_id"].notna().to_numpy()
    if name == "finish_reason_length":
        fr = frame["finish_reason"]
        judged = bound & fr.notna().to_numpy()
        return judged & (fr.astype("string").str.lower() == "length").fillna(False).to_numpy(), judged
    if name == "errored":
        err = frame["error"]
        has = err.notna() & (err.astype("string").str.strip() != "").fillna(False)
        return bound & has.to_numpy(), bound
    if name == "preempted":
        p = frame["num_preemptions"]
        judged = bound & p.notna().to_numpy()
        return judged & (p.fillna(0) >= 1).to_numpy(), judged
    raise KeyError(name)
