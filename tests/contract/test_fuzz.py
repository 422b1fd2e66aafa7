"""Schemathesis over every route in the OpenAPI document (bounded examples): no 5xx, no response that breaks
its own schema, no undocumented status, no schema-violating request accepted. Not checked: that every
schema-valid request succeeds (domain rules such as intersection <= union or cost caps rightly answer 422), and
``ignored_auth`` (reads are open unless ESTIBENCH_REQUIRE_KEYS is set)."""

import tempfile
from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis.specs.openapi.checks import ignored_auth, positive_data_acceptance

from api.app import create_app
from db.migrate import upgrade
from usecases.settings import Settings

pytestmark = pytest.mark.slow

ADMIN_KEY = "ek_fuzz_admin_key"
_DIR = Path(tempfile.mkdtemp(prefix="estibench-fuzz-"))
_URL = f"sqlite:///{_DIR / 'fuzz.db'}"
upgrade(_URL)
APP = create_app(
    Settings(
        env="test",
        database_url=_URL,
        secret_key="fuzz",
        admin_key=ADMIN_KEY,
        log_level="WARNING",
        data_dir=_DIR,
        rate_limit_per_minute=0,
    )
)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@hypothesis.settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
)
def test_api_contract(case) -> None:
    case.call_and_validate(excluded_checks=[ignored_auth, positive_data_acceptance])


@schema.parametrize()
@hypothesis.settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
)
def test_api_contract_as_admin(case) -> None:
    """The same with the bootstrap admin key, so the authenticated branches (benchmark registration with fuzzed
    answer keys, submissions, key management) are exercised too."""
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {ADMIN_KEY}"}
    case.call_and_validate(excluded_checks=[ignored_auth, positive_data_acceptance])
