"""api/auth.py: every route says in its signature which key may call it (the scoped aliases), and the table of
routes and scopes is the one docs/architecture.md gives; each alias refuses a missing key (401) and a key
without its scope (403), and admits an admin key for every scope."""

import asyncio
from typing import Any

import pytest
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from api.auth import caller_with
from usecases.api_keys import Principal
from usecases.errors import Forbidden, Unauthorized
from usecases.settings import Settings

SCOPED_ROUTES = {
    ("POST", "/v1/api-keys"): "admin",
    ("GET", "/v1/api-keys"): "admin",
    ("DELETE", "/v1/api-keys/{key_id}"): "admin",
    ("POST", "/v1/benchmarks"): "benchmarks:write",
    ("PUT", "/v1/benchmarks/{benchmark_id}/answer-key"): "benchmarks:write",
    ("POST", "/v1/benchmarks/{benchmark_id}/answer-key/versions/{version}/restore"): "benchmarks:write",
    ("POST", "/v1/benchmarks/{benchmark_id}/rescore"): "admin",
    ("POST", "/v1/benchmarks/{benchmark_id}/submissions"): "submissions:write",
    ("POST", "/v1/reproductions/{paper}"): "admin",
}
"""Routes that need a key with a scope (docs/architecture.md, "Who may call a route"); the ``KEYED_ROUTES`` need
any key; every other route is open to anonymous callers (with ``REQUIRE_KEYS``, runs and uploads need
``estimators:run``)."""
KEYED_ROUTES = {
    ("GET", "/v1/api-keys/self"),
    ("POST", "/v1/api-keys/self/rotate"),
    ("GET", "/v1/benchmarks/{benchmark_id}/submissions"),
    ("GET", "/v1/submissions/{submission_id}"),
    ("GET", "/v1/submissions/{submission_id}/items"),
    ("DELETE", "/v1/submissions/{submission_id}"),
    ("PATCH", "/v1/submissions/{submission_id}"),
    ("GET", "/v1/benchmarks/{benchmark_id}/owners"),
    ("POST", "/v1/benchmarks/{benchmark_id}/owners"),
    ("DELETE", "/v1/benchmarks/{benchmark_id}/owners/{key_id}"),
    ("GET", "/v1/benchmarks/{benchmark_id}/participants"),
    ("POST", "/v1/benchmarks/{benchmark_id}/participants"),
    ("DELETE", "/v1/benchmarks/{benchmark_id}/participants/{participant_id}"),
    ("GET", "/v1/benchmarks/{benchmark_id}/audit"),
    ("GET", "/v1/benchmarks/{benchmark_id}/answer-key/versions"),
    ("GET", "/v1/benchmarks/{benchmark_id}/answer-key/versions/{version}"),
    ("POST", "/v1/benchmarks/{benchmark_id}/phases"),
    ("PATCH", "/v1/benchmarks/{benchmark_id}/phases/{phase_id}"),
    ("DELETE", "/v1/benchmarks/{benchmark_id}/phases/{phase_id}"),
}
"""Routes open to any key (``api.auth.AnyKey``: 401 without one); what the key may see or change is the use
case's (docs/challenges.md)."""


def _dependency_names(dependant: Dependant) -> set[str]:
    names: set[str] = set()
    for sub in dependant.dependencies:
        names.add(getattr(sub.call, "__name__", ""))
        names |= _dependency_names(sub)
    return names


def _api_routes(routes: list[Any]) -> list[APIRoute]:
    """The app's routes, those of included routers too (FastAPI >= 0.16x keeps an included router whole)."""
    out: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            out.append(route)
        elif hasattr(route, "original_router"):
            out += _api_routes(route.original_router.routes)
    return out


@pytest.fixture(scope="module")
def routes() -> list[APIRoute]:
    from api.app import create_app  # here, not at collection

    app = create_app(Settings(database_url="sqlite://", secret_key="scopes", log_level="WARNING"))
    found = _api_routes(app.routes)
    assert len(found) > 50  # every router was walked
    return found


def test_each_route_declares_the_scope_of_the_access_table(routes: list[APIRoute]) -> None:
    declared: dict[tuple[str, str], str] = {}
    for route in routes:
        scopes = [
            n.removeprefix("caller_with_") for n in _dependency_names(route.dependant) if n.startswith("caller_with_")
        ]
        assert len(scopes) <= 1, (route.path, scopes)
        for method in route.methods or ():
            if scopes:
                declared[(method, route.path)] = scopes[0].replace("_", ":")
    assert declared == SCOPED_ROUTES
    keyed = {(m, r.path) for r in routes if "any_key" in _dependency_names(r.dependant) for m in r.methods or ()}
    assert keyed == KEYED_ROUTES


def _call(scope: str, principal: Any) -> Principal:
    return asyncio.run(caller_with(scope)(principal))


@pytest.mark.parametrize("scope", ["admin", "benchmarks:write", "submissions:write"])
def test_an_alias_admits_its_scope_and_admin_and_refuses_the_rest(scope: str) -> None:
    holder = Principal("k1", "holder", frozenset({scope}))
    admin = Principal("k2", "admin", frozenset({"admin"}))
    other = Principal("k3", "other", frozenset({"estimators:run"}))
    assert _call(scope, holder) is holder
    assert _call(scope, admin) is admin
    with pytest.raises(Forbidden, match=scope):
        _call(scope, other)
    with pytest.raises(Unauthorized, match=scope):
        _call(scope, None)
