"""Schemathesis over every route in the OpenAPI document (bounded examples): no 5xx, no response that breaks
its own schema, no undocumented status, no schema-violating request accepted. Not checked: that every
schema-valid request succeeds (domain rules such as intersection <= union or cost caps rightly answer 422), and
``ignored_auth`` (reads are open unless ESTIBENCH_REQUIRE_KEYS is set)."""

import os
import tempfile
from pathlib import Path

import hypothesis
import pytest
import schemathesis
from schemathesis.specs.openapi.checks import ignored_auth, positive_data_acceptance, use_after_free

from api.app import create_app
from db.migrate import upgrade
from usecases.settings import Settings

pytestmark = [pytest.mark.slow, pytest.mark.fuzz]

EXAMPLES = int(os.environ.get("ESTIBENCH_FUZZ_EXAMPLES", "25"))
"""Hypothesis examples per operation: ``make test`` runs a few, ``make test-heavy`` 25 (the default)."""
COVERAGE_PHASE = EXAMPLES >= 25
"""Schemathesis's coverage phase (boundary values of every schema keyword, about 30 s per operation whatever the
example count) runs with the full example count only."""

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
schema.config.phases.coverage.enabled = COVERAGE_PHASE
CANCELLED_JOB_READ = ("GET", "/v1/jobs/{job_id}")
"""A job read after ``DELETE /v1/jobs/{id}`` answers 200 on purpose: cancelling keeps the job and its status
readable (the DELETE's documentation says so), which schemathesis's ``use_after_free`` check (ST301) reads as a
resource used after deletion. The check is off for this read only."""


def excluded_checks(case: schemathesis.Case) -> list:
    """The checks not run on ``case`` (see the module docstring and ``CANCELLED_JOB_READ``)."""
    checks = [ignored_auth, positive_data_acceptance]
    if (case.operation.method.upper(), case.operation.path) == CANCELLED_JOB_READ:
        checks.append(use_after_free)
    return checks


@schema.parametrize()
@hypothesis.settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
)
def test_api_contract(case) -> None:
    case.call_and_validate(excluded_checks=excluded_checks(case))


@schema.parametrize()
@hypothesis.settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    derandomize=True,
)
def test_api_contract_as_admin(case) -> None:
    """The same with the bootstrap admin key, so the authenticated branches (benchmark registration with fuzzed
    answer keys, submissions, key management) are exercised too."""
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {ADMIN_KEY}"}
    case.call_and_validate(excluded_checks=excluded_checks(case))
