"""Backups and moves of the store.

    python -m scripts.backup snapshot SQLITE_URL DEST.db     consistent copy of a live SQLite store (VACUUM INTO)
    python -m scripts.backup to-postgres SQLITE_URL PG_URL   copy a whole SQLite store into an empty PostgreSQL db

``snapshot`` runs ``VACUUM INTO`` inside one read transaction, so the copy is a consistent snapshot even while the
API writes (WAL readers never block writers); it then runs ``PRAGMA integrity_check`` on the copy. Restore by
stopping the service and putting the copy in place of the database file (never ``cp`` a live WAL database).
``to-postgres`` migrates the target with our Alembic migrations, refuses a non-empty target, copies every table in
foreign-key order with Core executemany in chunks, in one transaction, and moves the id sequences past the copied
rows.
"""

import argparse
import sqlite3
import sys
from pathlib import Path

from sqlalchemy import Engine, func, select, text
from sqlalchemy.engine import make_url

from db.base import Base
from db.engine import make_single_engine
from db.migrate import upgrade


def sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not url.startswith("sqlite") or not database:
        raise SystemExit(f"not a SQLite file URL: {url}")
    return Path(database)


def snapshot(source_url: str, dest: Path) -> None:
    """Write a consistent copy of the live SQLite store at ``source_url`` to ``dest`` and check it. A missing
    database is an error that creates nothing (connecting would create an empty one)."""
    database = sqlite_path(source_url)
    if not database.is_file():
        raise SystemExit(
            f"no database at {database} (ESTIBENCH_DATABASE_URL={source_url}): nothing to back up; "
            "set ESTIBENCH_DATABASE_URL to the store's URL"
        )
    if dest.exists():
        raise SystemExit(f"{dest} exists; choose a new file")
    dest.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(database, timeout=30)
    try:
        src.execute("PRAGMA busy_timeout=30000")
        src.execute("VACUUM INTO ?", (str(dest),))
    finally:
        src.close()
    copy = sqlite3.connect(dest)
    try:
        result = copy.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        copy.close()
    if result != "ok":
        raise SystemExit(f"integrity_check of {dest} failed: {result}")


def _revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def to_postgres(source_url: str, target_url: str, chunk: int = 2000) -> dict[str, int]:
    """Copy every table of the SQLite store into an empty, freshly migrated PostgreSQL database."""
    upgrade(target_url)
    src, dst = make_single_engine(source_url), make_single_engine(target_url)
    try:
        if _revision(src) != _revision(dst):
            raise SystemExit(
                f"the source is at revision {_revision(src)} but the code at {_revision(dst)}: "
                "run `python -m db.migrate SOURCE_URL` first"
            )
        tables = Base.metadata.sorted_tables
        copied: dict[str, int] = {}
        with src.connect() as s, dst.begin() as d:
            for table in tables:
                if d.execute(select(func.count()).select_from(table)).scalar_one():
                    raise SystemExit(f"the target table {table.name} is not empty")
            for table in tables:
                order = list(table.primary_key.columns)
                result = s.execution_options(yield_per=chunk).execute(select(table).order_by(*order))
                n = 0
                for part in result.partitions(chunk):
                    d.execute(table.insert(), [dict(r._mapping) for r in part])
                    n += len(part)
                copied[table.name] = n
                if len(order) == 1 and n:
                    seq = d.execute(
                        text("SELECT pg_get_serial_sequence(:t, :c)"), {"t": table.name, "c": order[0].name}
                    ).scalar()
                    if seq:
                        d.execute(
                            text(f'SELECT setval(:s, (SELECT max("{order[0].name}") FROM "{table.name}"))'), {"s": seq}
                        )
        return copied
    finally:
        src.dispose()
        dst.dispose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m scripts.backup", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("snapshot", help="consistent copy of a live SQLite store")
    p.add_argument("source_url")
    p.add_argument("dest", type=Path)
    p = sub.add_parser("to-postgres", help="copy a SQLite store into an empty PostgreSQL database")
    p.add_argument("source_url")
    p.add_argument("target_url")
    p.add_argument("--chunk", type=int, default=2000)
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        snapshot(args.source_url, args.dest)
        print(f"wrote {args.dest}")
    else:
        copied = to_postgres(args.source_url, args.target_url, args.chunk)
        for name, n in copied.items():
            print(f"{name}: {n} rows")


if __name__ == "__main__":
    main(sys.argv[1:])
