"""The replay's results (engine._Engine's output half): the per-request frame in canonical
`requests` columns, the event frame, the summary and the per-token latencies."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .model import EVENT_KINDS, ReplayResult


class OutputMixin:
    """ReplayResult from the arrays engine._Engine fills while it runs."""

    def result(self) -> ReplayResult:
        n = self.n
        src = self.src
        rid = [r.request_id for r in src]
        arr = np.array(self.arr)
        prompt = np.array([int(r.prompt_tokens) for r in src], dtype=np.int64)
        err = np.array([e is not None for e in self.error], dtype=np.bool_)
        ttft = (self.t_first - arr) * 1000.0
        e2e = (self.t_fin - arr) * 1000.0
        outn = self.outn
        with np.errstate(invalid="ignore", divide="ignore"):
            tpot = np.where(outn > 1, (self.t_fin - self.t_first) * 1000.0 / (outn - 1), np.nan)
            hit_rate = np.where(prompt > 0, self.cached / np.maximum(prompt, 1), np.nan)
        cached = self.cached.astype(float)
        cached[err] = np.nan
        hit_rate[err] = np.nan
        # without any hash id the trace says nothing about shared prefixes: the hit rates are
        # unknown (NULL), not 0 (a prompt then only shares blocks with itself, after preemption)
        prefix_info = any(r.hash_ids for r in src)
        unknown = err if prefix_info else np.ones(n, dtype=bool)
        if not prefix_info:
            cached[:] = np.nan
            hit_rate[:] = np.nan
        df = pd.DataFrame({
            "request_id": rid,
            "arrival_s": arr,
            "prompt_tokens": prompt,
            "completion_tokens": np.where(err, 0, outn),
            "cached_prompt_tokens": pd.array(np.where(unknown, None, self.cached), dtype="Int64"),
            "kv_cache_hit_rate": hit_rate,
            "ttft_ms": ttft,
            "tpot_ms": tpot,
            "e2e_ms": e2e,
            "queue_ms": (self.t_sched - arr) * 1000.0,
            "prefill_ms": (self.t_first - self.t_sched) * 1000.0,
            "decode_ms": (self.t_fin - self.t_first) * 1000.0,
            "num_preemptions": self.npre,
            "batch_size": self.batch,
            "finish_reason": np.where(err, "error", "stop"),
            "error": self.error,
        })
        events = self._events_frame(rid)
        itl_df = self._itl_frame(rid) if self.itl_segs is not None else None
        summary = self._summary(arr, prompt, cached, ttft, tpot, e2e, err, prefix_info)
        return ReplayResult(requests=df, events=events, token_latencies=itl_df, summary=summary,
                            config=self.cfg)

    def _events_frame(self, rid: list) -> pd.DataFrame:
        """ReplayResult.events: request_id, ts_s, kind, detail (no rows without record_events)."""
        if self.record_events:
            ev_i = np.asarray(self.ev_i, dtype=np.int64)
            return pd.DataFrame({
                "request_id": np.asarray(rid, dtype=object)[ev_i] if len(ev_i) else [],
                "ts_s": np.asarray(self.ev_t, dtype=np.float64),
                "kind": pd.Categorical.from_codes(np.asarray(self.ev_k, dtype=np.int8),
                                                  categories=list(EVENT_KINDS)).astype(str)
                if len(ev_i) else np.array([], dtype=object),
                "detail": self.ev_d,
            })
        return pd.DataFrame({"request_id": [], "ts_s": [], "kind": [], "detail": []})

    def _summary(self, arr, prompt, cached, ttft, tpot, e2e, err, prefix_info: bool) -> dict:
        """ReplayResult.summary (see simulate()) from the per-request arrays."""
        n = self.n
        ok = ~err
        qf = self.qblocks_first[ok]
        hf = self.hblocks_first[ok]
        return {
            "requests": int(n),
            "finished": int(ok.sum()),
            "rejected": int(err.sum()),
            "prefix_information": bool(prefix_info),
            "hit_rate_blocks": (float(self.h_blocks / self.q_blocks)
                                if self.q_blocks and prefix_info else None),
            "hit_rate_per_request": (float(np.mean(hf / np.maximum(qf, 1)))
                                     if ok.any() and prefix_info else None),
            "hit_rate_tokens": (float(np.nansum(cached) / prompt[ok].sum())
                                if prompt[ok].sum() and prefix_info else None),
            "hit_rate": (float(self.pc_first[2] / self.pc_first[1])
                         if self.pc_first[1] and prefix_info else None),
            "hit_rate_preempted": (float(self.pc_preempted[2] / self.pc_preempted[1])
                                   if self.pc_preempted[1] and prefix_info else None),
            "prefix_cache": {"requests": self.pc_first[0], "queries": self.pc_first[1],
                             "hits": self.pc_first[2], "preempted_requests": self.pc_preempted[0],
                             "preempted_queries": self.pc_preempted[1],
                             "preempted_hits": self.pc_preempted[2]},
            "cache_query_blocks": int(self.q_blocks),
            "cache_hit_blocks": int(self.h_blocks),
            "evicted_blocks": int(self.evicted),
            "preemptions": int(self.preemptions),
            "ttft_ms_mean": _mean(ttft[ok]),
            "tpot_ms_mean": _mean(tpot[ok]),
            "queue_ms_mean": _mean(((self.t_sched - arr) * 1000.0)[ok]),
            "e2e_ms_mean": _mean(e2e[ok]),
            "steps": int(self.steps),
            "makespan_s": float(np.nanmax(self.t_fin) - arr.min()) if ok.any() else None,
        }

    def _itl_frame(self, rid):
        """ITL of each output token after the first: the time between the ends of the steps
        in which the request produced consecutive tokens."""
        segs = self.seg_g
        g0 = np.array([s[0] for s in segs], dtype=np.int64)
        t0 = np.array([s[1] for s in segs])
        dts = np.array([s[2] for s in segs])

        def step_end(g):
            j = np.searchsorted(g0, g, side="right") - 1
            return t0[j] + (g - g0[j] + 1) * dts[j]

        out_r, out_i, out_v = [], [], []
        for i, marks in self.itl_segs.items():
            # marks: alternately the step of a token-producing (re)start and the last step
            gs = []
            for a, b in zip(marks[0::2], marks[1::2] + [None] * (len(marks) % 2)):
                gs.append(np.arange(a, (b if b is not None else a) + 1))
            if not gs:
                continue
            steps = np.concatenate(gs)
            ends = step_end(steps)
            if len(ends) < 2:
                continue
            d = np.diff(ends) * 1000.0
            out_r.append(np.full(len(d), i))
            out_i.append(np.arange(1, len(d) + 1))
            out_v.append(d)
        if not out_r:
            return pd.DataFrame({"request_id": [], "token_index": [], "itl_ms": []})
        ri = np.concatenate(out_r)
        return pd.DataFrame({"request_id": np.asarray(rid, dtype=object)[ri],
                             "token_index": np.concatenate(out_i),
                             "itl_ms": np.concatenate(out_v)})


def _mean(a) -> float | None:
    a = np.asarray(a, dtype=float)
    a = a[~np.isnan(a)]
    return float(a.mean()) if len(a) else None

