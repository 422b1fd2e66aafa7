"""Backups and moves of the store.

    python -m scripts.backup snapshot SQLITE_URL DEST.db     consistent copy of a live SQLite store (VACUUM INTO)
    python -m scripts.backup snapshot PG_URL DEST.dump       pg_dump of a PostgreSQL store (custom format)
    python -m scripts.backup restore DEST.dump PG_URL        pg_restore of such a dump into an empty database
    python -m scripts.backup to-postgres SQLITE_URL PG_URL   copy a whole SQLite store into an empty PostgreSQL db

``snapshot`` runs ``VACUUM INTO`` inside one read transaction, so the copy is a consistent snapshot even while the
API writes (WAL readers never block writers); it then runs ``PRAGMA integrity_check`` on the copy. Restore by
stopping the service and putting the copy in place of the database file (never ``cp`` a live WAL database).
For PostgreSQL, ``snapshot`` runs ``pg_dump --format=custom`` (one consistent MVCC snapshot, the API keeps
writing) and checks the file with ``pg_restore --list``; ``restore`` runs ``pg_restore`` in one transaction into a
database with no tables (create it with ``createdb``), so a failed restore leaves it empty. pg_dump refuses a server
of a newer major version, so both check the client tools' major first. The password, if any, goes to the tools in
``PGPASSWORD``, never on their command line.
``to-postgres`` migrates the target with our Alembic migrations, refuses a non-empty target, copies every table in
foreign-key order with Core executemany in chunks, in one transaction, and moves the id sequences past the copied
rows.
"""

import argparse
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine, func, select, text
from sqlalchemy.engine import URL, make_url

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


def is_postgres(url: str) -> bool:
    return make_url(url).get_backend_name() == "postgresql"


def _libpq(url: str) -> tuple[list[str], dict[str, str]]:
    """The libpq connection arguments of a SQLAlchemy PostgreSQL URL, and the environment carrying its password."""
    u: URL = make_url(url)
    args = ["--dbname", u.database or "", "--username", u.username or "", "--host", u.host or "127.0.0.1"]
    args += ["--port", str(u.port or 5432)]
    env = dict(os.environ)
    if u.password is not None:
        env["PGPASSWORD"] = str(u.password)
    return args, env


def tool_major(tool: str) -> int:
    """The major version of a PostgreSQL client tool (``pg_dump (PostgreSQL) 15.20 (Debian …)`` → 15)."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, check=True).stdout
    except FileNotFoundError:
        raise SystemExit(f"{tool} is not installed (Debian: apt-get install postgresql-client)") from None
    return int(re.search(r"\) (\d+)", out).group(1))


def server_major(url: str) -> int:
    engine = make_single_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SHOW server_version_num")).scalar_one()) // 10000
    finally:
        engine.dispose()


def _check_tool(tool: str, url: str) -> None:
    client, server = tool_major(tool), server_major(url)
    if client < server:
        raise SystemExit(
            f"{tool} {client} is older than the PostgreSQL {server} server and cannot read it: use the server's own "
            f"{tool} (e.g. the compose `backup` service, which runs it from the postgres image)"
        )


def pg_snapshot(url: str, dest: Path) -> None:
    """``pg_dump --format=custom`` of the database at ``url`` into ``dest`` (written beside it, then renamed), checked
    with ``pg_restore --list``."""
    if dest.exists():
        raise SystemExit(f"{dest} exists; choose a new file")
    _check_tool("pg_dump", url)
    args, env = _libpq(url)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    try:
        subprocess.run(["pg_dump", "--format=custom", "--file", str(partial), *args], env=env, check=True)
        subprocess.run(["pg_restore", "--list", str(partial)], capture_output=True, check=True)
    except subprocess.CalledProcessError as e:
        partial.unlink(missing_ok=True)
        raise SystemExit(f"{e.cmd[0]} failed (exit {e.returncode})") from None
    partial.rename(dest)


def pg_restore(dump: Path, url: str) -> None:
    """``pg_restore`` of a custom-format dump into the empty database at ``url``, in one transaction."""
    if not dump.is_file():
        raise SystemExit(f"no dump at {dump}")
    _check_tool("pg_restore", url)
    engine = make_single_engine(url)
    try:
        with engine.connect() as conn:
            tables = conn.execute(
                text("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()")
            ).scalar_one()
    finally:
        engine.dispose()
    if tables:
        raise SystemExit(f"the target database has {tables} tables; restore into an empty one (createdb NAME)")
    args, env = _libpq(url)
    command = ["pg_restore", "--exit-on-error", "--single-transaction", "--no-owner", *args, str(dump)]
    if subprocess.run(command, env=env).returncode:
        raise SystemExit("pg_restore failed; the target database is left as it was")


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
    p = sub.add_parser("snapshot", help="consistent copy of a live store (SQLite file or PostgreSQL dump)")
    p.add_argument("source_url")
    p.add_argument("dest", type=Path)
    p = sub.add_parser("restore", help="restore a PostgreSQL dump into an empty database")
    p.add_argument("dump", type=Path)
    p.add_argument("target_url")
    p = sub.add_parser("to-postgres", help="copy a SQLite store into an empty PostgreSQL database")
    p.add_argument("source_url")
    p.add_argument("target_url")
    p.add_argument("--chunk", type=int, default=2000)
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        (pg_snapshot if is_postgres(args.source_url) else snapshot)(args.source_url, args.dest)
        print(f"wrote {args.dest}")
    elif args.command == "restore":
        pg_restore(args.dump, args.target_url)
        print(f"restored {args.dump}")
    else:
        copied = to_postgres(args.source_url, args.target_url, args.chunk)
        for name, n in copied.items():
            print(f"{name}: {n} rows")


if __name__ == "__main__":
    main(sys.argv[1:])
