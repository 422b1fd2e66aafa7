"""Benchmark of the MinHash family against rensa and datasketch (bench-only dependencies) and against J(1-J)/K.

Run: ``.venv/bin/python bench/minhash.py`` (about 4-5 minutes on a quiet machine; ``--throughput`` for table 1
only, ``--sizes 100000`` for one item count). Prints the CPU model and its SIMD flags first, then calls the core
functions directly (no HTTP caps):
1. items -> K hash values from a Python list of distinct strings (10^4, 10^5, 10^6; K = 128, 256): the
   ``minhash.sketch`` estimator with its params validation (default hash_version 3; up to 10^5, the per-request
   cap) and our core (item codes + distinct count + minima; versions 1 and 2 up to 10^5), each allowed every core
   (split over the threads ``minhash_kernels.workers`` gives, which counts out the busy share of the cores) and on
   one core (the process pinned to it), vs rensa's ``CMinHash`` (Rust, the same C-MinHash scheme with
   affine permutations, one thread), timed right before ours in every repetition (pinned to the same core for the
   one-thread rows); a row shows the median over 15/11/5 repetitions of the per-repetition ratio, its range and
   the median times; ``datasketch.MinHash.update_batch`` (which needs bytes: the encoding is timed) in the first
   three repetitions;
2. all-pairs Jaccard over 10,000 sketches (K = 128) vs datasketch's pairwise ``MinHash.jaccard`` on 10,000
   sampled pairs (best of 3), extrapolated to all N(N-1)/2 pairs; corpora: low similarity, near-duplicate clusters;
3. empirical MSE over 200 seeds against J(1-J)/K and against the exact C-MinHash / approximate Minner values.
Prints a markdown table (wall-clock times on the machine it runs on).
"""

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
from datasketch import MinHash
from rensa import CMinHash

from service.estimators.minhash import SketchParams, SketchResult, sketch_fn
from service.estimators.minhash_kernels import workers
from service.estimators.minhash_minner import MinnerObservation, minner
from service.estimators.minhash_sketch import (
    Hasher,
    count_distinct,
    hash_strings,
    hash_strings_v2,
    pairwise_collisions,
)
from service.estimators.minhash_variance import cminhash_ratio, minner_approx, minner_moments
from service.registry import no_progress

Row = tuple[str, str, str, str, str]


REPEATS = {10_000: 15, 100_000: 11, 1_000_000: 5}
"""Repetitions per item count (the rows show medians over them)."""

SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "bmi2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni")


def cpu_line() -> str:
    """CPU model, usable cores and the SIMD flags of /proc/cpuinfo that matter for the compiled loops."""
    model, flags = "unknown", set()
    with open("/proc/cpuinfo") as info:
        for line in info:
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    simd = " ".join(f for f in SIMD_FLAGS if f in flags) or "none of " + " ".join(SIMD_FLAGS)
    return f"CPU: {model}; {len(os.sched_getaffinity(0))} usable cores; SIMD: {simd}"


def timed(fn: Callable[[], object]) -> float:
    """Wall time of one run of ``fn``."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Minimum wall time of ``repeat`` runs."""
    return min(timed(fn) for _ in range(repeat))


def ours_sketch(items: list[str], k: int, version: int) -> tuple[np.ndarray, int]:
    """The core: item codes, the distinct count and the K minima (C-MinHash sigma-pi)."""
    codes = hash_strings(items) if version == 1 else hash_strings_v2(items)
    return Hasher("cminhash_sigma_pi", k, 0, None, version).minima([codes])[0], count_distinct(codes)


def ours_estimator(items: list[str], k: int) -> SketchResult:
    """The ``minhash.sketch`` estimator as a request runs it: params validation, then the function (default
    hash_version 3)."""
    return sketch_fn(SketchParams.model_validate({"items": items, "num_perm": k}), no_progress)


def on_one_core(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` run with the process pinned to its first usable core (so the compiled loops start no second thread)."""
    cores = os.sched_getaffinity(0)

    def pinned() -> object:
        os.sched_setaffinity(0, {min(cores)})
        try:
            return fn()
        finally:
            os.sched_setaffinity(0, cores)

    return pinned


def datasketch_sketch(items: list[str], k: int) -> np.ndarray:
    m = MinHash(num_perm=k)
    m.update_batch([s.encode() for s in items])
    return m.hashvalues


def rensa_sketch(items: list[str], k: int) -> list[int]:
    m = CMinHash(num_perm=k, seed=0)
    m.update(items)
    return m.digest()


def contenders(sub: list[str], k: int, cores: int) -> list[tuple[str, str, Callable[[], object], str | None]]:
    """``(name, label, run, anchor)`` in the order of one repetition; each of ours runs right after its anchor
    (rensa, single-threaded: unpinned for the rows on every core, pinned to the same core for the one-thread rows).
    """
    n = len(sub)
    rows: list[tuple[str, str, Callable[[], object], str | None]] = [
        ("rensa", "rensa CMinHash", lambda: rensa_sketch(sub, k), None)
    ]
    if n <= 100_000:
        label = f"minhash.sketch estimator (validation + function), v3, {cores} cores"
        rows.append(("estimator", label, lambda: ours_estimator(sub, k), "rensa"))
    rows.append(("v3", f"core, hash_version 3, {cores} cores", lambda: ours_sketch(sub, k, 3), "rensa"))
    if n <= 100_000:
        rows += [
            ("v2", f"core, hash_version 2, {cores} cores", lambda: ours_sketch(sub, k, 2), "rensa"),
            ("v1", f"core, hash_version 1, {cores} cores", lambda: ours_sketch(sub, k, 1), "rensa"),
        ]
    rows.append(("rensa1", "rensa CMinHash, same core", on_one_core(lambda: rensa_sketch(sub, k)), None))
    if n <= 100_000:
        label = "minhash.sketch estimator (validation + function), v3, 1 core"
        rows.append(("estimator1", label, on_one_core(lambda: ours_estimator(sub, k)), "rensa1"))
    rows.append(("v3_1", "core, hash_version 3, 1 core", on_one_core(lambda: ours_sketch(sub, k, 3)), "rensa1"))
    return rows


def bench_throughput(sizes: tuple[int, ...]) -> list[Row]:
    """Every contender runs once per repetition, each of ours right after its rensa anchor, so machine load hits
    them alike; a row shows the median over the repetitions of the per-repetition ratio (anchor time / our time),
    its range, and the median times. datasketch runs in the first three repetitions only."""
    rows = []
    items = [f"token-{i:07d}-{(i * 2654435761) % 1000003:07d}" for i in range(max(sizes))]
    for version in (1, 2, 3):
        ours_sketch(items[:100], 8, version)  # compile the kernels before timing
    ours_estimator(items[:100], 8)
    cores = len(os.sched_getaffinity(0))
    for n, repeat in ((n, REPEATS[n]) for n in sizes):
        for k in (128, 256):
            sub = items[:n]
            runs = contenders(sub, k, cores)
            times: dict[str, list[float]] = {name: [] for name, *_ in runs}
            ds: list[float] = []
            for rep in range(repeat):
                for name, _, run, _ in runs:
                    times[name].append(timed(run))
                if rep < 3 and (n <= 100_000 or k == 128):
                    ds.append(timed(lambda s=sub, k=k: datasketch_sketch(s, k)))
            for name, label, _, anchor in runs:
                if anchor is None:
                    continue
                ratios = np.array(times[anchor]) / np.array(times[name])
                ours, theirs = float(np.median(times[name])), float(np.median(times[anchor]))
                vs_ds = f"datasketch {np.median(ds) / ours:.1f}x" if ds else "datasketch not run"
                anchor_label = next(lab for nm, lab, *_ in runs if nm == anchor)
                rows.append(
                    (
                        f"sketch {n:,} strings, K={k}, {label}",
                        f"{n / ours / 1e6:.2f} M items/s ({ours * 1e3:.1f} ms)",
                        f"{anchor_label} {n / theirs / 1e6:.2f} M items/s ({theirs * 1e3:.1f} ms)",
                        f"{np.median(ratios):.2f}x rensa ({ratios.min():.2f}-{ratios.max():.2f} over {repeat}), "
                        + vs_ds,
                        ">= 1x rensa",
                    )
                )
    return rows


def corpus(kind: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Token-code sets: 'low' = 100 tokens from a 10^6 vocabulary; 'clusters' = 100 clusters of near-duplicates
    (each member keeps 90% of its cluster's 200 tokens)."""
    if kind == "low":
        return [rng.choice(1_000_000, 100, replace=False).astype(np.uint64) for _ in range(n)]
    bases = [rng.choice(1_000_000, 200, replace=False) for _ in range(100)]
    out = []
    for i in range(n):
        base = bases[i % 100]
        keep = base[rng.random(200) < 0.9]
        out.append(np.concatenate([keep, rng.integers(1_000_000, 2_000_000, 200 - len(keep))]).astype(np.uint64))
    return out


def bench_all_pairs() -> list[Row]:
    rows = []
    rng = np.random.default_rng(0)
    n, k, sample = 10_000, 128, 10_000
    for kind in ("low", "clusters"):
        sketches = Hasher("cminhash_sigma_pi", k, 0, None).minima(corpus(kind, n, rng))
        t_us = best_of(lambda s=sketches: pairwise_collisions(s), 2)
        # datasketch's default scheme (affine32) stores uint32 values: time its pairwise jaccard on its own format
        low32 = (sketches & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        objs = [MinHash(num_perm=k, hashvalues=low32[i], scheme=MinHash(num_perm=1).scheme) for i in range(n)]
        pairs = [(objs[i], objs[j]) for i, j in rng.integers(0, n, (sample, 2))]
        t_ds = best_of(lambda p=pairs: [a.jaccard(b) for a, b in p], 3) / sample * n * (n - 1) / 2
        counts = pairwise_collisions(sketches[:300])
        brute = np.triu((sketches[:300, None, :] == sketches[None, :300, :]).sum(axis=2), 1)
        assert np.array_equal(counts, brute)
        mean_j = counts[np.triu_indices(300, 1)].mean() / k
        rows.append(
            (
                f"all-pairs Jaccard, 10,000 sketches, K=128, corpus '{kind}' (mean J {mean_j:.3f})",
                f"{t_us:.2f} s",
                f"{t_ds:.0f} s (extrapolated from {sample:,} pairs)",
                f"{t_ds / t_us:.0f}x",
                ">= 50x",
            )
        )
    return rows


def bench_mse(seeds: int = 200) -> list[Row]:
    """Jaccard estimators on a = 50, f = 100 (J = 0.5), K = 128; Minner on n_x = n_y = 150, v = 50 (J = 0.2)."""
    k, rows = 128, []
    pairs64 = 25
    sets64 = []
    for p in range(pairs64):
        a = [f"p{p}-{i}" for i in range(75)]
        b = [f"p{p}-{i}" for i in range(25, 100)]
        sets64 += [hash_strings_v2(a), hash_strings_v2(b)]
    pairs_d, d = 10, 1009
    sets_d = []
    for p in range(pairs_d):
        base = np.arange(p * 100, p * 100 + 100, dtype=np.uint64)
        sets_d += [base[:75], base[25:]]
    j = 0.5
    classical = j * (1 - j) / k
    for scheme, universe, sets, n_pairs in (
        ("classic", None, sets64, pairs64),
        ("cminhash_sigma_pi", None, sets64, pairs64),
        ("cminhash_pi_pi", None, sets64, pairs64),
        ("classic", d, sets_d, pairs_d),
        ("cminhash_sigma_pi", d, sets_d, pairs_d),
    ):
        est = []
        for seed in range(seeds):
            s = Hasher(scheme, k, seed, universe).minima(sets)
            est.append((s[0::2] == s[1::2]).mean(axis=1))
        mse = float(np.mean((np.concatenate(est) - j) ** 2))
        ref = classical * (cminhash_ratio(100, d, k) if universe and scheme != "classic" else 1.0)
        label = "J(1-J)/K" if ref == classical else "exact C-MinHash var"
        rows.append(
            (
                f"MSE {scheme}, universe={universe or '2^64'}, J=0.5, K=128 ({seeds} seeds x {n_pairs} pairs)",
                f"{mse:.4e}",
                f"{label} {ref:.4e}",
                f"{mse / classical:.3f} of J(1-J)/K",
                "within 10% (C-MinHash dense: below)",
            )
        )
    queries = []
    for p in range(pairs_d):
        ys = [f"{p}y{i}" for i in range(150)]
        xs = ys[:50] + [f"{p}x{i}" for i in range(100)]
        queries.append((hash_strings_v2(ys), hash_strings_v2(xs)))
    for scheme in ("classic", "cminhash_sigma_pi"):
        tj = []
        for seed in range(seeds):
            h = Hasher(scheme, k, seed, None)
            stored = h.minima([cy for cy, _ in queries])
            for r, (_, cx) in zip(stored, queries, strict=True):
                coll, m = h.minner_counts(cx, r)
                tv = minner(MinnerObservation(coll, m, r, 150, 150, 2**32))  # hash_version 3: u = 2^32
                tj.append(tv / (300 - tv))
        mse = float(np.mean((np.array(tj) - 0.2) ** 2))
        approx = minner_approx(150, 150, 50, minner_moments(150, 150, 50, 2.0**64, k)).mse_jaccard
        rows.append(
            (
                f"MSE Minner T_J, {scheme}, n_x=n_y=150, v=50 (J=0.2), K=128 ({seeds} seeds x {pairs_d} pairs)",
                f"{mse:.4e}",
                f"delta+Clark {approx:.4e}",
                f"{mse / (0.2 * 0.8 / k):.3f} of J(1-J)/K",
                "below J(1-J)/K",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--throughput", action="store_true", help="only table 1 (sketch throughput against rensa)")
    parser.add_argument(
        "--sizes", type=int, nargs="+", choices=sorted(REPEATS), default=sorted(REPEATS), help="item counts of table 1"
    )
    args = parser.parse_args()
    print(cpu_line())
    print(f"numpy {np.__version__}, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"a split call uses {workers()} threads at the start (the usable cores less the busy share)")
    rows = bench_throughput(tuple(args.sizes))
    if not args.throughput:
        rows += bench_all_pairs() + bench_mse()
    print(f"load average {os.getloadavg()[0]:.1f} at the end, {workers()} threads per split call")
    print("| measurement | ours | anchor | ratio | target |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
