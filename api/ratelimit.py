"""Rate limiting per API key (per client address when anonymous or when the token is not a valid key): 429
problem + ``Retry-After``.

GCRA (a token bucket kept as one "theoretical arrival time" per caller): ``rate_limit_per_minute`` sustained,
``rate_limit_burst`` at once. State is in-process for the single-node default; with ``REDIS_URL`` it lives in
Redis (an atomic Lua script using the server's clock), so every replica shares it. If Redis is unreachable the
limiter lets requests through and logs, rather than taking the API down.
"""

import hashlib
import logging
import math
import threading
import time
from typing import Any

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from api.problems import send_problem
from usecases.api_keys import authenticate

log = logging.getLogger("estibench.ratelimit")
EXEMPT = ("/v1/health", "/metrics")

_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new = tat + interval
if new - now > capacity then return tostring(new - now - capacity) end
redis.call('SET', KEYS[1], tostring(new), 'PX', math.ceil((new - now) * 1000) + 1000)
return '0'
"""


class MemoryGcra:
    """In-process GCRA state; bounded: entries whose arrival time has passed are dropped when it grows."""

    def __init__(self, interval: float, capacity: float, max_keys: int = 100_000) -> None:
        self.interval, self.capacity, self.max_keys = interval, capacity, max_keys
        self._tat: dict[str, float] = {}
        self._lock = threading.Lock()

    async def hit(self, key: str) -> float:
        """0 when allowed, else seconds to wait."""
        now = time.monotonic()
        with self._lock:
            tat = max(self._tat.get(key, now), now)
            new = tat + self.interval
            if new - now > self.capacity:
                return new - now - self.capacity
            if len(self._tat) >= self.max_keys:
                self._tat = {k: v for k, v in self._tat.items() if v > now}
            self._tat[key] = new
            return 0.0


class RedisGcra:
    def __init__(self, url: str, interval: float, capacity: float) -> None:
        import redis.asyncio as aioredis

        self.interval, self.capacity = interval, capacity
        self._client = aioredis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        self._script = self._client.register_script(_LUA)

    async def hit(self, key: str) -> float:
        try:
            wait = await self._script(keys=[f"estibench:rl:{key}"], args=[self.interval, self.capacity])
        except Exception:
            log.warning("rate limiter: Redis unreachable; request allowed")
            return 0.0
        return float(wait)


def _token(scope: Scope) -> str | None:
    token = None
    for k, v in scope.get("headers", ()):
        if k == b"authorization":
            token = v.decode("latin-1").partition(" ")[2].strip() or None
        elif k == b"x-api-key" and token is None:
            token = v.decode("latin-1").strip() or None
    return token


class KnownKeys:
    """Digests of tokens that authenticated recently (``ttl_s``), so only a valid key gets a bucket of its own:
    an unknown token is bucketed by the client's address, whatever its value."""

    def __init__(self, ttl_s: float = 60.0, max_keys: int = 10_000) -> None:
        self.ttl_s, self.max_keys = ttl_s, max_keys
        self._until: dict[str, float] = {}

    def fresh(self, digest: str) -> bool:
        return self._until.get(digest, 0.0) > time.monotonic()

    def add(self, digest: str) -> None:
        now = time.monotonic()
        if len(self._until) >= self.max_keys:
            self._until = {k: v for k, v in self._until.items() if v > now}
        if len(self._until) < self.max_keys:
            self._until[digest] = now + self.ttl_s


async def _is_valid(scope: Scope, token: str) -> bool:
    """Whether ``token`` authenticates (the key lookup, in a worker thread); any failure counts as unknown."""
    app = scope.get("app")
    if app is None:
        return False
    try:
        await anyio.to_thread.run_sync(authenticate, app.state.services, token)
    except Exception:
        return False
    return True


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, per_minute: int, burst: int, redis_url: str | None = None) -> None:
        self.app = app
        interval = 60.0 / per_minute if per_minute > 0 else 0.0
        capacity = interval * burst
        self.limiter: Any = None
        self.known = KnownKeys()
        if per_minute > 0:
            self.limiter = RedisGcra(redis_url, interval, capacity) if redis_url else MemoryGcra(interval, capacity)

    async def _identity(self, scope: Scope) -> str:
        """``k:<digest>`` for a valid key, else ``a:<client address>`` (anonymous, or an unknown token)."""
        token = _token(scope)
        if token is not None:
            digest = hashlib.sha256(token.encode()).hexdigest()[:32]
            if self.known.fresh(digest):
                return "k:" + digest
            if await _is_valid(scope, token):
                self.known.add(digest)
                return "k:" + digest
        client = scope.get("client")
        return "a:" + (client[0] if client else "unknown")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.limiter is None or scope["type"] != "http" or scope.get("path", "").startswith(EXEMPT):
            await self.app(scope, receive, send)
            return
        wait = await self.limiter.hit(await self._identity(scope))
        if wait <= 0:
            await self.app(scope, receive, send)
            return
        retry = max(1, math.ceil(wait))
        await send_problem(
            send,
            429,
            f"rate limit exceeded; retry in {retry} s",
            instance=scope.get("state", {}).get("request_id"),
            headers=[(b"retry-after", str(retry).encode())],
        )
