"""The health probe: one database round trip reused for a second, so a burst of health checks costs one query."""

import threading
import time
from collections.abc import Callable

PROBE_TTL_S = 1.0
"""How long a probe result is reused: a database that becomes unreachable is reported within about this long."""


class DatabaseProbe:
    """The latest answer of ``check()`` (True when the database answered), refreshed at most once per ``ttl``
    seconds; concurrent callers of a stale probe wait for one refresh instead of each querying."""

    def __init__(self, check: Callable[[], bool], ttl: float = PROBE_TTL_S) -> None:
        self._check = check
        self._ttl = ttl
        self._lock = threading.Lock()
        self._ok = False
        self._at = float("-inf")

    def fresh(self) -> bool | None:
        """The cached answer while it is fresh, else None (never blocks: safe on the event loop)."""
        return self._ok if time.monotonic() - self._at < self._ttl else None

    def status(self) -> bool:
        """The answer, refreshing it when stale (blocking: call from a worker thread)."""
        with self._lock:
            cached = self.fresh()
            if cached is not None:
                return cached
            self._ok = self._check()
            self._at = time.monotonic()
            return self._ok
