"""The benchmark platform over HTTP with the film_mcq scorer: registration, submissions, visibility of the
private split, idempotency, quotas, leaderboards (json/csv/ndjson), answer-key versions, re-scoring, comparison."""

import csv
import hashlib
import io
import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text, update
from sqlalchemy.pool import NullPool

from db.engine import make_engines
from db.models import IdempotencyRecord
from db.repositories import idempotency
from service.scoring import film_mcq
from tests.factories import ADMIN, api_key, benchmark, film_key_items, film_predictions, post_submission, serving
from usecases.scoring import dumps
from usecases.submissions import IDEMPOTENCY_STALE, SubmissionIn

Z = 1.959963984540054
STALE_S = IDEMPOTENCY_STALE.total_seconds()


def wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.fixture
def owner(client: TestClient) -> dict:
    return api_key(client, "benchmarks:write", name="maintainer")


@pytest.fixture
def bench(client: TestClient, owner: dict) -> dict:
    return benchmark(client, owner, name="films", description="demo")


@pytest.fixture
def alice(client: TestClient) -> dict:
    return api_key(client, "submissions:write", name="alice")


def test_register_benchmark(client: TestClient, bench: dict, owner: dict) -> None:
    assert bench["answer_key_version"] == 1 and bench["scorer"] == "film_mcq"
    assert bench["primary_metric"] == "accuracy" and len(bench["answer_key_sha256"]) == 64
    again = client.post(
        "/v1/benchmarks",
        json={"name": "films", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}},
        headers=owner,
    )
    assert again.status_code == 409
    detail = client.get(f"/v1/benchmarks/{bench['id']}").json()
    assert [(v["version"], v["n_public"], v["n_private"]) for v in detail["versions"]] == [(1, 10, 4)]
    assert "items" not in json.dumps(detail["versions"])
    listed = client.get("/v1/benchmarks").json()["items"]
    assert [(b["name"], b["answer_key_sha256"]) for b in listed] == [("films", bench["answer_key_sha256"])]


@pytest.mark.parametrize(
    ("patch", "loc"),
    [
        ({"scorer": "nope"}, ["body", "scorer"]),
        ({"scorer_params": {"confidence": 2}}, ["body", "scorer_params", "confidence"]),
        (
            {"answer_key": {"items": [{"item_id": "a", "num_options": 1, "answer_idx": 0, "film_id": "f"}]}},
            ["body", "answer_key", "items", 0, "num_options"],
        ),
        (
            {"answer_key": {"items": [{"item_id": "a", "num_options": 4, "answer_idx": 0, "film_id": "f"}] * 2}},
            ["body", "answer_key", "items", 1, "item_id"],
        ),
    ],
)
def test_register_invalid(client: TestClient, owner: dict, patch: dict, loc: list) -> None:
    body = {"name": "x", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}, **patch}
    r = client.post("/v1/benchmarks", json=body, headers=owner)
    assert r.status_code == 422, r.text
    assert loc in [e["loc"] for e in r.json()["errors"]]


def test_submission_scores_and_private_visibility(client: TestClient, bench: dict, alice: dict) -> None:
    r = post_submission(client, bench, alice, "m1", correct=8, private=3)
    assert r.status_code == 201, r.text
    sub = r.json()
    acc = sub["scores"]["accuracy"]
    assert acc["value"] == pytest.approx(0.8, abs=1e-12) and acc["n"] == 10
    assert (acc["ci_low"], acc["ci_high"]) == pytest.approx(wilson(8, 10), abs=1e-9)
    assert sub["private"] is None and sub["coverage"] == 1.0
    viewed = client.get(f"/v1/submissions/{sub['id']}", headers=alice).json()
    assert viewed == sub and sub["answer_key_version"] == 1
    assert sub["reconstructed"] == [*film_mcq.METRICS, "breakdown"]  # the scorer's reconstructed fields
    assert sub["breakdown"]["protocol"] == "reconstructed-v1" and set(sub["scores"]) == set(film_mcq.METRICS)
    as_admin = client.get(f"/v1/submissions/{sub['id']}", headers=ADMIN).json()
    assert as_admin["private"]["scores"]["accuracy"]["value"] == pytest.approx(0.75)
    own_items = client.get(f"/v1/submissions/{sub['id']}/items", headers=alice).json()["items"]
    assert {i["split"] for i in own_items} == {"public"} and len(own_items) == 10
    assert sum(i["value"] for i in own_items) == 8
    all_items = client.get(f"/v1/submissions/{sub['id']}/items", headers=ADMIN).json()["items"]
    assert len(all_items) == 14


def _walk(value, strings: set, numbers: list) -> None:
    if isinstance(value, dict):
        assert value.get("private") is None, "a private block leaked"
        for k, v in value.items():
            strings.add(k)
            _walk(v, strings, numbers)
    elif isinstance(value, list):
        for v in value:
            _walk(v, strings, numbers)
    elif isinstance(value, str):
        strings.add(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        numbers.append(float(value))


def test_no_route_leaks_private_scores_to_a_submitter(client: TestClient, bench: dict, alice: dict) -> None:
    sub = post_submission(client, bench, alice, "m1", correct=8, private=3).json()
    bid = bench["id"]
    responses = [
        sub,
        client.get(f"/v1/submissions/{sub['id']}", headers=alice).json(),
        client.get(f"/v1/submissions/{sub['id']}/items", headers=alice).json(),
        client.get(f"/v1/benchmarks/{bid}/submissions", headers=alice).json(),
        client.get(f"/v1/benchmarks/{bid}/leaderboard").json(),
        client.get(f"/v1/benchmarks/{bid}/leaderboard", headers=alice).json(),
        [
            json.loads(x)
            for x in client.get(f"/v1/benchmarks/{bid}/leaderboard", params={"format": "ndjson"}).text.splitlines()
        ],
        list(csv.reader(io.StringIO(client.get(f"/v1/benchmarks/{bid}/leaderboard", params={"format": "csv"}).text))),
        client.get(f"/v1/benchmarks/{bid}").json(),
        client.get("/v1/benchmarks").json(),
        client.get("/v1/runs").json(),
    ]
    for body in responses:
        strings: set = set()
        numbers: list = []
        _walk(body, strings, numbers)
        assert not {"p0", "p1", "p2", "p3"} & strings
        assert 0.75 not in numbers and "0.75" not in strings
    for params in ({"split": "private"}, {"split": "private", "format": "csv"}):
        r = client.get(f"/v1/benchmarks/{bid}/leaderboard", params=params, headers=alice)
        assert r.status_code == 403
        assert client.get(f"/v1/benchmarks/{bid}/leaderboard", params=params).status_code == 403
    r = client.get(f"/v1/benchmarks/{bid}/leaderboard", params={"split": "private"}, headers=ADMIN)
    assert r.json()["items"][0]["scores"]["accuracy"]["value"] == pytest.approx(0.75)
    r = client.get(
        f"/v1/benchmarks/{bid}/compare", params={"a": sub["id"], "b": sub["id"], "split": "private"}, headers=alice
    )
    assert r.status_code == 403


def test_unknown_and_duplicate_prediction_ids_are_422(client: TestClient, bench: dict, alice: dict) -> None:
    preds = film_predictions(5)
    preds["items"].append({"item_id": "zzz", "choice_idx": 0})
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions", json={"model": "m", "predictions": preds}, headers=alice
    )
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "predictions", "items", 14, "item_id"]
    preds = film_predictions(5)
    preds["items"].append(dict(preds["items"][0]))
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions", json={"model": "m", "predictions": preds}, headers=alice
    )
    assert r.status_code == 422
    preds = film_predictions(5)
    preds["items"][0]["choice_idx"] = 30
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions", json={"model": "m", "predictions": preds}, headers=alice
    )
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][:4] == ["body", "predictions", "items", 0]
    assert client.get(f"/v1/benchmarks/{bench['id']}/submissions", headers=alice).json()["items"] == []


def test_missing_items_score_zero_and_lower_coverage(client: TestClient, bench: dict, alice: dict) -> None:
    preds = film_predictions(10)
    preds["items"] = preds["items"][:5]
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions", json={"model": "m", "predictions": preds}, headers=alice
    ).json()
    assert r["scores"]["accuracy"]["value"] == pytest.approx(0.5) and r["coverage"] == pytest.approx(0.5)


def test_idempotency_key(client: TestClient, bench: dict, alice: dict) -> None:
    h = {**alice, "Idempotency-Key": "abc"}
    first = post_submission(client, bench, h, "m1", correct=6)
    replay = post_submission(client, bench, h, "m1", correct=6)
    assert first.status_code == replay.status_code == 201 and "idempotent-replayed" not in first.headers
    assert replay.json() == first.json() and replay.headers.get("idempotent-replayed") == "true"
    other = post_submission(client, bench, h, "m1", correct=7)
    assert other.status_code == 422 and other.json()["errors"] == [
        {"loc": ["header", "Idempotency-Key"], "msg": "reused with a different body", "type": "idempotency"}
    ]
    assert len(client.get(f"/v1/benchmarks/{bench['id']}/submissions", headers=alice).json()["items"]) == 1
    plain = post_submission(client, bench, alice, "m2", correct=6)
    assert plain.status_code == 201 and "idempotent-replayed" not in plain.headers


def test_daily_quota_counts_only_successes(client: TestClient, owner: dict, alice: dict) -> None:
    b = client.post(
        "/v1/benchmarks",
        json={
            "name": "q",
            "scorer": "film_mcq",
            "max_submissions_per_day": 2,
            "answer_key": {"items": film_key_items()},
        },
        headers=owner,
    ).json()
    bad = film_predictions(3)
    bad["items"][0]["item_id"] = "unknown"
    for _ in range(3):
        r = client.post(f"/v1/benchmarks/{b['id']}/submissions", json={"model": "m", "predictions": bad}, headers=alice)
        assert r.status_code == 422
    assert post_submission(client, b, alice, "m", 3).status_code == 201
    assert post_submission(client, b, alice, "m", 4).status_code == 201
    r = post_submission(client, b, alice, "m", 5)
    assert r.status_code == 429 and 0 < int(r.headers["retry-after"]) <= 86_401
    bob = api_key(client, "submissions:write", name="bob")
    assert post_submission(client, b, bob, "m", 5).status_code == 201


def test_leaderboard_formats_ranking_and_withdrawal(client: TestClient, bench: dict, alice: dict) -> None:
    bob = api_key(client, "submissions:write", name="bob")
    s_a1 = post_submission(client, bench, alice, "alpha", 6).json()
    s_b = post_submission(client, bench, bob, "beta", 9).json()
    s_a2 = post_submission(client, bench, alice, "alpha", 4).json()
    s_g = post_submission(client, bench, bob, "gamma", 6).json()
    url = f"/v1/benchmarks/{bench['id']}/leaderboard"
    best = client.get(url).json()
    assert [(r["rank"], r["model"], r["submission_id"]) for r in best["items"]] == [
        (1, "beta", s_b["id"]),
        (2, "alpha", s_a1["id"]),
        (3, "gamma", s_g["id"]),
    ]
    latest = client.get(url, params={"rank_by": "latest"}).json()
    assert [r["submission_id"] for r in latest["items"]] == [s_b["id"], s_g["id"], s_a2["id"]]
    page1 = client.get(url, params={"limit": 2}).json()
    page2 = client.get(url, params={"limit": 2, "cursor": page1["next_cursor"]}).json()
    assert [r["model"] for r in page1["items"] + page2["items"]] == ["beta", "alpha", "gamma"]
    assert page2["next_cursor"] is None
    text = client.get(url, params={"format": "csv"}).text
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:8] == [
        "rank",
        "model",
        "submission_id",
        "submitted_at",
        "answer_key_version",
        "accuracy",
        "accuracy_ci_low",
        "accuracy_ci_high",
    ]
    assert rows[1][1] == "beta" and float(rows[1][5]) == pytest.approx(0.9)
    assert float(rows[1][6]) == pytest.approx(wilson(9, 10)[0], abs=1e-9)
    nd = [json.loads(line) for line in client.get(url, params={"format": "ndjson"}).text.splitlines()]
    assert [r["model"] for r in nd] == ["beta", "alpha", "gamma"]
    assert client.delete(f"/v1/submissions/{s_b['id']}", headers=bob).json()["withdrawn_at"] is not None
    assert [r["model"] for r in client.get(url).json()["items"]] == ["alpha", "gamma"]
    assert client.get(url, params={"metric": "nope"}).status_code == 422


@pytest.mark.parametrize("queue", ["immediate", "off"])
def test_new_answer_key_version_rescores_and_keeps_old_rows(settings, queue: str) -> None:
    """With a queue the re-scoring is a job (``immediate`` runs it in-process here); without one it runs inline."""
    with serving(settings, queue=queue) as client:
        owner = api_key(client, "benchmarks:write", name="maintainer")
        alice = api_key(client, "submissions:write", name="alice")
        bench = client.post(
            "/v1/benchmarks",
            json={"name": "films", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}},
            headers=owner,
        ).json()
        sub = post_submission(client, bench, alice, "m", 8).json()
        items = film_key_items()
        items[0]["answer_idx"] = 3
        same = client.put(f"/v1/benchmarks/{bench['id']}/answer-key", json={"items": film_key_items()}, headers=owner)
        assert same.status_code == 200 and same.json()["answer_key_version"] == 1 and not same.json()["created"]
        r = client.put(f"/v1/benchmarks/{bench['id']}/answer-key", json={"items": items}, headers=owner)
        assert r.status_code == 201 and r.json()["answer_key_version"] == 2
        if queue == "off":
            assert r.json()["rescored"] == 1 and r.json()["rescore_job_id"] is None
        else:
            job = client.get(r.headers["location"], headers=owner).json()
            assert job["id"] == r.json()["rescore_job_id"] and job["status"] == "succeeded"
        now = client.get(f"/v1/submissions/{sub['id']}", headers=alice).json()
        assert now["answer_key_version"] == 2 and now["scores"]["accuracy"]["value"] == pytest.approx(0.7)
        assert client.get(f"/v1/benchmarks/{bench['id']}/leaderboard").json()["answer_key_version"] == 2
        (listed,) = client.get("/v1/benchmarks").json()["items"]
        assert (listed["answer_key_version"], listed["answer_key_sha256"]) == (2, r.json()["answer_key_sha256"])
        assert (
            client.put(
                f"/v1/benchmarks/{bench['id']}/answer-key",
                json={"items": items},
                headers=api_key(client, "benchmarks:write"),
            ).status_code
            == 403
        )
        again = client.post(f"/v1/benchmarks/{bench['id']}/rescore", headers=ADMIN)
        assert again.json() == {"benchmark_id": bench["id"], "answer_key_version": 2, "rescored": 1}
        assert client.post(f"/v1/benchmarks/{bench['id']}/rescore", headers=owner).status_code == 403
        eng = create_engine(settings.database_url, poolclass=NullPool)
        with eng.connect() as conn:
            versions = conn.execute(text("SELECT answer_key_version FROM scoring ORDER BY id")).scalars().all()
        eng.dispose()
        assert versions == [1, 2, 2]  # the original scoring, the new version's, the admin re-score: none replaced


def test_compare_uses_exact_mcnemar_on_common_items(client: TestClient, bench: dict, alice: dict) -> None:
    a = post_submission(client, bench, alice, "a", 9).json()
    b = post_submission(client, bench, alice, "b", 3).json()
    r = client.get(f"/v1/benchmarks/{bench['id']}/compare", params={"a": a["id"], "b": b["id"]}).json()
    assert r["test"] == "mcnemar_exact" and r["n_common"] == 10
    # a right & b wrong on items 3..8 (6 items), never the reverse: p = 2 * 0.5**6
    assert (r["result"]["b"], r["result"]["c"]) == (6, 0)
    assert r["result"]["p_value"] == pytest.approx(2 * 0.5**6)


WRITE_ROUTES = [
    ("post", "/v1/benchmarks", "benchmarks:write"),
    ("put", "/v1/benchmarks/{bid}/answer-key", "benchmarks:write"),
    ("post", "/v1/benchmarks/{bid}/submissions", "submissions:write"),
    ("delete", "/v1/submissions/{sid}", "submissions:write"),
    ("post", "/v1/benchmarks/{bid}/rescore", "admin"),
    ("post", "/v1/api-keys", "admin"),
    ("delete", "/v1/api-keys/{kid}", "admin"),
]


def test_every_write_route_checks_keys(client: TestClient, bench: dict, alice: dict) -> None:
    sub = post_submission(client, bench, alice, "m", 5).json()
    revoked = api_key(client, "admin", "benchmarks:write", "submissions:write", name="gone")
    kid = client.get("/v1/api-keys", headers=ADMIN).json()["items"][-1]["id"]
    client.delete(f"/v1/api-keys/{kid}", headers=ADMIN)
    wrong_scope = api_key(client, "estimators:run")
    other_owner = api_key(client, "benchmarks:write", "submissions:write", name="mallory")
    bodies = {
        "/v1/benchmarks": {"name": "z", "scorer": "film_mcq", "answer_key": {"items": film_key_items()}},
        "/v1/benchmarks/{bid}/answer-key": {"items": film_key_items(3)},
        "/v1/benchmarks/{bid}/submissions": {"model": "m", "predictions": film_predictions(1)},
        "/v1/api-keys": {"name": "x", "scopes": ["admin"]},
    }
    for method, template, _scope in WRITE_ROUTES:
        url = template.format(bid=bench["id"], sid=sub["id"], kid="some-key")
        kwargs = {"json": bodies[template]} if template in bodies else {}
        # a submission is not shown to a key that neither made it nor owns its benchmark: 404, scope or not
        hidden = 404 if template == "/v1/submissions/{sid}" else 403
        for headers, expected in ((None, 401), (revoked, 401), (wrong_scope, hidden)):
            r = getattr(client, method)(url, headers=headers, **kwargs)
            assert r.status_code == expected, (method, url, headers, r.text)
            assert r.headers["content-type"] == "application/problem+json"
    assert (
        client.put(
            f"/v1/benchmarks/{bench['id']}/answer-key", json={"items": film_key_items(3)}, headers=other_owner
        ).status_code
        == 403
    )
    assert client.delete(f"/v1/submissions/{sub['id']}", headers=other_owner).status_code == 404
    assert client.get(f"/v1/submissions/{sub['id']}", headers=other_owner).status_code == 404
    assert client.get(f"/v1/submissions/{sub['id']}", headers=alice).json()["withdrawn_at"] is None


def test_idempotency_key_in_flight_is_409(client: TestClient, bench: dict, alice: dict, settings) -> None:
    """A retry while the first request still runs (a claim without a stored response) gets 409; once the
    claim is released the same key goes through."""
    body = {"model": "m", "predictions": film_predictions(5), "metadata": {"run": 1}}
    key_id = client.get("/v1/api-keys", headers=ADMIN).json()["items"][-1]["id"]
    digest = hashlib.sha256(dumps(SubmissionIn.model_validate(body).model_dump(mode="json")).encode()).hexdigest()
    scope = f"{key_id}:{bench['id']}:submissions"
    engines = make_engines(settings.database_url)
    with engines.write.begin() as conn:
        assert idempotency.claim(conn, scope, "busy", digest, datetime.now(UTC)) is None
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    r = client.post(url, json=body, headers={**alice, "Idempotency-Key": "busy"})
    assert r.status_code == 409 and r.headers["content-type"] == "application/problem+json"
    with engines.write.begin() as conn:
        idempotency.release(conn, scope, "busy")
    engines.dispose()
    assert client.post(url, json=body, headers={**alice, "Idempotency-Key": "busy"}).status_code == 201


def _age_idempotency_records(settings, seconds: float) -> None:
    engines = make_engines(settings.database_url)
    with engines.write.begin() as conn:
        conn.execute(update(IdempotencyRecord).values(created_at=datetime.now(UTC) - timedelta(seconds=seconds)))
    engines.dispose()


def test_an_abandoned_in_flight_key_is_taken_over_only_by_the_same_body(
    client: TestClient, bench: dict, alice: dict, settings
) -> None:
    """A claim older than the stale window (its request died) lets a retry with the same body through; a different
    body is still refused; a completed answer keeps replaying however old it is."""
    body = {"model": "m", "predictions": film_predictions(5), "metadata": {"run": 1}}
    key_id = client.get("/v1/api-keys", headers=ADMIN).json()["items"][-1]["id"]
    digest = hashlib.sha256(dumps(SubmissionIn.model_validate(body).model_dump(mode="json")).encode()).hexdigest()
    engines = make_engines(settings.database_url)
    with engines.write.begin() as conn:
        assert idempotency.claim(conn, f"{key_id}:{bench['id']}:submissions", "k", digest, datetime.now(UTC)) is None
    engines.dispose()
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    headers = {**alice, "Idempotency-Key": "k"}
    assert client.post(url, json=body, headers=headers).status_code == 409  # fresh claim: still in flight
    _age_idempotency_records(settings, STALE_S - 5)
    assert client.post(url, json=body, headers=headers).status_code == 409
    _age_idempotency_records(settings, STALE_S + 5)
    different = {**body, "model": "other"}
    r = client.post(url, json=different, headers=headers)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["header", "Idempotency-Key"]
    first = client.post(url, json=body, headers=headers)
    assert first.status_code == 201 and "idempotent-replayed" not in first.headers
    _age_idempotency_records(settings, 10 * STALE_S)
    replay = client.post(url, json=body, headers=headers)
    assert replay.json() == first.json() and replay.headers.get("idempotent-replayed") == "true"
    assert [s["id"] for s in client.get(url, headers=alice).json()["items"]] == [first.json()["id"]]


def test_a_retry_that_loses_the_take_over_race_is_409(
    client: TestClient, bench: dict, alice: dict, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two retries of one abandoned request both read the stale claim; the other one took it over first (the
    stored claim is fresh again), so the conditional take-over of this one matches nothing and it is told the
    request is in flight instead of running it a second time."""
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    body = {"model": "m", "predictions": film_predictions(5)}
    key_id = client.get("/v1/api-keys", headers=ADMIN).json()["items"][-1]["id"]
    digest = hashlib.sha256(dumps(SubmissionIn.model_validate(body).model_dump(mode="json")).encode()).hexdigest()
    engines = make_engines(settings.database_url)
    with engines.write.begin() as conn:  # the winner's claim, taken over just now
        assert (
            idempotency.claim(conn, f"{key_id}:{bench['id']}:submissions", "raced", digest, datetime.now(UTC)) is None
        )
    engines.dispose()
    stale_view = idempotency.IdemRow(digest, None, None, datetime.now(UTC) - 2 * IDEMPOTENCY_STALE)
    monkeypatch.setattr(idempotency, "claim", lambda *a: stale_view)  # what this retry read before the take-over
    r = client.post(url, json=body, headers={**alice, "Idempotency-Key": "raced"})
    assert r.status_code == 409, r.text
    assert client.get(url, headers=alice).json()["items"] == []


def test_a_failed_idempotent_submission_releases_its_key(client: TestClient, bench: dict, alice: dict) -> None:
    """A submission that fails validation leaves no claim behind: the same retry fails the same way (not 409)."""
    bad = {"model": "m", "predictions": {"items": [{"item_id": "nope", "choice_idx": 0}]}}
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    for _ in range(2):
        r = client.post(url, json=bad, headers={**alice, "Idempotency-Key": "retry"})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "predictions", "items", 0, "item_id"]
    good = {"model": "m", "predictions": film_predictions(5)}
    assert client.post(url, json=good, headers={**alice, "Idempotency-Key": "retry"}).status_code == 201


def test_metadata_is_capped_at_16_kib_of_canonical_json(client: TestClient, bench: dict, alice: dict) -> None:
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    fits = {"x": "a" * (16 * 1024 - len('{"x":""}'))}  # exactly 16 KiB compact JSON
    ok = client.post(url, json={"model": "m", "predictions": film_predictions(5), "metadata": fits}, headers=alice)
    assert ok.status_code == 201 and ok.json()["metadata"] == fits
    over = {"x": fits["x"] + "a"}
    r = client.post(url, json={"model": "m", "predictions": film_predictions(5), "metadata": over}, headers=alice)
    assert r.status_code == 422 and r.json()["errors"] == [
        {"loc": ["body", "metadata"], "msg": "at most 16 KiB of JSON", "type": "too_long"}
    ]


def test_leaderboard_cursor_is_keyset(client: TestClient, bench: dict, alice: dict) -> None:
    """A submission that ranks above the current page does not shift the next page (an offset cursor would
    repeat alpha here)."""
    for model, correct in (("beta", 9), ("alpha", 6), ("gamma", 4)):
        post_submission(client, bench, alice, model, correct)
    url = f"/v1/benchmarks/{bench['id']}/leaderboard"
    page1 = client.get(url, params={"limit": 2}).json()
    assert [r["model"] for r in page1["items"]] == ["beta", "alpha"]
    post_submission(client, bench, alice, "delta", 10)
    page2 = client.get(url, params={"limit": 2, "cursor": page1["next_cursor"]}).json()
    assert [(r["rank"], r["model"]) for r in page2["items"]] == [(4, "gamma")] and page2["next_cursor"] is None
    assert client.get(url, params={"cursor": "W10"}).status_code == 422  # base64 of [] is not a rank key


def test_own_submissions_page_newest_first_with_a_cursor(client: TestClient, bench: dict, alice: dict) -> None:
    ids = [post_submission(client, bench, alice, f"m{i}", correct=i).json()["id"] for i in range(3)]
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    first = client.get(url, params={"limit": 2}, headers=alice).json()
    assert [s["id"] for s in first["items"]] == [ids[2], ids[1]] and first["next_cursor"]
    rest = client.get(url, params={"limit": 2, "cursor": first["next_cursor"]}, headers=alice).json()
    assert [s["id"] for s in rest["items"]] == [ids[0]] and rest["next_cursor"] is None
    assert [s["scores"]["accuracy"]["value"] for s in first["items"]] == [pytest.approx(0.2), pytest.approx(0.1)]
    whole = client.get(url, params={"limit": 3}, headers=alice).json()
    assert len(whole["items"]) == 3 and whole["next_cursor"] is None
    seen, cursor = [], None
    while True:
        page = client.get(url, params={"limit": 1, **({"cursor": cursor} if cursor else {})}, headers=alice).json()
        seen += [s["id"] for s in page["items"]]
        if (cursor := page["next_cursor"]) is None:
            break
    assert seen == ids[::-1]


def test_withdrawal_answers_with_the_submission_and_its_scores(client: TestClient, bench: dict, alice: dict) -> None:
    sub = post_submission(client, bench, alice, "m", correct=7).json()
    gone = client.delete(f"/v1/submissions/{sub['id']}", headers=alice).json()
    assert gone["withdrawn_at"] is not None and gone["answer_key_version"] == 1
    assert gone["scores"] == sub["scores"] and gone["scores"]["accuracy"]["value"] == pytest.approx(0.7, abs=1e-12)


def test_a_private_only_benchmark_shows_submitters_no_public_scores(
    client: TestClient, owner: dict, alice: dict
) -> None:
    """A held-out benchmark (every item private): the submitter's view has no public scores, breakdown, coverage or
    reconstructed fields; an admin sees the private split."""
    body = {"name": "held-out", "scorer": "film_mcq", "answer_key": {"items": film_key_items(n_public=0)}}
    r = client.post("/v1/benchmarks", json=body, headers=owner)
    assert r.status_code == 201, r.text
    preds = film_predictions(0, 3, n_public=0)
    r = client.post(
        f"/v1/benchmarks/{r.json()['id']}/submissions", json={"model": "m", "predictions": preds}, headers=alice
    )
    assert r.status_code == 201, r.text
    sub = r.json()
    public = {k: sub[k] for k in ("answer_key_version", "scores", "breakdown", "coverage", "reconstructed", "private")}
    assert public == {
        "answer_key_version": 1,
        "scores": {},
        "breakdown": {},
        "coverage": None,
        "reconstructed": [],
        "private": None,
    }
    private = client.get(f"/v1/submissions/{sub['id']}", headers=ADMIN).json()["private"]
    assert private["scores"]["accuracy"]["value"] == pytest.approx(0.75) and private["coverage"] == 1.0
    assert private["reconstructed"] == [*film_mcq.METRICS, "breakdown"]
