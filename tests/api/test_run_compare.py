"""``GET /v1/runs/compare``: the params that differ and the scalar result fields side by side, version differences
flagged, the runs' visibility kept; values against C(2, n) = sum_k binom(n, k) (k/n)^k ((n-k)/n)^(n-k)."""

import dataclasses
import math
import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from db.repositories import runs as runs_repo
from tests.factories import api_key
from usecases.settings import Settings

URL = "/v1/estimators/compression.nml_regret"


def _run(client: TestClient, n: int, headers: dict[str, str] | None = None, num_symbols: int = 2) -> dict:
    r = client.post(URL, json={"num_symbols": num_symbols, "n": n}, headers=headers or {})
    assert r.status_code == 200, r.text
    return r.json()


def test_params_that_differ_and_results_side_by_side(client: TestClient) -> None:
    a, b = _run(client, 2), _run(client, 3)
    r = client.get("/v1/runs/compare", params={"ids": f"{a['id']},{b['id']}"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["kind"], body["name"], body["versions_differ"]) == ("estimator", "compression.nml_regret", False)
    assert [x["id"] for x in body["runs"]] == [a["id"], b["id"]]
    assert body["params"] == {"n": [2, 3]}  # num_symbols is the same: not listed
    assert body["result"]["log_c_nats"] == pytest.approx([math.log(2.5), math.log(26 / 9)], rel=1e-12)
    assert body["result"]["n"] == [2, 3]


def test_bad_selections(client: TestClient) -> None:
    a, b = _run(client, 2), _run(client, 3)
    other = client.post("/v1/estimators/minhash.variance", json={"intersection": 1, "union": 2, "num_perm": 4}).json()
    for ids in (a["id"], f"{a['id']},{a['id']}", ",".join([a["id"]] * 9), f"{a['id']},{other['id']}"):
        r = client.get("/v1/runs/compare", params={"ids": ids})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["query", "ids"], ids
    assert client.get("/v1/runs/compare", params={"ids": f"{a['id']},nope"}).status_code == 404
    alice, bob = api_key(client, "estimators:run", name="alice"), api_key(client, "estimators:run", name="bob")
    own = _run(client, 4, alice)
    assert client.get("/v1/runs/compare", params={"ids": f"{a['id']},{own['id']}"}, headers=bob).status_code == 404
    assert client.get("/v1/runs/compare", params={"ids": f"{b['id']},{own['id']}"}, headers=alice).status_code == 200


def test_version_differences_are_flagged(client: TestClient, settings: Settings) -> None:
    a = _run(client, 2)
    eng = create_engine(settings.database_url, poolclass=NullPool)
    with eng.begin() as conn:
        row = runs_repo.get(conn, a["id"])
        assert row is not None
        old = dataclasses.replace(row, id=str(uuid.uuid4()), version="0", params_sha256="0" * 64)
        runs_repo.insert(conn, old)
    eng.dispose()
    body = client.get("/v1/runs/compare", params={"ids": f"{a['id']},{old.id}"}).json()
    assert body["versions_differ"] is True and [x["version"] for x in body["runs"]] == ["1", "0"]
    assert body["params"] == {}


def test_cli_tags_finds_and_compares(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from client import Client
    from client.cli import main

    api = Client(http=client)
    api.headers = api_key(client, "estimators:run", name="alice")
    a, b = (
        api.run("compression.nml_regret", {"num_symbols": 2, "n": 2}),
        api.run("compression.nml_regret", {"num_symbols": 2, "n": 3}),
    )
    assert main(["run-tag", a["id"], "--tag", "exp=a b", "--note", "first"], client=api) == 0
    assert json.loads(capsys.readouterr().out) == {"id": a["id"], "tags": {"exp": "a b"}, "note": "first"}
    assert main(["runs", "--tag", "exp=a b"], client=api) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [a["id"]]
    args = ["runs", "--name", "compression.nml_regret", "--filter", "param.n>=2", "--sort", "result.log_c_nats"]
    assert main([*args, "--order", "asc"], client=api) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [a["id"], b["id"]]
    assert main(["run-compare", a["id"], b["id"]], client=api) == 0
    assert json.loads(capsys.readouterr().out)["params"] == {"n": [2, 3]}
    assert main(["run-tag", a["id"], "--tag", "novalue"], client=api) != 0
