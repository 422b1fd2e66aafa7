"""Scorer calls, scorer jobs and submissions pass the same structural pre-check as estimator calls
(docs/security.md, "Cost before work"): a large body holding more values at a nesting depth than the model admits
is a 422 ``too_many_values`` naming the depth and bound, before it is parsed, and nothing is stored."""

from typing import Any

import pytest

from tests.factories import ADMIN, benchmark
from usecases import json_bounds

ROWS = b"[]," * 400_000
"""400,000 empty lists (1.2 MB): more values at their depth than any score request or prediction list admits."""


def refused_by_the_pre_check(answer: Any, depth: int) -> None:
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["errors"]
    assert error["type"] == "too_many_values" and f"at nesting depth {depth}" in error["msg"], error


@pytest.mark.parametrize("side", ["answer_key", "predictions"])
def test_a_stateless_scoring_body_is_pre_checked(client: Any, side: str) -> None:
    other = "predictions" if side == "answer_key" else "answer_key"
    body = b'{"%s":{"items":[' % side.encode() + ROWS + b'[]]},"%s":{"items":[]}}' % other.encode()
    assert len(body) >= json_bounds.MIN_CHECKED_BYTES
    refused_by_the_pre_check(
        client.post("/v1/scorers/film_mcq/score", content=body, headers={"content-type": "application/json"}), 4
    )


def test_a_scorer_job_body_is_pre_checked_against_the_scorers_model(client: Any) -> None:
    body = b'{"kind":"scorer","name":"film_mcq","params":{"answer_key":{"items":[' + ROWS + b"[]]}}}"
    answer = client.post("/v1/jobs", content=body, headers={"content-type": "application/json", **ADMIN})
    refused_by_the_pre_check(answer, 4)
    assert client.get("/v1/jobs", headers=ADMIN).json()["items"] == []


def test_a_submission_body_is_pre_checked_against_the_prediction_items(client: Any) -> None:
    bench = benchmark(client, ADMIN)
    body = b'{"model":"m","predictions":{"items":[' + ROWS + b"[]]}}"
    url = f"/v1/benchmarks/{bench['id']}/submissions"
    refused_by_the_pre_check(client.post(url, content=body, headers={"content-type": "application/json", **ADMIN}), 3)
    assert client.get(url, headers=ADMIN).json()["items"] == []
