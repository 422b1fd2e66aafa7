"""``POST /v1/arrays`` and ``{"array": "sha256:..."}`` params."""

import hashlib
import io
import json
import pickle
import struct
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests import support_estimators
from tests.factories import NPY, array, forged, npy, serving
from usecases.runs import sha256_hex
from usecases.settings import Settings

NAME = support_estimators.NAME


@pytest.fixture
def client(settings: Settings, test_estimator: str) -> Iterator[TestClient]:
    with serving(settings, queue="immediate", max_array_elements=1000) as c:
        yield c


def seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def test_upload_is_content_addressed_and_deduplicated(client: TestClient) -> None:
    body = npy(np.arange(12, dtype=np.float64).reshape(3, 4))
    out = array(client, body)
    assert out["id"] == "sha256:" + hashlib.sha256(body).hexdigest()  # computable locally from np.save's file
    assert (out["dtype"], out["shape"], out["nbytes"]) == ("<f8", [3, 4], 96)
    assert array(client, body)["id"] == out["id"]
    # The same array written with a version 2.0 header gets the same (canonical) id.
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.arange(12, dtype=np.float64).reshape(3, 4), version=(2, 0))
    assert array(client, buf.getvalue())["id"] == out["id"]
    assert client.get(f"/v1/arrays/{out['id']}").json()["shape"] == [3, 4]
    assert client.get("/v1/arrays/sha256:" + "0" * 64).status_code == 404
    assert client.get("/v1/arrays/nothex").status_code == 422


def test_reference_in_params_gives_the_same_result_and_keeps_the_reference(client: TestClient) -> None:
    values = np.linspace(-1, 3, 500)
    ref = array(client, npy(values))["id"]
    by_ref = client.post(f"/v1/estimators/{NAME}", json={"values": {"array": ref}})
    by_list = client.post(f"/v1/estimators/{NAME}", json={"values": values.tolist()})
    assert by_ref.status_code == by_list.status_code == 200, by_ref.text
    assert by_ref.json()["result"] == by_list.json()["result"]
    canonical = json.dumps(
        {"matrix": None, "step_s": 0.0, "steps": 1, "tag": 0, "values": {"array": ref}}, separators=(",", ":")
    )
    assert by_ref.json()["params_sha256"] == sha256_hex(canonical)
    ints = array(client, npy(np.arange(4, dtype=np.int64)))["id"]  # integers are accepted for float fields
    assert client.post(f"/v1/estimators/{NAME}", json={"values": {"array": ints}}).json()["result"]["total"] == 6.0
    job = client.post("/v1/jobs", json={"kind": "estimator", "name": NAME, "params": {"values": {"array": ints}}})
    assert job.json()["status"] == "succeeded"


@pytest.mark.parametrize(
    ("arr", "msg"),
    [
        (np.array([1.0, np.nan]), "NaN"),
        (np.ones((2, 2)), "1-dimensional"),
        (np.array([True, False]), "numeric"),
        (np.array([2e12]), "≤"),
        (np.array([], dtype=np.float64), "at least 1"),
    ],
)
def test_referenced_arrays_are_checked_like_json(client: TestClient, arr: np.ndarray, msg: str) -> None:
    ref = array(client, npy(arr))["id"]
    r = client.post(f"/v1/estimators/{NAME}", json={"values": {"array": ref}})
    assert r.status_code == 422 and msg in r.json()["detail"]
    assert r.json()["errors"][0]["loc"] == ["body", "values"]


def test_optional_two_dimensional_reference(client: TestClient) -> None:
    matrix = np.arange(6, dtype=np.int64).reshape(2, 3)
    ref = array(client, npy(matrix))["id"]
    by_ref = client.post(f"/v1/estimators/{NAME}", json={"values": [1], "matrix": {"array": ref}})
    by_list = client.post(f"/v1/estimators/{NAME}", json={"values": [1], "matrix": matrix.tolist()})
    assert by_ref.json()["result"]["total"] == by_list.json()["result"]["total"] == 16.0
    bad = array(client, npy(np.array([[1.5, 2.0]])))["id"]  # floats for an integer matrix
    r = client.post(f"/v1/estimators/{NAME}", json={"values": [1], "matrix": {"array": bad}})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "matrix"]
    flat = array(client, npy(np.arange(3)))["id"]
    assert client.post(f"/v1/estimators/{NAME}", json={"values": [1], "matrix": {"array": flat}}).status_code == 422


def test_unknown_reference_and_bad_reference(client: TestClient) -> None:
    r = client.post(f"/v1/estimators/{NAME}", json={"values": {"array": "sha256:" + "a" * 64}})
    assert r.status_code == 422 and "POST /v1/arrays" in r.json()["detail"]
    assert client.post(f"/v1/estimators/{NAME}", json={"values": {"array": "md5:00"}}).status_code == 422


@pytest.mark.parametrize(
    ("body", "status", "type_"),
    [
        (npy(np.array([{"a": 1}], dtype=object)), 422, "npy_dtype"),  # pickled object array
        (pickle.dumps([1.0, 2.0]), 400, "npy_magic"),
        (forged("<f8", (10**10,)), 422, "npy_elements"),  # forged header: refused before any allocation
        (forged("<f8", (2, 2), fortran=True, data=bytes(32)), 422, "npy_order"),
        (forged(">f8", (2,), data=bytes(16)), 422, "npy_dtype"),
        (forged("<f8", (-1,)), 422, "npy_shape"),
        (forged("<f8", (4,), data=bytes(16)), 422, "npy_size"),  # declares 32 bytes, sends 16
        (forged("<f8", (1,), data=bytes(16)), 422, "npy_size"),  # declares 8 bytes, sends 16
        (b"\x93NUMPY\x01\x00" + struct.pack("<H", 40) + b"__import__('os').system('true')".ljust(40), 422, ""),
        (b"\x93NUMPY", 400, "npy_truncated"),
    ],
)
def test_hostile_npy_is_refused(client: TestClient, body: bytes, status: int, type_: str) -> None:
    r = client.post("/v1/arrays", content=body, headers=NPY)
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    if type_:
        assert r.json()["errors"][0]["type"] == type_
    # Refused before anything the header declares is allocated or read: the fastest of three refusals takes less
    # than three times the median of three valid uploads of the client's largest array (1000 elements), both
    # measured here, so the bound holds on a loaded machine.
    valid = sorted(seconds(lambda i=i: array(client, npy(np.full(1000, float(i))))) for i in range(3))
    refusal = min(seconds(lambda: client.post("/v1/arrays", content=body, headers=NPY)) for _ in range(3))
    assert refusal < 3 * valid[1], (refusal, valid)


def test_content_type_and_byte_cap(settings: Settings) -> None:
    with serving(settings, max_array_bytes=4096) as c:
        assert (
            c.post("/v1/arrays", content=npy(np.ones(3)), headers={"content-type": "application/json"}).status_code
            == 415
        )
        assert c.post("/v1/arrays", content=npy(np.ones(1000)), headers=NPY).status_code == 413
        assert c.post("/v1/arrays", content=npy(np.ones(100)), headers=NPY).status_code == 201


def test_codelength_counts_from_an_uploaded_array_match_the_json_list(client: TestClient) -> None:
    ref = array(client, npy(np.array([90, 5, 5], dtype=np.int64)))["id"]
    url = "/v1/estimators/compression.codelength"
    from_json = client.post(url, json={"counts": [90, 5, 5], "method": "nml"}).json()
    from_ref = client.post(url, json={"counts": {"array": ref}, "method": "nml"}).json()
    assert from_ref["result"] == from_json["result"]
    assert from_ref["result"]["codelength_nats"] == pytest.approx(44.16901329807534, rel=1e-12)
    assert from_ref["params_sha256"] != from_json["params_sha256"]
    negative = array(client, npy(np.array([3, -1], dtype=np.int64)))["id"]
    r = client.post(url, json={"counts": {"array": negative}})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][:2] == ["body", "counts"]
