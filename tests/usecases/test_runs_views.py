"""usecases/runs.py, the read side: who sees which run in a listing, a read, an artifact and a search (with
``REQUIRE_KEYS`` and without), paging, the envelope, the caller's tags and notes, the search's row and time
limits, the comparison of runs and the run page. Written for the mutation run of ``usecases.runs``; expected
values are written out by hand from the stored rows."""

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from db.repositories import runs as runs_repo
from db.repositories.artifacts import NewArtifact
from db.repositories.runs import RunRow
from tests.factories import admin, principal
from usecases import cursors, run_search, runs
from usecases.api_keys import Principal
from usecases.errors import InvalidFields, NotFound, Unauthorized
from usecases.run_search import SearchQuery
from usecases.runs import Annotation, Computed
from usecases.services import Services
from usecases.settings import Settings


def put(
    services: Services,
    owner: Principal | None,
    *,
    params: dict[str, Any] | str | None = None,
    result: dict[str, Any] | None = None,
    kind: str = "estimator",
    name: str = "test.run",
    version: str = "1",
    artifacts: tuple[str, ...] = (),
) -> RunRow:
    """A stored run (params given as a dict, or a JSON text stored as it is)."""
    text = params if isinstance(params, str) else json.dumps(params if params is not None else {"p": uuid.uuid4().hex})
    key = (kind, name, version, runs.sha256_hex(text))
    blobs = [NewArtifact(a, "h", "application/octet-stream", a.encode()) for a in artifacts]
    row, _ = runs.store_run(
        services.engines, key, text, Computed(json.dumps(result or {}), 1.0, blobs), owner.key_id if owner else None
    )
    return row


def ids(rows: list[RunRow]) -> list[str]:
    return [r.id for r in rows]


@pytest.fixture
def locked(settings: Settings) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "off", "require_keys": True}))
    yield s
    s.dispose()


@pytest.fixture
def queued(settings: Settings) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "memory"}))
    yield s
    s.dispose()


def refused(call: Any) -> dict[str, Any]:
    with pytest.raises(InvalidFields) as err:
        call()
    (error,) = err.value.errors
    return error


# --- listing, reading, artifacts -------------------------------------------------------------------------------


def test_a_listing_filters_by_kind_and_name_pages_newest_first_and_names_artifacts(services: Services) -> None:
    a = put(services, None, name="e.one", artifacts=("x", "w"))
    b = put(services, None, name="e.two")
    c = put(services, None, kind="scorer", name="e.one")
    d = put(services, None, name="e.one")

    def page(limit: int = 50, cursor: str | None = None, **kw: Any) -> cursors.Page[RunRow]:
        return runs.list_runs(services, None, kind=kw.get("kind"), name=kw.get("name"), limit=limit, cursor=cursor)

    assert ids(page().items) == [d.id, c.id, b.id, a.id]
    assert ids(page(kind="estimator").items) == [d.id, b.id, a.id]
    assert ids(page(name="e.one").items) == [d.id, c.id, a.id]
    assert ids(page(kind="scorer", name="e.one").items) == [c.id]
    first = page(limit=2)
    assert ids(first.items) == [d.id, c.id] and first.next_cursor == cursors.encode(c.seq)
    second = page(limit=2, cursor=first.next_cursor)
    assert ids(second.items) == [b.id, a.id] and second.next_cursor is None
    assert second.items[1].artifacts == ("w", "x") and second.items[0].artifacts == ()
    with pytest.raises(InvalidFields):
        page(cursor="not json")


def test_an_artifact_is_read_from_a_run_the_caller_may_see(services: Services) -> None:
    alice, bob = principal(services, "runs", name="alice"), principal(services, "runs", name="bob")
    mine = put(services, alice, artifacts=("f",))
    got = runs.get_artifact(services, alice, mine.id, "f")
    assert (got.sha256, got.media_type, got.data) == ("h", "application/octet-stream", b"f")
    assert runs.get_artifact(services, admin(services), mine.id, "f").data == b"f"
    with pytest.raises(NotFound) as hidden:
        runs.get_artifact(services, bob, mine.id, "f")
    assert mine.id in hidden.value.detail
    with pytest.raises(NotFound) as missing:
        runs.get_artifact(services, alice, mine.id, "g")
    assert "'g'" in missing.value.detail
    assert runs.get_run(services, alice, mine.id).artifacts == ("f",)
    with pytest.raises(NotFound):
        runs.get_run(services, alice, "no-such-run")


def test_with_required_keys_an_admin_sees_everything_and_a_key_only_its_own(locked: Services) -> None:
    alice, bob = principal(locked, "runs"), principal(locked, "runs")
    anon, mine = put(locked, None), put(locked, alice)
    with pytest.raises(Unauthorized):
        runs.get_run(locked, None, anon.id)
    assert runs.get_run(locked, alice, mine.id).id == mine.id
    for who, run in ((alice, anon), (bob, mine), (bob, anon)):
        with pytest.raises(NotFound):
            runs.get_run(locked, who, run.id)
    assert runs.get_run(locked, admin(locked), anon.id).id == anon.id


def test_the_envelope_lists_its_fields_in_order_and_the_view_adds_params_tags_and_note(services: Services) -> None:
    row = put(services, None, params={"b": 1, "a": [2]}, result={"r": {"s": 1.5}}, artifacts=("z", "y"))
    iso = row.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    head = runs.envelope_head(row, cached=True)
    assert list(head.items()) == [
        ("id", row.id),
        ("kind", "estimator"),
        ("name", "test.run"),
        ("version", "1"),
        ("params_sha256", runs.sha256_hex('{"b": 1, "a": [2]}')),
        ("cached", True),
        ("duration_ms", 1.0),
        ("created_at", iso),
        ("artifacts", ["y", "z"]),
    ]
    assert runs.envelope(row, cached=False) == {**head, "cached": False, "result": {"r": {"s": 1.5}}}
    seen = runs.view(row, Annotation({"k": "v"}, "a note"))
    assert seen == {
        **head,
        "cached": False,
        "result": {"r": {"s": 1.5}},
        "params": {"b": 1, "a": [2]},
        "tags": {"k": "v"},
        "note": "a note",
    }


# --- tags and notes --------------------------------------------------------------------------------------------


def test_annotations_are_the_callers_own_and_replace_only_what_is_given(services: Services) -> None:
    alice, bob = principal(services, "runs"), principal(services, "runs")
    run, other = put(services, None, artifacts=("f",)), put(services, None)
    with pytest.raises(Unauthorized):
        runs.annotate(services, None, run.id, tags={"a": "1"}, note=None, set_note=True)
    row, made = runs.annotate(services, alice, run.id, tags={"a": "1"}, note="first", set_note=True)
    assert made == Annotation({"a": "1"}, "first") and row.id == run.id and row.artifacts == ("f",)
    assert runs.annotate(services, alice, run.id, tags=None, note="ignored", set_note=False)[1] == made
    assert runs.annotate(services, alice, run.id, tags={"b": "2"}, note="ignored", set_note=False)[1] == Annotation(
        {"b": "2"}, "first"
    )
    assert runs.annotate(services, alice, run.id, tags=None, note="second", set_note=True)[1] == Annotation(
        {"b": "2"}, "second"
    )
    assert runs.annotate(services, alice, run.id, tags={}, note=None, set_note=True)[1] == Annotation({}, None)
    runs.annotate(services, alice, run.id, tags={"c": "3"}, note="kept", set_note=True)
    assert runs.annotate(services, bob, run.id, tags=None, note=None, set_note=False)[1] == Annotation({}, None)
    runs.annotate(services, bob, other.id, tags={"x": "y"}, note=None, set_note=False)
    assert runs.annotations(services, alice, [run.id, other.id]) == {run.id: Annotation({"c": "3"}, "kept")}
    assert runs.annotations(services, bob, [run.id, other.id]) == {
        run.id: Annotation({}, None),
        other.id: Annotation({"x": "y"}, None),
    }
    assert runs.annotations(services, None, [run.id]) == {}
    assert runs.annotations(services, alice, []) == {}
    assert runs.get_run(services, alice, run.id).result == run.result  # the run itself never changes


def test_a_run_the_caller_may_not_see_cannot_be_annotated_and_keeps_no_annotation(locked: Services) -> None:
    alice = principal(locked, "runs")
    anon = put(locked, None)
    with pytest.raises(NotFound):
        runs.annotate(locked, alice, anon.id, tags={"a": "1"}, note="n", set_note=True)
    assert runs.annotations(locked, alice, [anon.id]) == {}
    with pytest.raises(NotFound):
        runs.annotate(locked, alice, "no-such-run", tags={"a": "1"}, note=None, set_note=False)


# --- search ----------------------------------------------------------------------------------------------------


def search(services: Services, who: Principal | None, limit: int = 50, cursor: str | None = None, **query: Any) -> Any:
    return runs.search_runs(services, who, SearchQuery(**query), limit=limit, cursor=cursor)


def test_a_search_sees_what_the_caller_may_see_narrowed_by_owner(services: Services) -> None:
    alice, bob = principal(services, "runs"), principal(services, "runs")
    anon, mine, bobs = put(services, None), put(services, alice), put(services, bob)
    boss = admin(services)
    assert ids(search(services, alice).items) == [mine.id, anon.id]
    assert ids(search(services, None).items) == [anon.id]
    assert ids(search(services, boss).items) == [bobs.id, mine.id, anon.id]
    assert ids(search(services, alice, owner="me").items) == [mine.id]
    assert ids(search(services, alice, owner="anonymous").items) == [anon.id]
    assert ids(search(services, None, owner="anonymous").items) == [anon.id]
    assert ids(search(services, boss, owner="me").items) == []
    assert ids(search(services, boss, owner="anonymous").items) == [anon.id]


def test_with_required_keys_a_search_sees_only_the_callers_runs(locked: Services) -> None:
    alice = principal(locked, "runs")
    put(locked, None)
    mine = put(locked, alice)
    assert ids(search(locked, alice).items) == [mine.id]
    assert ids(search(locked, alice, owner="anonymous").items) == []
    with pytest.raises(Unauthorized):
        search(locked, None)


def test_a_search_filters_sorts_by_a_result_and_pages_on_value_then_seq(services: Services) -> None:
    rows = [put(services, None, result={"loss": v}, artifacts=("f",) if v == 2 else ()) for v in (3, 1, 2, 1)]
    found = search(services, None, name="test.run", filters=("result.loss>=2",))
    assert ids(found.items) == [rows[2].id, rows[0].id]
    by_loss = dict(name="test.run", sort="result.loss", order="asc")
    first = search(services, None, limit=2, **by_loss)
    assert ids(first.items) == [rows[1].id, rows[3].id]
    assert cursors.decode(first.next_cursor) == [1, rows[3].seq]
    second = search(services, None, limit=2, cursor=first.next_cursor, **by_loss)
    assert ids(second.items) == [rows[2].id, rows[0].id] and second.next_cursor is None
    assert second.items[0].artifacts == ("f",)
    newest = search(services, None, limit=3)
    assert ids(newest.items) == [rows[3].id, rows[2].id, rows[1].id]
    assert cursors.decode(newest.next_cursor) == rows[1].seq
    assert ids(search(services, None, limit=3, cursor=newest.next_cursor).items) == [rows[0].id]


def test_a_search_looking_through_too_many_visible_runs_is_refused(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_search, "MAX_SCANNED", 3)
    alice = principal(services, "runs")
    for owner in (None, None, alice, alice):
        put(services, owner, result={"v": 1})
    put(services, None, name="elsewhere", result={"v": 1})
    assert len(search(services, alice).items) == 5  # no filter or result sort: not counted
    assert len(search(services, alice, sort="created_at", name="test.run").items) == 4
    error = refused(lambda: search(services, alice, name="test.run", filters=("result.v=1",)))
    assert (error["loc"], error["type"]) == (["query"], "too_many_rows")
    error = refused(lambda: search(services, alice, name="test.run", sort="result.v"))
    assert (error["loc"], error["type"]) == (["query"], "too_many_rows")
    # only the runs the caller may see count: the two anonymous ones, or alice's own with owner=me
    assert len(search(services, None, name="test.run", filters=("result.v=1",)).items) == 2
    assert len(search(services, alice, name="test.run", owner="me", filters=("result.v=1",)).items) == 2
    put(services, alice, result={"v": 1})
    assert len(search(services, alice, name="test.run", owner="me", filters=("result.v=1",)).items) == 3
    put(services, alice, result={"v": 1})
    error = refused(lambda: search(services, alice, name="test.run", owner="me", filters=("result.v=1",)))
    assert error["type"] == "too_many_rows"


def test_a_search_runs_under_the_time_limit_and_a_slow_one_is_refused(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    for v in range(3):
        put(services, None, result={"v": v})
    limits: list[float] = []
    real = runs_repo.time_limit

    def recorded(conn: Any, seconds: float) -> Any:
        limits.append(seconds)
        return real(conn, seconds)

    monkeypatch.setattr(runs_repo, "time_limit", recorded)
    assert len(search(services, None, name="test.run", filters=("result.v>=1",)).items) == 2
    assert limits == [2.0]

    @contextmanager
    def interrupted(conn: Any, seconds: float) -> Iterator[None]:
        yield
        raise runs_repo.SearchTooSlow(f"stopped after {seconds:g} s")

    monkeypatch.setattr(runs_repo, "time_limit", interrupted)
    monkeypatch.setattr(run_search, "TIME_LIMIT_S", 0.25)
    error = refused(lambda: search(services, None, name="test.run", filters=("result.v>=1",)))
    assert error == {"loc": ["query"], "msg": "stopped after 0.25 s", "type": "too_slow"}


# --- comparison ------------------------------------------------------------------------------------------------


def test_compare_takes_two_to_eight_distinct_visible_runs_of_one_estimator(services: Services) -> None:
    alice = principal(services, "runs")
    many = [put(services, None, params={"i": i}) for i in range(9)]
    for bad in ([many[0].id], many[:1] * 2, [r.id for r in many]):
        error = refused(lambda bad=bad: runs.compare_runs(services, None, bad))
        assert (error["loc"], error["type"]) == (["query", "ids"], "value_error")
    assert len(runs.compare_runs(services, None, [r.id for r in many[:8]]).runs) == 8
    assert len(runs.compare_runs(services, None, [many[0].id, many[1].id]).runs) == 2
    other = put(services, None, name="test.other")
    scorer = put(services, None, kind="scorer")
    for odd in (other, scorer):
        error = refused(lambda odd=odd: runs.compare_runs(services, None, [many[0].id, odd.id]))
        assert (error["loc"], error["type"]) == (["query", "ids"], "value_error")
    hidden = put(services, alice)
    with pytest.raises(NotFound):
        runs.compare_runs(services, None, [many[0].id, hidden.id])
    assert ids(runs.compare_runs(services, alice, [hidden.id, many[0].id]).runs) == [hidden.id, many[0].id]


def test_compare_lists_the_params_that_differ_and_the_scalar_results_side_by_side(services: Services) -> None:
    a = put(
        services,
        None,
        params='{"same": 1, "n": {"k": 2, "deep": {"x": [1, 2]}}, "only_a": true, "objs": [{"b": 1, "a": 2}]}',
        result={"score": 0.5, "flag": True, "name": "a", "none": None, "vec": [1, 2], "sub": {"v": 1}, "mix": 1},
    )
    b = put(
        services,
        None,
        params='{"same": 1, "n": {"k": 3, "deep": {"x": [1, 2]}}, "objs": [{"a": 2, "b": 1}]}',
        result={"score": 1, "flag": False, "name": "b", "vec": [3], "sub": {"v": 2, "w": 0}, "mix": [1]},
        version="2",
    )
    got = runs.compare_runs(services, None, [a.id, b.id])
    assert (got.kind, got.name, ids(got.runs), got.versions_differ) == ("estimator", "test.run", [a.id, b.id], True)
    assert got.params == {"n.k": [2, 3], "only_a": [True, None]}
    assert got.result == {
        "flag": [True, False],
        "name": ["a", "b"],
        "none": [None, None],
        "score": [0.5, 1],
        "sub.v": [1, 2],
        "sub.w": [None, 0],
    }
    assert list(got.result) == sorted(got.result) and list(got.params) == sorted(got.params)


def test_compare_tells_when_the_versions_are_the_same(services: Services) -> None:
    a, b = put(services, None, params={"x": 1}), put(services, None, params={"x": 1.0})
    got = runs.compare_runs(services, None, [b.id, a.id])
    assert got.versions_differ is False and ids(got.runs) == [b.id, a.id]
    assert got.params == {"x": [1.0, 1]}  # 1.0 and 1 are different JSON
    assert got.result == {}


# --- the run page ----------------------------------------------------------------------------------------------


def test_the_run_page_tells_that_the_run_exists_and_its_first_job(queued: Services) -> None:
    run = put(queued, None)
    assert runs.run_page(queued, run.id) == runs.RunPage(run.id, None)
    first, _ = (
        queued.jobs.submit(
            kind="estimator",
            name="test.run",
            version="1",
            params_json=run.params,
            api_key_id=None,
            client=None,
            existing_run_id=run.id,
        )
        for _ in range(2)
    )
    assert runs.run_page(queued, run.id) == runs.RunPage(run.id, first.id)
    with pytest.raises(NotFound) as missing:
        runs.run_page(queued, "no-such-run")
    assert "no-such-run" in missing.value.detail


def test_a_page_reads_one_row_more_than_its_limit_and_a_count_stops_past_the_maximum(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    for v in range(6):
        put(services, None, result={"v": v})
    read: list[tuple[str, int]] = []

    def recording(name: str) -> Any:
        real = getattr(runs_repo, name)

        def call(*args: Any, **kw: Any) -> Any:
            got = real(*args, **kw)
            read.append((name, got if isinstance(got, int) else len(got)))
            return got

        return call

    for name in ("list_page", "search_page", "count_scope"):
        monkeypatch.setattr(runs_repo, name, recording(name))
    assert len(runs.list_runs(services, None, kind=None, name=None, limit=2, cursor=None).items) == 2
    assert len(search(services, None, limit=2).items) == 2
    monkeypatch.setattr(run_search, "MAX_SCANNED", 10)
    assert len(search(services, None, limit=3, name="test.run", sort="result.v").items) == 3
    monkeypatch.setattr(run_search, "MAX_SCANNED", 3)
    error = refused(lambda: search(services, None, name="test.run", sort="result.v"))
    assert error["type"] == "too_many_rows"
    assert read == [("list_page", 3), ("search_page", 3), ("count_scope", 6), ("search_page", 4), ("count_scope", 4)]
