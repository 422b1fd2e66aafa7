"""Uploaded arrays in the use cases (usecases/arrays.py): references are costed from the stored shapes before any
array is loaded, a stored array is read once however often a request references it, and a keyed upload is usable
only by the keys granted it (docs/architecture.md, "The one run path"; docs/security.md)."""

import hashlib
import io
from collections.abc import Iterator

import numpy as np
import pytest

from db.repositories import arrays as arrays_repo
from service.errors import InvalidInput
from service.registry import ESTIMATORS
from service.types import ArrayRef
from tests import support_estimators
from tests.factories import principal
from usecases import arrays, run_requests
from usecases.api_keys import Principal
from usecases.errors import NotFound
from usecases.run_requests import Answered, Queued
from usecases.services import Services
from usecases.settings import Settings


@pytest.fixture
def services(settings: Settings, test_estimator: str) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "memory"}))
    yield s
    s.dispose()


def upload(services: Services, values: np.ndarray, owner: Principal | None = None) -> str:
    buf = io.BytesIO()
    np.save(buf, values)
    sha = hashlib.sha256(buf.getvalue()).hexdigest()
    arrays.store_array(services, sha, values.dtype, values.shape, values.tobytes(), owner)
    return f"sha256:{sha}"


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stored arrays read from the database (their sha256), in order."""
    seen: list[str] = []
    real = arrays_repo.load

    def counting(conn, sha256):  # type: ignore[no-untyped-def]
        seen.append(sha256)
        return real(conn, sha256)

    monkeypatch.setattr(arrays_repo, "load", counting)
    return seen


def test_a_stored_array_is_read_once_however_often_it_is_referenced(services: Services, loads: list[str]) -> None:
    ref = upload(services, np.arange(6, dtype=np.uint8))
    model = ESTIMATORS[support_estimators.NAME].params_model
    items = [model(values=ArrayRef(array=ref), tag=i) for i in range(12)]
    resolved = arrays.resolve_items(services.engines, items, None, ("items",))
    assert loads == [ref.removeprefix("sha256:")]
    assert all(r.values is resolved[0].values for r in resolved)  # converted once, shared read-only
    assert resolved[0].values.dtype == np.float64 and resolved[0].values.tolist() == [0, 1, 2, 3, 4, 5]
    assert not resolved[0].values.flags.writeable


def test_references_are_costed_from_their_stored_shape_before_anything_is_loaded(
    services: Services, loads: list[str]
) -> None:
    ref = upload(services, np.ones(600_000))  # cost 600,000 × 1e-9 s plus 2 × 0.3 s: over the 0.5 s budget
    spec = ESTIMATORS[support_estimators.NAME]
    params = spec.params_model(values=ArrayRef(array=ref), steps=2, step_s=0.3)
    shaped = arrays.resolve(services.engines, params, None, shapes_only=True)
    assert shaped.values.shape == (600_000,) and shaped.values.strides == (0,) and shaped.values.sum() == 0
    assert spec.cost(shaped) == pytest.approx(0.6006)
    outcome = run_requests.run(services, run_requests.make_request(spec, params, None), client=None)
    assert isinstance(outcome, Queued)
    assert loads == []  # queued as a job without the API process reading the array


def test_a_keyed_upload_is_usable_only_by_the_keys_granted_it(services: Services) -> None:
    alice, bob = principal(services, "estimators:run"), principal(services, "estimators:run")
    admin = principal(services, "admin")
    values = np.linspace(0.0, 1.0, 5)
    ref = upload(services, values, alice)
    assert arrays.array_meta(services, alice, ref).shape == [5]
    assert arrays.array_meta(services, admin, ref).shape == [5]
    for stranger in (bob, None):
        with pytest.raises(NotFound):
            arrays.array_meta(services, stranger, ref)
        params = ESTIMATORS[support_estimators.NAME].params_model(values=ArrayRef(array=ref))
        with pytest.raises(InvalidInput, match="no uploaded array"):
            arrays.resolve(services.engines, params, stranger.key_id if stranger else None, ("body",))
    assert upload(services, values, bob) == ref  # the same content: the same id, and now bob may use it
    assert arrays.array_meta(services, bob, ref).shape == [5]
    request = run_requests.make_request(
        ESTIMATORS[support_estimators.NAME],
        ESTIMATORS[support_estimators.NAME].params_model(values=ArrayRef(array=ref)),
        bob.key_id,
    )
    outcome = run_requests.run(services, request, client=None)
    assert isinstance(outcome, Answered) and outcome.run.result == '{"total":2.5,"n":5,"steps":1}'
