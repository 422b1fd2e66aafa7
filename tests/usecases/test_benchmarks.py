"""usecases/benchmarks.py: registration (version 1 and its split sizes), answer-key versions (identical content
changes nothing; new content is a new version and re-scores inline without a queue) and the leaderboard (one row
per model, best first, the private split for admins only)."""

import json

import pytest

from tests.factories import admin, film_key_items, film_predictions, principal, stored_benchmark
from usecases.benchmarks import get_benchmark, leaderboard, put_answer_key
from usecases.errors import Conflict, Forbidden
from usecases.services import Services
from usecases.submissions import NewSubmission, submit


def board(services: Services, bench_id: str, who: object = None, split: str = "public") -> list[tuple]:
    page = leaderboard(services, who, bench_id, split=split, metric=None, rank_by="best", limit=10, cursor=None)
    return [(r["rank"], r["model"], r["scores"]["accuracy"]["value"], r["pending"]) for r in page.rows]


def send(services: Services, who: object, bench_id: str, model: str, correct: int, private: int = 0) -> dict:
    new = NewSubmission(model, film_predictions(correct, private)["items"], {})
    return json.loads(submit(services, who, bench_id, new, None).json)


def test_registration_stores_version_1_with_its_split_sizes(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    view = stored_benchmark(services, owner, description="demo")
    assert (view.row.name, view.row.scorer, view.row.current_version, view.primary_metric) == (
        "films",
        "film_mcq",
        1,
        "accuracy",
    )
    assert view.row.owner_key_id == owner.key_id
    assert view.row.max_submissions_per_day == services.settings.submissions_per_day  # 0: the server default
    got = get_benchmark(services, view.row.id)
    assert [(v.version, v.n_public, v.n_private, v.sha256) for v in got.versions] == [(1, 10, 4, view.sha256)]
    with pytest.raises(Conflict):
        stored_benchmark(services, owner)  # the name is taken
    with pytest.raises(Forbidden):
        stored_benchmark(services, principal(services, "submissions:write"), name="other")


def test_answer_key_versions_and_inline_rescoring(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    alice = principal(services, "submissions:write", name="alice")
    bench = stored_benchmark(services, owner)
    send(services, alice, bench.row.id, "m", correct=8)
    same = put_answer_key(services, owner, bench.row.id, film_key_items(), None)
    assert (same.version, same.created, same.sha256) == (1, False, bench.sha256)
    items = film_key_items()
    items[0]["answer_idx"] = 3  # q0 was answered 0: right under version 1, wrong under version 2
    new = put_answer_key(services, owner, bench.row.id, items, None)
    assert (new.version, new.created, new.rescored, new.rescore_job) == (2, True, 1, None)
    assert new.sha256 != bench.sha256
    assert board(services, bench.row.id) == [(1, "m", pytest.approx(0.7), False)]  # 7 of 10 under version 2
    back = put_answer_key(services, owner, bench.row.id, film_key_items(), None)  # an earlier content: version 3
    assert (back.version, back.sha256) == (3, bench.sha256)
    with pytest.raises(Forbidden):
        put_answer_key(services, principal(services, "benchmarks:write", name="other"), bench.row.id, items, None)


def test_leaderboard_ranks_each_models_best_and_shows_the_private_split_to_admins(services: Services) -> None:
    bench = stored_benchmark(services, principal(services, "benchmarks:write", name="maintainer"))
    alice = principal(services, "submissions:write", name="alice")
    for model, correct, private in (("a", 6, 4), ("b", 9, 1), ("a", 7, 0), ("c", 7, 2)):
        send(services, alice, bench.row.id, model, correct, private)
    # a's best is 7/10 (its later submission); a and c tie at 0.7: the earlier submission (a's) ranks first
    assert board(services, bench.row.id) == [
        (1, "b", pytest.approx(0.9), False),
        (2, "a", pytest.approx(0.7), False),
        (3, "c", pytest.approx(0.7), False),
    ]
    for not_admin in (None, alice):
        with pytest.raises(Forbidden):
            board(services, bench.row.id, not_admin, "private")
    assert board(services, bench.row.id, admin(services), "private") == [
        (1, "a", pytest.approx(1.0), False),  # a's 4 of 4 private items
        (2, "c", pytest.approx(0.5), False),
        (3, "b", pytest.approx(0.25), False),
    ]
