"""The HTTP entry of every run call (``POST /v1/estimators/{name}`` and ``POST /v1/scorers/{name}/score``), and the
fast path that answers repeated calls before FastAPI's routing (docs/performance.md).

``RunCallMiddleware`` opens every such call with ``usecases.run_requests.open_request`` (credentials, a body seen
before answered from memory without parsing, else validation, canonical params and the in-memory lookup; the
database only to check a presented key, in a thread): a remembered run is answered at once; otherwise the opened
request, or the error opening it raised, is handed to the route in the request state, so the route neither
validates nor authenticates again and a cached answer and an uncached one obey the same rules (an invalid
credential is a 401 either way). The body is the one the text guard read (``api.text_guard.BODY``). The middleware
sits inside the body-size limit, the rate limiter, the metrics and the request context, so those apply to both
paths.
"""

from types import SimpleNamespace

import anyio
from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from api import limiters
from api.auth import presented_token
from api.envelope import remembered_envelope_json
from api.text_guard import BODY
from service.errors import DomainError
from service.registry import ESTIMATORS, SCORERS
from usecases.errors import UseCaseError
from usecases.run_requests import Remembered, RunRequest, Spec, open_request
from usecases.services import Services

ESTIMATOR_PREFIX = "/v1/estimators/"
SCORER_PREFIX = "/v1/scorers/"
SCORE_SUFFIX = "/score"
INLINE_BODY_BYTES = 16 * 1024
"""An anonymous call with a smaller body is opened on the event loop; a larger one in a worker thread."""
OPENED = "run_request"
"""Request-state key of the request (or the error) the middleware opened for the route."""


def route_path(spec: Spec) -> str:
    """The path of ``spec``'s run route."""
    if spec.kind == "estimator":
        return ESTIMATOR_PREFIX + spec.name
    return SCORER_PREFIX + spec.name + SCORE_SUFFIX


def opened_request(request: Request) -> RunRequest:
    """The route's request, as the middleware opened it (re-raising the error opening it raised)."""
    opened: RunRequest | Exception = request.scope["state"].pop(OPENED)
    if isinstance(opened, Exception):
        raise opened
    return opened


class RunCallMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        spec = _run_spec(scope)
        if spec is None:
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        body: bytes = state.pop(BODY) if BODY in state else await _read(receive)
        authorization = x_api_key = None
        for k, v in scope.get("headers", ()):
            if k == b"authorization":
                authorization = v.decode("latin-1")
            elif k == b"x-api-key":
                x_api_key = v.decode("latin-1")
        services: Services = scope["app"].state.services
        opened: RunRequest | Remembered | Exception
        try:
            token = presented_token(authorization, x_api_key)
            if token is None and len(body) < INLINE_BODY_BYTES:
                opened = open_request(services, spec, body, None)
            elif len(body) < INLINE_BODY_BYTES:
                opened = await anyio.to_thread.run_sync(open_request, services, spec, body, token)
            else:
                limiter = limiters.heavy_bodies()
                opened = await anyio.to_thread.run_sync(open_request, services, spec, body, token, limiter=limiter)
        except (UseCaseError, DomainError, SQLAlchemyError) as exc:  # the route raises it (a database error: 503)
            opened = exc
        remembered = opened.run if isinstance(opened, Remembered) else getattr(opened, "remembered", None)
        if remembered is None:
            state[OPENED] = opened
            await self.app(scope, receive, send)
            return
        scope["route"] = SimpleNamespace(path=route_path(spec))
        payload = remembered_envelope_json(remembered)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})


async def _read(receive: Receive) -> bytes:
    """The body of a request the text guard did not read (one sent without a JSON content type)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body", False):
            return b"".join(chunks)


def _run_spec(scope: Scope) -> Spec | None:
    """The estimator or scorer whose run route ``scope`` calls, else None."""
    if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("app") is None:
        return None
    path: str = scope.get("path", "")
    if path.startswith(ESTIMATOR_PREFIX):
        return ESTIMATORS.get(path[len(ESTIMATOR_PREFIX) :])
    if path.startswith(SCORER_PREFIX) and path.endswith(SCORE_SUFFIX):
        return SCORERS.get(path[len(SCORER_PREFIX) : -len(SCORE_SUFFIX)])
    return None
