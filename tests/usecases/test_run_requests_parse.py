"""usecases/run_requests.py, from a body to a request: the estimator or scorer named, the typed score request, a
body parsed and located (400 for JSON that does not decode, 422 naming the fields, the structural pre-check and
the one permit of large bodies), the per-process memory of bodies seen before, and the body of ``POST /v1/jobs``
split into its members or validated whole. Written for the mutation run of ``usecases.run_requests``."""

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from service.registry import ESTIMATORS, SCORERS
from tests import support_estimators
from tests.factories import film_key_items, film_predictions, principal
from usecases import json_bounds, run_requests
from usecases.errors import InvalidFields, NotFound, Unauthorized
from usecases.run_requests import Answered, Remembered, RunRequest
from usecases.services import Services
from usecases.settings import Settings

SLOW = support_estimators.NAME
MIN = json_bounds.MIN_CHECKED_BYTES


@pytest.fixture
def services(settings: Settings, test_estimator: str) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "memory"}))
    yield s
    s.dispose()


@pytest.fixture
def locked(settings: Settings, test_estimator: str) -> Iterator[Services]:
    s = Services(settings.model_copy(update={"queue": "memory", "require_keys": True}))
    yield s
    s.dispose()


@pytest.fixture
def fresh_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty per-process memories of bodies and score-request models for this test."""
    monkeypatch.setattr(run_requests, "_BODY_KEYS", OrderedDict())
    monkeypatch.setattr(run_requests, "_REQUEST_MODELS", {})


def rejected(call: Any) -> InvalidFields:
    with pytest.raises(InvalidFields) as err:
        call()
    return err.value


def padded(body: bytes, size: int) -> bytes:
    """``body`` with trailing spaces to ``size`` bytes."""
    assert len(body) <= size
    return body + b" " * (size - len(body))


# --- specs and models ------------------------------------------------------------------------------------------


def test_find_spec_looks_in_the_registry_of_its_kind(services: Services) -> None:
    assert run_requests.find_spec("estimator", SLOW) is ESTIMATORS[SLOW]
    assert run_requests.find_spec("scorer", "film_mcq") is SCORERS["film_mcq"]
    for kind, name in (("scorer", SLOW), ("estimator", "film_mcq"), ("estimator", "nope")):
        with pytest.raises(NotFound):
            run_requests.find_spec(kind, name)


def test_the_score_request_model_is_typed_for_the_scorer_and_built_once(fresh_memory: None) -> None:
    spec = dataclasses.replace(SCORERS["film_mcq"], name="films.v2")
    model = run_requests.score_request_model(spec)
    assert run_requests.score_request_model(spec) is model
    assert run_requests.body_model(spec) is model
    schema = model.model_json_schema()
    assert model.__name__ == schema["title"] == "films_v2_score_request"
    defs = schema["$defs"]
    assert defs["films_v2_answer_key"]["properties"]["items"] == {
        "items": {"$ref": "#/$defs/AnswerKeyItem"},
        "maxItems": 100_000,
        "minItems": 1,
        "title": "Items",
        "type": "array",
    }
    assert defs["films_v2_predictions"]["properties"]["items"] == {
        "items": {"$ref": "#/$defs/PredictionItem"},
        "maxItems": 100_000,
        "title": "Items",
        "type": "array",
    }
    assert schema["required"] == ["answer_key", "predictions"] and schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"answer_key", "predictions", "params"}
    for part in ("films_v2_answer_key", "films_v2_predictions"):
        assert defs[part]["additionalProperties"] is False  # strict: unknown members refused
    request = model.model_validate({"answer_key": {"items": film_key_items(2, 0)}, "predictions": {"items": []}})
    assert request.params == spec.params_model()  # params default to the scorer's defaults
    with pytest.raises(ValidationError) as extra:
        model.model_validate({"answer_key": {"items": film_key_items(2, 0)}, "predictions": {"items": []}, "x": 1})
    assert [(e["loc"], e["type"]) for e in extra.value.errors()] == [(("x",), "extra_forbidden")]


def test_an_estimators_body_model_is_its_params_model(services: Services) -> None:
    assert run_requests.body_model(ESTIMATORS[SLOW]) is ESTIMATORS[SLOW].params_model


# --- parse -----------------------------------------------------------------------------------------------------


def test_parse_validates_strictly_and_locates_errors_under_loc(services: Services) -> None:
    model = ESTIMATORS[SLOW].params_model
    got = run_requests.parse(model, b'{"values": [1.5], "steps": 3}')
    assert (got.values, got.steps) == ([1.5], 3)  # type: ignore[attr-defined]
    err = rejected(lambda: run_requests.parse(model, b'{"values": [1.0], "steps": "3"}', ("body", "params")))
    assert (err.status, err.errors) == (
        422,
        [{"loc": ["body", "params", "steps"], "msg": "Input should be a valid integer", "type": "int_type"}],
    )
    err = rejected(lambda: run_requests.parse(model, b'{"values": [1.0]'))
    assert err.status == 400
    (error,) = err.errors
    assert (error["loc"], error["type"], set(error)) == (["body"], "json_invalid", {"loc", "msg", "type"})
    err = rejected(lambda: run_requests.parse(model, b"{}"))
    assert err.status == 422 and err.errors == [{"loc": ["body", "values"], "msg": "Field required", "type": "missing"}]


def test_a_large_body_is_pre_checked_with_its_loc(services: Services) -> None:
    many = b"{" + b",".join(b'"k%d":1' % i for i in range(MIN // 6)) + b"}"
    assert len(many) >= MIN
    err = rejected(lambda: run_requests.parse(run_requests.JobTarget, many, ("body", "x")))
    (error,) = err.errors
    assert (err.status, error["loc"], error["type"]) == (422, ["body", "x"], "too_many_values")
    small = b"{" + b",".join(b'"k%d":1' % i for i in range(40)) + b"}"  # under the size: left to the validator
    err = rejected(lambda: run_requests.parse(run_requests.JobTarget, small, ("body", "x")))
    assert {e["type"] for e in err.errors} == {"missing", "extra_forbidden"}


def test_a_body_of_the_checked_size_is_parsed_holding_the_permit_for_large_bodies(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    held: list[int] = []
    checked: list[tuple[bool, tuple[str, ...]]] = []

    class Permit:
        def __enter__(self) -> None:
            held.append(1)

        def __exit__(self, *exc: object) -> None:
            held.pop()

    real_check = json_bounds.check

    def check(model: Any, body: bytes, loc: tuple[str, ...] = ("body",)) -> None:
        checked.append((bool(held), loc))
        real_check(model, body, loc)

    monkeypatch.setattr(json_bounds, "LARGE_BODIES", Permit())
    monkeypatch.setattr(json_bounds, "check", check)
    model = ESTIMATORS[SLOW].params_model
    run_requests.parse(model, padded(b'{"values": [1.0]}', MIN), ("body", "p"))
    run_requests.parse(model, padded(b'{"values": [1.0]}', MIN - 1))
    assert checked == [(True, ("body", "p")), (False, ("body",))]
    assert held == []


# --- a body seen before ------------------------------------------------------------------------------------------


def slow_body(tag: int = 0) -> bytes:
    return json.dumps({"values": [1.0, 2.0], "tag": tag}).encode()


def test_a_body_seen_before_is_answered_from_memory_without_parsing(
    services: Services, monkeypatch: pytest.MonkeyPatch, fresh_memory: None
) -> None:
    spec = ESTIMATORS[SLOW]
    first = run_requests.open_request(services, spec, slow_body(1), None)
    assert isinstance(first, RunRequest) and first.remembered is None and first.api_key_id is None
    assert first.key == run_requests.cache_key(spec, first.params_json)
    answered = run_requests.run(services, first, client=None)
    assert isinstance(answered, Answered)
    parsed: list[bytes] = []
    real = run_requests.parse
    monkeypatch.setattr(run_requests, "parse", lambda m, b, loc=("body",): parsed.append(b) or real(m, b, loc))
    again = run_requests.open_request(services, spec, slow_body(1), None)
    assert again == Remembered(answered.run, None) and parsed == []
    # the same params in another body: parsed once, then found in the run memory
    other = b' {"tag": 1, "values": [1.0, 2.0]}'
    found = run_requests.open_request(services, spec, other, None)
    assert isinstance(found, RunRequest) and found.remembered == answered.run and parsed == [other]
    assert found.key == first.key and found.params_json == first.params_json
    assert run_requests.open_request(services, spec, other, None) == Remembered(answered.run, None)
    assert parsed == [other]


def test_a_remembered_body_is_not_answered_across_versions_kinds_or_keys(
    services: Services, fresh_memory: None
) -> None:
    spec = ESTIMATORS[SLOW]
    _, alice_token = alice_with_token(services)
    first = run_requests.open_request(services, spec, slow_body(2), alice_token)
    assert isinstance(first, RunRequest) and first.api_key_id is not None
    answered = run_requests.run(services, first, client=None)
    assert isinstance(answered, Answered)
    mine = run_requests.open_request(services, spec, slow_body(2), alice_token)
    assert mine == Remembered(answered.run, first.api_key_id)
    reordered = b'{"tag": 2, "values": [1.0, 2.0]}'  # not seen before: parsed, then found in the run memory
    found = run_requests.open_request(services, spec, reordered, alice_token)
    assert isinstance(found, RunRequest) and found.remembered == answered.run
    # another key, another version or another kind of the same name never gets this run
    fresh = run_requests.open_request(services, spec, slow_body(2), None)
    assert isinstance(fresh, RunRequest) and fresh.remembered is None and fresh.key == first.key
    newer = dataclasses.replace(spec, version="2")
    moved = run_requests.open_request(services, newer, slow_body(2), alice_token)
    assert isinstance(moved, RunRequest) and moved.remembered is None and moved.key[2] == "2"
    scorer = dataclasses.replace(SCORERS["film_mcq"], name=SLOW, version="1")
    err = rejected(lambda: run_requests.open_request(services, scorer, slow_body(2), alice_token))
    assert {tuple(e["loc"]) for e in err.errors} >= {("body", "answer_key"), ("body", "predictions")}


def alice_with_token(services: Services) -> tuple[Any, str]:
    from tests.factories import admin
    from usecases.api_keys import authenticate, create_key

    _, token = create_key(services, admin(services), "alice", ["estimators:run"])
    return authenticate(services, token), token


def test_a_bad_token_is_refused_even_for_a_body_seen_before(services: Services, fresh_memory: None) -> None:
    spec = ESTIMATORS[SLOW]
    first = run_requests.open_request(services, spec, slow_body(3), None)
    assert isinstance(first, RunRequest)
    run_requests.run(services, first, client=None)
    with pytest.raises(Unauthorized):
        run_requests.open_request(services, spec, slow_body(3), "ek_not_a_key")


def test_with_required_keys_a_run_needs_a_key(locked: Services, fresh_memory: None) -> None:
    with pytest.raises(Unauthorized):
        run_requests.open_request(locked, ESTIMATORS[SLOW], slow_body(), None)
    _, token = alice_with_token(locked)
    assert isinstance(run_requests.open_request(locked, ESTIMATORS[SLOW], slow_body(), token), RunRequest)


def test_open_request_locates_errors_under_its_loc(services: Services, fresh_memory: None) -> None:
    err = rejected(lambda: run_requests.open_request(services, ESTIMATORS[SLOW], b'{"values": "x"}', None, ("q",)))
    assert {tuple(e["loc"][:2]) for e in err.errors} == {("q", "values")}


def test_the_memory_of_bodies_keeps_4096_and_drops_the_least_recently_used(fresh_memory: None) -> None:
    spec = support_estimators.SPEC

    def fake(i: int) -> RunRequest:
        return RunRequest(spec, None, f"p{i}", ("estimator", SLOW, "1", f"h{i}"), None)  # type: ignore[arg-type]

    bodies = [b"%d" % i for i in range(4097)]
    for i in range(4096):
        run_requests._learn_body(spec, bodies[i], fake(i))
    assert run_requests._known_body(spec, bodies[0]) == ("p0", ("estimator", SLOW, "1", "h0"))
    run_requests._learn_body(spec, bodies[4096], fake(4096))
    assert run_requests._known_body(spec, bodies[1]) is None
    for i in (0, 2, 4096):
        assert run_requests._known_body(spec, bodies[i]) == (f"p{i}", ("estimator", SLOW, "1", f"h{i}"))
    assert run_requests._known_body(spec, b"never") is None


# --- the body of POST /v1/jobs ---------------------------------------------------------------------------------


def job_body(**members: Any) -> bytes:
    return json.dumps(members).encode()


def test_a_job_body_is_split_into_its_target_and_params(services: Services) -> None:
    alice = principal(services, "estimators:run")
    body = job_body(kind="estimator", name=SLOW, params={"values": [2.0], "tag": 4})
    request = run_requests.request_from_job_body(services, body, alice)
    expected = run_requests.make_request(
        ESTIMATORS[SLOW], ESTIMATORS[SLOW].params_model(values=[2.0], tag=4), alice.key_id
    )
    assert request == expected
    scored = job_body(
        kind="scorer",
        name="film_mcq",
        params={"answer_key": {"items": film_key_items()}, "predictions": film_predictions(2)},
    )
    request = run_requests.request_from_job_body(services, scored, None)
    assert request.spec is SCORERS["film_mcq"] and request.api_key_id is None
    assert request.params.predictions.items[0].item_id == "q0"  # type: ignore[attr-defined]


def test_a_job_body_locates_the_errors_of_each_member(services: Services) -> None:
    def errors(body: bytes) -> list[tuple[list[Any], str]]:
        return [
            (e["loc"], e["type"])
            for e in rejected(lambda: run_requests.request_from_job_body(services, body, None)).errors
        ]

    assert errors(job_body(kind="estimator", name=SLOW, params={"values": [1.0], "steps": 0})) == [
        (["body", "params", "steps"], "greater_than_equal")
    ]
    assert errors(job_body(kind="estimator", name=SLOW)) == [(["body", "params", "values"], "missing")]
    assert errors(job_body(kind="job", name=SLOW, params={})) == [(["body", "kind"], "literal_error")]
    assert errors(job_body(kind="estimator", params={})) == [(["body", "name"], "missing")]
    assert errors(job_body(kind="estimator", name=SLOW, params={}, extra=1)) == [(["body", "extra"], "extra_forbidden")]
    assert errors(b"[1, 2]") == [(["body"], "model_type")]
    with pytest.raises(NotFound):
        run_requests.request_from_job_body(services, job_body(kind="scorer", name=SLOW, params={}), None)


def test_a_job_body_that_cannot_be_split_is_validated_whole(services: Services) -> None:
    twice = b'{"kind": "scorer", "kind": "estimator", "name": "%s", "params": {"values": [5.0]}}' % SLOW.encode()
    assert run_requests.json_bounds.members(twice) is None  # a repeated member: not split
    request = run_requests.request_from_job_body(services, twice, None)
    assert request.spec is ESTIMATORS[SLOW] and request.params.values == [5.0]  # type: ignore[attr-defined]


def test_a_large_job_body_that_cannot_be_split_is_refused_without_parsing(services: Services) -> None:
    def error(body: bytes) -> tuple[int, dict[str, Any]]:
        err = rejected(lambda: run_requests.request_from_job_body(services, body, None))
        (first, *_) = err.errors
        return err.status, first

    unbalanced = padded(b"[[1]", MIN)
    assert error(unbalanced) == (400, {"loc": ["body"], "msg": "unbalanced brackets", "type": "json_invalid"})
    status, first = error(padded(b"[[1]", MIN - 1))  # under the size: the parser says so
    assert (status, first["type"]) == (400, "json_invalid") and first["msg"] != "unbalanced brackets"
    status, first = error(padded(b"[1]", MIN))
    assert (status, first["loc"], first["type"]) == (422, ["body"], "model_type")
    assert first["msg"] == "a job is an object {kind, name, params}"
    status, first = error(padded(b"[1]", MIN - 1))
    assert (status, first["loc"], first["type"]) == (422, ["body"], "model_type")
    assert first["msg"] != "a job is an object {kind, name, params}"


def test_a_large_job_body_is_split_and_its_params_pre_checked(services: Services) -> None:
    values = [float(i) for i in range(MIN // 6)]
    body = job_body(kind="estimator", name=SLOW, params={"values": values})
    assert len(body) >= MIN
    request = run_requests.request_from_job_body(services, body, None)
    assert request.params.values == values  # type: ignore[attr-defined]


def test_with_required_keys_a_job_body_needs_a_key(locked: Services) -> None:
    alice, _ = alice_with_token(locked)
    body = job_body(kind="estimator", name=SLOW, params={"values": [1.0]})
    assert run_requests.request_from_job_body(locked, body, alice).api_key_id == alice.key_id
    with pytest.raises(Unauthorized):
        run_requests.request_from_job_body(
            locked, job_body(kind="estimator", name=SLOW, params={"values": [1.0]}), None
        )
