"""C-MinHash and Minner estimators (spec (a) "CMinHash promises a new direction ... Minner estimator").

Estimators: ``minhash.sketch``, ``minhash.jaccard``, ``minhash.minner``, ``minhash.variance``,
``minhash.simulate``. Hashing (hash_version 1, 2 and 3) is defined in :mod:`service.estimators.minhash_sketch`, the
variance formulas in :mod:`.minhash_variance`, the Minner estimators in :mod:`.minhash_minner` and the Monte Carlo in
:mod:`.minhash_simulate`. User documentation: docs/minhash.md.
"""

from collections.abc import Sequence
from itertools import repeat
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    Field,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from service.errors import Degenerate, InvalidInput
from service.estimators.minhash_minner import ESTIMATORS, MinnerObservation, mle_cost
from service.estimators.minhash_simulate import simulate
from service.estimators.minhash_sketch import (
    DEFAULT_HASH_VERSION,
    MAX_ITEM_BYTES,
    Hasher,
    count_distinct,
    distinct,
    encode_strings,
    hash_bytes,
    hash_joined,
    int_codes,
    lemire,
    sentinel,
    utf8_layout,
)
from service.estimators.minhash_variance import (
    circulant_warning,
    cminhash_ratio,
    cminhash_ratio_approx,
    minner_approx,
    minner_moments,
)
from service.registry import EstimatorSpec, Progress, register
from service.types import MAX_JSON_ARRAY, ResultModel, Seed, StrictModel

PAPER = (
    "CMinHash promises a new direction for designing MinHash algorithms with reduced variance and storage "
    "space via circulant permutations."
)
CITATION = (
    "NeurIPS 2026 (C-MinHash variance for the Minner estimator); C-MinHash: Li & Li, ICML 2022; "
    "Minner: Ahle, arXiv 2020"
)
MAX_UNIVERSE = 2**24
U64 = 2**64
U32 = 2**32
PERM_WEIGHT = 40
"""Cost of drawing one explicit permutation entry, in hash evaluations (measured: ~60 ns vs ~1.6 ns)."""
MLE_WEIGHT = 12
"""Cost of one (hash, v) log-likelihood increment of the MLE scan, in hash evaluations (~15-25 ns)."""

SchemeName = Literal["classic", "cminhash_sigma_pi", "cminhash_pi_pi"]
Item = Annotated[str, Field(max_length=MAX_ITEM_BYTES)] | Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
ITEMS_DOC = (
    "Set elements: strings (UTF-8, at most 1024 bytes each) or integers (signed 64-bit); duplicates are removed "
    "after hashing. At most 100,000 per request: send larger sets in chunks through `sketch`."
)


class HashedStrings(list):
    """A validated list of ``str`` items carrying their version-2/3 universe elements (``codes``), computed while the
    list was validated: every item is valid Unicode of at most ``MAX_ITEM_BYTES`` UTF-8 bytes."""

    __slots__ = ("codes",)

    def __init__(self, strings: list[str], codes: np.ndarray) -> None:
        super().__init__(strings)
        self.codes = codes


def _strings_first(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """``Items`` validation of a list of strings (the common case) by the join and hash of all its strings, which
    the sketch needs anyway: the join rejects a non-``str`` item and the hash gives each string's UTF-8 length, so
    a list whose strings all encode to at most ``MAX_ITEM_BYTES`` bytes (hence at most as many characters) is what
    the ``str | int`` union schema would return, at no cost beyond the hash; every other list (an item of another
    type, a lone surrogate, a long string) goes through the full schema, so every error stays that of the full
    schema."""
    if type(value) is list and 0 < len(value) <= MAX_JSON_ARRAY and type(value[0]) is str:
        try:
            codes, lengths = hash_joined(value)
        except (TypeError, UnicodeEncodeError):
            return handler(value)
        if int(lengths.max()) <= MAX_ITEM_BYTES:
            return HashedStrings(value, codes)
    return handler(value)


Items = Annotated[list[Item], Field(max_length=MAX_JSON_ARRAY, description=ITEMS_DOC), WrapValidator(_strings_first)]
NumPerm = Annotated[int, Field(ge=1, le=4096, description="K, the number of hash values (1..4096).")]
UNIVERSE_DOC = (
    "null (default): the hashed 64-bit universe with keyed bijective mixers. An integer D in [2, 2^24]: explicit "
    "random permutations of [0, D); integer items must lie in [0, D) and are used as positions, strings are "
    "hashed to [0, D) by Lemire multiply-shift (distinct strings may then coincide)."
)
Universe = Annotated[int | None, Field(ge=2, le=MAX_UNIVERSE, description=UNIVERSE_DOC)]
HASH_VERSION_DOC = (
    "Version of the item hashing: 3 (default; version 2's item hash, then 32-bit hash values: with universe=null "
    "every value is below 2^32), 2 (a compiled word hash of the UTF-8 bytes, 64-bit values) or 1 (xxh3_64). "
    "Sketches of different versions never mix. All versions are kept bit for bit."
)
HashVersion = Annotated[Literal[1, 2, 3], Field(description=HASH_VERSION_DOC)]
SCHEME_DOC = (
    "classic: K independent hash functions. cminhash_sigma_pi: one initial permutation sigma and one "
    "permutation pi shifted circulantly K times (C-MinHash-(sigma,pi)). cminhash_pi_pi: sigma = pi."
)
HashValue = Annotated[str, Field(pattern=r"^(0|[1-9][0-9]{0,19})$", max_length=20)]
N_DISTINCT_DOC = (
    "Number of distinct items (distinct universe elements) hashed into the sketch. When a sketch is extended "
    "with a chunk, the chunk's distinct count is added: exact when the chunks are disjoint (e.g. a set "
    "deduplicated by the client before chunking), otherwise an upper bound (a sketch cannot know the overlap)."
)
WARNING_DOC = (
    "Set when D is not prime and K-1 reaches its smallest prime factor (circulant lags then share factors "
    "with D and the C-MinHash variance formulas are only approximate); null otherwise. Ignored on input."
)


class Sketch(StrictModel):
    """A MinHash sketch as returned by ``minhash.sketch`` (reusable as an input field)."""

    hashvalues: list[HashValue] = Field(
        min_length=1,
        max_length=4096,
        description="The K minima as decimal strings of unsigned 64-bit integers; an empty set holds the "
        "sentinel 18446744073709551615 (64-bit universe) or D (universe D) in every slot.",
    )
    num_perm: NumPerm
    scheme: SchemeName = Field(description=SCHEME_DOC)
    seed: Seed
    universe: Universe
    hash_version: HashVersion
    n_distinct: int = Field(ge=0, le=2**63 - 1, description=N_DISTINCT_DOC)
    warning: str | None = Field(default=None, max_length=1000, description=WARNING_DOC)

    @model_validator(mode="after")
    def _check_values(self) -> "Sketch":
        if len(self.hashvalues) != self.num_perm:
            raise ValueError(f"hashvalues has {len(self.hashvalues)} entries, num_perm is {self.num_perm}")
        values = [int(h) for h in self.hashvalues]
        limit = U64 - 1 if self.universe is None else self.universe
        if max(values) > limit:
            raise ValueError(f"hash values must not exceed {limit} for universe={self.universe}")
        if self.hash_version == 3 and self.universe is None and max(values) >= U32 and min(values) < U64 - 1:
            raise ValueError(f"hash_version 3 values are below {U32} (or all {U64 - 1}: the empty set)")
        return self

    def values(self) -> np.ndarray:
        """The hash values as a uint64 array."""
        return np.array([int(h) for h in self.hashvalues], dtype=np.uint64)


class SketchParams(StrictModel):
    """Parameters of ``minhash.sketch``."""

    items: Items
    scheme: SchemeName = Field(default="cminhash_sigma_pi", description=SCHEME_DOC + " Default cminhash_sigma_pi.")
    num_perm: NumPerm = 128
    seed: Seed = 0
    universe: Universe = None
    hash_version: HashVersion = DEFAULT_HASH_VERSION
    sketch: Sketch | None = Field(
        default=None,
        description="An existing sketch to extend with `items` (elementwise minimum); its scheme, num_perm, "
        "seed, universe and hash_version must equal this request's.",
    )


class SketchResult(ResultModel):
    """A sketch; pass it unchanged as ``sketch``, ``a``/``b`` or ``sketch`` of the other MinHash estimators."""

    hashvalues: list[str] = Field(description="The K minima as decimal strings (uint64).")
    num_perm: int = Field(description="K.")
    scheme: str = Field(description=SCHEME_DOC)
    seed: int = Field(description="Seed the hash functions were derived from.")
    universe: int | None = Field(description=UNIVERSE_DOC)
    hash_version: int = Field(description=HASH_VERSION_DOC)
    n_distinct: int = Field(description=N_DISTINCT_DOC)
    warning: str | None = Field(description=WARNING_DOC)


class JaccardParams(StrictModel):
    """Parameters of ``minhash.jaccard``: either sketches ``a`` and ``b`` or item lists ``items_a``, ``items_b``."""

    a: Sketch | None = Field(default=None, description="Sketch of the first set (sketch form).")
    b: Sketch | None = Field(default=None, description="Sketch of the second set (sketch form).")
    items_a: Items | None = None
    items_b: Items | None = None
    scheme: SchemeName | None = Field(
        default=None, description="Items form only (default cminhash_sigma_pi). " + SCHEME_DOC
    )
    num_perm: int | None = Field(default=None, ge=1, le=4096, description="Items form only: K (default 128).")
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1, description="Items form only: seed (default 0).")
    universe: Universe = None
    hash_version: Literal[1, 2, 3] | None = Field(
        default=None, description="Items form only: hash version (default 3). " + HASH_VERSION_DOC
    )


class JaccardResult(ResultModel):
    """Jaccard estimate from two sketches."""

    jaccard: float = Field(description="Estimated Jaccard similarity |A ∩ B| / |A ∪ B| = collisions / K.")
    collisions: int = Field(description="Number of hash positions where the two sketches agree.")
    num_perm: int = Field(description="K.")
    std_error: float = Field(
        description="sqrt(J(1-J)/K) evaluated at the estimate: the classical MinHash standard error (an upper "
        "bound for C-MinHash, whose variance is smaller on dense data; see minhash.variance)."
    )


class MinnerParams(StrictModel):
    """Parameters of ``minhash.minner``."""

    items: Items
    sketch: Sketch = Field(description="Sketch of the stored set Y (from minhash.sketch).")
    stored_size: int | None = Field(default=None, ge=1, le=2**53, description="|Y|; default the sketch's n_distinct.")
    estimator: Literal["minner", "minner_newton", "mle"] = Field(
        default="minner",
        description="minner: min{C n_x/(C+M), C n_y/K}. minner_newton: root of the MLE score equation by "
        "safeguarded Newton iteration from the Minner estimate. mle: exact integer maximum-likelihood estimate "
        "(cost K x (min(n_x, n_y)+1)).",
    )


class MinnerResult(ResultModel):
    """Minner estimate of the intersection and Jaccard similarity of the query and the stored set."""

    collisions: int = Field(description="C = number of hashes whose stored minimum is the hash of a query item.")
    minner_count: int = Field(description="M = number of (hash, query item) pairs hashing below the stored minimum.")
    intersection: float = Field(description="Estimated |X ∩ Y|, clamped to [0, min(n_x, n_y)].")
    jaccard: float = Field(description="intersection / (n_x + n_y - intersection).")
    query_size: int = Field(description="n_x: distinct query items (distinct universe elements).")
    stored_size: int = Field(description="n_y used.")


class VarianceParams(StrictModel):
    """Parameters of ``minhash.variance``."""

    intersection: int = Field(ge=0, le=10**12, description="a = |A ∩ B| (= v = |X ∩ Y| for the Minner part).")
    union: int = Field(ge=2, le=10**12, description="f = |A ∪ B| (at least 2).")
    universe: int | None = Field(
        default=None, ge=2, le=2**62, description="D; null = the hashed 64-bit universe (D = 2^64)."
    )
    num_perm: NumPerm
    query_size: int | None = Field(default=None, ge=1, le=10**12, description="n_x (Minner part; with stored_size).")
    stored_size: int | None = Field(default=None, ge=1, le=10**12, description="n_y (Minner part; with query_size).")


class VarianceResult(ResultModel):
    """Variance of the classical and C-MinHash Jaccard estimators and the approximate MSE of Minner."""

    jaccard: float = Field(description="J = intersection / union.")
    var_classical: float = Field(description="J(1-J)/K: K independent permutations.")
    var_cminhash_exact: float = Field(
        description="Var of C-MinHash-(sigma,pi) = J(1-J)/K [1 - (K-1)/(f-1) E_g[(f-g)/(f+g)]], g = number of "
        "runs of the union on the circle Z_D (exact for every lag coprime to D; derived here)."
    )
    var_cminhash_approx: float = Field(description="J(1-J)/K [1 - (K-1)/(2D - f - 1)].")
    ratio: float = Field(description="var_cminhash_exact / var_classical (independent of J).")
    minner_mean_intersection_approx: float | None = Field(
        description="Approximate E[T_v] of Minner under C-MinHash-(sigma,pi) hashing (delta method + Clark)."
    )
    minner_mse_intersection_approx: float | None = Field(description="Approximate MSE of T_v (intersection).")
    minner_mse_approx: float | None = Field(
        description="Approximate MSE of the Minner Jaccard estimate T_J under C-MinHash-(sigma,pi) hashing "
        "(delta method + Clark's minimum of a bivariate normal; universe=null gives independent hashing)."
    )
    reconstructed: list[str] = Field(description="Result fields resting on a RECONSTRUCTED definition.")
    warning: str | None = Field(description=WARNING_DOC)


class SimulateParams(StrictModel):
    """Parameters of ``minhash.simulate``."""

    intersection: int = Field(ge=0, le=1 << 22, description="a = |A ∩ B| (v for Minner).")
    union: int | None = Field(
        default=None, ge=1, le=1 << 22, description="f = |A ∪ B|; default query_size + stored_size - intersection."
    )
    universe: int = Field(ge=2, le=2**20, description="D: size of the permuted universe [0, D).")
    num_perm: int = Field(ge=1, le=1024, description="K (1..1024; K x union at most 2^22).")
    query_size: int | None = Field(default=None, ge=1, le=1 << 22, description="n_x: adds the Minner rows.")
    stored_size: int | None = Field(default=None, ge=1, le=1 << 22, description="n_y: adds the Minner rows.")
    trials: int = Field(default=1000, ge=2, le=20_000, description="Monte-Carlo trials (default 1000).")
    seed: Seed = 0


class SimulatedEstimator(ResultModel):
    """Empirical summary of one estimator."""

    estimator: str = Field(description="classic, cminhash_sigma_pi or minner.")
    hashing: str = Field(description="independent (K permutations) or circulant (C-MinHash-(sigma,pi)).")
    target: str = Field(description="jaccard or intersection.")
    true_value: float = Field(description="The estimated quantity's true value.")
    mean: float = Field(description="Mean of the estimates.")
    variance: float = Field(description="Sample variance of the estimates (ddof = 1).")
    mse: float = Field(description="Mean squared error against true_value.")


class SimulateResult(ResultModel):
    """Monte-Carlo comparison of the estimators."""

    jaccard: float = Field(description="True J = intersection / union.")
    var_classical: float = Field(description="J(1-J)/K for reference.")
    trials: int = Field(description="Number of trials.")
    estimators: list[SimulatedEstimator] = Field(description="One row per estimator, hashing and target.")


def _string_codes(strings: Sequence[str], index: np.ndarray | None, version: int, loc: str) -> np.ndarray:
    """64-bit universe elements of ``str`` items (``index``: their positions for the error's ``loc``, None when
    they are all the items). Raises TypeError when an item is not a ``str`` (the join checks every type)."""
    if isinstance(strings, HashedStrings):
        return strings.codes if version != 1 else hash_bytes(encode_strings(strings))
    try:
        if version == 1:
            _, starts, stops = utf8_layout(strings)
            codes, lengths = None, stops - starts
        else:
            codes, lengths = hash_joined(strings)
    except UnicodeEncodeError:
        bad = next(i for i, s in enumerate(strings) if not s.isascii() and _unencodable(s))
        raise InvalidInput("string is not valid Unicode (lone surrogate)", loc=(loc, _position(index, bad))) from None
    too_long = np.flatnonzero(lengths > MAX_ITEM_BYTES)
    if len(too_long):
        where = _position(index, int(too_long[0]))
        raise InvalidInput(f"string item exceeds {MAX_ITEM_BYTES} bytes in UTF-8", loc=(loc, where))
    return hash_bytes(encode_strings(strings)) if codes is None else codes


def _position(index: np.ndarray | None, i: int) -> int:
    return i if index is None else int(index[i])


def _item_codes(items: Sequence[str | int], universe: int | None, loc: str, version: int) -> np.ndarray:
    """Universe elements of the items under hash ``version``; InvalidInput names the offending item."""
    try:
        str_codes = _string_codes(items, None, version, loc)  # type: ignore[arg-type]
        int_idx = np.empty(0, dtype=np.int64)
    except TypeError:
        is_str = np.fromiter(map(isinstance, items, repeat(str)), dtype=bool, count=len(items))
        str_idx, int_idx = np.flatnonzero(is_str), np.flatnonzero(~is_str)
        str_codes = _string_codes([items[i] for i in str_idx], str_idx, version, loc)  # type: ignore[misc]
    ints = np.array([items[i] for i in int_idx], dtype=np.int64)
    if universe is None:
        return np.concatenate([str_codes, int_codes(ints)])
    outside = np.flatnonzero((ints < 0) | (ints >= universe))
    if len(outside):
        raise InvalidInput(f"integer item outside [0, universe={universe})", loc=(loc, int(int_idx[outside[0]])))
    return np.concatenate([lemire(str_codes, universe), ints.astype(np.uint64)])


def _unencodable(s: str) -> bool:
    try:
        s.encode()
    except UnicodeEncodeError:
        return True
    return False


def _check_compatible(ref: dict[str, object], sketch: Sketch, loc: str) -> None:
    """InvalidInput naming the first field where ``sketch`` differs from ``ref``."""
    for name, want in ref.items():
        got = getattr(sketch, name)
        if got != want:
            raise InvalidInput(f"{loc}.{name} is {got!r}, expected {want!r}", loc=(loc, name))


def _check_scheme(scheme: str, num_perm: int, universe: int | None) -> None:
    if universe is not None and scheme != "classic" and num_perm > universe:
        raise InvalidInput(
            f"circulant schemes need num_perm <= universe ({num_perm} > {universe}): shifts would repeat",
            loc=("num_perm",),
        )


def _sketch_result(
    values: np.ndarray, scheme: str, k: int, seed: int, universe: int | None, n: int, version: int
) -> SketchResult:
    return SketchResult(
        hashvalues=[str(int(x)) for x in values],
        num_perm=k,
        scheme=scheme,
        seed=seed,
        universe=universe,
        hash_version=version,
        n_distinct=n,
        warning=None if scheme == "classic" else circulant_warning(universe, k),
    )


def _perm_entries(scheme: str, k: int, universe: int | None) -> int:
    if universe is None:
        return 0
    return {"classic": k, "cminhash_sigma_pi": 2, "cminhash_pi_pi": 1}[scheme] * universe


def _hash_cost(n_items: int, scheme: str, k: int, universe: int | None) -> float:
    """Cost in hash evaluations: items x K (x2 for explicit permutations) + PERM_WEIGHT per permutation entry."""
    return float(n_items * k * (1 if universe is None else 2) + PERM_WEIGHT * _perm_entries(scheme, k, universe))


def sketch_fn(p: SketchParams, progress: Progress) -> SketchResult:
    """``minhash.sketch``: the K minima of the items, optionally merged into an existing sketch."""
    if p.sketch is not None:
        ref = {"scheme": p.scheme, "num_perm": p.num_perm, "seed": p.seed, "universe": p.universe}
        _check_compatible({**ref, "hash_version": p.hash_version}, p.sketch, "sketch")
    _check_scheme(p.scheme, p.num_perm, p.universe)
    codes = _item_codes(p.items, p.universe, "items", p.hash_version)
    (values,) = Hasher(p.scheme, p.num_perm, p.seed, p.universe, p.hash_version).minima([codes], progress)
    n = count_distinct(codes)
    if p.sketch is not None:
        values = np.minimum(values, p.sketch.values())
        n += p.sketch.n_distinct
    return _sketch_result(values, p.scheme, p.num_perm, p.seed, p.universe, n, p.hash_version)


def sketch_cost(p: SketchParams) -> float:
    return _hash_cost(len(p.items), p.scheme, p.num_perm, p.universe)


def _jaccard_sketches(p: JaccardParams, progress: Progress) -> tuple[np.ndarray, np.ndarray, int, int | None]:
    """The two sketches' values, K and universe, for either input form (validated)."""
    sketch_form = p.a is not None or p.b is not None
    items_form = p.items_a is not None or p.items_b is not None
    if sketch_form == items_form:
        raise InvalidInput("give exactly one of the forms: sketches (a, b) or item lists (items_a, items_b)")
    if sketch_form:
        for name in ("scheme", "num_perm", "seed", "universe", "hash_version"):
            if getattr(p, name) is not None:
                raise InvalidInput(f"{name} applies only to the items form", loc=(name,))
        if p.a is None or p.b is None:
            raise InvalidInput("both sketches are required", loc=("a" if p.a is None else "b",))
        ref = {n: getattr(p.a, n) for n in ("scheme", "num_perm", "seed", "universe", "hash_version")}
        _check_compatible(ref, p.b, "b")
        return p.a.values(), p.b.values(), p.a.num_perm, p.a.universe
    if p.items_a is None or p.items_b is None:
        raise InvalidInput("both item lists are required", loc=("items_a" if p.items_a is None else "items_b",))
    scheme = p.scheme or "cminhash_sigma_pi"
    k = p.num_perm or 128
    _check_scheme(scheme, k, p.universe)
    version = p.hash_version or DEFAULT_HASH_VERSION
    codes = [
        distinct(_item_codes(p.items_a, p.universe, "items_a", version)),
        distinct(_item_codes(p.items_b, p.universe, "items_b", version)),
    ]
    va, vb = Hasher(scheme, k, p.seed or 0, p.universe, version).minima(codes, progress)
    return va, vb, k, p.universe


def jaccard_fn(p: JaccardParams, progress: Progress) -> JaccardResult:
    """``minhash.jaccard``: fraction of agreeing hash positions (spec a.1 J_hat)."""
    va, vb, k, universe = _jaccard_sketches(p, progress)
    empty = sentinel(universe)
    if bool(np.all(va == empty)) and bool(np.all(vb == empty)):
        raise Degenerate("both sets are empty: the Jaccard similarity is undefined")
    collisions = int(np.count_nonzero((va == vb) & (va != empty)))
    j = collisions / k
    return JaccardResult(jaccard=j, collisions=collisions, num_perm=k, std_error=float(np.sqrt(j * (1 - j) / k)))


def jaccard_cost(p: JaccardParams) -> float:
    if p.items_a is None and p.items_b is None:
        return float(p.a.num_perm if p.a is not None else 1)
    n = len(p.items_a or []) + len(p.items_b or [])
    return _hash_cost(n, p.scheme or "cminhash_sigma_pi", p.num_perm or 128, p.universe)


def minner_fn(p: MinnerParams, progress: Progress) -> MinnerResult:
    """``minhash.minner``: C, M and the chosen intersection estimator (spec a.1 "Minner estimator")."""
    sk = p.sketch
    stored = sk.values()
    if bool(np.all(stored == sentinel(sk.universe))):
        raise InvalidInput("the stored sketch is empty", loc=("sketch",))
    n_y = p.stored_size if p.stored_size is not None else sk.n_distinct
    if n_y < 1:
        raise InvalidInput("stored_size is required: the sketch has n_distinct = 0", loc=("stored_size",))
    universe = (U32 if sk.hash_version == 3 else U64) if sk.universe is None else sk.universe
    if n_y > universe:
        raise InvalidInput(f"stored_size exceeds the universe {universe}", loc=("stored_size",))
    codes = distinct(_item_codes(p.items, sk.universe, "items", sk.hash_version))
    hasher = Hasher(sk.scheme, sk.num_perm, sk.seed, sk.universe, sk.hash_version)
    coll, minner = hasher.minner_counts(codes, stored, progress)
    obs = MinnerObservation(coll, minner, stored, len(codes), n_y, universe)
    v = min(max(ESTIMATORS[p.estimator](obs, progress), 0.0), float(min(obs.n_x, n_y)))
    return MinnerResult(
        collisions=obs.c,
        minner_count=obs.m,
        intersection=v,
        jaccard=v / (obs.n_x + n_y - v),
        query_size=obs.n_x,
        stored_size=n_y,
    )


def minner_cost(p: MinnerParams) -> float:
    sk = p.sketch
    cost = _hash_cost(len(p.items), sk.scheme, sk.num_perm, sk.universe)
    if p.estimator == "mle":
        n_y = p.stored_size if p.stored_size is not None else sk.n_distinct
        cost += MLE_WEIGHT * mle_cost(len(p.items), n_y, sk.num_perm)
    return cost


def variance_fn(p: VarianceParams, progress: Progress) -> VarianceResult:
    """``minhash.variance``: classical vs exact/approximate C-MinHash variance, Minner MSE (spec a.1)."""
    a, f, k = p.intersection, p.union, p.num_perm
    d = float(U64) if p.universe is None else p.universe
    if a > f:
        raise InvalidInput("intersection exceeds union", loc=("intersection",))
    if f > d:
        raise InvalidInput("union exceeds the universe", loc=("union",))
    if k > d:
        raise InvalidInput("num_perm exceeds the universe: circulant shifts would repeat", loc=("num_perm",))
    if (p.query_size is None) != (p.stored_size is None):
        raise InvalidInput("give both query_size and stored_size", loc=("query_size",))
    j = a / f
    var_classical = j * (1 - j) / k
    ratio = cminhash_ratio(f, d, k)
    reconstructed = ["var_cminhash_exact", "var_cminhash_approx", "ratio"]
    approx = None
    if p.query_size is not None and p.stored_size is not None:
        n_x, n_y = p.query_size, p.stored_size
        if a > min(n_x, n_y):
            raise InvalidInput("intersection exceeds query_size or stored_size", loc=("intersection",))
        if f != n_x + n_y - a:
            raise InvalidInput("union must equal query_size + stored_size - intersection", loc=("union",))
        approx = minner_approx(n_x, n_y, a, minner_moments(n_x, n_y, a, d, k, progress))
        reconstructed += ["minner_mean_intersection_approx", "minner_mse_intersection_approx", "minner_mse_approx"]
    return VarianceResult(
        jaccard=j,
        var_classical=var_classical,
        var_cminhash_exact=var_classical * ratio,
        var_cminhash_approx=var_classical * cminhash_ratio_approx(f, d, k),
        ratio=ratio,
        minner_mean_intersection_approx=None if approx is None else approx.mean_intersection,
        minner_mse_intersection_approx=None if approx is None else approx.mse_intersection,
        minner_mse_approx=None if approx is None else approx.mse_jaccard,
        reconstructed=reconstructed,
        warning=circulant_warning(p.universe, k),
    )


def variance_cost(p: VarianceParams) -> float:
    """Terms of the run-count sums: min(f, D-f) (+ min(n_y, D-n_y) for the Minner part)."""
    d = U64 if p.universe is None else p.universe
    cost = min(p.union, max(d - p.union, 0)) + 1
    if p.stored_size is not None:
        cost += min(p.stored_size, max(d - p.stored_size, 0))
    return float(cost)


def _sim_sizes(p: SimulateParams) -> tuple[int, tuple[int, int] | None]:
    """(union, (n_x, n_y) or None), validated."""
    sizes = None
    if (p.query_size is None) != (p.stored_size is None):
        raise InvalidInput("give both query_size and stored_size", loc=("query_size",))
    if p.query_size is not None and p.stored_size is not None:
        sizes = (p.query_size, p.stored_size)
        if p.intersection > min(sizes):
            raise InvalidInput("intersection exceeds query_size or stored_size", loc=("intersection",))
        f = p.query_size + p.stored_size - p.intersection
        if p.union is not None and p.union != f:
            raise InvalidInput("union must equal query_size + stored_size - intersection", loc=("union",))
        return f, sizes
    if p.union is None:
        raise InvalidInput("give union, or query_size and stored_size", loc=("union",))
    return p.union, sizes


def simulate_fn(p: SimulateParams, progress: Progress) -> SimulateResult:
    """``minhash.simulate``: Monte-Carlo mean, variance and MSE (spec a.3)."""
    f, sizes = _sim_sizes(p)
    if p.intersection > f:
        raise InvalidInput("intersection exceeds union", loc=("intersection",))
    if f > p.universe:
        raise InvalidInput("union exceeds the universe", loc=("union",))
    if p.num_perm > p.universe:
        raise InvalidInput("num_perm exceeds the universe: circulant shifts would repeat", loc=("num_perm",))
    if p.num_perm * f > 1 << 22:
        raise InvalidInput("num_perm x union must be at most 2^22", loc=("num_perm",))
    rows = simulate(p.intersection, f, p.universe, p.num_perm, p.trials, p.seed, sizes, progress)
    j = p.intersection / f
    return SimulateResult(
        jaccard=j,
        var_classical=j * (1 - j) / p.num_perm,
        trials=p.trials,
        estimators=[SimulatedEstimator(**vars(r)) for r in rows],
    )


def simulate_cost(p: SimulateParams) -> float:
    """Key draws (~15 ns each here): per trial 2 K f (x4 when pi is keyed on distinct positions, which sorts),
    the D keys of pi when drawn over [D], and ~1000 for the per-trial placement of sigma."""
    f = p.union if p.union is not None else (p.query_size or 0) + (p.stored_size or 0) - p.intersection
    kf = p.num_perm * max(f, 1)
    per = 2 * kf + (p.universe if p.universe <= 4 * kf else 6 * kf) + 1000
    return float(p.trials * per)


def simulate_plot(result: SimulateResult) -> Any:
    """Empirical variance of each simulated estimator of the Jaccard similarity against J(1−J)/K."""
    from matplotlib.figure import Figure

    rows = [e for e in result.estimators if e.target == "jaccard"]
    fig = Figure(figsize=(6, 3.5))
    ax = fig.add_subplot()
    labels = [f"{e.estimator} ({e.hashing})" if e.estimator == "minner" else e.estimator for e in rows]
    ax.bar(labels, [e.variance for e in rows], color="#1f77b4", label="simulated variance")
    ax.axhline(result.var_classical, color="k", ls="--", label="J(1-J)/K")
    ax.set_ylabel("variance")
    ax.set_title(f"J = {result.jaccard:.3f}, {result.trials} trials")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


_COMMON = {"family": "minhash", "paper": PAPER, "citation": CITATION}
SPECS = [
    register(
        EstimatorSpec(
            name="minhash.sketch",
            version="3",
            summary="MinHash / C-MinHash sketch of a set (classic, C-MinHash-(sigma,pi), C-MinHash-(pi,pi)).",
            params_model=SketchParams,
            result_model=SketchResult,
            fn=sketch_fn,
            cost=sketch_cost,
            cost_unit="hash evaluations",
            sync_budget=1e9,
            hard_cap=2e11,
            **_COMMON,
        )
    ),
    register(
        EstimatorSpec(
            name="minhash.jaccard",
            version="3",
            summary="Jaccard similarity from two MinHash sketches (or two item lists).",
            params_model=JaccardParams,
            result_model=JaccardResult,
            fn=jaccard_fn,
            cost=jaccard_cost,
            cost_unit="hash evaluations",
            sync_budget=4e8,
            hard_cap=2e11,
            **_COMMON,
        )
    ),
    register(
        EstimatorSpec(
            name="minhash.minner",
            version="2",
            summary="Minner / Newton / MLE estimate of |X ∩ Y| from the query X and the sketch of Y.",
            params_model=MinnerParams,
            result_model=MinnerResult,
            fn=minner_fn,
            cost=minner_cost,
            cost_unit="hash evaluations",
            sync_budget=1e9,
            hard_cap=2e11,
            **_COMMON,
        )
    ),
    register(
        EstimatorSpec(
            name="minhash.variance",
            version="1",
            summary="Exact and approximate C-MinHash variance vs J(1-J)/K, and the approximate Minner MSE.",
            params_model=VarianceParams,
            result_model=VarianceResult,
            fn=variance_fn,
            cost=variance_cost,
            cost_unit="run-count terms",
            sync_budget=1.5e7,
            hard_cap=4e9,
            **_COMMON,
        )
    ),
    register(
        EstimatorSpec(
            name="minhash.simulate",
            version="1",
            summary="Monte-Carlo mean, variance and MSE of classical MinHash, C-MinHash and Minner.",
            params_model=SimulateParams,
            result_model=SimulateResult,
            fn=simulate_fn,
            cost=simulate_cost,
            cost_unit="key draws",
            sync_budget=1e8,
            hard_cap=3e10,
            plot=simulate_plot,
            **_COMMON,
        )
    ),
]
