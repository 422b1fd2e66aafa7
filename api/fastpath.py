"""The one entry path of ``POST /v1/estimators/{name}``, and the fast path that answers repeated calls before
FastAPI's routing (docs/performance.md).

``open_estimator_call`` validates and canonicalises the body, checks the credentials and looks the run up in this
process's memory (``usecases.estimator_runs.open_call``; the database only to check a presented key, in a thread).
The middleware calls it for every estimator POST: a remembered run is answered at once; otherwise the opened call,
or the error opening it raised, is handed to the route in the request state, so the route neither validates nor
authenticates again and a cached answer and an uncached one obey the same rules (an invalid credential is a 401
either way). The middleware sits inside the body-size limit, the rate limiter, the metrics and the request
context, so those apply to both paths.
"""

from types import SimpleNamespace

import anyio
from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import presented_token
from api.envelope import remembered_envelope_json
from service.errors import DomainError
from service.registry import ESTIMATORS, EstimatorSpec
from usecases import estimator_runs
from usecases.errors import UseCaseError
from usecases.estimator_runs import EstimatorCall
from usecases.services import Services

PREFIX = "/v1/estimators/"
INLINE_BODY_BYTES = 16 * 1024
"""An anonymous call with a smaller body is validated on the event loop; a larger one in a worker thread."""
OPENED = "estimator_call"
"""Request-state key of the call (or the error) the middleware opened for the route."""


async def open_estimator_call(
    services: Services, spec: EstimatorSpec, body: bytes, authorization: str | None, x_api_key: str | None
) -> EstimatorCall:
    """Validate, canonicalise, authenticate and look up in memory: shared by the fast path and the route."""
    token = presented_token(authorization, x_api_key)
    if token is None and len(body) < INLINE_BODY_BYTES:
        return estimator_runs.open_call(services, spec, body, None)
    return await anyio.to_thread.run_sync(estimator_runs.open_call, services, spec, body, token)


async def opened_call(request: Request, spec: EstimatorSpec, services: Services) -> EstimatorCall:
    """The route's call: the one the middleware opened (re-raising its error), else opened now."""
    opened = request.scope.get("state", {}).pop(OPENED, None)
    if isinstance(opened, Exception):
        raise opened
    if opened is not None:
        return opened
    headers = request.headers
    return await open_estimator_call(
        services, spec, await request.body(), headers.get("authorization"), headers.get("x-api-key")
    )


class EstimatorCallMiddleware:
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
        authorization = x_api_key = None
        for k, v in scope.get("headers", ()):
            if k == b"authorization":
                authorization = v.decode("latin-1")
            elif k == b"x-api-key":
                x_api_key = v.decode("latin-1")
        opened: EstimatorCall | Exception
        try:
            opened = await open_estimator_call(scope["app"].state.services, spec, bytes(body), authorization, x_api_key)
        except (UseCaseError, DomainError, SQLAlchemyError) as exc:  # the route raises it (a database error: 503)
            opened = exc
        if isinstance(opened, Exception) or opened.remembered is None:
            scope.setdefault("state", {})[OPENED] = opened
            await self.app(scope, _replay(messages, receive), send)
            return
        scope["route"] = SimpleNamespace(path=PREFIX + spec.name)
        payload = remembered_envelope_json(opened.remembered)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    @staticmethod
    def _estimator(scope: Scope) -> EstimatorSpec | None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return None
        path: str = scope.get("path", "")
        if not path.startswith(PREFIX) or scope.get("app") is None:
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
