"""usecases/benchmarks.py called directly, registration and answer keys: the refusals of ``create_benchmark`` (each
naming its field, leaving nothing stored), the stored row, version 1 and its audit entry; the scorer's key check
mapped back to the submitted item; listing and paging; new versions (inline or as a job), restores, unchanged
content; the re-scoring of every submission with its progress; the validated-key cache; metadata params."""

import dataclasses
import json
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import text

from service.errors import InvalidInput
from service.registry import SCORERS, load_all
from service.scoring import film_mcq
from tests.factories import admin, film_key_items, film_predictions, principal, stored_benchmark
from usecases import benchmarks
from usecases.benchmarks import (
    Loaded,
    answer_key_version,
    answer_key_versions,
    get_benchmark,
    key_items,
    list_benchmarks,
    load,
    put_answer_key,
    rescore,
    rescore_all,
    restore_answer_key,
    run_rescore_job,
    score_submission,
    submission_params,
)
from usecases.challenges import audit_log
from usecases.errors import Forbidden, InvalidFields, NotFound, Unauthorized
from usecases.services import Services
from usecases.submissions import NewSubmission, submit

KEY_LOC = ["body", "answer_key", "items"]


@pytest.fixture(autouse=True)
def _scorers() -> None:
    load_all()


def _log(services: Services, bench_id: str) -> list[tuple[str, str | None, str | None, dict[str, Any]]]:
    page = audit_log(services, admin(services), bench_id, 100, None)
    return [(e.action, e.actor_key_id, e.subject, e.details) for e in page.items]


def _count(services: Services, table: str) -> int:
    with services.engines.read.connect() as conn:
        return int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


def _send(services: Services, who: Any, bench_id: str, model: str, correct: int, private: int = 0) -> str:
    new = NewSubmission(model, film_predictions(correct, private)["items"], {})
    return json.loads(submit(services, who, bench_id, new, None).json)["id"]


def _scorings(services: Services, sub_id: str) -> list[tuple[int, float]]:
    """(answer-key version, public accuracy) of every scoring of a submission, oldest first."""
    with services.engines.read.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT s.answer_key_version, c.value FROM scoring s JOIN score c ON c.scoring_id = s.id "
                "WHERE s.submission_id = :id AND c.split = 'public' AND c.metric = 'accuracy' ORDER BY s.id"
            ),
            {"id": sub_id},
        )
        return [(int(v), float(x)) for v, x in rows]


def _error(exc: InvalidFields) -> tuple[list, str]:
    return exc.errors[0]["loc"], exc.errors[0]["type"]


# -- registration ----------------------------------------------------------------------------------------------


def test_a_benchmark_is_stored_with_its_params_clock_version_and_audit_entry(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    at = datetime(2026, 5, 4, 3, 2, 1, 123456, tzinfo=UTC)
    services.clock = lambda: at
    view = stored_benchmark(
        services, owner, scorer_params={"confidence": 0.9}, max_submissions_per_day=7, description="d"
    )
    row = view.row
    assert (row.scorer_params, row.max_submissions_per_day, row.description) == (
        '{"alpha":0.05,"confidence":0.9}',
        7,
        "d",
    )
    assert row.created_at == at and row.current_version == 1 and view.versions is None
    got = get_benchmark(services, row.id)
    assert got.row == dataclasses.replace(row, created_at=got.row.created_at)
    assert got.row.created_at.replace(tzinfo=UTC) == at
    (v1,) = got.versions
    assert (v1.version, v1.n_public, v1.n_private, v1.created_at.replace(tzinfo=UTC)) == (1, 10, 4, at)
    text_v1 = answer_key_version(services, owner, row.id, 1).items
    assert text_v1 is not None and [i["item_id"] for i in text_v1] == sorted(i["item_id"] for i in film_key_items())
    assert _log(services, row.id) == [
        ("benchmark.created", owner.key_id, "1", {"name": "films", "answer_key_sha256": view.sha256})
    ]
    with services.engines.read.connect() as conn:
        loaded = load(conn, row.id)
    assert loaded.params == film_mcq.Params(confidence=0.9) and loaded.spec is SCORERS["film_mcq"]


def test_refused_registrations_name_the_field_and_store_nothing(services: Services, monkeypatch: Any) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    with pytest.raises(Unauthorized):
        stored_benchmark(services, None)
    with pytest.raises(Forbidden):
        stored_benchmark(services, principal(services, "submissions:write"))
    with pytest.raises(InvalidInput) as unknown:
        stored_benchmark(services, owner, scorer="no_such_scorer")
    assert unknown.value.loc == ("scorer",)
    with pytest.raises(InvalidFields) as params:
        stored_benchmark(services, owner, scorer_params={"confidence": 2.0, "nope": 1})
    assert params.value.errors == [
        {"loc": ["body", "scorer_params", "confidence"], "msg": "Input should be less than 1", "type": "less_than"},
        {"loc": ["body", "scorer_params", "nope"], "msg": "Extra inputs are not permitted", "type": "extra_forbidden"},
    ]
    with pytest.raises(InvalidFields) as item:
        stored_benchmark(services, owner, items=[*film_key_items(2, 0), {"item_id": "x"}])
    assert _error(item.value) == ([*KEY_LOC, 2, "num_options"], "missing")
    with pytest.raises(InvalidInput) as twice:
        stored_benchmark(services, owner, items=[*film_key_items(3, 0), film_key_items(2, 0)[1]])
    assert twice.value.loc == ("answer_key", "items", 3, "item_id")
    spec = SCORERS["film_mcq"]
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, hard_cap=13.0))
    with pytest.raises(InvalidFields) as costly:  # 14 items: the scoring of the key alone costs 14 > 13
        stored_benchmark(services, owner)
    assert _error(costly.value) == (KEY_LOC, "cost_cap")
    stored_benchmark(services, owner, items=film_key_items(9, 4), name="at-the-cap")  # 13 is not above it
    costed: list[Any] = []
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, cost=lambda k, p, q: costed.append(q) or 1.0))
    stored_benchmark(services, owner, items=film_key_items(2, 0), name="costed", scorer_params={"alpha": 0.3})
    assert costed == [film_mcq.Params(alpha=0.3)]
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, sync_budget=2.0))
    stored_benchmark(services, owner, items=film_key_items(3, 0), name="over-the-budget")  # a key is never a job
    monkeypatch.setitem(SCORERS, "film_mcq", spec)
    assert [v.row.name for v in list_benchmarks(services, 10, None).items] == [
        "at-the-cap",
        "costed",
        "over-the-budget",
    ]
    assert _count(services, "answer_key_version") == 3 and _count(services, "audit_entry") == 3


def test_the_scorers_key_check_names_the_submitted_item_or_the_split(services: Services, monkeypatch: Any) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    items = film_key_items(4, 2)
    items[3]["answer_idx"] = 7  # q3 of the public split: its fourth item in item_id order
    items = [items[3], items[5], *items[:3], items[4]]  # q3 first in the submitted list
    with pytest.raises(InvalidInput) as bad:
        stored_benchmark(services, owner, items=items)
    assert bad.value.loc == ("answer_key", "items", 0, "answer_idx")
    assert bad.value.msg == "answer_idx 7 is out of range for num_options=4"
    items[0]["answer_idx"] = 0
    items[1]["answer_idx"] = 9  # p1: the private split's second item
    with pytest.raises(InvalidInput) as private:
        stored_benchmark(services, owner, items=items)
    assert private.value.loc == ("answer_key", "items", 1, "answer_idx")

    only_private = film_key_items(0, 2)
    only_private[1]["answer_idx"] = 9
    with pytest.raises(InvalidInput) as alone:  # no public item: the private split is still checked
        stored_benchmark(services, owner, items=only_private, name="private only")
    assert alone.value.loc == ("answer_key", "items", 1, "answer_idx")

    seen: list[tuple[list[str], Any]] = []

    def whole(key: list[Any], params: Any) -> None:
        seen.append(([k.item_id for k in key], params))
        if key[0].split == "private":
            raise InvalidInput("too many", ("answer_key", "items"))

    spec = SCORERS["film_mcq"]
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, check_key=whole))
    good = film_key_items(3, 2)[::-1]
    with pytest.raises(InvalidInput) as split:
        stored_benchmark(services, owner, items=good, scorer_params={"alpha": 0.1})
    assert (split.value.msg, split.value.loc) == ("private split: too many", ("answer_key", "items"))
    assert [ids for ids, _ in seen] == [["q0", "q1", "q2"], ["p0", "p1"]]
    assert seen[0][1] == film_mcq.Params(alpha=0.1)

    def item(key: list[Any], params: Any) -> None:
        raise InvalidInput("bad item", ("answer_key", "items", 1))

    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, check_key=item))
    with pytest.raises(InvalidInput) as no_field:  # q1, second in item_id order, is fourth in the submitted list
        stored_benchmark(services, owner, items=good)
    assert no_field.value.loc == ("answer_key", "items", 3)

    def other(key: list[Any], params: Any) -> None:
        raise InvalidInput("bad alpha", ("scorer_params", "alpha"))

    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, check_key=other))
    with pytest.raises(InvalidInput) as param:
        stored_benchmark(services, owner, items=good)
    assert (param.value.msg, param.value.loc) == ("bad alpha", ("scorer_params", "alpha"))
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, check_key=None))
    unchecked = film_key_items(2, 0)
    unchecked[0]["answer_idx"] = 5
    assert stored_benchmark(services, owner, items=unchecked).row.current_version == 1  # no check: stored
    seen.clear()
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, check_key=whole))
    stored_benchmark(services, owner, items=film_key_items(2, 0), name="public only")
    assert [ids for ids, _ in seen] == [["q0", "q1"]]  # an empty split is not checked


def test_benchmarks_are_listed_by_name_a_page_at_a_time(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    made = {}
    for name, scorer, items in (
        ("c", "film_mcq", film_key_items(2, 0)),
        ("a", "film_mcq", film_key_items(3, 1)),
        ("b", "film_mcq", film_key_items(1, 0)),
    ):
        made[name] = stored_benchmark(services, owner, name=name, scorer=scorer, items=items)
    first = list_benchmarks(services, 2, None)
    assert [v.row.name for v in first.items] == ["a", "b"] and first.next_cursor is not None
    second = list_benchmarks(services, 2, first.next_cursor)
    assert [v.row.name for v in second.items] == ["c"] and second.next_cursor is None
    for v in [*first.items, *second.items]:
        assert (v.sha256, v.primary_metric, v.versions) == (made[v.row.name].sha256, "accuracy", None)
    assert list_benchmarks(services, 3, None).next_cursor is None
    with pytest.raises(InvalidFields):
        list_benchmarks(services, 2, "!!!")
    with pytest.raises(NotFound):
        get_benchmark(services, "no-such-benchmark")


# -- answer-key versions ----------------------------------------------------------------------------------------


def test_a_new_version_is_audited_and_rescored_inline_unchanged_content_changes_nothing(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    alice = principal(services, "submissions:write", name="alice")
    bench = stored_benchmark(services, owner)
    bench_id = bench.row.id
    sub = _send(services, alice, bench_id, "m", 8)
    log = _log(services, bench_id)
    same = put_answer_key(services, owner, bench_id, film_key_items(), None)
    assert same == benchmarks.NewVersion(1, bench.sha256, False, 0, None)
    assert _log(services, bench_id) == log and _scorings(services, sub) == [(1, pytest.approx(0.8))]
    smaller = film_key_items(5, 1)  # q0-q4 and p0: the predictions for q5-q9, p1-p3 are ignored
    new = put_answer_key(services, owner, bench_id, smaller, "client-1")
    assert (new.version, new.created, new.rescored, new.rescore_job) == (2, True, 1, None)
    assert _scorings(services, sub) == [(1, pytest.approx(0.8)), (2, pytest.approx(1.0))]
    assert _log(services, bench_id)[0] == (
        "answer_key.put",
        owner.key_id,
        "2",
        {"sha256": new.sha256, "n_public": 5, "n_private": 1, "rescore": "inline"},
    )
    got = get_benchmark(services, bench_id)
    assert got.sha256 == new.sha256 and got.row.current_version == 2 and got.primary_metric == "accuracy"
    assert [(v.version, v.n_public, v.n_private) for v in got.versions] == [(1, 10, 4), (2, 5, 1)]
    stored = answer_key_version(services, owner, bench_id, 2).items
    assert [(i["item_id"], i["answer_idx"]) for i in stored] == sorted((i["item_id"], i["answer_idx"]) for i in smaller)


def test_only_owners_with_the_write_scope_upload_and_refusals_store_nothing(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    outsider = principal(services, "benchmarks:write", name="other")
    reader = principal(services, "submissions:write", name="reader")
    for who, error in ((None, Unauthorized), (reader, Forbidden), (outsider, Forbidden)):
        with pytest.raises(error):
            put_answer_key(services, who, bench_id, film_key_items(3, 0), None)
        with pytest.raises(error):
            restore_answer_key(services, who, bench_id, 1, None)
    bad = film_key_items(3, 0)
    bad[2]["answer_idx"] = 4
    with pytest.raises(InvalidInput):
        put_answer_key(services, owner, bench_id, bad, None)
    with pytest.raises(NotFound):
        put_answer_key(services, owner, "no-such-benchmark", film_key_items(3, 0), None)
    assert get_benchmark(services, bench_id).row.current_version == 1
    assert _count(services, "answer_key_version") == 1 and _count(services, "audit_entry") == 1


def test_a_queue_takes_the_rescoring_as_a_job(services: Services, monkeypatch: Any) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    submitted: list[dict[str, Any]] = []
    job = object()

    def take(**fields: Any) -> object:
        submitted.append(fields)
        return job

    monkeypatch.setattr(services, "jobs", SimpleNamespace(available=True, submit=take))
    new = put_answer_key(services, owner, bench_id, film_key_items(4, 0), "cli")
    assert (new.version, new.created, new.rescored, new.rescore_job) == (2, True, None, job)
    assert submitted == [
        {
            "kind": "rescore",
            "name": bench_id,
            "version": "1",
            "params_json": '{"answer_key_version": 2}',
            "api_key_id": owner.key_id,
            "client": "cli",
        }
    ]
    assert _log(services, bench_id)[0][3]["rescore"] == "job" and new.sha256 == _log(services, bench_id)[0][3]["sha256"]
    back = restore_answer_key(services, owner, bench_id, 1, "cli2")
    assert (back.version, back.rescore_job, submitted[-1]["client"]) == (3, job, "cli2")
    assert submitted[-1]["params_json"] == '{"answer_key_version": 3}'


def test_restoring_a_version_makes_a_new_one_with_its_content(services: Services, monkeypatch: Any) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench = stored_benchmark(services, owner, scorer_params={"alpha": 0.1})
    bench_id = bench.row.id
    sub = _send(services, principal(services, "submissions:write", name="alice"), bench_id, "m", 8)
    v2 = put_answer_key(services, owner, bench_id, film_key_items(4, 0), None)
    with pytest.raises(NotFound):
        restore_answer_key(services, owner, bench_id, 3, None)
    back = restore_answer_key(services, owner, bench_id, 1, None)
    assert (back.version, back.sha256, back.created, back.rescored) == (3, bench.sha256, True, 1)
    assert _scorings(services, sub)[-1] == (3, pytest.approx(0.8))
    assert _log(services, bench_id)[0] == (
        "answer_key.restored",
        owner.key_id,
        "3",
        {"sha256": bench.sha256, "n_public": 10, "n_private": 4, "rescore": "inline", "restored_version": 1},
    )
    seen: list[Any] = []
    spec = SCORERS["film_mcq"]
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, check_key=lambda k, p: seen.append(p)))
    again = restore_answer_key(services, owner, bench_id, 3, None)  # the current content: nothing changes
    assert seen == [film_mcq.Params(alpha=0.1)] * 2  # both splits checked with the benchmark's params
    put_answer_key(services, owner, bench_id, film_key_items(2, 0), None)
    assert seen[2:] == [film_mcq.Params(alpha=0.1)]
    assert again == benchmarks.NewVersion(3, bench.sha256, False, 0, None)
    assert v2.sha256 != bench.sha256


def test_versions_are_listed_newest_first_for_owners(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    for n in (3, 4, 5):
        put_answer_key(services, owner, bench_id, film_key_items(n, 0), None)
    first = answer_key_versions(services, owner, bench_id, 3, None)
    assert [(v.row.version, v.current, v.items) for v in first.items] == [
        (4, True, None),
        (3, False, None),
        (2, False, None),
    ]
    rest = answer_key_versions(services, admin(services), bench_id, 3, first.next_cursor)
    assert [(v.row.version, v.current) for v in rest.items] == [(1, False)] and rest.next_cursor is None
    assert answer_key_versions(services, owner, bench_id, 4, None).next_cursor is None
    one = answer_key_version(services, owner, bench_id, 2)
    assert (one.row.version, one.current, [i["item_id"] for i in one.items]) == (2, False, ["q0", "q1", "q2"])
    assert answer_key_version(services, owner, bench_id, 4).current is True
    with pytest.raises(NotFound):
        answer_key_version(services, owner, bench_id, 5)
    for call in (
        lambda who: answer_key_versions(services, who, bench_id, 3, None),
        lambda who: answer_key_version(services, who, bench_id, 1),
    ):
        with pytest.raises(Unauthorized):
            call(None)
        with pytest.raises(Forbidden):
            call(principal(services, "submissions:write", name="x"))


# -- re-scoring ------------------------------------------------------------------------------------------------------


def test_an_admin_rescore_adds_a_scoring_of_every_submission_with_progress(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    alice = principal(services, "submissions:write", name="alice")
    subs = [_send(services, alice, bench_id, m, c) for m, c in (("a", 3), ("b", 6))]
    boss = admin(services)
    with pytest.raises(Forbidden):
        rescore(services, owner, bench_id)
    assert rescore(services, boss, bench_id) == (1, 2)
    assert [_scorings(services, s) for s in subs] == [
        [(1, pytest.approx(0.3))] * 2,
        [(1, pytest.approx(0.6))] * 2,
    ]
    assert _log(services, bench_id)[0] == ("rescore", boss.key_id, "1", {})
    reports: list[tuple[float, str]] = []
    assert rescore_all(services, bench_id, lambda f, m: reports.append((f, m))) == 2
    assert reports == [(0.0, "submission 1 of 2"), (0.5, "submission 2 of 2")]
    job_reports: list[tuple[float, str]] = []
    run_rescore_job(services, SimpleNamespace(name=bench_id), lambda f, m: job_reports.append((f, m)))
    assert job_reports == reports and len(_scorings(services, subs[0])) == 4
    empty = stored_benchmark(services, owner, name="empty").row.id
    assert rescore_all(services, empty, lambda f, m: reports.append((f, m))) == 0 and len(reports) == 2
    with pytest.raises(NotFound):
        rescore(services, boss, "no-such-benchmark")


def test_validated_key_items_are_kept_per_benchmark_version_and_scorer_version(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner, items=film_key_items(3, 1)).row.id
    with services.engines.read.connect() as conn:
        loaded = load(conn, bench_id)
        items = key_items(conn, loaded, 1)
        assert [i.item_id for i in items] == ["p0", "q0", "q1", "q2"] and isinstance(items[0], film_mcq.AnswerKeyItem)
        assert key_items(conn, loaded, 1) is items
        renewed = Loaded(loaded.benchmark, dataclasses.replace(loaded.spec, version="2"), loaded.params)
        fresh = key_items(conn, renewed, 1)
        assert fresh is not items and fresh == items
        others = [
            Loaded(loaded.benchmark, dataclasses.replace(loaded.spec, version=f"x{n}"), loaded.params)
            for n in range(benchmarks._KEY_CACHE_SIZE)
        ]
        for n, other in enumerate(others):
            key_items(conn, other, 1)
            if n == 7:
                assert key_items(conn, loaded, 1) is items  # used again: now the newest
        assert len(benchmarks._KEY_CACHE) == benchmarks._KEY_CACHE_SIZE
        assert key_items(conn, loaded, 1) is items  # 15 newer entries: still kept
        assert key_items(conn, renewed, 1) is not fresh  # the oldest was dropped


def test_metadata_params_override_the_benchmarks_params_and_are_validated(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner, scorer_params={"confidence": 0.9}).row.id
    with services.engines.read.connect() as conn:
        loaded = load(conn, bench_id)
    assert submission_params(loaded, {"alpha": 0.2}) is loaded.params  # film_mcq takes none from metadata
    taking = Loaded(loaded.benchmark, dataclasses.replace(loaded.spec, metadata_params=("alpha",)), loaded.params)
    assert submission_params(taking, {"other": 1}) is loaded.params
    assert submission_params(taking, {"alpha": 0.2, "confidence": 0.6}) == film_mcq.Params(confidence=0.9, alpha=0.2)
    with pytest.raises(InvalidFields) as refused:
        submission_params(taking, {"alpha": 0.7})
    assert refused.value.errors == [
        {"loc": ["body", "metadata", "alpha"], "msg": "Input should be less than 0.5", "type": "less_than"}
    ]
    key = benchmarks.validate_items(loaded.spec.answer_key_item_model, film_key_items(4, 2), ("k",))
    preds = benchmarks.validate_items(
        loaded.spec.prediction_item_model, film_predictions(2, 1, 4, 2)["items"][:-1], ("p",)
    )
    seen: list[Any] = []

    def score(k: list[Any], p: list[Any], params: Any) -> dict[str, Any]:
        seen.append(params)
        return loaded.spec.score(k, p, params)

    recording = dataclasses.replace(taking.spec, score=score)
    scored = score_submission(Loaded(loaded.benchmark, recording, loaded.params), {"alpha": 0.3}, key, preds)
    assert [p.alpha for p in seen] == [0.3, 0.3]
    plain = dataclasses.replace(loaded.spec, score=score)
    score_submission(Loaded(loaded.benchmark, plain, loaded.params), {"alpha": 0.3}, key, preds)
    assert seen[2:] == [loaded.params, loaded.params]
    values = {(s.split, s.metric): s for s in scored.scores}
    assert values["public", "accuracy"].value == pytest.approx(0.5) and values["public", "accuracy"].n == 4
    public = scored.outcomes["public"]["scores"]["accuracy"]
    assert (values["public", "accuracy"].ci_low, values["public", "accuracy"].ci_high) == (
        public["ci_low"],
        public["ci_high"],
    ) and 0 < public["ci_low"] < 0.5 < public["ci_high"]
    assert values["private", "accuracy"].value == pytest.approx(0.5) and values["private", "accuracy"].n == 2
    assert len(scored.scores) == 2 * len(loaded.spec.metrics)
    details = json.loads(scored.details)
    assert set(details) == {"public", "private"} and set(details["public"]) == {
        "breakdown",
        "coverage",
        "reconstructed",
    }
    assert details["public"]["coverage"] == scored.outcomes["public"]["coverage"] == 1.0
    assert details["private"]["coverage"] == pytest.approx(0.5)
    assert scored.details == json.dumps(details, sort_keys=True, separators=(",", ":"))
    assert [s.split for s in scored.items] == ["public", "private"]


def test_rescore_scores_with_the_submissions_metadata_and_stores_it(services: Services, monkeypatch: Any) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    alice = principal(services, "submissions:write", name="alice")
    new = NewSubmission("m", film_predictions(3, 1)["items"], {"alpha": 0.2})  # q0-q2 and p0 right
    sub = json.loads(submit(services, alice, bench_id, new, None).json)["id"]
    monkeypatch.setattr(services, "jobs", SimpleNamespace(available=True, submit=lambda **_: None))
    put_answer_key(services, owner, bench_id, film_key_items(4, 2), None)  # version 2, not re-scored
    seen: list[Any] = []
    with services.engines.read.connect() as conn:
        loaded = load(conn, bench_id)

    def score(k: list[Any], p: list[Any], params: Any) -> dict[str, Any]:
        seen.append(params.alpha)
        return loaded.spec.score(k, p, params)

    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(loaded.spec, metadata_params=("alpha",), score=score))
    assert rescore_all(services, bench_id) == 1 and seen == [0.2, 0.2]  # the stored metadata's alpha, per split
    assert _scorings(services, sub) == [(1, pytest.approx(0.3)), (2, pytest.approx(0.75))]  # 3/10, then 3/4
    page = benchmarks.leaderboard(
        services, None, bench_id, split="public", metric=None, rank_by="best", limit=5, cursor=None
    )
    assert [(r["answer_key_version"], r["pending"]) for r in page.rows] == [(2, False)]
    assert page.rows[0]["scores"]["accuracy"]["value"] == pytest.approx(0.75)
