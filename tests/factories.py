"""Shared test factories: API keys, benchmarks, submissions, arrays and runs.

The HTTP factories take any client with ``post`` (FastAPI's ``TestClient`` or ``httpx.Client``) and assert the
status the call must have, so a test reads as the steps it takes. ``serving(settings, **overrides)`` is the app
with changed settings. The film_mcq answer keys and predictions are the suite's usual benchmark: ``n_public`` public
items (answer ``i % 4``, three films) and ``n_private`` private ones (answer 1), so accuracies are known by hand.
"""

import io
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from usecases.settings import Settings

ADMIN_KEY = "ek_admin_test_bootstrap_key"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
NPY = {"content-type": "application/x-npy"}


@contextmanager
def serving(settings: Settings, **overrides: object) -> Iterator[Any]:
    """A ``TestClient`` over the app built from ``settings`` with ``overrides`` (5xx answered, not raised)."""
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app(settings.model_copy(update=overrides)), raise_server_exceptions=False) as c:
        yield c


def wait_until(condition: Callable[[], Any], timeout_s: float = 10.0, what: str = "the condition") -> Any:
    """Poll ``condition`` every 10 ms until it returns a truthy value (returned), failing after ``timeout_s``: waits
    on an event instead of sleeping a fixed time, so a busy machine only makes the wait longer."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout_s:g} s")
        time.sleep(0.01)
    return value


def api_key(client: Any, *scopes: str, name: str = "someone") -> dict[str, str]:
    """A new key with ``scopes``, created by the bootstrap admin; its request headers."""
    r = client.post("/v1/api-keys", json={"name": name, "scopes": list(scopes)}, headers=ADMIN)
    assert r.status_code == 201, r.text
    return {"X-API-Key": r.json()["key"]}


def film_key_items(n_public: int = 10, n_private: int = 4) -> list[dict]:
    """A film_mcq answer key: public item ``q{i}`` answers ``i % 4`` (film ``f{i % 3}``), private ``p{i}`` 1."""
    items = [
        {"item_id": f"q{i}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 3}"} for i in range(n_public)
    ]
    items += [
        {"item_id": f"p{i}", "num_options": 4, "answer_idx": 1, "film_id": "fp", "split": "private"}
        for i in range(n_private)
    ]
    return items


def film_predictions(correct_public: int, correct_private: int = 0, n_public: int = 10, n_private: int = 4) -> dict:
    """Predictions for ``film_key_items``: the first ``correct_public`` public and ``correct_private`` private
    items right, the others wrong."""
    items = [{"item_id": f"q{i}", "choice_idx": i % 4 if i < correct_public else (i + 1) % 4} for i in range(n_public)]
    items += [{"item_id": f"p{i}", "choice_idx": 1 if i < correct_private else 2} for i in range(n_private)]
    return {"items": items}


def benchmark(
    client: Any,
    owner: dict[str, str] | None = None,
    *,
    scorer: str = "film_mcq",
    items: list[dict] | None = None,
    name: str | None = None,
    **extra: object,
) -> dict:
    """A registered benchmark (201) owned by ``owner`` (default: a new ``benchmarks:write`` key, "maintainer"),
    named ``name`` (default ``{scorer}-bench``), with ``items`` (default ``film_key_items()``) as its answer key and
    ``extra`` fields (``description``, ``max_submissions_per_day``, ``scorer_params``...) as given."""
    owner = owner or api_key(client, "benchmarks:write", name="maintainer")
    body = {
        "name": name or f"{scorer}-bench",
        "scorer": scorer,
        "answer_key": {"items": film_key_items() if items is None else items},
        **extra,
    }
    r = client.post("/v1/benchmarks", json=body, headers=owner)
    assert r.status_code == 201, r.text
    return r.json()


def post_submission(
    client: Any,
    bench: str | dict,
    headers: dict[str, str],
    model: str = "m",
    correct: int = 5,
    private: int = 0,
    *,
    predictions: dict | None = None,
    **body: object,
) -> Any:
    """``POST /v1/benchmarks/{id}/submissions`` of ``bench`` (an id or a benchmark), any status: ``predictions``, or
    ``film_predictions(correct, private)``; ``body`` adds fields (``metadata``)."""
    bench_id = bench if isinstance(bench, str) else bench["id"]
    preds = film_predictions(correct, private) if predictions is None else predictions
    return client.post(
        f"/v1/benchmarks/{bench_id}/submissions", json={"model": model, "predictions": preds, **body}, headers=headers
    )


def submission(client: Any, bench: str | dict, headers: dict[str, str], *args: Any, **kw: Any) -> dict:
    """A scored submission (201): ``post_submission``'s arguments."""
    r = post_submission(client, bench, headers, *args, **kw)
    assert r.status_code == 201, r.text
    return r.json()


def npy(arr: np.ndarray) -> bytes:
    """``arr`` as ``np.save`` writes it."""
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def forged(descr: str, shape: tuple, fortran: bool = False, data: bytes = b"") -> bytes:
    """A version 1.0 npy header written by hand (claims anything), followed by ``data``."""
    header = repr({"descr": descr, "fortran_order": fortran, "shape": shape}).encode()
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


def array(client: Any, body: bytes | np.ndarray) -> dict:
    """An uploaded array (201): ``body`` as npy bytes, or an array to save."""
    content = npy(body) if isinstance(body, np.ndarray) else body
    r = client.post("/v1/arrays", content=content, headers=NPY)
    assert r.status_code == 201, r.text
    return r.json()


def run(client: Any, name: str, params: dict, headers: dict[str, str] | None = None) -> dict:
    """A synchronous estimator run (200): ``POST /v1/estimators/{name}``."""
    r = client.post(f"/v1/estimators/{name}", json=params, headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


# -- the same, through the use cases (tests/usecases/: no HTTP) --------------------------------------------------


def admin(services: Any) -> Any:
    """The bootstrap admin's ``Principal`` (the key of the test settings, stored on first use)."""
    from usecases.api_keys import authenticate, ensure_bootstrap_admin

    ensure_bootstrap_admin(services, announce=lambda _: None)
    return authenticate(services, services.settings.admin_key)


def principal(services: Any, *scopes: str, name: str = "someone") -> Any:
    """The ``Principal`` of a new key with ``scopes``, created by the admin and authenticated by its token."""
    from usecases.api_keys import authenticate, create_key

    _, token = create_key(services, admin(services), name, list(scopes))
    return authenticate(services, token)


def stored_benchmark(services: Any, owner: Any, *, items: list[dict] | None = None, **fields: Any) -> Any:
    """``create_benchmark``'s view of a film_mcq benchmark ``films`` (``film_key_items()`` unless ``items``)."""
    from usecases.benchmarks import create_benchmark

    values = {"name": "films", "scorer": "film_mcq", "description": "", "scorer_params": {}}
    values |= {"max_submissions_per_day": 0, "answer_key": film_key_items() if items is None else items} | fields
    return create_benchmark(services, owner, **values)


def stored_run(services: Any, owner: Any | None, name: str = "test.run", result: dict | None = None) -> Any:
    """A run stored as an estimator's would be (``store_run``), made by ``owner`` (a ``Principal``, or None)."""
    import json
    import uuid

    from usecases.runs import Computed, sha256_hex, store_run

    params = json.dumps({"tag": uuid.uuid4().hex})
    computed = Computed(json.dumps(result or {"total": 1.0}), 1.0, [])
    key = ("estimator", name, "1", sha256_hex(params))
    row, _ = store_run(services.engines, key, params, computed, owner.key_id if owner else None)
    return row


def scored_submission(
    services: Any,
    bench_id: str,
    items: dict[str, tuple[list[str], list[float]]],
    key_id: str | None = None,
    **flags: Any,
) -> str:
    """The id of a submission of ``key_id`` written straight to the store with one scoring against answer-key
    version 1: ``items`` maps each split to (item ids, per-item accuracy); ``flags`` are the row's other fields
    (withdrawn_at, public, phase_id)."""
    import uuid
    from datetime import UTC, datetime

    from db.repositories import submissions as sub_repo
    from db.repositories.submissions import SplitItems, SubmissionRow

    sid = str(uuid.uuid4())
    parts = [SplitItems(split, ids, {"accuracy": np.array(vals, dtype=float)}) for split, (ids, vals) in items.items()]
    now = datetime.now(UTC)
    row = SubmissionRow(0, sid, bench_id, sid[:8], "{}", key_id, now, flags.pop("withdrawn_at", None), **flags)
    with services.engines.write.begin() as conn:
        sub_repo.insert_submission(conn, row, "[]")
        sub_repo.insert_scoring(
            conn,
            submission_id=sid,
            answer_key_version=1,
            scorer_version="1",
            details="{}",
            when=now,
            scores=[],
            items=parts,
        )
    return sid
