"""The limiters of the HTTP layer, one set per event loop: the health probe never waits behind request work for a
worker thread; requests with large bodies take turns before their bodies are read; and the handling of large
bodies (scan, pre-check, parse) waits for its turn on the event loop instead of holding worker threads while
another large body is handled."""

import asyncio
from weakref import WeakKeyDictionary

from anyio import CapacityLimiter

LARGE_BODIES = 2
"""Requests with a body of 64 KiB or more handled at once per event loop, from reading the body to the answer: the
others wait before their bodies are read, so memory holds at most this many large bodies."""
HEAVY_BODIES = 2
"""Large-body calls handed to worker threads at once (they then take turns on ``json_bounds.LARGE_BODIES``)."""
_LIMITERS: WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, CapacityLimiter]] = WeakKeyDictionary()


def _of_loop(name: str, total: int) -> CapacityLimiter:
    per_loop = _LIMITERS.setdefault(asyncio.get_running_loop(), {})
    if name not in per_loop:
        per_loop[name] = CapacityLimiter(total)
    return per_loop[name]


def health() -> CapacityLimiter:
    """The health probe's own limiter (one database round trip at a time)."""
    return _of_loop("health", 1)


def heavy_bodies() -> CapacityLimiter:
    """The limiter of large-body work."""
    return _of_loop("heavy", HEAVY_BODIES)


def large_bodies() -> CapacityLimiter:
    """The turn of a request with a large body (``LARGE_BODIES`` at once)."""
    return _of_loop("large", LARGE_BODIES)
