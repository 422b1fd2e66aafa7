"""ASGI middleware: request id, access log, and the content-type gate (415) for request bodies."""

import logging
import re
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import Problem

log = logging.getLogger("estibench.access")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_BODY_METHODS = {b"POST", b"PUT", b"PATCH"}


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", ()):
        if k == name:
            return v.decode("latin-1")
    return None


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class RequestContextMiddleware:
    """Assign (or echo) ``X-Request-ID``, log one structured line per request, refuse non-JSON bodies (415).

    Routes that take another media type (npy uploads) are listed in ``raw_body_paths``.
    """

    def __init__(self, app: ASGIApp, raw_body_paths: tuple[str, ...] = ()) -> None:
        self.app = app
        self.raw_body_paths = raw_body_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = _header(scope, b"x-request-id")
        request_id = sent if sent and _REQUEST_ID.match(sent) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        start = time.perf_counter()
        status_holder = {"status": 500}

        rewrite: dict[str, Any] = {"body": False}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                if message["status"] == 413 and (b"content-type", b"application/problem+json") not in headers:
                    rewrite["body"] = True
                    payload = _problem_bytes(
                        413, "Content Too Large", "The request body exceeds the size limit.", request_id
                    )
                    headers = [
                        (b"content-type", b"application/problem+json"),
                        (b"content-length", str(len(payload)).encode()),
                    ]
                    rewrite["payload"] = payload
                headers.append((b"x-request-id", request_id.encode()))
                message["headers"] = headers
            elif message["type"] == "http.response.body" and rewrite["body"]:
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": rewrite["payload"]}
            await send(message)

        try:
            if self._unsupported_media(scope):
                await self._problem_415(scope, send_wrapper, request_id)
            else:
                await self.app(scope, receive, send_wrapper)
        finally:
            log.info(
                "request",
                extra={
                    "request_id": request_id,
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "status": status_holder["status"],
                    "duration_ms": round((time.perf_counter() - start) * 1000, 3),
                },
            )

    def _unsupported_media(self, scope: Scope) -> bool:
        if scope.get("method", "").encode() not in _BODY_METHODS:
            return False
        path: str = scope.get("path", "")
        if not path.startswith("/v1/") or path.startswith(self.raw_body_paths or ("\0",)):
            return False
        content_type = _header(scope, b"content-type")
        length = _header(scope, b"content-length")
        if content_type is None:
            return length not in (None, "0")
        return not _is_json(content_type)

    @staticmethod
    async def _problem_415(scope: Scope, send: Send, request_id: str) -> None:
        payload = _problem_bytes(415, "Unsupported Media Type", "Send the body as application/json.", request_id)
        await send(
            {
                "type": "http.response.start",
                "status": 415,
                "headers": [
                    (b"content-type", b"application/problem+json"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def _problem_bytes(status: int, title: str, detail: str, request_id: str) -> bytes:
    return (
        Problem(title=title, status=status, detail=detail, instance=request_id)
        .model_dump_json(exclude_none=True)
        .encode()
    )
