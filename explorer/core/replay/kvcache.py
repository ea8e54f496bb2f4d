"""The paged KV cache of the replay engine (engine.py's docstring, "Blocks and hashes", "Prefix
hit", "Pool"): per-request state (_Req), the units a request's prompt is cut into, the prefix
lookup, registration of computed blocks, release, eviction in policy order, allocation.
KVCacheMixin is mixed into engine._Engine, which owns the state these methods read (entries,
policy, free, evictable, bs, N and the counters)."""
from __future__ import annotations

INF_BLOCKS = 1 << 62

# request states
_PENDING, _WAITING, _PREFILL, _DECODE, _DONE = range(5)

_NOTHING: frozenset = frozenset()  # no entry is protected from eviction


class _Req:
    """Mutable per-request state while the request is live."""
    __slots__ = ("i", "prompt", "target", "hashes", "hbt", "out", "computed", "tokens",
                 "held", "shared", "units", "ucov", "nref", "reg", "ru", "rpos",
                 "state", "admit_no", "g0", "c0", "rho", "first_admitted", "chunk")

    def __init__(self, i, prompt, target, hashes, hbt):
        self.i = i
        self.prompt = prompt
        self.target = target
        self.hashes = hashes
        self.hbt = hbt
        self.out = 0          # output tokens generated so far
        self.computed = 0     # tokens whose KV is computed (prefill phase)
        self.tokens = prompt  # tokens to prefill on (re)admission: prompt + out
        self.held = 0         # blocks held (shared + private), prefill phase
        self.shared = 0       # blocks of `held` that live in cache entries
        self.units = None     # [(key, blocks)] lazily built
        self.ucov = 0         # blocks covered by `units`
        self.nref = 0         # leading units whose entries this request references
        self.reg = 0          # leading blocks already registered / looked at
        self.ru = 0           # unit index containing block `reg`
        self.rpos = 0         # first block of unit `ru`
        self.state = _PENDING
        self.admit_no = -1
        self.g0 = 0           # decode: step after which decoding started
        self.c0 = 0           # decode: computed tokens at g0
        self.rho = 0          # decode: needs a new block at steps g with g % bs == rho
        self.first_admitted = False
        self.chunk = 0        # prefill tokens scheduled in the current step



class KVCacheMixin:
    """The cache half of engine._Engine."""

    def _build_units(self, r: _Req):
        """Prompt units from the trace's hash ids (key chain), then private units."""
        bs, hbt, n = self.bs, r.hbt, r.prompt
        units = []
        cov = 0
        parent = 0
        hs = r.hashes
        if hs:
            if hbt % bs == 0:
                S = hbt // bs
                for h, hid in enumerate(hs):
                    start = h * hbt
                    if start >= n:
                        break
                    parent = hash((parent, hid))
                    b = min(S, (n - start) // bs)
                    if b <= 0:
                        break
                    units.append((parent, b))
                    cov += b
                    if b < S:
                        break
            elif bs % hbt == 0:
                m = bs // hbt
                for j in range(min(n // bs, len(hs) // m)):
                    for hid in hs[j * m:(j + 1) * m]:
                        parent = hash((parent, hid))
                    units.append((parent, 1))
                    cov += 1
            else:
                raise ValueError(f"block_size {bs} and the trace's hash block of {hbt} tokens: "
                                 "one must divide the other")
        r.units = units
        r.ucov = cov

    def _ensure_units(self, r: _Req, nblocks: int):
        if r.units is None:
            self._build_units(r)
        S = max(1, r.hbt // self.bs)
        units = r.units
        m = len(units)
        while r.ucov < nblocks:
            units.append(((r.i, m), S))
            m += 1
            r.ucov += S

    def _lookup(self, r: _Req, ntok: int):
        """Longest cached prefix of r's first ntok tokens: (hit blocks, hit unit count)."""
        bs = self.bs
        cap = (ntok - 1) // bs
        self._ensure_units(r, ntok // bs)
        ent = self.entries
        hit = 0
        nu = 0
        for key, b in r.units:
            if hit >= cap:
                break
            e = ent.get(key)
            if e is None or e[0] == 0:
                break
            h = e[0] if e[0] < b else b
            if hit + h > cap:
                h = cap - hit
            hit += h
            nu += 1
            if h < b:
                break
        return hit, nu

    def _acquire(self, key, e):
        if e[1] == 0:
            self.evictable -= e[0]
            self.policy.on_acquire(key)
        e[1] += 1

    def _register(self, r: _Req, full: int):
        """Cache r's first `full` blocks (computed): create or grow entries, reference them."""
        if full <= r.reg:
            return
        self._ensure_units(r, full)
        ent = self.entries
        units = r.units
        u, pos, reg = r.ru, r.rpos, r.reg
        pol = self.policy
        while pos + 0 < full:
            key, b = units[u]
            c = min(b, full - pos)
            p = reg - pos if reg > pos else 0
            if c > p:
                e = ent.get(key)
                if u >= r.nref:
                    if e is None:
                        e = ent[key] = [0, 1]
                        pol.on_insert(key)
                    else:
                        self._acquire(key, e)
                    r.nref = u + 1
                base = e[0] if e[0] > p else p
                if c > base:
                    e[0] += c - base
                    r.shared += c - base
            reg = pos + c
            if c < b:
                break
            u += 1
            pos += b
        r.ru, r.rpos, r.reg = u, pos, reg

    def _release(self, r: _Req, held: int, computed: int):
        """Free r's blocks: cache its full computed blocks, release its entries last first."""
        self._register(r, computed // self.bs)
        ent = self.entries
        pol = self.policy
        units = r.units
        for u in range(r.nref - 1, -1, -1):
            key = units[u][0]
            e = ent[key]
            e[1] -= 1
            if e[1] == 0:
                self.evictable += e[0]
                pol.on_release(key)
        self.free += held - r.shared
        r.held = r.shared = r.nref = r.reg = r.ru = r.rpos = 0
        r.computed = 0

    def _evict_until(self, k: int, forbidden: frozenset | set):
        """Evict up to k blocks in policy order, stopping before any entry in `forbidden`."""
        ent = self.entries
        pol = self.policy
        while k > 0 and self.evictable > 0:
            key = pol.victim()
            if key in forbidden:
                return
            e = ent[key]
            take = e[0] if e[0] < k else k
            e[0] -= take
            k -= take
            self.evictable -= take
            self.free += take
            self.evicted += take
            if e[0] == 0:
                del ent[key]
                pol.on_evict(key)

    def _alloc(self, k: int):
        """Take k blocks: free ones first, then evict (caller checked free + evictable >= k)."""
        if k <= 0:
            return
        if k > self.free:
            self._evict_until(k - self.free, _NOTHING)
        self.free -= k

