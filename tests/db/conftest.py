"""The repository tests' engines over the per-test database."""

from collections.abc import Iterator

import pytest

from db.engine import Engines, make_engines


@pytest.fixture
def engines(db_url: str) -> Iterator[Engines]:
    e = make_engines(db_url)
    yield e
    e.dispose()
