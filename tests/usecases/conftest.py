"""Use cases called directly (no HTTP): ``services`` is built on the test's copy of the migrated template database
(tests/conftest.py ``settings``); without a job queue unless a test builds its own."""

from collections.abc import Iterator

import pytest

from usecases.services import Services
from usecases.settings import Settings


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "off"}))
    yield s
    s.dispose()
