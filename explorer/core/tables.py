"""Tables written for the notebook to carry on where the tool stops: CSV or Parquet by the
file's suffix (pandas; Parquet through pyarrow)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .atomic import write_atomically
from .i18n import _

FORMATS = (".csv", ".parquet")


def export_frame(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write `frame` to `path` (.csv or .parquet), atomically. Raises ValueError for another
    suffix, OSError when it cannot write."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(_("{path}: export as .csv or .parquet").format(path=path))
    if suffix == ".csv":
        return write_atomically(path, lambda tmp: frame.to_csv(tmp, index=False))
    return write_atomically(path, lambda tmp: frame.to_parquet(tmp, index=False))


def runs_frame(runs: list[dict]) -> pd.DataFrame:
    """The Runs tab as one row per run (explorer.core.runs.overview dicts): who and what ran,
    then each published statistic as `published <metric> <stat>` and each recomputed one as
    `recomputed <metric> <stat>`."""
    rows = []
    for r in runs:
        row = {k: r.get(k) for k in ("run_id", "label", "engine", "engine_version",
                                     "version_source", "workload", "model", "benchmark",
                                     "format", "source_path", "n_requests", "completed",
                                     "failed")}
        for p in r.get("published") or []:
            row[f"published {p['metric']} {p['stat']}"] = p["value"]
        for p in r.get("recomputed_all") or []:
            row[f"recomputed {p['metric']} {p['stat']}"] = p["value"]
        rows.append(row)
    return pd.DataFrame(rows)
