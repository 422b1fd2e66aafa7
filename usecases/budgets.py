"""The budgets every producer of runs obeys: the cost caps of an estimator or scorer (``hard_cap`` always;
``sync_budget`` where no job queue can take the work) and this process's concurrency slots for synchronous
computation (estimator and scorer runs, submission scoring, work inside a job)."""

from __future__ import annotations

import ctypes
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from service.registry import EstimatorSpec, ScorerSpec
from usecases.errors import Unavailable, invalid

if TYPE_CHECKING:
    from usecases.services import Services


def check_caps(spec: EstimatorSpec | ScorerSpec, cost: float, *, queue_available: bool, loc: tuple[str, ...]) -> float:
    """Return ``cost``, or raise ``InvalidFields`` naming the cap (``hard_cap``; ``sync_budget`` without a queue)."""
    unit = spec.cost_unit
    if cost > spec.hard_cap:
        raise invalid(
            f"cost {cost:.4g} {unit} exceeds the hard cap {spec.hard_cap:.4g} of {spec.name}",
            loc,
            "cost_cap",
            f"cost {cost:.4g} > hard_cap {spec.hard_cap:.4g} {unit}",
        )
    if cost > spec.sync_budget and not queue_available:
        raise invalid(
            f"cost {cost:.4g} {unit} exceeds the synchronous budget {spec.sync_budget:.4g} of {spec.name}; "
            "no job queue is configured",
            loc,
            "cost_budget",
            f"cost {cost:.4g} > sync_budget {spec.sync_budget:.4g} {unit}",
        )
    return cost


_slots: WeakKeyDictionary[Services, threading.BoundedSemaphore] = WeakKeyDictionary()
_slots_lock = threading.Lock()


def _libc_malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_malloc_trim = _libc_malloc_trim()
M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter number of the size from which allocations are mapped (and unmapped when freed)."""
MMAP_THRESHOLD_BYTES = 128 * 1024


def map_large_allocations() -> bool:
    """Fix glibc's mmap threshold at 128 KiB for this process (glibc raises it after each large free, after which
    request bodies and their scans reuse the heap and the process keeps its peak): each large buffer is then
    returned to the system when freed. True where glibc took it."""
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
    except (OSError, AttributeError):
        return False


@contextmanager
def sync_slot(services: Services, *, large: bool, wait: bool = False) -> Iterator[None]:
    """Hold one of ``sync_concurrency`` slots of this process for a synchronous computation, waiting at most
    ``sync_wait_s`` (then ``Unavailable``, 503 with Retry-After), or as long as it takes with ``wait`` (work inside
    a job, where no caller holds a connection open); after a ``large`` one, give freed heap memory back to the
    system (glibc ``malloc_trim``)."""
    settings = services.settings
    with _slots_lock:
        slot = _slots.get(services)
        if slot is None:
            slot = _slots[services] = threading.BoundedSemaphore(settings.sync_concurrency)
    if not slot.acquire(timeout=None if wait else settings.sync_wait_s):
        raise Unavailable(
            f"all {settings.sync_concurrency} synchronous slots are busy; retry shortly, or queue the call as a job "
            "(POST /v1/jobs)",
            retry_after_s=max(1, math.ceil(settings.sync_wait_s)),
        )
    try:
        yield
    finally:
        slot.release()
        if large and _malloc_trim is not None:
            _malloc_trim(0)
