"""Fit the replay's per-step time model to a trace that has per-request timings.

The model (see model.DEFAULT_TIMING): step_ms = step_base_ms + step_per_decode_seq_ms * decode
sequences + step_per_prefill_token_ms * prefill tokens (+ step_prefill_base_ms when prefilling).
From per-request rows it is fitted by two ordinary least-squares lines:

* decode: tpot_ms on batch_size (the mean running batch while the request decoded) ->
  intercept = step_base_ms, slope = step_per_decode_seq_ms; needs >= 10 requests with both,
  more than one output token, and some spread of batch_size;
* prefill: prefill_ms (else ttft_ms - queue_ms, else ttft_ms: then queueing inflates the fit,
  fine for traces recorded at low load) on the prompt tokens not served from cache
  (prompt_tokens - cached_prompt_tokens, the latter 0 when unknown) -> slope =
  step_per_prefill_token_ms, intercept - step_base_ms = step_prefill_base_ms (floored at 0).

Each half falls back to the SGLang-calibrated default when the trace cannot support it, and
the result says which parts were fitted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import NoData
from .model import DEFAULT_TIMING
from explorer.core.i18n import _

MIN_ROWS = 10


@dataclass(frozen=True)
class TimingFit:
    """Step-time constants (ms) to pass to EngineConfig(**fit.params); fitted: which halves
    ("decode", "prefill") came from the trace; n: rows used per half; r2: R^2 per half."""
    params: dict
    fitted: tuple[str, ...]
    n: dict = field(default_factory=dict)
    r2: dict = field(default_factory=dict)


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    slope, intercept = np.polyfit(x, y, 1)
    pred = intercept + slope * x
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(((y - pred) ** 2).sum()) / ss if ss > 0 else float("nan")
    return float(intercept), float(slope), r2


def fit_timing(requests: pd.DataFrame) -> TimingFit:
    """Fit the step-time model to canonical `requests` rows (columns used: tpot_ms,
    batch_size, completion_tokens, prefill_ms, ttft_ms, queue_ms, prompt_tokens,
    cached_prompt_tokens; any may be missing). Raises NoData when neither half can be fitted."""
    p = dict(DEFAULT_TIMING)
    fitted, n, r2 = [], {}, {}
    df = requests
    col = lambda c: pd.to_numeric(df[c], errors="coerce") if c in df else pd.Series(np.nan, index=df.index)
    tpot, batch, comp = col("tpot_ms"), col("batch_size"), col("completion_tokens")
    ok = tpot.notna() & batch.notna() & (comp.isna() | (comp > 1)) & (tpot > 0)
    if ok.sum() >= MIN_ROWS and batch[ok].std() > 0:
        a, b, r = _ols(batch[ok].to_numpy(float), tpot[ok].to_numpy(float))
        if a > 0 and b >= 0:
            p["step_base_ms"], p["step_per_decode_seq_ms"] = a, b
            fitted.append("decode")
            n["decode"], r2["decode"] = int(ok.sum()), r
    pre = col("prefill_ms")
    alt = col("ttft_ms") - col("queue_ms")
    pre = pre.where(pre.notna(), alt)
    pre = pre.where(pre.notna(), col("ttft_ms"))
    new_tok = col("prompt_tokens") - col("cached_prompt_tokens").fillna(0)
    ok = pre.notna() & new_tok.notna() & (new_tok > 0) & (pre > 0)
    if ok.sum() >= MIN_ROWS and new_tok[ok].std() > 0:
        c, d, r = _ols(new_tok[ok].to_numpy(float), pre[ok].to_numpy(float))
        if d > 0:
            p["step_per_prefill_token_ms"] = d
            p["step_prefill_base_ms"] = max(0.0, c - p["step_base_ms"])
            fitted.append("prefill")
            n["prefill"], r2["prefill"] = int(ok.sum()), r
    if not fitted:
        raise NoData(_("the trace has too few requests with TPOT and batch size, or prefill "
                     "time and prompt length (at least {MIN_ROWS} of either are needed) to fit "
                     "the step-time model; the SGLang-calibrated default applies").format(MIN_ROWS=MIN_ROWS))
    return TimingFit(params=p, fitted=tuple(fitted), n=n, r2=r2)
