"""A submission over HTTP answers the same with the vectorised path (the body parsed and checked without the
envelope model, prediction items checked and scored as columns) as with the per-item path it replaces (forced
here by turning the vectorised checks off): the same status, scores, per-item values and stored predictions for
valid bodies, the same errors (message, loc, type) for each kind of invalid one, small bodies and large ones (the
pre-checked path) alike."""

import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from db.repositories import submissions as sub_repo
from service.scoring._common import ItemColumns
from tests.factories import api_key, benchmark, film_key_items
from usecases import json_bounds, scoring
from usecases import submissions as sub_usecases
from usecases.settings import Settings

N_PUBLIC, N_PRIVATE = 2400, 600


@pytest.fixture
def writer(client: TestClient) -> dict[str, str]:
    return api_key(client, "submissions:write", name="writer")


@pytest.fixture
def owner(client: TestClient) -> dict[str, str]:
    return api_key(client, "benchmarks:write", name="maintainer")


@pytest.fixture
def bench(client: TestClient, owner: dict[str, str]) -> dict:
    items = film_key_items(N_PUBLIC, N_PRIVATE)
    for i, item in enumerate(items):  # mixed option counts, metadata on some items
        item["num_options"] = 2 + i % 5
        item["answer_idx"] = i % item["num_options"]
        if i % 3 == 0:
            item["release_year"] = 1920 + i % 50
            item["narrative_element"] = ("emotion", "setting")[i % 2]
    return benchmark(client, owner, items=items, max_submissions_per_day=1000)


def _items(n_public: int = N_PUBLIC, n_private: int = N_PRIVATE) -> list[dict]:
    """Predictions in reverse key order, one choice in three wrong."""
    items = [{"item_id": f"q{i}", "choice_idx": (i % (2 + i % 5) + (i % 3 == 1)) % 2} for i in range(n_public)]
    items += [{"item_id": f"p{i}", "choice_idx": 1} for i in range(n_private)]
    return items[::-1]


def _body(items: list[dict], **extra: Any) -> bytes:
    return json.dumps({"model": "m", "predictions": {"items": items}, **extra}).encode()


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoring, "item_columns", lambda model, items: None)
    monkeypatch.setattr(sub_usecases, "_plain_submission", lambda data, model: None)


def _answer(client: TestClient, bench: dict, settings: Settings, headers: dict, body: bytes) -> tuple:
    """What a submission answers: status, then the scores, per-item values and stored predictions, or the errors."""
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions",
        content=body,
        headers={**headers, "Content-Type": "application/json"},
    )
    out = r.json()
    if r.status_code != 201:
        return r.status_code, out.get("detail"), out.get("errors")
    items = client.get(f"/v1/submissions/{out['id']}/items", headers=headers).json()["items"]
    engine = create_engine(settings.database_url, poolclass=NullPool)
    with engine.connect() as conn:
        stored = sub_repo.predictions(conn, out["id"])
    engine.dispose()
    shown = {k: out[k] for k in ("scores", "breakdown", "coverage", "private", "model", "metadata")}
    return 201, shown, items, stored


def _both(
    client: TestClient, bench: dict, settings: Settings, headers: dict, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> tuple:
    """The answer with the vectorised path, checked equal to the per-item path's; the first element of the answer
    says whether the vectorised path took the items (the envelope parsed plainly, the items kept as columns)."""
    taken: list[bool] = []
    with monkeypatch.context() as m:
        real = sub_usecases._plain_submission

        def spy(*args: Any) -> Any:
            out = real(*args)
            taken.append(out is not None and isinstance(out.predictions, ItemColumns))
            return out

        m.setattr(sub_usecases, "_plain_submission", spy)
        fast = _answer(client, bench, settings, headers, body)
    with monkeypatch.context() as m:
        _slow(m)
        slow = _answer(client, bench, settings, headers, body)
    assert fast == slow
    return taken == [True], *fast


def test_a_large_valid_submission_scores_and_stores_the_same(
    client: TestClient, bench: dict, settings: Settings, writer: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _body(_items(), metadata={"note": "é", "n": [1, 2.5, None]})
    assert len(body) >= json_bounds.MIN_CHECKED_BYTES
    fast, *answer = _both(client, bench, settings, writer, body, monkeypatch)
    assert fast and answer[0] == 201, answer
    status, shown, items, stored = answer
    assert status == 201 and len(items) == N_PUBLIC
    right = sum(i % (2 + i % 5) == (i % (2 + i % 5) + (i % 3 == 1)) % 2 for i in range(N_PUBLIC))
    assert shown["scores"]["accuracy"]["value"] == pytest.approx(right / N_PUBLIC, abs=1e-12)
    assert json.loads(stored) == _items()


def test_a_small_submission_with_some_items_missing_scores_the_same(
    client: TestClient, bench: dict, settings: Settings, writer: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = [{"choice_idx": 0, "item_id": "q4"}, {"item_id": "p2", "choice_idx": 1}, {"item_id": "q1", "choice_idx": 1}]
    fast, status, shown, _, stored = _both(client, bench, settings, writer, _body(items), monkeypatch)
    assert fast and status == 201 and shown["coverage"] == pytest.approx(2 / N_PUBLIC)
    canonical = [{"item_id": i["item_id"], "choice_idx": i["choice_idx"]} for i in items]
    assert stored == json.dumps(canonical, separators=(",", ":"))


BAD_ITEMS: dict[str, Callable[[list[dict]], None]] = {
    "wrong type": lambda items: items[7].update(choice_idx="1"),
    "bool for int": lambda items: items[7].update(choice_idx=False),
    "non-integral float": lambda items: items[7].update(choice_idx=1.5),
    "missing field": lambda items: items[7].pop("choice_idx"),
    "extra field": lambda items: items[7].update(score=0.5),
    "empty item_id": lambda items: items[7].update(item_id=""),
    "choice over the model's bound": lambda items: items[7].update(choice_idx=26),
    "choice over the item's options": lambda items: items[-2].update(choice_idx=3),  # q1 has 3 options
    "private choice over the item's options": lambda items: items[0].update(choice_idx=25),  # p599: 6 options
    "duplicate item_id": lambda items: items.append(dict(items[7])),
    "unknown item_id": lambda items: items[7].update(item_id="nope"),
    "not an object": lambda items: items.__setitem__(7, ["q5", 1]),
}


SCORING_ERRORS = (
    "choice over the item's options",
    "private choice over the item's options",
    "duplicate item_id",
    "unknown item_id",
)


@pytest.mark.parametrize("size", ["small", pytest.param("large", marks=pytest.mark.slow)])
@pytest.mark.parametrize("kind", BAD_ITEMS)
def test_each_kind_of_invalid_item_gets_the_same_error(
    client: TestClient,
    bench: dict,
    settings: Settings,
    writer: dict,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    size: str,
) -> None:
    items = _items() if size == "large" else _items(10, 4)
    BAD_ITEMS[kind](items)
    fast, status, detail, errors = _both(client, bench, settings, writer, _body(items), monkeypatch)
    assert status == 422 and errors, detail
    assert fast == (kind in SCORING_ERRORS)  # those items pass the column check; the scoring finds the problem


@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "", "predictions": {"items": []}}',
        b'{"model": "m", "predictions": {"items": [], "more": 1}}',
        b'{"model": "m", "predictions": {"items": {}}}',
        b'{"model": "m", "predictions": {"items": []}, "metadata": [1]}',
        b'{"model": "m", "predictions": {"items": []}, "metadata": {"x": NaN}}',
        b'{"model": "m", "predictions": {"items": []}, "extra": 1}',
        b'{"predictions": {"items": []}}',
        b'{"model": "m", "predictions": {"items": [1, 2]}}',
        b'{"model": "m", "predictions": {"items": [}',
        b'[{"model": "m"}]',
        *(
            pytest.param(body.encode(), marks=pytest.mark.slow)
            for body in (
                json.dumps({"model": "x" * 129, "predictions": {"items": _items()}}),
                json.dumps({"model": "m", "predictions": {"items": _items()}, "metadata": "x"}),
                json.dumps({"model": "m", "predictions": {"items": _items()}})[:-3],
            )
        ),
    ],
)
def test_each_kind_of_invalid_envelope_gets_the_same_answer(
    client: TestClient, bench: dict, settings: Settings, writer: dict, monkeypatch: pytest.MonkeyPatch, body: bytes
) -> None:
    fast, status, *_ = _both(client, bench, settings, writer, body, monkeypatch)
    assert status in (400, 422) and not fast
