"""Eviction policies of the replay block pool, as plug-ins.

The pool (explorer.core.replay.engine) keeps cache *entries*: one per unit of prompt content
(a trace hash block, i.e. hash_block_tokens / block_size engine blocks, or one engine block when
blocks are larger than hash blocks), each holding a cached prefix of its engine blocks. An entry
referenced by a running request (ref > 0) is never evicted; when its last user frees it, it is
"released" and becomes evictable. A policy only orders the evictable entries:

    on_insert(key)   a new entry was created (the content was computed and cached)
    on_hit(key)      a request was admitted with a prefix-cache hit on the entry
    on_acquire(key)  the entry went from evictable to in use (ref 0 -> 1)
    on_release(key)  the entry went from in use to evictable (ref 1 -> 0); a request releases
                     its entries in reverse order (last block first), as vLLM frees them
    victim() -> key  the evictable entry to evict blocks from next; calling it again without
                     an intervening event returns the same key (the pool may evict only part
                     of an entry: its last blocks, and asks again)
    on_evict(key)    the entry's last block was evicted; forget it

The pool calls victim() only when some entry is evictable. `size(key)` and `evictable(key)`
are callbacks into the pool, given at construction.

LRU is vLLM's policy (vllm/v1/core/block_pool.py: freed blocks are appended to the
FreeKVCacheBlockQueue in reverse order and allocation pops from its head, evicting the block's
hash; docs/design/prefix_caching.md, "eviction"): the least recently released entry first, and
among the entries of one request its last block first. FIFO evicts by creation order, LFU by
hit count (ties: least recently released), S3-FIFO follows Yang et al., "FIFO queues are all
you need for cache eviction", SOSP 2023 (small FIFO of 10% of the capacity, main FIFO, ghost
queue; frequency capped at 3).
"""
from __future__ import annotations

import heapq
from collections import OrderedDict, deque
from typing import Callable, Hashable


class EvictionPolicy:
    """Base class; see the module docstring for the protocol."""
    name = ""

    def __init__(self, capacity_blocks: int | None, size: Callable[[Hashable], int],
                 evictable: Callable[[Hashable], bool]):
        self.capacity = capacity_blocks
        self.size = size
        self.evictable = evictable

    def on_insert(self, key) -> None: ...
    def on_hit(self, key) -> None: ...
    def on_acquire(self, key) -> None: ...
    def on_release(self, key) -> None: ...
    def on_evict(self, key) -> None: ...

    def victim(self):  # pragma: no cover - abstract
        raise NotImplementedError


class LRU(EvictionPolicy):
    """Least recently released first (vLLM v1 free-block queue order)."""
    name = "lru"

    def __init__(self, *a):
        super().__init__(*a)
        self.queue: OrderedDict = OrderedDict()

    def on_acquire(self, key):
        self.queue.pop(key, None)

    def on_release(self, key):
        self.queue[key] = None

    def on_evict(self, key):
        self.queue.pop(key, None)

    def victim(self):
        return next(iter(self.queue))


class FIFO(EvictionPolicy):
    """First created, first evicted (among the evictable entries)."""
    name = "fifo"

    def __init__(self, *a):
        super().__init__(*a)
        self.seq = 0
        self.born: dict = {}
        self.heap: list = []

    def on_insert(self, key):
        self.seq += 1
        self.born[key] = self.seq

    def on_release(self, key):
        heapq.heappush(self.heap, (self.born[key], key))

    def on_evict(self, key):
        self.born.pop(key, None)

    def victim(self):
        h = self.heap
        while True:
            born, key = h[0]
            if self.born.get(key) == born and self.evictable(key):
                return key
            heapq.heappop(h)


class LFU(EvictionPolicy):
    """Fewest prefix-cache hits first; ties broken by least recent release."""
    name = "lfu"

    def __init__(self, *a):
        super().__init__(*a)
        self.freq: dict = {}
        self.stamp: dict = {}
        self.seq = 0
        self.heap: list = []

    def on_insert(self, key):
        self.freq[key] = 0

    def on_hit(self, key):
        self.freq[key] = self.freq.get(key, 0) + 1

    def on_release(self, key):
        self.seq += 1
        self.stamp[key] = self.seq
        heapq.heappush(self.heap, (self.freq.get(key, 0), self.seq, key))

    def on_evict(self, key):
        self.freq.pop(key, None)
        self.stamp.pop(key, None)

    def victim(self):
        h = self.heap
        while True:
            f, s, key = h[0]
            if self.stamp.get(key) == s and self.freq.get(key) == f and self.evictable(key):
                return key
            heapq.heappop(h)
            if self.stamp.get(key) == s and self.evictable(key):  # frequency changed: re-file
                heapq.heappush(h, (self.freq.get(key, 0), s, key))


class S3FIFO(EvictionPolicy):
    """S3-FIFO (Yang et al., SOSP 2023), sized in blocks.

    New entries go to the small queue S (target 10% of the capacity) unless their key is in
    the ghost queue G, then to the main queue M. Eviction: while S holds >= 10% of the
    capacity, take S's oldest: accessed (freq > 0) -> moved to M, else evicted (key to G);
    otherwise take M's oldest: freq > 0 -> freq - 1 and back to M's tail, else evicted. An
    entry in use (ref > 0) that comes up is parked outside both queues and re-enters M's tail
    when released (it was just used).
    """
    name = "s3fifo"

    def __init__(self, *a):
        super().__init__(*a)
        cap = self.capacity or 1 << 62
        self.small_target = max(1, cap // 10)
        self.ghost_cap = max(1, cap)  # ghost remembers about as many blocks' keys as M holds
        self.S: deque = deque()
        self.M: deque = deque()
        self.where: dict = {}
        self.freq: dict = {}
        self.small_blocks = 0
        self.counted: dict = {}
        self.ghost: OrderedDict = OrderedDict()
        self.ghost_blocks = 0
        self._victim = None

    def on_insert(self, key):
        self._victim = None
        self.freq[key] = 0
        if key in self.ghost:
            self.ghost_blocks -= self.ghost.pop(key)
            self.M.append(key)
            self.where[key] = "M"
        else:
            self.S.append(key)
            self.where[key] = "S"
            # S is sized by the blocks an entry had when it was inserted
            n = self.counted[key] = max(1, self.size(key))
            self.small_blocks += n

    def on_hit(self, key):
        self.freq[key] = min(3, self.freq.get(key, 0) + 1)

    def on_acquire(self, key):
        self._victim = None

    def on_release(self, key):
        self._victim = None
        if self.where.get(key) == "P":  # parked while in use: back into M
            self.M.append(key)
            self.where[key] = "M"

    def on_evict(self, key):
        self._victim = None
        w = self.where.pop(key, None)
        self.freq.pop(key, None)
        if w == "S":
            if self.S and self.S[0] == key:
                self.S.popleft()
            else:
                self.S.remove(key)
            n = self.counted.pop(key, 1)
            self.small_blocks -= n
            self.ghost[key] = n
            self.ghost_blocks += n
            while self.ghost_blocks > self.ghost_cap and self.ghost:
                _, n = self.ghost.popitem(last=False)
                self.ghost_blocks -= n
        elif w == "M":
            if self.M and self.M[0] == key:
                self.M.popleft()
            else:
                self.M.remove(key)

    def victim(self):
        if self._victim is not None and self._victim in self.where and self.evictable(self._victim):
            return self._victim
        guard = 4 * (len(self.S) + len(self.M)) + 8
        while guard > 0:
            guard -= 1
            if self.S and (self.small_blocks >= self.small_target or not self.M):
                key = self.S[0]
                if self.freq.get(key, 0) > 0 or not self.evictable(key):
                    self.S.popleft()
                    self.small_blocks -= self.counted.pop(key, 1)
                    if self.evictable(key):
                        self.M.append(key)
                        self.where[key] = "M"
                    else:
                        self.where[key] = "P"
                    continue
                self._victim = key
                return key
            key = self.M[0]
            if not self.evictable(key):
                # in use: park it outside the queues until released (then back to M's tail),
                # so a victim search never walks over the same pinned entry twice
                self.M.popleft()
                self.where[key] = "P"
                continue
            if self.freq.get(key, 0) > 0:
                self.freq[key] -= 1
                self.M.rotate(-1)
                continue
            self._victim = key
            return key
        # every entry was passed over several times: take the first evictable one
        for q in (self.S, self.M):
            for key in q:
                if self.evictable(key):
                    self._victim = key
                    return key
        raise RuntimeError("S3-FIFO: victim() called with nothing evictable")


POLICIES: dict[str, type[EvictionPolicy]] = {p.name: p for p in (LRU, LFU, FIFO, S3FIFO)}


def make_policy(name: str, capacity_blocks: int | None, size, evictable) -> EvictionPolicy:
    """The policy registered under `name` (lru, lfu, fifo, s3fifo). Raises ValueError."""
    try:
        cls = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown eviction policy {name!r}; known: {', '.join(POLICIES)}") from None
    return cls(capacity_blocks, size, evictable)
