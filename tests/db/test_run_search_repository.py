"""The run search's SQL on both engines (PostgreSQL with ``make test-postgres``): the time limit stops a long
statement, and on PostgreSQL an equality filter on params is served by the GIN index (EXPLAIN)."""

import time
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from db.repositories import runs as runs_repo
from db.repositories.runs import JsonFilter, RunRow, RunSearch
from tests.conftest import PG_URL

LONG = text(
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000) SELECT count(*) FROM c"
)


def test_the_time_limit_stops_a_long_statement(db_url: str) -> None:
    eng = create_engine(db_url, poolclass=NullPool)
    with eng.connect() as conn:
        start = time.monotonic()
        with pytest.raises(runs_repo.SearchTooSlow), runs_repo.time_limit(conn, 0.2):
            conn.execute(LONG).scalar_one()
        assert time.monotonic() - start < 3.0
        conn.rollback()
        with runs_repo.time_limit(conn, 2.0):
            assert conn.execute(text("SELECT 1")).scalar_one() == 1
    eng.dispose()


def _row(n: int) -> RunRow:
    return RunRow(
        seq=0,
        id=str(uuid.uuid4()),
        kind="estimator",
        name="x.y",
        version="1",
        code_version="t",
        params=f'{{"n":{n},"s":"v{n % 7}"}}',
        params_sha256=uuid.uuid4().hex + uuid.uuid4().hex,
        result=f'{{"loss":{n / 10}}}',
        duration_ms=1.0,
        created_at=datetime.now(UTC),
        api_key_id=None,
    )


def _search(*filters: JsonFilter) -> RunSearch:
    return RunSearch("estimator", "x.y", filters, None, None, None, None, True, None)


def test_filters_on_both_engines(db_url: str) -> None:
    eng = create_engine(db_url, poolclass=NullPool)
    with eng.begin() as conn:
        for n in range(40):
            runs_repo.insert(conn, _row(n))
    with eng.connect() as conn:

        def ns(*filters: JsonFilter) -> list[int]:
            return sorted(
                int(r.params.split(":")[1].split(",")[0])
                for r, _ in runs_repo.search_page(conn, _search(*filters), [], 100)
            )

        assert ns(JsonFilter("params", ("n",), "=", 7)) == [7]
        assert ns(JsonFilter("params", ("n",), "=", 7.0)) == [7]
        assert ns(JsonFilter("params", ("s",), "=", "v3")) == [3, 10, 17, 24, 31, 38]
        assert ns(JsonFilter("params", ("n",), ">", 36)) == [37, 38, 39]
        assert ns(JsonFilter("result", ("loss",), "<=", 0.2)) == [0, 1, 2]
        assert ns(JsonFilter("params", ("s",), ">=", "v6"), JsonFilter("params", ("n",), "<", 20)) == [6, 13]
    eng.dispose()


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="PostgreSQL only (make test-postgres)")
def test_postgres_equality_filter_uses_the_gin_index(db_url: str) -> None:
    eng = create_engine(db_url, poolclass=NullPool)
    with eng.begin() as conn:
        for n in range(300):
            runs_repo.insert(conn, _row(n))
    with eng.connect() as conn:
        conn.execute(text("ANALYZE run"))
        conn.execute(text("SET enable_seqscan = off"))
        stmt = runs_repo.search_statement("postgresql", _search(JsonFilter("params", ("n",), "=", 7)), [], 10)
        compiled = stmt.compile(dialect=conn.dialect)
        plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + str(compiled), compiled.params))
        assert "ix_run_params_jsonb" in plan, plan
        assert [
            r.params for r, _ in runs_repo.search_page(conn, _search(JsonFilter("params", ("n",), "=", 7)), [], 10)
        ] == ['{"n":7,"s":"v0"}']
    eng.dispose()
