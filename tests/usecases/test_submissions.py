"""usecases/submissions.py: a submission is scored against the current answer key (public scores for its owner,
the private split for admins), the daily quota per key and benchmark is exact and refused submissions do not
count, and only the owner or an admin reads a submission."""

import json

import pytest

from service.errors import InvalidInput
from tests.factories import admin, film_predictions, principal, stored_benchmark
from usecases import submissions
from usecases.errors import InvalidFields, NotFound, QuotaExceeded
from usecases.services import Services
from usecases.submissions import NewSubmission


def new(correct: int, private: int = 0, model: str = "m") -> NewSubmission:
    return NewSubmission(model, film_predictions(correct, private)["items"], {"run": 1})


def test_a_submission_is_scored_and_its_owner_sees_the_public_split_only(services: Services) -> None:
    bench = stored_benchmark(services, principal(services, "benchmarks:write"))
    alice = principal(services, "submissions:write", name="alice")
    out = submissions.submit(services, alice, bench.row.id, new(8, 3), None)
    view = json.loads(out.json)
    assert out.replayed is False and view["model"] == "m" and view["metadata"] == {"run": 1}
    assert view["scores"]["accuracy"]["value"] == pytest.approx(0.8) and view["scores"]["accuracy"]["n"] == 10
    assert view["private"] is None and view["answer_key_version"] == 1
    as_admin = submissions.get(services, admin(services), view["id"])
    assert as_admin.private["scores"]["accuracy"]["value"] == pytest.approx(0.75)  # 3 of 4 private items
    with pytest.raises(NotFound):  # another key is told nothing, as for an unknown id
        submissions.get(services, principal(services, "submissions:write", name="bob"), view["id"])


def test_the_daily_quota_counts_stored_submissions_per_key_and_benchmark(services: Services) -> None:
    owner = principal(services, "benchmarks:write")
    bench = stored_benchmark(services, owner, max_submissions_per_day=2)
    other = stored_benchmark(services, owner, name="other", max_submissions_per_day=2)
    alice = principal(services, "submissions:write", name="alice")
    bob = principal(services, "submissions:write", name="bob")
    for _ in range(2):
        submissions.submit(services, alice, bench.row.id, new(5), None)
    with pytest.raises(QuotaExceeded) as refused:
        submissions.submit(services, alice, bench.row.id, new(5), None)
    assert 0 < refused.value.retry_after_s <= 86_400  # until the next UTC midnight
    submissions.submit(services, bob, bench.row.id, new(5), None)  # another key's quota
    submissions.submit(services, alice, other.row.id, new(5), None)  # another benchmark's quota
    wrong = NewSubmission("m", [{"item_id": "q0", "choice_idx": 9}], {})  # 4 options: index 9 is invalid
    with pytest.raises(InvalidInput):  # refused by the scorer, inside the quota's transaction
        submissions.submit(services, bob, bench.row.id, wrong, None)
    submissions.submit(services, bob, bench.row.id, new(5), None)  # the refused one did not count
    with pytest.raises(QuotaExceeded):
        submissions.submit(services, bob, bench.row.id, new(5), None)


def test_an_idempotent_retry_replays_the_first_answer(services: Services) -> None:
    bench = stored_benchmark(services, principal(services, "benchmarks:write"), max_submissions_per_day=1)
    alice = principal(services, "submissions:write", name="alice")
    first = submissions.submit(services, alice, bench.row.id, new(6), "k1")
    again = submissions.submit(services, alice, bench.row.id, new(6), "k1")  # over the quota, yet replayed
    assert (again.replayed, again.json) == (True, first.json)
    with pytest.raises(InvalidFields):
        submissions.submit(services, alice, bench.row.id, new(7), "k1")
