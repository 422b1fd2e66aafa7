"""Hostile input against a real uvicorn process: each request gets its 4xx, the server stays up, and its resident
memory grows by less than 200 MB over the whole set (forged sizes are refused before any allocation)."""

import pickle
from pathlib import Path

import httpx
import numpy as np
import pytest

from db.migrate import upgrade
from tests.api.test_sync_bounds import empty_lists_body
from tests.factories import NPY, forged, npy
from tests.reliability import procs

pytestmark = [pytest.mark.slow, pytest.mark.processes]

NAME = "test.slow_sum"
JSON = {"content-type": "application/json"}
MB = 1024 * 1024


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def hostile_requests() -> list[tuple[str, str, bytes, dict[str, str], int]]:
    est = f"/v1/estimators/{NAME}"
    big_json = b'{"values":[' + b"1," * (25 * MB) + b"1]}"
    nested = b'{"values":' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    deep_after_values = b'{"values":[' + b"1," * (512 * 1024) + b"[" * 300 + b"]" * 300 + b"]}"
    return [
        ("50 MB JSON body", est, big_json, JSON, 413),
        ("50 MB npy, forged 10^10 elements", "/v1/arrays", forged("<f8", (10**10,), data=bytes(50 * MB)), NPY, 422),
        ("deeply nested JSON", est, nested, JSON, 400),
        ("deeply nested job params", "/v1/jobs", b'{"kind":"estimator","name":"x","params":' + b"{" * 10**5, JSON, 400),
        ("NaN", est, b'{"values":[NaN]}', JSON, 422),
        ("Infinity", est, b'{"values":[Infinity]}', JSON, 422),
        ("1e400", est, b'{"values":[1e400]}', JSON, 422),
        ("text/plain body", est, b'{"values":[1]}', {"content-type": "text/plain"}, 415),
        ("JSON to the npy route", "/v1/arrays", b"[1,2]", JSON, 415),
        ("multipart", est, b"--x\r\n\r\n--x--", {"content-type": "multipart/form-data; boundary=x"}, 415),
        ("forged npy header", "/v1/arrays", forged("<f8", (10**5, 10**5)), NPY, 422),
        ("pickled npy", "/v1/arrays", npy(np.array([{"x": 1}], dtype=object)), NPY, 422),
        ("raw pickle", "/v1/arrays", pickle.dumps({"x": 1}), NPY, 400),
        ("Fortran-order npy", "/v1/arrays", forged("<f8", (2, 2), True, bytes(32)), NPY, 422),
        ("unknown field", est, b'{"values":[1],"evil":true}', JSON, 422),
        ("negative size", est, b'{"values":[1],"steps":-5}', JSON, 422),
        ("negative npy shape", "/v1/arrays", forged("<f8", (-3,)), NPY, 422),
        ("string for a number", est, b'{"values":["1.5"]}', JSON, 422),
        ("too many elements", est, b'{"values":[' + b"0," * 100_000 + b"0]}", JSON, 422),
        ("cost above the cap", est, b'{"values":[1],"steps":10000,"step_s":5}', JSON, 422),
        (
            "cost above the cap as a job",
            "/v1/jobs",
            b'{"kind":"estimator","name":"' + NAME.encode() + b'","params":{"values":[1],"steps":10000,"step_s":5}}',
            JSON,
            422,
        ),
        ("invalid UTF-8", est, b'{"values":[1]\xff\xfe}', JSON, 400),
        ("8 MiB of empty lists", "/v1/estimators/compression.batch_regret", empty_lists_body(), JSON, 422),
        ("nesting past the parser's limit after 1 MiB", est, deep_after_values, JSON, 400),
    ]


@pytest.mark.timeout(600)
def test_hostile_inputs_get_4xx_and_memory_stays_bounded(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    upgrade(url)
    env = procs.env_for(url, tmp_path, ESTIBENCH_QUEUE="memory")
    port = procs.free_port()
    with (
        procs.running("api", env, port, log=tmp_path / "api.log") as proc,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as c,
    ):
        assert c.post(f"/v1/estimators/{NAME}", json={"values": [1.0]}).status_code == 200  # warm up
        assert c.post("/v1/arrays", content=npy(np.ones(10)), headers=NPY).status_code == 201
        before = rss_mb(proc.pid)
        wrong = []
        for _ in range(2):
            for label, path, body, headers, expected in hostile_requests():
                try:
                    status = c.post(path, content=body, headers=headers).status_code
                except httpx.HTTPError as exc:  # the server may close before reading a refused body
                    status = f"closed: {exc!r}"
                if status != expected:
                    wrong.append((label, status, expected))
        assert wrong == []
        assert c.get("/v1/health").status_code == 200
        grown = rss_mb(proc.pid) - before
        assert grown < 200, f"resident memory grew by {grown:.0f} MB"
        assert proc.poll() is None
