"""Answers that say what happened: ``cached`` only on a call that found its stored run, and putting back an earlier
answer key makes a new current version with that content (identical to the current one: nothing changes)."""

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.pool import NullPool

from tests.factories import api_key, benchmark, film_key_items, post_submission, serving
from usecases.settings import Settings

URL = "/v1/estimators/compression.nml_regret"


def test_cached_only_on_the_call_that_found_a_stored_run(client: TestClient) -> None:
    first = client.post(URL, json={"num_symbols": 2, "n": 3})
    again = client.post(URL, json={"num_symbols": 2, "n": 3})
    assert (first.json()["cached"], again.json()["cached"]) == (False, True)
    assert again.json()["id"] == first.json()["id"]
    read = client.get(f"/v1/runs/{first.json()['id']}").json()
    assert read["id"] == first.json()["id"] and read["cached"] is False
    listed = client.get("/v1/runs").json()["items"]
    assert [r["id"] for r in listed] == [first.json()["id"]] and listed[0]["cached"] is False


def _scorings(settings: Settings) -> int:
    eng = create_engine(settings.database_url, poolclass=NullPool)
    with eng.connect() as conn:
        n = conn.execute(select(func.count()).select_from(text("scoring"))).scalar_one()
    eng.dispose()
    return n


def test_putting_back_an_earlier_answer_key_makes_it_current_again(settings: Settings) -> None:
    with serving(settings, queue="off") as c:
        owner = api_key(c, "benchmarks:write", name="maintainer")
        alice = api_key(c, "submissions:write", name="alice")
        v1_items = film_key_items()
        bench = benchmark(c, owner, items=v1_items)
        sub = post_submission(c, bench, alice, "m", 8).json()
        url = f"/v1/benchmarks/{bench['id']}/answer-key"
        v2_items = film_key_items()
        v2_items[0]["answer_idx"] = 3  # the submission's q0 (choice 0) stays wrong, q0 was right under v1
        v2 = c.put(url, json={"items": v2_items}, headers=owner)
        assert v2.status_code == 201 and v2.json()["answer_key_version"] == 2
        score = c.get(f"/v1/submissions/{sub['id']}", headers=alice).json()["scores"]["accuracy"]["value"]
        assert score == pytest.approx(0.7, abs=1e-12)  # 7 of 10 public items under v2

        back = c.put(url, json={"items": v1_items}, headers=owner)
        assert back.status_code == 201, back.text
        assert back.json()["answer_key_version"] == 3 and back.json()["created"] is True
        assert back.json()["answer_key_sha256"] == bench["answer_key_sha256"] and back.json()["rescored"] == 1
        now = c.get(f"/v1/benchmarks/{bench['id']}").json()
        assert now["answer_key_version"] == 3 and now["answer_key_sha256"] == bench["answer_key_sha256"]
        assert [(v["version"], v["sha256"] == bench["answer_key_sha256"]) for v in now["versions"]] == [
            (1, True),
            (2, False),
            (3, True),
        ]
        scored = c.get(f"/v1/submissions/{sub['id']}", headers=alice).json()
        assert scored["answer_key_version"] == 3
        assert scored["scores"]["accuracy"]["value"] == pytest.approx(0.8, abs=1e-12)  # v1 again: 8 of 10
        assert c.get(f"/v1/benchmarks/{bench['id']}/leaderboard").json()["answer_key_version"] == 3

        scorings = _scorings(settings)
        same = c.put(url, json={"items": v1_items}, headers=owner)
        assert same.status_code == 200
        assert same.json() | {"rescore_job_id": None} == {
            "benchmark_id": bench["id"],
            "answer_key_version": 3,
            "answer_key_sha256": bench["answer_key_sha256"],
            "created": False,
            "rescored": 0,
            "rescore_job_id": None,
        }
        assert _scorings(settings) == scorings
        assert c.get(f"/v1/benchmarks/{bench['id']}").json()["answer_key_version"] == 3
