"""Alembic environment: the URL comes from ``-x url=…``, the config's ``sqlalchemy.url``, or ESTIBENCH_DATABASE_URL."""

import os

from alembic import context
from sqlalchemy import create_engine, pool

from db import models  # noqa: F401  (registers the tables on Base.metadata)
from db.base import Base

config = context.config


def _url() -> str:
    return (
        context.get_x_argument(as_dictionary=True).get("url")
        or config.get_main_option("sqlalchemy.url")
        or os.environ.get("ESTIBENCH_DATABASE_URL", "sqlite:///./estibench.db")
    )


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=Base.metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is not None:
        context.configure(connection=connectable, target_metadata=Base.metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
