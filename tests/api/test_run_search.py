"""``GET /v1/runs`` search: filters on params, results and the caller's tags, sorts on a result number with keyset
pages, time range and owner, every bad query a 422 naming its part, and the row and time bounds. Expected runs come
from the NML normaliser C(2, n) = sum_k binom(n, k) (k/n)^k ((n-k)/n)^(n-k) computed here by brute force."""

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import api_key
from usecases import run_search

NAME = "compression.nml_regret"
NS = range(1, 7)


def log_c(n: int) -> float:
    """log C(2, n) by the sum over the binomial counts (0^0 = 1)."""
    return math.log(sum(math.comb(n, k) * (k / n) ** k * ((n - k) / n) ** (n - k) for k in range(n + 1)))


@pytest.fixture
def made(client: TestClient) -> dict[int, dict[str, Any]]:
    """One anonymous run of compression.nml_regret per n in 1..6 (num_symbols 2), by n."""
    runs = {}
    for n in NS:
        r = client.post(f"/v1/estimators/{NAME}", json={"num_symbols": 2, "n": n})
        assert r.status_code == 200, r.text
        runs[n] = r.json()
    return runs


def _ids(client: TestClient, headers: dict[str, str] | None = None, **query: Any) -> list[str]:
    r = client.get("/v1/runs", params=query, headers=headers or {})
    assert r.status_code == 200, r.text
    return [item["id"] for item in r.json()["items"]]


def _all_pages(client: TestClient, **query: Any) -> list[str]:
    ids, cursor = [], None
    while True:
        body = client.get("/v1/runs", params={**query, **({"cursor": cursor} if cursor else {})}).json()
        ids += [item["id"] for item in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            return ids


def test_param_filters(client: TestClient, made: dict[int, dict[str, Any]]) -> None:
    newest_first = [made[n]["id"] for n in reversed(NS)]
    assert _ids(client, name=NAME, filter="param.n=3") == [made[3]["id"]]
    assert _ids(client, name=NAME, filter="param.n>=4") == newest_first[:3]
    assert _ids(client, name=NAME, filter="param.n!=3") == [i for i in newest_first if i != made[3]["id"]]
    assert _ids(client, name=NAME, filter=["param.num_symbols=2", "param.n<3"]) == [made[2]["id"], made[1]["id"]]
    assert _ids(client, name=NAME, filter="param.num_symbols=3") == []
    assert _ids(client, name=NAME, filter='param.n="3"') == []  # a string never equals a number
    assert _ids(client, name=NAME, filter="param.missing=1") == []


def test_result_filter_and_sort_follow_the_brute_force_values(client: TestClient, made: dict[int, Any]) -> None:
    values = {n: log_c(n) for n in NS}
    cut = (values[3] + values[4]) / 2
    above = {made[n]["id"] for n in NS if values[n] > cut}
    assert set(_ids(client, name=NAME, filter=f"result.log_c_nats>{cut!r}")) == above and len(above) == 3
    ascending = [made[n]["id"] for n in sorted(NS, key=values.__getitem__)]
    assert _all_pages(client, name=NAME, sort="result.log_c_nats", order="asc", limit=2) == ascending
    assert _all_pages(client, name=NAME, sort="result.log_c_nats", order="desc", limit=4) == ascending[::-1]
    assert _all_pages(client, name=NAME, order="asc", limit=4) == [made[n]["id"] for n in NS]


def test_tag_filters_read_the_callers_own_tags(client: TestClient, made: dict[int, Any]) -> None:
    alice, bob = api_key(client, "estimators:run", name="alice"), api_key(client, "estimators:run", name="bob")
    for n, exp in ((2, "a"), (5, "b")):
        assert client.patch(f"/v1/runs/{made[n]['id']}", json={"tags": {"exp": exp}}, headers=alice).status_code == 200
    assert _ids(client, alice, filter='tag.exp="a"') == [made[2]["id"]]
    assert _ids(client, alice, filter='tag.exp!="a"') == [made[5]["id"]]
    assert _ids(client, alice, filter=['tag.exp>="a"', "param.n>2"], name=NAME) == [made[5]["id"]]
    assert _ids(client, bob, filter='tag.exp="a"') == []
    assert client.get("/v1/runs", params={"filter": 'tag.exp="a"'}).status_code == 401


def test_time_range_and_owner(client: TestClient, made: dict[int, Any]) -> None:
    alice = api_key(client, "estimators:run", name="alice")
    own = client.post(f"/v1/estimators/{NAME}", json={"num_symbols": 3, "n": 2}, headers=alice).json()
    later = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
    assert _ids(client, created_from=later) == []
    assert len(_ids(client, created_to=later)) == 6
    assert _ids(client, created_to=made[3]["created_at"]) == [made[2]["id"], made[1]["id"]]
    assert _ids(client, alice, owner="me") == [own["id"]]
    assert own["id"] not in _ids(client, alice, owner="anonymous") and len(_ids(client, alice, owner="anonymous")) == 6
    assert client.get("/v1/runs", params={"owner": "me"}).status_code == 401


@pytest.mark.parametrize(
    ("query", "loc"),
    [
        ({"filter": "param.n=3"}, ["query", "name"]),
        ({"sort": "result.log_c_nats"}, ["query", "name"]),
        ({"name": NAME, "filter": "param.n~3"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": "params.n=3"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": "param.n=abc"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": "param.n=[1]"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": "param.n<true"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": "param.n=NaN"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": "param.n'--=1"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": "param.a..b=1"}, ["query", "filter", "0"]),
        ({"filter": "tag.bad key=1"}, ["query", "filter", "0"]),
        ({"name": NAME, "filter": ["param.n=1"] + ["param.n>0"] * 8}, ["query", "filter"]),
        ({"name": NAME, "sort": "params.n"}, ["query", "sort"]),
        ({"name": NAME, "sort": "result.log_c_nats", "cursor": "WzFd"}, ["query", "cursor"]),
        ({"created_from": "2026-01-02T00:00:00Z", "created_to": "2026-01-01T00:00:00Z"}, ["query", "created_from"]),
    ],
)
def test_bad_queries_are_422_naming_the_part(client: TestClient, query: dict[str, Any], loc: list[str]) -> None:
    r = client.get("/v1/runs", params=query)
    assert r.status_code == 422, r.text
    assert [e["loc"] for e in r.json()["errors"]] == [loc]


def test_values_are_bound_never_spliced(client: TestClient, made: dict[int, Any]) -> None:
    assert _ids(client, name=NAME, filter="param.n=\"3' OR '1'='1\"") == []
    assert _ids(client, name=NAME, filter='param.n>"1) OR (1=1"') == []
    assert len(_ids(client)) == 6


def test_a_search_over_more_runs_than_the_bound_is_422(
    client: TestClient, made: dict[int, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_search, "MAX_SCANNED", 5)
    r = client.get("/v1/runs", params={"name": NAME, "filter": "param.n=3"})
    assert r.status_code == 422 and r.json()["errors"][0]["type"] == "too_many_rows"
    assert _ids(client, name=NAME, filter="param.n=3", created_from=made[2]["created_at"]) == [made[3]["id"]]
    assert len(_ids(client, name=NAME)) == 6  # a plain listing is an index walk, not a scan
