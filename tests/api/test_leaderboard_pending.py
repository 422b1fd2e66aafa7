"""After an answer-key update the benchmark's version and sha256 change at once, while the leaderboard keeps each
submission's previous-version row, marked pending, until the re-scoring job reaches it."""

import pytest

from tests.factories import ADMIN, api_key, benchmark, film_key_items, film_predictions, serving, submission
from usecases.settings import Settings


def test_leaderboard_keeps_previous_rows_pending_until_the_rescore_finishes(settings: Settings) -> None:
    with serving(settings, queue="memory") as c:  # the re-scoring job waits for the test
        owner = api_key(c, "benchmarks:write", name="maintainer")
        alice = api_key(c, "submissions:write", name="alice")
        bench_id = benchmark(c, owner)["id"]
        url = f"/v1/benchmarks/{bench_id}/submissions"
        ids = []
        for model, correct in (("a", 8), ("b", 6)):
            ids.append(submission(c, bench_id, alice, model, correct, metadata={})["id"])

        def board() -> list[tuple[str, float, int, bool]]:
            r = c.get(f"/v1/benchmarks/{bench_id}/leaderboard")
            assert r.status_code == 200, r.text
            assert r.json()["answer_key_version"] == 2
            return [
                (row["model"], row["scores"]["accuracy"]["value"], row["answer_key_version"], row["pending"])
                for row in r.json()["items"]
            ]

        items = film_key_items()
        for i in range(2):  # items q0 and q1 change their answer: a and b each lose two correct answers
            items[i]["answer_idx"] = (items[i]["answer_idx"] + 2) % 4
        put = c.put(f"/v1/benchmarks/{bench_id}/answer-key", json={"items": items}, headers=owner)
        assert put.status_code == 201, put.text
        job_id = put.json()["rescore_job_id"]
        detail = c.get(f"/v1/benchmarks/{bench_id}").json()
        assert (detail["answer_key_version"], detail["answer_key_sha256"]) == (2, put.json()["answer_key_sha256"])
        assert board() == [("a", 0.8, 1, True), ("b", 0.6, 1, True)]
        unscored = {"answer_key_version": None, "scores": {}, "breakdown": {}, "coverage": None, "reconstructed": []}
        for headers in (alice, ADMIN):  # a submission is not scored against version 2 until the job reaches it
            view = c.get(f"/v1/submissions/{ids[0]}", headers=headers).json()
            assert {k: view[k] for k in unscored} == unscored and view["private"] is None
            assert (view["model"], view["withdrawn_at"]) == ("a", None)

        late = {"model": "c", "predictions": film_predictions(10), "metadata": {}}  # scored against version 2 at once
        assert c.post(url, json=late, headers=alice).status_code == 201
        assert board() == [("a", 0.8, 1, True), ("c", 0.8, 2, False), ("b", 0.6, 1, True)]  # ties: earlier first

        c.app.state.services.jobs.execute(job_id)  # type: ignore[attr-defined]
        assert c.get(f"/v1/jobs/{job_id}").json()["status"] == "succeeded"
        assert board() == [
            ("c", 0.8, 2, False),
            ("a", pytest.approx(0.6), 2, False),
            ("b", pytest.approx(0.4), 2, False),
        ]
