"""Cached estimator calls answered before FastAPI's routing (docs/performance.md).

A repeated ``POST /v1/estimators/{name}`` whose validated params match a run this process has already seen is
answered from the per-database LRU of immutable runs (``api.execution.memory_cached``) without the route's body
machinery. Everything else, including every invalid body and every call when ``REQUIRE_KEYS`` is set, goes on
to the route unchanged, with the body replayed. The middleware sits inside the body-size limit, the rate
limiter, the metrics and the request context, so those apply to both paths.
"""

from types import SimpleNamespace

from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.envelope import canonical_params, envelope_json, sha256_hex
from api.execution import memory_cached
from service.registry import ESTIMATORS

PREFIX = "/v1/estimators/"


class CachedRunMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        spec = self._estimator(scope)
        if spec is None:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = bytearray()
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        hit = None
        try:
            params = spec.params_model.model_validate_json(bytes(body))
        except (ValidationError, ValueError):
            params = None
        if params is not None:
            state = scope["app"].state
            hit = memory_cached(
                state.engines, "estimator", spec.name, spec.version, sha256_hex(canonical_params(params))
            )
        if hit is None:
            await self.app(scope, _replay(messages, receive), send)
            return
        scope["route"] = SimpleNamespace(path=PREFIX + spec.name)
        payload = envelope_json(hit, cached=True)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    @staticmethod
    def _estimator(scope: Scope):  # type: ignore[no-untyped-def]
        if scope["type"] != "http" or scope.get("method") != "POST":
            return None
        path: str = scope.get("path", "")
        if not path.startswith(PREFIX):
            return None
        app = scope.get("app")
        if app is None or app.state.settings.require_keys:
            return None
        return ESTIMATORS.get(path[len(PREFIX) :])


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands out the already-read messages first, then defers to the real one."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
