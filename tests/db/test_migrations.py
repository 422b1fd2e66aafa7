"""Migrations are the only way the schema is made: upgrade/downgrade round trip, and models == migrations."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect
from sqlalchemy.pool import NullPool

from db.base import Base
from db.migrate import downgrade, upgrade


def _tables(url: str) -> set[str]:
    eng = create_engine(url, poolclass=NullPool)
    names = set(inspect(eng).get_table_names())
    eng.dispose()
    return names


def test_models_match_migrations(db_url: str) -> None:
    eng = create_engine(db_url, poolclass=NullPool)
    with eng.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    eng.dispose()
    assert diff == []


@pytest.mark.slow
def test_downgrade_to_base_and_up_again(db_url: str) -> None:
    expected = {t.name for t in Base.metadata.sorted_tables}
    assert expected <= _tables(db_url)
    downgrade(db_url, "base")
    assert _tables(db_url) & expected == set()
    upgrade(db_url)
    assert expected <= _tables(db_url)
