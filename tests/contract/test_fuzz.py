"""Schemathesis over every route (bounded examples): no 5xx, no response that breaks its own schema,
no undocumented status, no schema-violating request accepted."""

import hypothesis
import pytest
import schemathesis
from schemathesis.specs.openapi.checks import ignored_auth

from api.app import create_app
from api.settings import Settings


@pytest.fixture(scope="session")
def fuzz_app(tmp_path_factory):
    from db.migrate import upgrade

    path = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    upgrade(f"sqlite:///{path}")
    return create_app(
        Settings(
            env="test",
            database_url=f"sqlite:///{path}",
            secret_key="fuzz",
            log_level="WARNING",
            data_dir=path.parent,
        )
    )


schema = schemathesis.pytest.from_fixture("fuzz_schema")


@pytest.fixture(scope="session")
def fuzz_schema(fuzz_app):
    return schemathesis.openapi.from_asgi("/openapi.json", fuzz_app)


@schema.parametrize()
@hypothesis.settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
)
def test_api_contract(case) -> None:
    case.call_and_validate(excluded_checks=[ignored_auth])
