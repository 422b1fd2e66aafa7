"""Compiled loops of MinHash hashing: the fused hash-and-minimum, the Minner counts (64-bit steps for hash versions
1 and 2, 32-bit steps for version 3) and the version-2 string hash.

Each kernel is a numba ``nogil`` function over a range of items, so :func:`run_split` can spread one call over the
machine's cores with plain threads (no numba threading layer is involved, so concurrent requests are safe). The
functions compile on first use, never at import.
"""

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

import numpy as np

SPLIT_MIN_WORK = 1 << 22
"""Below this many (item, hash) pairs (about 2 ms of work) one thread does the whole call: starting threads would
cost more than they save."""

MAX_PROBE = 64
"""Longest linear probe of the distinct count before it gives way to sorting."""

BLOCK32 = 4096
"""Items per block of the 32-bit loops (16 KB of uint32: the block stays in the L1 cache while every hash runs over
it)."""


@cache
def _kernels() -> dict[str, Callable[..., Any]]:
    """Compile the kernels on first use (numba is imported here, not at module import)."""
    from numba import njit

    @njit(nogil=True, cache=False)
    def mix64(x: np.uint64) -> np.uint64:
        x ^= x >> np.uint64(33)
        x *= np.uint64(0xFF51AFD7ED558CCD)
        x ^= x >> np.uint64(33)
        x *= np.uint64(0xC4CEB9FE1A85EC53)
        return x

    @njit(nogil=True, cache=False)
    def fmix32(x: np.uint32) -> np.uint32:
        x = np.uint32(x ^ (x >> np.uint32(16)))
        x = np.uint32(x * np.uint32(0x85EBCA6B))
        x = np.uint32(x ^ (x >> np.uint32(13)))
        x = np.uint32(x * np.uint32(0xC2B2AE35))
        return np.uint32(x ^ (x >> np.uint32(16)))

    @njit(nogil=True, cache=False)
    def minima32(a: np.ndarray, offsets: np.ndarray, lo: int, hi: int, out: np.ndarray) -> None:
        # hash-major over a cached block of items: the inner loop runs over the items in 8 uint32 lanes (AVX2);
        # indexing the block from 0 lets the compiler drop the negative-index test that would stop vectorisation
        k = offsets.shape[0]
        for r0 in range(lo, hi, BLOCK32):
            block = a[r0 : min(hi, r0 + BLOCK32)]
            for j in range(k):
                o = offsets[j]
                acc = out[j]
                for i in range(block.shape[0]):
                    acc = min(acc, fmix32(np.uint32(block[i] + o)))
                out[j] = acc

    @njit(nogil=True, cache=False)
    def minner32(
        a: np.ndarray, offsets: np.ndarray, stored: np.ndarray, lo: int, hi: int, coll: np.ndarray, below: np.ndarray
    ) -> None:
        k = offsets.shape[0]
        for r0 in range(lo, hi, BLOCK32):
            block = a[r0 : min(hi, r0 + BLOCK32)]
            for j in range(k):
                o = offsets[j]
                r = stored[j]
                m = 0
                c = 0
                for i in range(block.shape[0]):
                    x = np.uint64(fmix32(np.uint32(block[i] + o)))
                    m += x < r
                    c += x == r
                below[j] += m
                if c:
                    coll[j] = True

    @njit(nogil=True, cache=False)
    def minima(w: np.ndarray, offsets: np.ndarray, lo: int, hi: int, out: np.ndarray) -> None:
        k = offsets.shape[0]
        block = 64
        for r0 in range(lo, hi, block):
            r1 = min(hi, r0 + block)
            for i in range(r0, r1):
                wi = w[i]
                for j in range(k):
                    x = mix64(wi + offsets[j])
                    if x < out[j]:
                        out[j] = x

    @njit(nogil=True, cache=False)
    def minner(
        w: np.ndarray, offsets: np.ndarray, stored: np.ndarray, lo: int, hi: int, coll: np.ndarray, below: np.ndarray
    ) -> None:
        k = offsets.shape[0]
        for i in range(lo, hi):
            wi = w[i]
            for j in range(k):
                x = mix64(wi + offsets[j])
                r = stored[j]
                if x < r:
                    below[j] += 1
                elif x == r:
                    coll[j] = True

    @njit(nogil=True, cache=False)
    def string_hash(buf: np.ndarray, starts: np.ndarray, stops: np.ndarray, lo: int, hi: int, out: np.ndarray) -> None:
        for i in range(lo, hi):
            s, e = starts[i], stops[i]
            h = np.uint64(e - s + 1) * np.uint64(0x9E3779B97F4A7C15)
            p = s
            while p < e:
                word = np.uint64(0)
                top = min(e, p + 8)
                for q in range(p, top):
                    word |= np.uint64(buf[q]) << np.uint64(8 * (q - p))
                h ^= word
                h = mix64(h)
                h ^= h >> np.uint64(33)
                p += 8
            out[i] = h

    @njit(nogil=True, cache=False)
    def load(words: np.ndarray, p: int) -> np.uint64:
        r = p & 7
        i = p >> 3
        if r == 0:
            return words[i]
        return (words[i] >> np.uint64(8 * r)) | (words[i + 1] << np.uint64(64 - 8 * r))

    @njit(nogil=True, cache=False)
    def find_nul(words: np.ndarray, p: int) -> int:
        v = load(words, p)
        z = (v - np.uint64(0x0101010101010101)) & ~v & np.uint64(0x8080808080808080)
        while z == 0:
            p += 8
            v = load(words, p)
            z = (v - np.uint64(0x0101010101010101)) & ~v & np.uint64(0x8080808080808080)
        b = 0
        while (z >> np.uint64(8 * b + 7)) & np.uint64(1) == 0:
            b += 1
        return p + b

    @njit(nogil=True, cache=False)
    def joined_hash(
        words: np.ndarray, size: int, lo: int, hi: int, out: np.ndarray, lengths: np.ndarray, count: np.ndarray
    ) -> None:
        # the strings that start in [lo, hi) of the NUL-joined bytes (size real bytes, then at least 16 zero bytes),
        # at most out.shape[0] of them; a zero byte is found eight at a time by the has-zero-byte test
        # (v - 0x01..) & ~v & 0x80..
        p = lo
        if p > 0 and (words[(p - 1) >> 3] >> np.uint64(8 * ((p - 1) & 7))) & np.uint64(0xFF) != 0:
            p = find_nul(words, p) + 1
        c = 0
        while p < hi and p <= size and c < out.shape[0]:
            e = find_nul(words, p)
            h = np.uint64(e - p + 1) * np.uint64(0x9E3779B97F4A7C15)
            q = p
            while q < e:
                v = load(words, q)
                if e - q < 8:
                    v &= (np.uint64(1) << np.uint64(8 * (e - q))) - np.uint64(1)
                h = mix64(h ^ v)
                h ^= h >> np.uint64(33)
                q += 8
            out[c] = h
            lengths[c] = e - p
            c += 1
            p = e + 1
        count[0] = c

    @njit(nogil=True, cache=False)
    def count_distinct(codes: np.ndarray, table: np.ndarray, bits: int) -> int:
        # linear probing over a table of 2^bits slots at most half full, slot = top bits of x * 0x9E3779B97F4A7C15;
        # 0 marks an empty slot, so the value 0 is counted apart; -1 when a probe passes MAX_PROBE slots (values
        # chosen to collide: the caller sorts instead, so no input costs more than n * MAX_PROBE probes)
        mask = np.uint64(table.shape[0] - 1)
        shift = np.uint64(64 - bits)
        zero = 0
        count = 0
        for i in range(codes.shape[0]):
            x = codes[i]
            if x == 0:
                zero = 1
                continue
            slot = (x * np.uint64(0x9E3779B97F4A7C15)) >> shift
            probe = 0
            while table[slot] != 0 and table[slot] != x:
                slot = (slot + np.uint64(1)) & mask
                probe += 1
                if probe > MAX_PROBE:
                    return -1
            if table[slot] == 0:
                table[slot] = x
                count += 1
        return count + zero

    return {
        "minima": minima,
        "minner": minner,
        "minima32": minima32,
        "minner32": minner32,
        "string_hash": string_hash,
        "joined_hash": joined_hash,
        "count_distinct": count_distinct,
    }


def kernel(name: str) -> Callable[..., Any]:
    """The compiled loop ``name`` (all of them compile on the first call)."""
    return _kernels()[name]


def workers() -> int:
    """Threads one call may use: the cores this process may run on, less the share of them the rest of the machine
    keeps busy, ``cores - (load - 1) cores / cpus`` rounded (``load``: the 1-minute load average over the machine's
    ``cpus``, this process counting one), at least one. A thread that has to wait for a busy core makes the whole
    call wait: on the 2-core development machine at load 5, 10^5 strings at K = 128 ran at a median 2.07x rensa on
    one thread against 1.86x split over two (50 interleaved pairs). The split never changes a result."""
    cores = max(1, len(os.sched_getaffinity(0)))
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this system: every core
        load = 0.0
    busy = (load - 1) * cores / (os.cpu_count() or cores)
    return max(1, min(cores, round(cores - busy)))


@cache
def _helpers(pid: int) -> ThreadPoolExecutor:
    """The helper threads of :func:`run_split` in process ``pid``, started on first use and kept (instead of new
    threads per call); keyed by the process so that a forked child, which has none of its parent's threads, starts
    its own."""
    return ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="minhash")


def run_split(kernel: str, n: int, work: int, make_out: Callable[[], tuple[np.ndarray, ...]], *args: Any) -> list:
    """Run ``kernel(*args, lo, hi, *outs)`` over ``[0, n)`` in one chunk per worker thread (the first chunk on the
    calling thread, the others on the helper threads); returns each chunk's output tuple (``make_out`` allocates one
    per chunk; the caller combines them)."""
    fn = _kernels()[kernel]
    parts = workers() if work >= SPLIT_MIN_WORK and n >= 2 else 1
    cuts = [n * i // parts for i in range(parts + 1)]
    outs = [make_out() for _ in range(parts)]
    helpers = [_helpers(os.getpid()).submit(fn, *args, cuts[c], cuts[c + 1], *outs[c]) for c in range(1, parts)]
    fn(*args, 0, cuts[1], *outs[0])
    for done in helpers:
        done.result()
    return outs
