"""Hashing and sketching core of the MinHash family: item codes, keyed mixers, minima and Minner counts.

Three hash versions are served; every value a version produces is fixed forever (a change means a new version).
Version 3 is the default; versions 1 and 2 stay available bit for bit for sketches made with them.

* Universe element of an item. ``universe=None`` (the hashed 64-bit universe): a ``str`` is hashed from its UTF-8
  bytes: version 1 with ``xxhash.xxh3_64`` (seed 0); versions 2 and 3 with the chained hash
  ``h_0 = (len + 1) * 0x9E3779B97F4A7C15``, ``h_j = fmix64(h_{j-1} ^ w_j)`` over the little-endian 8-byte words
  ``w_j`` of the bytes (the last one zero-padded), injective among strings of one length. An ``int`` is its 8-byte
  two's complement read as a uint64 (the keyed mixer sigma randomises it). ``universe=D``: an ``int`` in ``[0, D)``
  is the position itself, a ``str`` goes to ``(h * D) >> 64`` (Lemire multiply-shift) of its 64-bit hash.
* Keys: ``key_j = splitmix64(seed + (j + 1) * 0x9E3779B97F4A7C15)``; key_0 keys sigma, key_1 keys pi,
  key_{1+k} is the offset of the k-th classic hash.
* 64-bit universe, ``fmix64`` = murmur3 finaliser (a bijection of uint64), ``mix64`` = fmix64 without its final
  ``x ^= x >> 33`` (see :func:`fmix64`), all arithmetic mod 2^64: sigma(z) = fmix64(z ^ key_0),
  pi(z) = mix64(z + key_1), pi_k(z) = pi(z + k) for k = 1..K (circulant shift);
  classic: h_k(x) = mix64(sigma(u) + key_{1+k}); cminhash_sigma_pi: h_k = pi(sigma(u) + k);
  cminhash_pi_pi: h_k = pi(pi(u) + k). These are the same in versions 1 and 2; each is ``mix64(w + o_k)`` with a
  per-item base ``w`` and a per-hash offset ``o_k`` (:meth:`Hasher.bases`).
* Version 3, 64-bit universe: the same ``w`` and ``o_k``, then the per-hash step in 32 bits,
  ``h_k = fmix32((w + o_k) mod 2^32)`` (fmix32 = murmur3's 32-bit finaliser, a bijection of uint32): C-MinHash over
  Z_{2^32} with the item placement ``w mod 2^32``, a random function of the item, so two distinct items of a set
  share all K hash values with probability 2^-32 (bias bound in docs/minhash.md). Hash values are below 2^32.
* Universe D: ``rng = np.random.default_rng([version, seed, D])``; classic draws pi_1..pi_K
  with successive ``rng.permutation(D)``; sigma_pi draws sigma then pi; pi_pi draws pi. h_k(x) = pi_k[p] (classic),
  pi[(sigma[p] + k) mod D] (sigma_pi), pi[(pi[p] + k) mod D] (pi_pi). This relies on numpy keeping the
  ``Generator.permutation`` stream; if it ever changes, a new version is made.
* An empty sketch holds the sentinel ``2^64 - 1`` (64-bit universe) or ``D`` (universe D) in every slot.

The 64-bit-universe minima and Minner counts run in compiled loops (:mod:`.minhash_kernels`): one fused pass per
(item, hash) pair (version 3: eight uint32 lanes per instruction), spread over the cores; the explicit-permutation
universe uses the numpy tiles below.
"""

from collections.abc import Iterator, Sequence

import numpy as np
import xxhash

from service.estimators.minhash_kernels import kernel, run_split
from service.registry import Progress, no_progress

HASH_VERSIONS = (1, 2, 3)
DEFAULT_HASH_VERSION = 3
SCHEMES: tuple[str, ...] = ("classic", "cminhash_sigma_pi", "cminhash_pi_pi")
U64_MAX = np.uint64(2**64 - 1)
U32_MAX = np.uint32(2**32 - 1)
MAX_ITEM_BYTES = 1024

_GOLDEN = 0x9E3779B97F4A7C15
_FMIX_C1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_SM_C1 = np.uint64(0xBF58476D1CE4E5B9)
_SM_C2 = np.uint64(0x94D049BB133111EB)
BYTE_WORK = 4
"""Work of hashing one byte of a string, in (item, hash) pairs of the minima loop (measured: ~0.6 ns vs ~0.12 ns),
so that :func:`.minhash_kernels.run_split` splits the string hash from the same cost as the minima (10^5 strings of
24 bytes are split over the cores)."""
_TILE = 1 << 15
"""Elements of one (items x hashes) tile: small enough for the L2 cache."""


def fmix64(x: np.ndarray, tmp: np.ndarray | None = None, final: bool = True) -> np.ndarray:
    """Murmur3 ``fmix64`` in place on a uint64 array (wrapping arithmetic); ``tmp`` is scratch space.

    ``final=False`` omits the last ``x ^= x >> 33`` ("mix64"): still a bijection, and since that step leaves the
    top 33 bits unchanged it can only change which item attains a minimum on a 33-bit tie, so minima computed
    with mix64 are statistically equivalent while saving 2 of the 10 array passes per (item, hash).
    """
    if tmp is None:
        tmp = np.empty_like(x)
    for mult in (_FMIX_C1, _FMIX_C2):
        np.right_shift(x, np.uint64(33), out=tmp)
        np.bitwise_xor(x, tmp, out=x)
        np.multiply(x, mult, out=x)
    if final:
        np.right_shift(x, np.uint64(33), out=tmp)
        np.bitwise_xor(x, tmp, out=x)
    return x


def derive_keys(seed: int, count: int) -> np.ndarray:
    """``count`` uint64 keys from the splitmix64 stream started at ``seed`` (both versions)."""
    j = np.arange(1, count + 1, dtype=np.uint64)
    z = np.uint64(seed % 2**64) + j * np.uint64(_GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * _SM_C1
    z = (z ^ (z >> np.uint64(27))) * _SM_C2
    return z ^ (z >> np.uint64(31))


def encode_strings(strings: Sequence[str]) -> list[bytes]:
    """UTF-8 bytes of each string (the canonical bytes of a ``str`` item)."""
    return list(map(str.encode, strings))


def hash_bytes(data: Sequence[bytes]) -> np.ndarray:
    """xxh3_64 (seed 0) of each byte string, one C call per item."""
    return np.fromiter(map(xxhash.xxh3_64_intdigest, data), dtype=np.uint64, count=len(data))


def hash_strings(strings: Sequence[str]) -> np.ndarray:
    """Universe element (64-bit) of each ``str`` item, version 1: xxh3_64 of its UTF-8 bytes."""
    return np.fromiter(map(xxhash.xxh3_64_intdigest, map(str.encode, strings)), dtype=np.uint64, count=len(strings))


def utf8_layout(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(buffer, starts, stops)``: the UTF-8 bytes of all strings back to back and each one's byte range.

    One join and one encode for the whole list; the boundaries come from the NUL separators unless a string
    holds a NUL itself (then from the per-string lengths). Raises UnicodeEncodeError on a lone surrogate.
    """
    n = len(strings)
    joined = "\0".join(strings).encode()
    buf = np.frombuffer(joined, dtype=np.uint8)
    cuts = np.flatnonzero(buf == 0)
    if len(cuts) == max(n - 1, 0):
        starts = np.empty(n, dtype=np.int64)
        stops = np.empty(n, dtype=np.int64)
        if n:
            starts[0], stops[-1] = 0, len(buf)
            starts[1:], stops[:-1] = cuts + 1, cuts
        return buf, starts, stops
    lengths = np.fromiter(map(len, encode_strings(strings)), dtype=np.int64, count=n)
    stops = np.cumsum(lengths)
    buf = np.frombuffer(b"".join(encode_strings(strings)), dtype=np.uint8)
    return buf, stops - lengths, stops


def hash_utf8(buf: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Universe element (64-bit) of each byte range, version 2: the chained fmix64 word hash (module docstring)."""
    n = len(starts)
    out = np.empty(n, dtype=np.uint64)
    size = int(stops[-1] - starts[0]) if n else 0
    run_split("string_hash", n, BYTE_WORK * size, lambda: (out,), buf, starts, stops)
    return out


def hash_strings_v2(strings: Sequence[str]) -> np.ndarray:
    """Universe element (64-bit) of each ``str`` item, versions 2 and 3."""
    return hash_joined(strings)[0]


def hash_joined(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, lengths)``: the version-2 hash and the UTF-8 byte length of each string, from one join and encode.

    A compiled loop walks the NUL-separated bytes eight at a time (no per-string boundaries are built); when a
    string holds a NUL itself the boundaries come from :func:`utf8_layout`. Raises TypeError when an item is not a
    ``str`` and UnicodeEncodeError on a lone surrogate.
    """
    n = len(strings)
    joined = "\0".join(strings).encode()
    if n == 0:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    size = len(joined)
    words = np.zeros((size + 23) // 8, dtype=np.uint64)
    words.view(np.uint8)[:size] = np.frombuffer(joined, dtype=np.uint8)
    parts = run_split(
        "joined_hash",
        size + 1,
        BYTE_WORK * size,
        lambda: (np.empty(n + 1, dtype=np.uint64), np.empty(n + 1, dtype=np.int64), np.zeros(1, dtype=np.int64)),
        words,
        size,
    )
    if sum(int(count[0]) for _, _, count in parts) != n:  # n + 1 pieces or more: a string holds a NUL
        buf, starts, stops = utf8_layout(strings)
        return hash_utf8(buf, starts, stops), stops - starts
    if len(parts) == 1:
        return parts[0][0][:n], parts[0][1][:n]
    return np.concatenate([h[: c[0]] for h, _, c in parts]), np.concatenate([m[: c[0]] for _, m, c in parts])


def int_codes(ints: np.ndarray) -> np.ndarray:
    """Universe element (64-bit) of each ``int`` item: its int64 bit pattern as uint64."""
    return np.asarray(ints, dtype=np.int64).view(np.uint64)


def lemire(h: np.ndarray, universe: int) -> np.ndarray:
    """``(h * D) >> 64`` without 128-bit integers (D < 2^32): maps uint64 hashes to ``[0, D)`` without bias."""
    d = np.uint64(universe)
    hi = h >> np.uint64(32)
    lo = h & np.uint64(0xFFFFFFFF)
    return (hi * d + ((lo * d) >> np.uint64(32))) >> np.uint64(32)


def distinct(codes: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort + mask: ``np.unique`` takes ~100x longer on 10^6 uint64 in numpy 2.4)."""
    s = np.sort(codes)
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def count_distinct(codes: np.ndarray) -> int:
    """Number of distinct values of a uint64 array: a hash set (about three times faster than sorting 10^5 values),
    or :func:`distinct` when the values collide in it."""
    bits = max(1, (2 * len(codes)).bit_length())
    table = np.zeros(1 << bits, dtype=np.uint64)
    count = int(kernel("count_distinct")(np.ascontiguousarray(codes, dtype=np.uint64), table, bits))
    return count if count >= 0 else len(distinct(codes))


def sentinel(universe: int | None) -> np.uint64:
    """Value of an empty slot: larger than every hash value of the universe."""
    return U64_MAX if universe is None else np.uint64(universe)


def _permutations(version: int, seed: int, universe: int, count: int) -> Iterator[np.ndarray]:
    """The ``count`` explicit permutations of ``[D]`` of a hash version, as uint32 arrays."""
    rng = np.random.default_rng([version, seed, universe])
    for _ in range(count):
        yield rng.permutation(universe).astype(np.uint32)


class Hasher:
    """The K hash functions of one (scheme, num_perm, seed, universe, version), applied to deduplicated codes.

    ``codes`` are universe elements (uint64: 64-bit values, or positions in ``[0, D)``). ``tiles(codes)`` yields
    ``(cols, values)``: ``values[j, i]`` is hash ``cols.start + j`` of the i-th item of some block (uint64, or uint32
    for an explicit universe), so a caller reduces (min, compare) over axis 1 without the full ``K x n`` matrix.
    """

    def __init__(
        self, scheme: str, num_perm: int, seed: int, universe: int | None, version: int = DEFAULT_HASH_VERSION
    ) -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}")
        if version not in HASH_VERSIONS:
            raise ValueError(f"unknown hash version {version!r}")
        if universe is not None and scheme != "classic" and num_perm > universe:
            raise ValueError("circulant schemes need num_perm <= universe")
        self.scheme = scheme
        self.num_perm = num_perm
        self.seed = seed
        self.universe = universe
        self.version = version
        self._perms: list[np.ndarray] = []
        if universe is not None and scheme != "classic":
            self._perms = list(_permutations(version, seed, universe, 2 if scheme == "cminhash_sigma_pi" else 1))

    def bases(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-item base values ``w`` and per-hash offsets ``o`` (64-bit universe: h_k = mix64(w + o_k), version 3:
        h_k = fmix32((w + o_k) mod 2^32))."""
        k = self.num_perm
        keys = derive_keys(self.seed, 2 + k)
        if self.scheme == "classic":
            return fmix64(codes ^ keys[0]), keys[2:]
        offsets = np.arange(1, k + 1, dtype=np.uint64)
        if self.scheme == "cminhash_sigma_pi":
            return fmix64(codes ^ keys[0]) + keys[1], offsets
        return fmix64(codes + keys[1], final=False) + keys[1], offsets

    def tiles(self, codes: np.ndarray) -> Iterator[tuple[slice, slice, np.ndarray, float]]:
        """Explicit universe D: ``(rows, cols, values, done)`` tile by tile, each valid until the next is requested.

        ``values[j, i] = h_{cols.start + j + 1}(codes[rows.start + i])``; ``done`` is the fraction of the work
        finished after this tile.
        """
        n, k = len(codes), self.num_perm
        if n == 0:
            return
        if self.scheme == "classic":
            for c, perm in enumerate(_permutations(self.version, self.seed, self.universe, k)):
                for r0 in range(0, n, _TILE):
                    rows = slice(r0, r0 + _TILE)
                    yield rows, slice(c, c + 1), perm[None, codes[rows]], (c + min(1.0, (r0 + _TILE) / n)) / k
            return
        perm_twice = np.concatenate([self._perms[-1], self._perms[-1]])
        first = self._perms[0][codes].astype(np.int64)
        rows = min(n, 1 << 12)
        cols = max(1, min(k, _TILE // rows))
        shifts = np.arange(1, k + 1, dtype=np.int64)
        for r0 in range(0, n, rows):
            fr = first[None, r0 : r0 + rows]
            for c0 in range(0, k, cols):
                c1 = min(c0 + cols, k)
                done = (r0 * k + c1 * fr.shape[1]) / (n * k)
                yield slice(r0, r0 + rows), slice(c0, c1), perm_twice[shifts[c0:c1, None] + fr], done

    def minima(self, code_sets: Sequence[np.ndarray], progress: Progress = no_progress) -> np.ndarray:
        """Sketches ``(len(code_sets), K)``: row g holds ``min_{x in set g} h_k(x)``, k = 1..K (the sentinel for
        an empty set). All sets go through one pass over the hash functions (explicit permutations drawn once)."""
        if self.universe is None:
            return (
                np.stack([self._compiled_minima(c, progress) for c in code_sets])
                if len(code_sets)
                else (np.empty((0, self.num_perm), dtype=np.uint64))
            )
        sizes = np.array([len(c) for c in code_sets], dtype=np.int64)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        codes = np.concatenate(code_sets) if len(code_sets) else np.empty(0, dtype=np.uint64)
        out = np.full((len(code_sets), self.num_perm), sentinel(self.universe), dtype=np.uint64)
        nonempty = np.flatnonzero(sizes > 0)
        starts = bounds[nonempty]
        report = _Throttle(progress, "hashing items")
        if len(nonempty) == 1:
            row = out[nonempty[0]]
            for _, cols, vals, done in self.tiles(codes):
                np.minimum(row[cols], vals.min(axis=1), out=row[cols])
                report(done)
            return out
        for rows, cols, vals, done in self.tiles(codes):
            r0, r1 = rows.start, rows.start + vals.shape[1]
            lo, hi = np.searchsorted(starts, r0, side="right") - 1, np.searchsorted(starts, r1, side="left")
            groups = nonempty[lo:hi]
            seg = np.maximum(starts[lo:hi], r0) - r0
            block = np.minimum.reduceat(vals, seg, axis=1).T
            out[groups, cols] = np.minimum(out[groups, cols], block)
            report(done)
        return out

    def _compiled_minima(self, codes: np.ndarray, progress: Progress) -> np.ndarray:
        """64-bit universe: ``min_x mix64(w_x + o_k)`` for every k in one compiled pass per chunk of items."""
        k = self.num_perm
        progress(0.0, "hashing items")
        if len(codes) == 0:
            return np.full(k, U64_MAX, dtype=np.uint64)
        w, offsets = self.bases(np.ascontiguousarray(codes, dtype=np.uint64))
        if self.version == 3:
            w, offsets, top, kernel = w.astype(np.uint32), offsets.astype(np.uint32), U32_MAX, "minima32"
        else:
            top, kernel = U64_MAX, "minima"
        parts = run_split(kernel, len(w), len(w) * k, lambda: (np.full(k, top, dtype=w.dtype),), w, offsets)
        progress(1.0, "hashing items")
        return np.minimum.reduce([out for (out,) in parts]).astype(np.uint64)

    def minner_counts(
        self, codes: np.ndarray, stored: np.ndarray, progress: Progress = no_progress
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per hash: c_k = [r_k in h_k(X)] and m_k = #{x in X : h_k(x) < r_k} for the stored minima r."""
        if self.universe is None:
            k = self.num_perm
            w, offsets = self.bases(np.ascontiguousarray(codes, dtype=np.uint64))
            if self.version == 3:
                w, offsets = w.astype(np.uint32), offsets.astype(np.uint32)
            parts = run_split(
                "minner32" if self.version == 3 else "minner",
                len(w),
                len(w) * k,
                lambda: (np.zeros(k, dtype=np.bool_), np.zeros(k, dtype=np.int64)),
                w,
                offsets,
                np.ascontiguousarray(stored, dtype=np.uint64),
            )
            progress(1.0, "hashing query items")
            return np.logical_or.reduce([c for c, _ in parts]), np.add.reduce([m for _, m in parts])
        coll = np.zeros(self.num_perm, dtype=bool)
        minner = np.zeros(self.num_perm, dtype=np.int64)
        report = _Throttle(progress, "hashing query items")
        for _, cols, vals, done in self.tiles(codes):
            r = stored[cols, None]
            coll[cols] |= (vals == r).any(axis=1)
            minner[cols] += (vals < r).sum(axis=1)
            report(done)
        return coll, minner


class _Throttle:
    """Forward progress at most once per percent."""

    def __init__(self, progress: Progress, message: str) -> None:
        self.progress, self.message, self.last = progress, message, 0.0

    def __call__(self, done: float) -> None:
        if done - self.last >= 0.01 or done >= 1.0 > self.last:
            self.last = done
            self.progress(min(done, 1.0), self.message)


def pairwise_collisions(values: np.ndarray) -> np.ndarray:
    """Collision counts ``sum_k [S_i,k == S_j,k]`` for all pairs of the rows of an ``(N, K)`` sketch matrix.

    Returns an ``(N, N)`` uint16 matrix filled for ``i < j`` (zero elsewhere). Per hash the values are first
    replaced by dense codes (``np.unique``). When the total number of colliding pairs (known from the group
    sizes) is small, pairs are enumerated from the groups (sparse path); otherwise rows are compared in tiles
    with one vectorised equality per hash (dense path).
    """
    n, k = values.shape
    if k > np.iinfo(np.uint16).max:
        raise ValueError("at most 65535 hashes")
    code_t = np.uint16 if n <= np.iinfo(np.uint16).max else np.uint32
    codes = np.empty((k, n), dtype=code_t)
    groups: list[tuple[np.ndarray, np.ndarray]] = []
    n_pairs = 0
    for j in range(k):
        order = np.argsort(values[:, j], kind="stable")
        sorted_vals = values[order, j]
        new = np.empty(n, dtype=bool)
        new[0] = True
        np.not_equal(sorted_vals[1:], sorted_vals[:-1], out=new[1:])
        group_id = np.cumsum(new) - 1
        codes[j, order] = group_id
        sizes = np.bincount(group_id)
        n_pairs += int((sizes * (sizes - 1) // 2).sum())
        groups.append((order, np.flatnonzero(new)))
    out = np.zeros((n, n), dtype=np.uint16)
    if n_pairs * 100 < n * n * k // 2:
        _sparse_fill(out, groups, n)
    else:
        _dense_fill(out, codes)
    return out


def _sparse_fill(out: np.ndarray, groups: list[tuple[np.ndarray, np.ndarray]], n: int) -> None:
    """Add one to ``out[i, j]`` (i < j) for every pair inside every group of equal values.

    ``order`` is a stable argsort, so the members of a group are ascending; groups of equal size are handled
    together with the fixed upper-triangle pattern of that size.
    """
    flat = out.reshape(-1)
    patterns: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for order, starts in groups:
        sizes = np.diff(np.append(starts, n))
        multi = sizes > 1
        by_size = np.argsort(sizes[multi], kind="stable")
        st, sz = starts[multi][by_size], sizes[multi][by_size]
        if not len(sz):
            continue
        cuts = np.flatnonzero(np.diff(sz)) + 1
        for lo, hi in zip(np.append(0, cuts), np.append(cuts, len(sz)), strict=True):
            size = int(sz[lo])
            members = order[st[lo:hi, None] + np.arange(size)]
            iu, ju = patterns.setdefault(size, np.triu_indices(size, 1))
            flat[(members[:, iu] * n + members[:, ju]).reshape(-1)] += 1  # a pair occurs at most once per hash


def _dense_fill(out: np.ndarray, codes: np.ndarray) -> None:
    """Tile-wise equality counting over the upper triangle."""
    k, n = codes.shape
    rows, cols = 64, 4096
    eq = np.empty((rows, cols), dtype=bool)
    acc = np.empty((rows, cols), dtype=np.uint16)
    for i0 in range(0, n, rows):
        i1 = min(i0 + rows, n)
        for j0 in range(i0, n, cols):
            j1 = min(j0 + cols, n)
            a, e = acc[: i1 - i0, : j1 - j0], eq[: i1 - i0, : j1 - j0]
            a.fill(0)
            for j in range(k):
                np.equal(codes[j, i0:i1, None], codes[j, None, j0:j1], out=e)
                np.add(a, e, out=a)
            if j0 == i0:
                a[:, : i1 - i0] = np.triu(a[:, : i1 - i0], 1)
            out[i0:i1, j0:j1] = a
