"""An event-driven model of a vLLM v1 engine: paged KV cache with prefix caching, continuous
batching with chunked prefill, recompute preemption. `simulate()` replays an arrival trace.

Semantics (the references are vLLM's docs/design/prefix_caching.md, vllm/v1/core/block_pool.py,
vllm/v1/core/kv_cache_manager.py and vllm/v1/core/sched/scheduler.py):

* Blocks and hashes. A request's tokens fill blocks of `block_size` tokens. A block's key
  chains its parent's key with its own content (prefix_caching.md hashes "each kv-cache block
  by the tokens in the block and the tokens in the prefix before the block"), so a block can only be hit after the whole prefix before
  it. Only full blocks are cached. The trace gives content at a coarser grain: each hash id
  stands for `hash_block_tokens` (512 in Mooncake) tokens, i.e. hash_block_tokens / block_size
  engine blocks; engine block j of hash block h has key (chain key of hash blocks 0..h, j).
  Prompt blocks the trace's hash ids do not cover, and every block holding generated tokens,
  get keys private to the request (only the request itself can hit them, after a preemption).
* Prefix hit. On every scheduling attempt of a waiting request the cache is asked for the
  longest cached prefix (counted as a query of ceil(num_tokens / block_size) blocks and its hit
  blocks, as vLLM's prefix-cache metrics count every attempt); the hit is capped at
  num_tokens - 1 tokens rounded down to whole blocks (kv_cache_manager.get_computed_blocks: the
  last token is always recomputed to get logits).
* Pool. Blocks in use by a running request are never evicted. When a request finishes or is
  preempted its full blocks are cached and released in reverse order (the KV-cache manager
  frees a request's blocks reversed; block_pool.free_blocks appends them to the free queue),
  so under LRU its last block is evicted first and
  a block hit again leaves the free queue ("touch"). New blocks come from the free blocks,
  then by evicting cached ones in the order of the eviction policy (policies.py; LRU is
  vLLM's). Simplification: free blocks without a hash are used before any cached block is
  evicted (vLLM keeps both in one queue); eviction works on the last cached blocks of a
  hash-block unit, a unit's cached blocks are a prefix of it, and two requests computing the
  same block at once share one copy once it is cached (vLLM may briefly hold duplicates).
* Scheduler (FCFS, one engine step per iteration). Token budget max_num_batched_tokens.
  Running requests first: each decoding request gets one token, each request still in
  prefill gets min(remaining, budget) tokens (chunked prefill; decodes are served before
  prefills, vLLM interleaves them in running order). When blocks run out, the most recently
  admitted running request is preempted (scheduler.py: `self.running.pop()`): its blocks are
  freed (and stay cached, so its prefix can be hit again), its computed tokens are dropped
  (recompute; output tokens generated so far are kept and re-prefilled) and it goes to the
  front of the waiting queue. Waiting requests are admitted in order while no preemption
  happened in this step, fewer than max_num_seqs run and budget is left; the first one that
  does not fit in the blocks stops admission.
* Time. Each step lasts step_base_ms + step_per_decode_seq_ms * decoding requests +
  step_per_kv_token_ms * the decoding requests' context tokens (each counted as it entered
  decode: prompt plus output before; the tokens it adds while decoding are not, < 0.5 % on
  100 outputs of a 21k prompt) + step_per_prefill_token_ms * prefill tokens (+
  step_prefill_base_ms when it prefills); a
  request finishing its prefill in a step emits its first token at the step's end. A request
  is visible to the scheduler from the first step starting at or after its arrival.
* Speed. Decoding requests are not touched one by one: their block needs are counted by the
  residue of their length modulo block_size, their ends kept in a heap, and stretches of
  decode-only steps with nothing arriving, finishing or preempted are advanced in one jump
  (exactly the results of stepping, tests/test_replay_engine.py: a jump stops before an
  eviction would touch a prefix-cache hit of the waiting head, which could let it in).

Finish reasons. A trace's output length is the length the request really generated, i.e. where
the model emitted its end-of-sequence token (Mooncake's output_length, a benchmark's measured
completion tokens), so a replayed request that produces it finished normally: finish_reason
"stop" (OpenAI / vLLM wording). The model has no length limit (no max_model_len, no max_tokens
cut), so it never reports "length": a "length" in a replay would claim a truncation that did not
happen. Requests whose prompt + output needs more blocks than the whole cache are rejected at
arrival (finish_reason "error", with the reason in `error`), as vLLM rejects requests that can
never fit; so are requests with an empty (or negative) prompt, which vLLM rejects too. A waiting request alone
in the engine whose pinned hit entries leave too little room computes its prompt instead.
"""
from __future__ import annotations

import heapq
import math
import time
from bisect import bisect_right
from collections import deque
from itertools import accumulate
from typing import Callable, Sequence

import numpy as np

from ..errors import Cancelled
from .kvcache import INF_BLOCKS, KVCacheMixin, _DECODE, _DONE, _PREFILL, _Req, _WAITING
from .model import EVENT_KINDS, EngineConfig, ReplayResult, TraceRequest
from .output import OutputMixin
from .policies import make_policy

_EV = {k: i for i, k in enumerate(EVENT_KINDS)}
_ARRIVED, _QUEUED, _SCHEDULED, _FIRST, _PREEMPTED, _RESUMED, _FINISHED, _ERROR = (
    _EV[k] for k in EVENT_KINDS)


class _Engine(KVCacheMixin, OutputMixin):
    """One engine's scheduler loop (this module), its KV cache (kvcache.py) and its results
    (output.py)."""
    def __init__(self, reqs: Sequence[TraceRequest], cfg: EngineConfig, record_events: bool,
                 record_itl: bool):
        cfg.validate()
        self.cfg = cfg
        self.bs = cfg.block_size
        self.N = INF_BLOCKS if cfg.num_gpu_blocks is None else int(cfg.num_gpu_blocks)
        self.free = self.N
        self.evictable = 0
        self.entries: dict = {}   # key -> [size_blocks, ref]
        ent = self.entries
        self.policy = make_policy(cfg.eviction, cfg.num_gpu_blocks,
                                  lambda k: ent[k][0] if k in ent else 0,
                                  lambda k: k in ent and ent[k][1] == 0 and ent[k][0] > 0)
        order = sorted(range(len(reqs)), key=lambda j: reqs[j].arrival_s)
        self.src = [reqs[j] for j in order]
        n = len(self.src)
        self.n = n
        self.arr = [float(r.arrival_s) for r in self.src]
        self.record_events = record_events
        self.record_itl = record_itl
        # results
        self.t_sched = np.full(n, np.nan)
        self.t_first = np.full(n, np.nan)
        self.t_fin = np.full(n, np.nan)
        self.cached = np.zeros(n, dtype=np.int64)
        self.npre = np.zeros(n, dtype=np.int64)
        self.batch = np.full(n, np.nan)
        self.outn = np.zeros(n, dtype=np.int64)
        self.error = [None] * n
        self.qblocks_first = np.zeros(n, dtype=np.int64)
        self.hblocks_first = np.zeros(n, dtype=np.int64)
        self.cb_first = np.zeros(n)
        self.g_first = np.zeros(n, dtype=np.int64)
        self.ev_i: list = []
        self.ev_t: list = []
        self.ev_k: list = []
        self.ev_d: list = []
        # itl: per request the step ranges in which it produced tokens
        self.itl_segs: dict = {} if record_itl else None
        self.seg_g: list = []     # step timeline: segments (g_first, t_start, dt, k)
        # counters
        self.q_blocks = 0
        # vLLM's PrefixCacheStats (vllm/v1/metrics/stats.py), in tokens, counted at admission:
        # [requests, queries, hits] of first queries and of preempted requests' re-queries
        self.pc_first = [0, 0, 0]
        self.pc_preempted = [0, 0, 0]
        self.h_blocks = 0
        self.evicted = 0
        self.preemptions = 0
        self.steps = 0
        self.jumps = True   # advance decode-only stretches in one go (False: step by step)

    # -- events -------------------------------------------------------------------------------
    def ev(self, i, t, k, d=None):
        if self.record_events:
            self.ev_i.append(i)
            self.ev_t.append(t)
            self.ev_k.append(k)
            self.ev_d.append(d)

    # -- the loop -------------------------------------------------------------------------------
    # run() is the scheduler loop of one engine: each turn takes the arrivals due, then either
    # jumps over a stretch of decode-only steps (_jump) or runs one engine step (_step:
    # decodes, chunked prefills, admissions, then the step's effects). The loop's state lives
    # on the engine (_start) so each part reads as its own method.
    def _start(self) -> None:
        """The scheduler's state before the first step."""
        self.waiting: deque = deque()
        self.prefills: list = []     # running requests in prefill, admission order
        self.order: list = []        # (admit_no, req) of running requests, admission order
        self.reqs: dict = {}         # i -> _Req for live requests
        self.cnt = [0] * self.bs     # decoding requests by the residue of their block need
        self.fin_heap: list = []     # (g_fin, admit_no, req)
        self.D = 0                   # decoding requests
        self.kv = 0                  # their context tokens at decode entry (step_per_kv_token_ms)
        self.nrun = 0
        self.admit_no = 0
        self.G = 0                   # steps done
        self.cum_batch = 0.0         # sum over steps of scheduled requests
        self.t = self.arr[0] if self.n else 0.0
        self.ai = 0                  # next arrival
        self.done = 0
        self.head_blocked = False    # the waiting head failed for blocks in the last step
        self.last_attempt = (0, 0, 0)
        self.dec_alloc = 0           # the step whose decode blocks are already taken

    def run(self, progress, cancelled):
        self._start()
        n = self.n
        loops = 0
        last_progress = time.monotonic()
        while self.done < n:
            loops += 1
            if (loops & 1023) == 0:
                if cancelled is not None and cancelled():
                    raise Cancelled("replay cancelled")
                if progress is not None and time.monotonic() - last_progress > 0.2:
                    last_progress = time.monotonic()
                    progress(self.done, n)
            self._arrivals()
            if self.nrun == 0 and not self.waiting:
                if self.ai < n:
                    self.t = max(self.t, self.arr[self.ai])
                    continue
                break
            if not self.prefills and self.D > 0 and self.jumps and self._jump():
                continue
            self._step()
        if progress is not None:
            progress(self.done, n)

    def _arrivals(self) -> None:
        """Queue the requests that arrived by now; reject those that can never run."""
        arr, src, n, bs, N = self.arr, self.src, self.n, self.bs, self.N
        record = self.record_events
        ai = self.ai
        while ai < n and arr[ai] <= self.t:
            tr = src[ai]
            r = _Req(ai, int(tr.prompt_tokens), max(1, int(tr.output_tokens)),
                     tr.hash_ids, int(tr.hash_block_tokens or 512))
            if record:
                self.ev(ai, arr[ai], _ARRIVED)
            if r.prompt < 1 or -(-(r.prompt + r.target) // bs) > N:
                self.error[ai] = (
                    f"prompt of {r.prompt} tokens: nothing to prefill (vLLM rejects an empty "
                    "prompt)" if r.prompt < 1 else
                    f"needs {-(-(r.prompt + r.target) // bs)} KV blocks, the cache holds {N}")
                if record:
                    self.ev(ai, arr[ai], _ERROR, self.error[ai])
                r.state = _DONE
                self.done += 1
            else:
                r.state = _WAITING
                self.reqs[ai] = r
                self.waiting.append(r)
                if record:
                    self.ev(ai, arr[ai], _QUEUED)
            ai += 1
        self.ai = ai

    def _step_time(self, P: int) -> float:
        """Seconds of one engine step with the current decodes and P prefill tokens."""
        cfg = self.cfg
        dt = (cfg.step_base_ms / 1000.0 + cfg.step_per_decode_seq_ms / 1000.0 * self.D
              + cfg.step_per_kv_token_ms / 1000.0 * self.kv)
        if P > 0:
            dt += (cfg.step_per_prefill_token_ms / 1000.0 * P
                   + cfg.step_prefill_base_ms / 1000.0)
        return dt

    def _jump(self) -> bool:
        """Advance a stretch of decode-only steps (no prefill running) in one go, as far as no
        request finishes, arrives into an admissible queue or runs out of blocks; False when
        the stretch is shorter than two steps (the caller runs one step)."""
        cfg, bs, N = self.cfg, self.bs, self.N
        waiting, D = self.waiting, self.D
        full = cfg.chunked_prefill and D >= cfg.max_num_batched_tokens  # V0: decodes not in it
        admission_off = bool(waiting) and (self.nrun >= cfg.max_num_seqs or full
                                           or self.head_blocked)
        if not (admission_off or not waiting):
            return False
        dt = self._step_time(0)
        G, fin_heap = self.G, self.fin_heap
        k = INF_BLOCKS
        while fin_heap and fin_heap[0][2].admit_no != fin_heap[0][1]:
            heapq.heappop(fin_heap)
        if fin_heap:
            k = fin_heap[0][0] - G - 1
        if not admission_off and self.ai < self.n:
            k = min(k, max(0, math.ceil((self.arr[self.ai] - self.t) / dt)))
        cnt = self.cnt
        if k > 1 and N < INF_BLOCKS:
            # blocks needed by step G+j: cnt[(G+j) % bs]; cums[j] = need of the
            # next j steps within one cycle of bs steps (a full cycle needs D)
            s0 = (G + 1) % bs
            cums = [0]
            cums.extend(accumulate(cnt[s0:] + cnt[:s0]))
            avail = self.free + self.evictable
            q = avail // D
            r_ = bisect_right(cums, avail - q * D, 0, bs) - 1
            k = min(k, q * bs + r_)
        attempting = admission_off and self.head_blocked and not (
            self.nrun >= cfg.max_num_seqs or full)
        last_attempt = self.last_attempt
        if k > 1 and N < INF_BLOCKS:
            need = (k // bs) * D + cums[k % bs]
            if need > self.free and attempting:
                # the blocked head would see its pinned prefix-cache hits change if
                # one of them were evicted: evict in policy order up to that entry
                # only, and jump no further than the blocks so freed allow
                hr = waiting[0]
                self._evict_until(need - self.free,
                                  {hr.units[u][0] for u in range(last_attempt[2])})
                if need > self.free:
                    q = self.free // D
                    k = min(k, q * bs + bisect_right(cums, self.free - q * D, 0, bs) - 1)
                    need = (k // bs) * D + cums[k % bs]
            if k > 1:
                self._alloc(need)
        if k <= 1:
            return False
        if attempting:
            self.q_blocks += k * last_attempt[0]
            self.h_blocks += k * last_attempt[1]
        if self.itl_segs is not None:
            self.seg_g.append((G + 1, self.t, dt, k))
        self.t += k * dt
        self.G = G + k
        self.steps += k
        self.cum_batch += k * D
        return True

    def _step(self) -> None:
        """One engine step: a token for every decode, the running prefills' chunks, then the
        waiting requests admitted while the token budget and the blocks last (none after a
        preemption); then the step's time and its effects. Without chunked prefill
        (EngineConfig.chunked_prefill False): vLLM V0's default scheduler, _step_v0."""
        if not self.cfg.chunked_prefill:
            return self._step_v0()
        g = self.G + 1
        budget = self.cfg.max_num_batched_tokens
        preempted = False
        # decodes: one token each, a new block for those whose length crosses a boundary
        cnt = self.cnt
        need_dec = cnt[g % self.bs] if self.N < INF_BLOCKS else 0
        while need_dec > self.free + self.evictable:
            self._preempt_one(self.t)
            preempted = True
            need_dec = cnt[g % self.bs]
        self._alloc(need_dec)
        self.dec_alloc = g
        budget -= self.D
        P, budget, more = self._prefill_chunks(budget)
        preempted = preempted or more
        self.head_blocked = False
        if not preempted:
            P += self._admit(budget)
        self._finish_step(g, P)

    def _step_v0(self) -> None:
        """vLLM V0's default scheduler (vllm/core/scheduler.py _schedule_default, chunked
        prefill off): waiting prompts are prefilled whole while the token budget (not shared
        with decodes), max_num_seqs and the blocks allow, and "Don't schedule decodes if
        prefills are scheduled": such a step runs no decode, the decoding requests stand still
        (the decode step counter G does not move). Otherwise one decode step."""
        self.head_blocked = False
        P = self._admit(self.cfg.max_num_batched_tokens, whole=True) if self.waiting else 0
        if P == 0:
            g = self.G + 1
            cnt = self.cnt
            need_dec = cnt[g % self.bs] if self.N < INF_BLOCKS else 0
            while need_dec > self.free + self.evictable:
                self._preempt_one(self.t)
                need_dec = cnt[g % self.bs]
            self._alloc(need_dec)
            self.dec_alloc = g
            self._finish_step(g, 0)
            return
        cfg = self.cfg
        tend = self.t + (cfg.step_base_ms + cfg.step_prefill_base_ms
                         + cfg.step_per_prefill_token_ms * P) / 1000.0
        self.steps += 1
        G, bs, record = self.G, self.bs, self.record_events
        for r in self.prefills:
            r.computed += r.chunk
            r.chunk = 0
            self._register(r, r.computed // bs)
            r.out += 1
            i = r.i
            if np.isnan(self.t_first[i]):
                self.t_first[i] = tend
                self.cb_first[i] = self.cum_batch
                self.g_first[i] = G
                if record:
                    self.ev(i, tend, _FIRST)
            if self.itl_segs is not None:
                self.itl_segs.setdefault(i, []).append(G)
            if r.out >= r.target:
                self._finish(r, tend, r.held, r.computed)
            else:
                self._enter_decode(r)   # its next token comes with decode step G + 1
        self.prefills.clear()
        self.t = tend

    def _prefill_chunks(self, budget: int) -> tuple[int, int, bool]:
        """Schedule the running prefills' next chunks (preempting for blocks where needed):
        (prefill tokens scheduled, budget left, whether anyone was preempted)."""
        bs = self.bs
        P = 0
        preempted = False
        for r in list(self.prefills):
            if r.state != _PREFILL:
                continue
            tok = min(r.tokens - r.computed, budget)
            r.chunk = 0
            if tok <= 0:
                continue
            nb = -(-(r.computed + tok) // bs) - r.held
            ok = True
            while nb > self.free + self.evictable:
                v = self._preempt_one(self.t)
                preempted = True
                if v is r:
                    ok = False
                    break
            if not ok:
                continue
            self._alloc(nb)
            r.held += nb
            r.chunk = tok
            budget -= tok
            P += tok
        return P, budget, preempted

    def _admit(self, budget: int, whole: bool = False) -> int:
        """Admit waiting requests, head first, while the budget, max_num_seqs and the blocks
        allow (a head that does not fit blocks the queue: head_blocked); returns the prefill
        tokens scheduled. whole (no chunked prefill): a prompt's uncached tokens are scheduled
        at once or not at all (a prompt longer than the budget goes alone, where vLLM would
        reject it)."""
        bs, t, record = self.bs, self.t, self.record_events
        waiting, ent, pol = self.waiting, self.entries, self.policy
        P = 0
        while waiting and budget > 0 and self.nrun < self.cfg.max_num_seqs:
            r = waiting[0]
            ntok = r.tokens
            qb = -(-ntok // bs)
            hit, nu = self._lookup(r, ntok)
            self.q_blocks += qb
            self.h_blocks += hit
            self.last_attempt = (qb, hit, nu)
            tok = min(ntok - hit * bs, budget)
            if whole:
                if ntok - hit * bs > budget and P > 0:
                    break
                tok = ntok - hit * bs
            nb = -(-(hit * bs + tok) // bs) - hit
            avail = self.free + self.evictable
            units = r.units
            for u in range(nu):
                e = ent[units[u][0]]
                if e[1] == 0:
                    avail -= e[0]
            if nb > avail and self.nrun == 0 and nu:
                # alone, but a hit entry it would pin is larger than the part it uses
                # and the rest does not fit: compute everything instead (rare, near a
                # cache that holds one request)
                hit = nu = 0
                tok = ntok if whole else min(ntok, budget)
                nb = -(-tok // bs)
                avail = self.free + self.evictable
            if nb > avail:
                self.head_blocked = True
                break
            waiting.popleft()
            for u in range(nu):
                key = units[u][0]
                e = ent[key]
                self._acquire(key, e)
                pol.on_hit(key)
            r.nref = nu
            r.shared = hit
            r.reg = hit
            pos = 0
            u = 0
            while u < len(units) and pos + units[u][1] <= hit:
                pos += units[u][1]
                u += 1
            r.ru, r.rpos = u, pos
            self._alloc(nb)
            r.held = hit + nb
            r.computed = hit * bs
            r.chunk = tok
            budget -= tok
            P += tok
            r.state = _PREFILL
            r.admit_no = self.admit_no
            self.order.append((self.admit_no, r))
            self.admit_no += 1
            self.prefills.append(r)
            self.nrun += 1
            i = r.i
            pc = self.pc_preempted if r.first_admitted else self.pc_first
            pc[0] += 1
            pc[1] += ntok
            pc[2] += hit * bs
            if not r.first_admitted:
                r.first_admitted = True
                self.t_sched[i] = t
                self.cached[i] = min(hit * bs, r.prompt)
                self.qblocks_first[i] = qb
                self.hblocks_first[i] = hit
                if record:
                    self.ev(i, t, _SCHEDULED, f"cached {hit * bs} tokens")
            elif record:
                self.ev(i, t, _RESUMED, f"cached {hit * bs} tokens")
            if len(self.order) > 4 * self.nrun + 64:
                self.order[:] = [(no, x) for no, x in self.order
                                 if x.admit_no == no and x.state in (_PREFILL, _DECODE)]
        return P

    def _finish_step(self, g: int, P: int) -> None:
        """Step g's time and effects: prefills that completed emit their first token (and
        decode, or finish), decodes due at g finish; the clock moves to the step's end."""
        bs, record, itl = self.bs, self.record_events, self.itl_segs
        nsched = self.D + sum(1 for r in self.prefills if r.chunk > 0)
        dt = self._step_time(P)
        tend = self.t + dt
        if itl is not None:
            self.seg_g.append((g, self.t, dt, 1))
        self.G = G = g
        self.steps += 1
        self.cum_batch += nsched
        # prefills progress
        still = []
        for r in self.prefills:
            if r.state != _PREFILL:
                continue
            if r.chunk > 0:
                r.computed += r.chunk
                r.chunk = 0
                self._register(r, r.computed // bs)
                if r.computed >= r.tokens:
                    r.out += 1
                    i = r.i
                    if np.isnan(self.t_first[i]):
                        self.t_first[i] = tend
                        self.cb_first[i] = self.cum_batch
                        self.g_first[i] = G
                        if record:
                            self.ev(i, tend, _FIRST)
                    if itl is not None:
                        itl.setdefault(i, []).append(G)
                    if r.out >= r.target:
                        self._finish(r, tend, r.held, r.computed)
                    else:
                        self._enter_decode(r)
                    continue
            still.append(r)
        self.prefills[:] = still
        # decodes finishing at this step
        fin_heap = self.fin_heap
        while fin_heap:
            gf, no, r = fin_heap[0]
            if r.admit_no != no or r.state != _DECODE:
                heapq.heappop(fin_heap)
                continue
            if gf != G:
                break
            heapq.heappop(fin_heap)
            self.cnt[r.rho] -= 1
            self.D -= 1
            self.kv -= r.c0
            computed = r.c0 + (G - r.g0)
            r.out = r.target
            self._finish(r, tend, -(-computed // bs), computed)
        self.t = tend

    def _finish(self, r: _Req, tend: float, held: int, computed: int) -> None:
        i = r.i
        self._release(r, held, computed)
        self.head_blocked = False   # blocks were freed: the waiting head may fit now
        r.state = _DONE
        r.units = None
        self.nrun -= 1
        self.done += 1
        self.t_fin[i] = tend
        self.outn[i] = r.out
        steps = self.G - self.g_first[i]
        if steps > 0:
            self.batch[i] = (self.cum_batch - self.cb_first[i]) / steps
        if self.record_events:
            self.ev(i, tend, _FINISHED, "stop")
        if self.itl_segs is not None:
            self.itl_segs[i].append(self.G)
        del self.reqs[i]

    def _enter_decode(self, r: _Req) -> None:
        G = self.G
        r.state = _DECODE
        r.g0 = G
        r.c0 = r.computed
        r.rho = (G + 1 - r.c0) % self.bs
        self.cnt[r.rho] += 1
        self.D += 1
        self.kv += r.c0
        heapq.heappush(self.fin_heap, (G + r.target - r.out, r.admit_no, r))

    def _preempt_one(self, tnow: float) -> _Req:
        """Preempt the most recently admitted running request; returns it."""
        G, bs, order = self.G, self.bs, self.order
        while True:
            no, v = order.pop()
            if v.admit_no == no and v.state in (_PREFILL, _DECODE):
                break
        if v.state == _DECODE:
            self.cnt[v.rho] -= 1
            self.D -= 1
            self.kv -= v.c0
            computed = v.c0 + (G - v.g0)
            v.out += G - v.g0
            held = -(-computed // bs)
            if self.dec_alloc == G + 1 and v.rho == (G + 1) % bs and self.N < INF_BLOCKS:
                held += 1  # its block for this step was already taken
            if self.itl_segs is not None:
                self.itl_segs[v.i].append(G)
        else:
            self.prefills.remove(v)
            computed, held = v.computed, v.held
        self._release(v, held, computed)
        v.state = _WAITING
        v.admit_no = -1
        v.tokens = v.prompt + v.out
        self.nrun -= 1
        self.npre[v.i] += 1
        self.preemptions += 1
        self.waiting.appendleft(v)
        if self.record_events:
            self.ev(v.i, tnow, _PREEMPTED, f"preemption {self.npre[v.i]}")
        return v



def simulate(requests: Sequence[TraceRequest], config: EngineConfig | None = None,
             progress: Callable[[int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None, *, record_events: bool = True,
             record_itl: bool = False) -> ReplayResult:
    """Replay `requests` (any order; sorted by arrival_s, stable) through the engine model.

    config: EngineConfig (default: infinite cache, block 16, 256 seqs, 8192 batched tokens,
    LRU, SGLang-calibrated timing). progress(done, total) is called now and then with the
    finished request count; cancelled() is polled and raises Cancelled when it returns True.
    record_events: fill ReplayResult.events (arrived, queued, scheduled, first_token,
    preempted, resumed, finished, error); record_itl: fill token_latencies.

    summary keys: requests, finished, rejected, prefix_information (False when no request has
    hash ids: the trace says nothing about shared prefixes, and every hit rate below, the
    requests' cached_prompt_tokens and kv_cache_hit_rate are then None / NULL, not 0),
    prefix_cache: vLLM's PrefixCacheStats in tokens (vllm/v1/metrics/stats.py: record(num_tokens,
    num_hits, preempted=request.num_preemptions > 0), called for the lookup of
    kv_cache_manager.get_computed_blocks): {requests, queries, hits} of first queries and
    {preempted_requests, preempted_queries, preempted_hits} of the re-queries of preempted
    requests (a query is the request's num_tokens, prompt plus output so far; a hit is whole
    cached blocks, at most num_tokens - 1 tokens). Counted when the request is admitted: a
    request turned away for lack of blocks is counted once, when it gets in. vLLM versions that
    record inside get_computed_blocks count each such retry as another query (some newer
    schedulers record at admission, "so unscheduled lookups are not counted"; not checked
    against upstream here); preempted requests are apart either way.
    hit_rate: hits / queries of first queries, the HEADLINE figure (vLLM's
    prefix_cache_hits / prefix_cache_queries); a smaller cache cannot look better because a
    preempted request hits its own blocks again; equals hit_rate_tokens. hit_rate_preempted:
    preempted_hits / preempted_queries (None without preemptions).
    hit_rate_tokens (prompt tokens served from the cache / prompt tokens, each request counted
    once, at its first admission; requests rejected at arrival are not queried, so a capacity
    that rejects some requests rates another population), hit_rate_per_request (mean over
    requests of hit / queried blocks at first admission), hit_rate_blocks (older vLLM-style
    block count over EVERY scheduling attempt, first, blocked and preempted alike: a small,
    thrashing cache shows a HIGHER figure than a large one; kept for comparison only),
    cache_query_blocks,
    cache_hit_blocks, evicted_blocks, preemptions, ttft_ms_mean, tpot_ms_mean, queue_ms_mean,
    e2e_ms_mean, steps, makespan_s.
    Raises ValueError on impossible settings (EngineConfig.validate) or when block_size and
    a request's hash_block_tokens do not divide one another.
    """
    eng = _Engine(requests, config or EngineConfig(), record_events, record_itl)
    eng.run(progress, cancelled)
    return eng.result()
