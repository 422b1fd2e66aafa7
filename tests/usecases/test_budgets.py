"""usecases/budgets.py: a cost above the hard cap is always refused, one above the synchronous budget only where no
job queue can take it (each naming its cap and the field); a process holds ``sync_concurrency`` synchronous slots
per ``Services``, a caller waits ``sync_wait_s`` for one (then 503 with a whole-second Retry-After, at least 1), or
as long as it takes inside a job, and gives freed heap back after a large computation."""

import json
import platform
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from usecases import budgets
from usecases.errors import InvalidFields, Unavailable

ROOT = Path(__file__).resolve().parents[2]

SPEC = SimpleNamespace(name="toy", cost_unit="flop", hard_cap=100.0, sync_budget=10.0)
LOC = ("body", "params", "n")


@pytest.mark.parametrize("queue_available", [False, True])
@pytest.mark.parametrize("cost", [0.0, 5.0, 10.0])
def test_a_cost_within_the_synchronous_budget_passes(cost: float, queue_available: bool) -> None:
    assert budgets.check_caps(SPEC, cost, queue_available=queue_available, loc=LOC) == cost


@pytest.mark.parametrize("cost", [10.5, 50.0, 100.0])
def test_a_cost_over_the_budget_needs_a_queue(cost: float) -> None:
    assert budgets.check_caps(SPEC, cost, queue_available=True, loc=LOC) == cost
    with pytest.raises(InvalidFields) as refused:
        budgets.check_caps(SPEC, cost, queue_available=False, loc=LOC)
    assert refused.value.status == 422
    assert [(e["loc"], e["type"]) for e in refused.value.errors] == [(list(LOC), "cost_budget")]


@pytest.mark.parametrize("queue_available", [False, True])
def test_a_cost_over_the_hard_cap_is_refused_with_or_without_a_queue(queue_available: bool) -> None:
    with pytest.raises(InvalidFields) as refused:
        budgets.check_caps(SPEC, 100.5, queue_available=queue_available, loc=LOC)
    assert [(e["loc"], e["type"]) for e in refused.value.errors] == [(list(LOC), "cost_cap")]


class FakeServices:
    """What ``sync_slot`` reads of ``Services``: its settings (and it must be weakly referenceable and hashable)."""

    def __init__(self, concurrency: int, wait_s: float) -> None:
        self.settings = SimpleNamespace(sync_concurrency=concurrency, sync_wait_s=wait_s)


def test_a_process_holds_sync_concurrency_slots_per_services() -> None:
    services = FakeServices(2, 0.0)
    with budgets.sync_slot(services, large=False), budgets.sync_slot(services, large=False):
        with pytest.raises(Unavailable) as busy, budgets.sync_slot(services, large=False):
            pass
        assert busy.value.status == 503 and busy.value.retry_after_s == 1
        with budgets.sync_slot(FakeServices(1, 0.0), large=False):  # another Services has its own slots
            pass
    for _ in range(3):  # both slots were given back (and are given back after each use)
        with budgets.sync_slot(services, large=False), budgets.sync_slot(services, large=False):
            pass


def test_a_slot_is_given_back_when_the_computation_fails() -> None:
    services = FakeServices(1, 0.0)
    with pytest.raises(ZeroDivisionError), budgets.sync_slot(services, large=False):
        _ = 1 / 0
    with budgets.sync_slot(services, large=False):
        pass


class RecordingSemaphore:
    """A semaphore that is always busy and records the timeouts it was asked to wait."""

    timeouts: ClassVar[list[float | None]] = []

    def __init__(self, value: int) -> None:
        self.value = value

    def acquire(self, timeout: float | None = None) -> bool:
        RecordingSemaphore.timeouts.append(timeout)
        return False


@pytest.fixture
def always_busy(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    RecordingSemaphore.timeouts = []
    monkeypatch.setattr(budgets, "threading", SimpleNamespace(BoundedSemaphore=RecordingSemaphore))
    return RecordingSemaphore.timeouts


@pytest.mark.parametrize(("wait_s", "retry_after"), [(0.0, 1), (0.4, 1), (1.0, 1), (1.01, 2), (2.5, 3), (7.0, 7)])
def test_a_busy_process_waits_sync_wait_s_then_answers_503_with_whole_seconds(
    always_busy: list[float | None], wait_s: float, retry_after: int
) -> None:
    with pytest.raises(Unavailable) as busy, budgets.sync_slot(FakeServices(3, wait_s), large=False):
        pass
    assert always_busy == [wait_s]
    assert busy.value.retry_after_s == retry_after


def test_work_inside_a_job_waits_as_long_as_it_takes(always_busy: list[float | None]) -> None:
    with pytest.raises(Unavailable), budgets.sync_slot(FakeServices(3, 2.0), large=False, wait=True):
        pass
    assert always_busy == [None]


def test_the_slots_are_created_once_with_sync_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []

    class Counting(threading.BoundedSemaphore):
        def __init__(self, value: int) -> None:
            made.append(value)
            super().__init__(value)

    monkeypatch.setattr(budgets, "threading", SimpleNamespace(BoundedSemaphore=Counting))
    services = FakeServices(5, 0.0)
    for _ in range(3):
        with budgets.sync_slot(services, large=False):
            pass
    assert made == [5]


def test_heap_is_given_back_after_a_large_computation_only(monkeypatch: pytest.MonkeyPatch) -> None:
    trims: list[int] = []
    monkeypatch.setattr(budgets, "_malloc_trim", lambda pad: trims.append(pad) or 1)
    services = FakeServices(1, 0.0)
    with budgets.sync_slot(services, large=False):
        pass
    assert trims == []
    with budgets.sync_slot(services, large=True):
        assert trims == []  # after the computation, not before
    assert trims == [0]
    monkeypatch.setattr(budgets, "_malloc_trim", None)  # no glibc: nothing to call
    with budgets.sync_slot(services, large=True):
        pass


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc_trim and mallopt")
def test_glibc_is_found_and_takes_the_mmap_threshold() -> None:
    trim = budgets._libc_malloc_trim()
    assert trim is not None and trim(0) in (0, 1)  # malloc_trim returns 1 when memory was released, else 0
    assert budgets.map_large_allocations() is True


MAPPED_BYTES = """
import ctypes, json
from usecases import budgets

class MallInfo2(ctypes.Structure):  # glibc's struct mallinfo2: ten size_t counters
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

def mapped_bytes(size, count):
    before = libc.mallinfo2().hblkhd
    blocks = [libc.malloc(size) for _ in range(count)]
    grown = libc.mallinfo2().hblkhd - before
    for b in blocks:
        libc.free(b)
    return grown

took = libc.mallopt(-3, 4 << 20)  # M_MMAP_THRESHOLD = 4 MiB first: 1 MiB buffers then stay on the heap
first = mapped_bytes(1 << 20, 4)
mapped = budgets.map_large_allocations()
print(json.dumps([took, first, mapped, mapped_bytes(1 << 20, 4), mapped_bytes(120 * 1024, 64)]))
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt and mallinfo2")
def test_after_mapping_large_allocations_a_large_buffer_is_mapped_and_a_small_one_is_not() -> None:
    """glibc serves an allocation at or above the mmap threshold that the heap cannot hold with its own mapping
    (counted in ``mallinfo2().hblkhd``); below the threshold it grows the heap instead. In a fresh interpreter: the
    setting is process-wide, and a heap that large frees have left with room serves even a large buffer from it."""
    out = subprocess.run([sys.executable, "-c", MAPPED_BYTES], capture_output=True, text=True, check=True, cwd=ROOT)
    took, first, mapped, large, small = json.loads(out.stdout)
    assert (took, first, mapped) == (1, 0, True)
    assert large >= 4 << 20  # 128 KiB threshold: each 1 MiB buffer is mapped
    assert small == 0  # 7.5 MiB in buffers below it: all on the heap


def test_without_glibc_nothing_is_trimmed_or_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library(name: str | None) -> object:
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(budgets, "ctypes", SimpleNamespace(CDLL=no_library))
    assert budgets._libc_malloc_trim() is None
    assert budgets.map_large_allocations() is False
    monkeypatch.setattr(budgets, "ctypes", SimpleNamespace(CDLL=lambda name: SimpleNamespace()))  # a libc without
    assert budgets._libc_malloc_trim() is None
    assert budgets.map_large_allocations() is False
