"""Array uploads against a real uvicorn process: a declared size pins no memory before the bytes arrive, the bytes
held across in-flight uploads are bounded (503 with Retry-After beyond), and a stalled upload times out (408)."""

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import numpy as np
import pytest

from api.arrays import canonical_header
from db.migrate import upgrade
from tests.factories import NPY, npy
from tests.reliability import procs
from tests.reliability.test_hostile import rss_mb

pytestmark = [pytest.mark.slow, pytest.mark.processes]

MiB = 1024 * 1024


def start_upload(port: int, elements: int, data: bytes = b"") -> socket.socket:
    """Open a connection and send the request head, the npy header of ``elements`` float64 and ``data``; the
    rest of the declared body never comes."""
    header = canonical_header(np.dtype("<f8"), (elements,))
    head = (
        f"POST /v1/arrays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-npy\r\n"
        f"Content-Length: {len(header) + 8 * elements}\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head + header + data)
    return sock


def status_line(sock: socket.socket) -> bytes:
    """The first line and headers of the response (waits up to the socket timeout)."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(4096)
        if not chunk:
            break
        received += chunk
    return received


@contextmanager
def api(tmp_path: Path, **extra: str) -> Iterator[tuple[int, object]]:
    url = f"sqlite:///{tmp_path / 'u.db'}"
    upgrade(url)
    env = procs.env_for(url, tmp_path, ESTIBENCH_QUEUE="memory", **extra)
    port = procs.free_port()
    with procs.running("api", env, port, log=tmp_path / "api.log") as proc:
        yield port, proc


@pytest.mark.timeout(600)
def test_held_uploads_of_declared_128_mib_pin_no_memory(tmp_path: Path) -> None:
    with api(tmp_path) as (port, proc), ExitStack() as stack:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            assert c.post("/v1/arrays", content=npy(np.ones(10)), headers=NPY).status_code == 201  # warm up
        before = rss_mb(proc.pid)
        socks = [start_upload(port, 16 * MiB, b"\0" * 64) for _ in range(12)]  # 128 MiB declared each
        for sock in socks:
            stack.callback(sock.close)
        time.sleep(1.5)
        grown = rss_mb(proc.pid) - before
        assert grown < 50, f"12 held uploads grew the API by {grown:.0f} MB"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as c:
            assert c.get("/v1/health").status_code == 200


@pytest.mark.timeout(600)
def test_bytes_held_across_uploads_are_bounded_and_stalled_uploads_time_out(tmp_path: Path) -> None:
    extra = {
        "ESTIBENCH_MAX_ARRAY_BYTES": str(MiB),
        "ESTIBENCH_UPLOAD_BUFFER_BYTES": str(MiB),
        "ESTIBENCH_UPLOAD_TIMEOUT_S": "3",
    }
    with api(tmp_path, **extra) as (port, _proc), ExitStack() as stack:
        first = start_upload(port, 100_000, b"\0" * 600_000)  # 800 kB declared, 600 kB sent, then stalls
        stack.callback(first.close)
        time.sleep(0.5)
        second = start_upload(port, 100_000, b"\0" * 600_000)
        stack.callback(second.close)
        refused = status_line(second)
        assert refused.startswith(b"HTTP/1.1 503"), refused[:200]
        assert b"retry-after: 5" in refused.lower()
        started = time.monotonic()
        timed_out = status_line(first)
        assert timed_out.startswith(b"HTTP/1.1 408"), timed_out[:200]
        assert time.monotonic() - started < 5
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:  # the budget was given back
            body = npy(np.arange(100_000, dtype=np.float64))
            assert c.post("/v1/arrays", content=body, headers=NPY).status_code == 201
