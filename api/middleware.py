"""ASGI middleware: request id, access log, and the content-type gate (415) for request bodies."""

import base64
import hashlib
import logging
import re
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import PROBLEM_MEDIA_TYPE, problem_bytes, problem_headers, send_problem

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


def _is_ndjson(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/x-ndjson"


class RequestContextMiddleware:
    """Assign (or echo) ``X-Request-ID``, log one structured line per request, refuse non-JSON bodies (415).

    Routes that take another media type (npy uploads) are listed in ``raw_body_paths``; routes that also take JSON
    Lines (``application/x-ndjson``) match ``ndjson_paths``.
    """

    def __init__(
        self, app: ASGIApp, raw_body_paths: tuple[str, ...] = (), ndjson_paths: re.Pattern[str] | None = None
    ) -> None:
        self.app = app
        self.raw_body_paths = raw_body_paths
        self.ndjson_paths = ndjson_paths

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
                if message["status"] == 413 and (b"content-type", PROBLEM_MEDIA_TYPE.encode()) not in headers:
                    rewrite["body"] = True
                    payload = problem_bytes(413, "The request body exceeds the size limit.", instance=request_id)
                    headers = problem_headers(payload)
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
                await send_problem(send_wrapper, 415, "Send the body as application/json.", instance=request_id)
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
        if self.ndjson_paths is not None and _is_ndjson(content_type) and self.ndjson_paths.fullmatch(path):
            return False
        return not _is_json(content_type)


HTML_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""Pages load only this origin's assets; inline styles are allowed (Swagger UI and ReDoc set them), inline scripts
are not (a page with one allows it by hash, see ``api/routers/web.py``); no page may be framed."""
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
"""A figure loads nothing and runs nothing; matplotlib's SVGs carry an inline ``<style>``."""


_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def html_policy_allowing_inline_scripts(page: bytes) -> str:
    """``HTML_POLICY`` with the page's own inline scripts allowed by their SHA-256 (CSP level 2 hash sources)."""
    hashes = [base64.b64encode(hashlib.sha256(m.group(1)).digest()).decode() for m in _INLINE_SCRIPT.finditer(page)]
    sources = "".join(f" 'sha256-{h}'" for h in hashes)
    return HTML_POLICY.replace("script-src 'self'", "script-src 'self'" + sources)


def _policy(content_type: bytes) -> bytes | None:
    media = content_type.split(b";", 1)[0].strip().lower()
    if media == b"text/html":
        return HTML_POLICY.encode()
    if media == b"image/svg+xml":
        return SVG_POLICY.encode()
    return None


class ResponseHeadersMiddleware:
    """``X-Content-Type-Options: nosniff`` on every response; a Content-Security-Policy (unless the route set one)
    and ``X-Frame-Options: DENY`` on HTML and SVG; ``HEAD`` served wherever ``GET`` is (the GET's headers, no body)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        if head:
            scope = {**scope, "method": "GET"}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                headers.append((b"x-content-type-options", b"nosniff"))
                policy = _policy(next((v for k, v in headers if k.lower() == b"content-type"), b""))
                if policy is not None:
                    if b"content-security-policy" not in names:
                        headers.append((b"content-security-policy", policy))
                    headers.append((b"x-frame-options", b"DENY"))
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and head:
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app(scope, receive, send_wrapper)
