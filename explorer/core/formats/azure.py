"""Azure LLM inference trace CSV (Azure/AzurePublicDataset, AzureLLMInferenceTrace_*.csv).

Source format: `TIMESTAMP` (wall clock "2023-11-16 18:17:03.9799600", 7 decimals, no zone),
`ContextTokens`, `GeneratedTokens`. Arrivals and sizes only: arrival_s = seconds since the
first row's TIMESTAMP (runs.started_at keeps the wall clock of that first row),
prompt_tokens = ContextTokens, completion_tokens = GeneratedTokens. A row with a token count
outside the shared RANGES (below zero or beyond the store's INTEGER, 2,147,483,647) is skipped
with its line and every bad field.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..i18n import _
from .base import Sniff
from ._common import no_rows, range_mask, range_reason, read_text_csv, register_run

NAME = "azure"
KIND = "trace"
_HEADER = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_FIELDS = {"prompt_tokens": "ContextTokens", "completion_tokens": "GeneratedTokens"}


def detect(sniff: Sniff) -> float:
    """High when the header line is Azure's TIMESTAMP,ContextTokens,GeneratedTokens."""
    lines = sniff.first_lines(1)
    if not lines:
        return 0.0
    cols = [c.strip().strip('"') for c in lines[0].split(",")]
    return 0.95 if all(c in cols for c in _HEADER) else 0.0


def load(path: Path, store, report) -> None:
    """Load an Azure trace as one run (request_id = data row number, from 1)."""
    df = read_text_csv(path, _HEADER)
    ts = pd.to_datetime(df["TIMESTAMP"], errors="coerce", format="mixed")
    ctx = pd.to_numeric(df["ContextTokens"], errors="coerce")
    gen = pd.to_numeric(df["GeneratedTokens"], errors="coerce")
    unreadable = ts.isna() | ctx.isna() | gen.isna()
    tokens = pd.DataFrame({"prompt_tokens": ctx, "completion_tokens": gen})
    out_of_range = range_mask(tokens)  # the shared RANGES: negative, or beyond INTEGER
    bad = unreadable | out_of_range
    for i in bad[bad].index[:report.MAX_REASONS]:
        if unreadable[i]:
            field = "TIMESTAMP" if pd.isna(ts[i]) else "ContextTokens" if pd.isna(ctx[i]) else "GeneratedTokens"
            why = f"not a {'timestamp' if field == 'TIMESTAMP' else 'number'}: {df[field][i]!r}"
        else:  # every bad field named, as check_ranges words it
            field, why = range_reason(tokens.loc[i].to_dict(), _FIELDS)
        report.skip(why, line=int(i) + 2, field_name=field)
    report.rows_skipped += max(0, int(bad.sum()) - min(int(bad.sum()), report.MAX_REASONS))
    ok = ~bad
    if not ok.any():
        raise no_rows(path, report)
    t0 = ts[ok].min()
    rows = pd.DataFrame({"request_id": (df.index[ok] + 1).astype(str),
                         "arrival_s": (ts[ok] - t0).dt.total_seconds(),
                         "prompt_tokens": ctx[ok].astype("int64"),
                         "completion_tokens": gen[ok].astype("int64")})
    run_id = register_run(store, report, path, NAME, f"azure:{path.stem}", engine="azure",
                          benchmark=path.stem, started_at=t0.to_pydatetime())
    rows.insert(0, "run_id", run_id)
    report.rows_loaded += store.append("requests", rows)
    report.columns.update({"TIMESTAMP": _("arrival_s (seconds since the first row; started_at)"),
                           "ContextTokens": "prompt_tokens",
                           "GeneratedTokens": "completion_tokens",
                           _("(row number)"): "request_id"})
