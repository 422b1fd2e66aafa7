"""Run Alembic migrations programmatically (``python -m db.migrate [URL]``); the only way the schema is made."""

import sys
from pathlib import Path

from alembic import command
from alembic.config import Config

ROOT = Path(__file__).resolve().parent


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


if __name__ == "__main__":
    import os

    upgrade(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ESTIBENCH_DATABASE_URL", "sqlite:///./estibench.db"))
