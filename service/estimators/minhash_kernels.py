"""Compiled loops of MinHash hashing: the fused hash-and-minimum, the Minner counts and the version-2 string hash.

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

    return {"minima": minima, "minner": minner, "string_hash": string_hash}


def workers() -> int:
    """Threads one call may use: the cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)))


def run_split(kernel: str, n: int, work: int, make_out: Callable[[], tuple[np.ndarray, ...]], *args: Any) -> list:
    """Run ``kernel(*args, lo, hi, *outs)`` over ``[0, n)`` in one chunk per worker thread; returns each chunk's
    output tuple (``make_out`` allocates one per chunk; the caller combines them)."""
    fn = _kernels()[kernel]
    parts = workers() if work >= SPLIT_MIN_WORK and n >= 2 else 1
    cuts = [n * i // parts for i in range(parts + 1)]
    outs = [make_out() for _ in range(parts)]
    if parts == 1:
        fn(*args, 0, n, *outs[0])
        return outs
    with ThreadPoolExecutor(parts) as pool:
        list(pool.map(lambda c: fn(*args, cuts[c], cuts[c + 1], *outs[c]), range(parts)))
    return outs
