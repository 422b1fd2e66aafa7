"""The access matrix of a benchmark run as a challenge (docs/challenges.md): every route of a benchmark walked with
the key that created it, a co-owner (a key with no scope of its own but estimators:run), another benchmark's owner,
a participant, another participant, no key, and an admin; each answer's status and the rows it shows.

One module-scoped app and data set: two participants' submissions (one of them withdrawn, one taken off the board
with ``public: false``), and three phases made on the app's clock (``Services.clock``): ``final``
(hidden_until_end, ended and frozen, holding one more submission of the participant), ``sprint`` (hidden_until_end,
open, holding the other participant's best submission, q-3, which no one else sees before the end) and ``later``
(hidden_until_end, upcoming); the calls made here change nothing (a second withdrawal, flags set to what
they are, an owner already added, a phase renamed to its name), so the order of the cases does not matter.
"""

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import _truncate_all
from tests.factories import ADMIN, ADMIN_KEY, api_key, benchmark, film_key_items, serving, submission
from usecases.settings import Settings

ROLES = ("owner", "coowner", "other_owner", "participant", "other_participant", "anonymous", "admin")
OWNERS = ("owner", "coowner", "admin")


@dataclass(frozen=True)
class World:
    client: TestClient
    headers: dict[str, dict[str, str]]
    ids: dict[str, str]


@pytest.fixture(scope="module")
def world(template_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("access")
    if template_db.startswith("postgresql"):
        _truncate_all(template_db)
        url = template_db
    else:
        shutil.copyfile(Path(template_db.removeprefix("sqlite:///")), root / "estibench.db")
        url = f"sqlite:///{root / 'estibench.db'}"
    settings = Settings(
        env="test",
        database_url=url,
        data_dir=root / "data",
        secret_key="test-secret",
        admin_key=ADMIN_KEY,
        log_json=True,
        log_level="WARNING",
    )
    with serving(settings) as client:
        yield _build(client)


def _build(client: TestClient) -> World:
    owner = api_key(client, "benchmarks:write", name="olivia")
    coowner = api_key(client, "estimators:run", name="cora")
    other_owner = api_key(client, "benchmarks:write", "submissions:write", name="oscar")
    bench = benchmark(client, owner, name="challenge", description="Film questions, as a challenge")
    elsewhere = benchmark(client, other_owner, name="elsewhere")
    cora_id = client.get("/v1/api-keys/self", headers=coowner).json()["id"]
    owner_id = client.get("/v1/api-keys/self", headers=owner).json()["id"]
    r = client.post(f"/v1/benchmarks/{bench['id']}/owners", json={"key_id": cora_id}, headers=owner)
    assert r.status_code == 201, r.text
    invited = {}
    for role, body in (
        ("participant", {"display_name": "pat", "team": "Red"}),
        ("other_participant", {"display_name": "quinn"}),
    ):
        r = client.post(f"/v1/benchmarks/{bench['id']}/participants", json=body, headers=owner)
        assert r.status_code == 201, r.text
        invited[role] = r.json()
    pat = {"Authorization": f"Bearer {invited['participant']['key']}"}
    quinn = {"Authorization": f"Bearer {invited['other_participant']['key']}"}
    red1 = submission(client, bench, pat, "red-1", 8, 3)
    red2 = submission(client, bench, pat, "red-2", 9, 4)
    assert client.patch(f"/v1/submissions/{red2['id']}", json={"public": False}, headers=pat).status_code == 200
    q1 = submission(client, bench, quinn, "q-1", 6, 2)
    q2 = submission(client, bench, quinn, "q-2", 3, 1)
    assert client.delete(f"/v1/submissions/{q2['id']}", headers=quinn).status_code == 200
    phases = _phases(client, bench["id"], owner, pat, quinn)
    headers = {
        "owner": owner,
        "coowner": coowner,
        "other_owner": other_owner,
        "participant": pat,
        "other_participant": quinn,
        "anonymous": {},
        "admin": ADMIN,
    }
    ids = {
        "bench": bench["id"],
        "elsewhere": elsewhere["id"],
        "owner_key": owner_id,
        "cora_key": cora_id,
        "red1": red1["id"],
        "red2": red2["id"],
        "q1": q1["id"],
        "q2": q2["id"],
        "pat": invited["participant"]["id"],
        "quinn": invited["other_participant"]["id"],
        **phases,
    }
    return World(client, headers, ids)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _phases(
    client: TestClient, bench_id: str, owner: dict[str, str], pat: dict[str, str], quinn: dict[str, str]
) -> dict[str, str]:
    """The three phases (their ids, q-3's, and the times of a phase that would overlap ``sprint``): ``final`` gets a
    submission of the participant (model red-1, worse than its board row) while open, then the clock moves on,
    ``sprint`` gets q-3 (every item right) and ``final`` is frozen by a read."""
    services = client.app.state.services  # type: ignore[attr-defined]
    t0 = datetime.now(UTC)
    services.clock = lambda: t0
    url = f"/v1/benchmarks/{bench_id}/phases"

    def make(name: str, start_h: float, end_h: float, **settings: Any) -> str:
        times = {"starts_at": _iso(t0 + timedelta(hours=start_h)), "ends_at": _iso(t0 + timedelta(hours=end_h))}
        r = client.post(url, json={"name": name, **times, **settings}, headers=owner)
        assert r.status_code == 201, r.text
        return r.json()["id"]

    hidden = {"leaderboard_visibility": "hidden_until_end"}
    final = make("final", -1, 1, splits=["public", "private"], **hidden)
    assert submission(client, bench_id, pat, "red-1", 5, 1)["phase_id"] == final
    services.clock = lambda: t0 + timedelta(hours=2)
    sprint = make("sprint", 1.5, 3, **hidden)
    q3 = submission(client, bench_id, quinn, "q-3", 10, 4)
    assert q3["phase_id"] == sprint
    later = make("later", 4, 5, **hidden)
    assert client.get(f"{url}/{final}/leaderboard", headers=owner).json()["frozen_at"] is not None
    return {
        "final": final,
        "sprint": sprint,
        "later": later,
        "q3": q3["id"],
        "overlap_start": _iso(t0 + timedelta(hours=2.5)),
        "overlap_end": _iso(t0 + timedelta(hours=2.75)),
    }


def _models(body: Any) -> list[tuple[Any, str, str | None]]:
    return [(r["rank"], r["model"], r["participant"]) for r in body["items"]]


def _submission_models(body: Any) -> list[str]:
    return sorted(s["model"] for s in body["items"])


def _items(body: Any) -> tuple[int, int]:
    splits = [i["split"] for i in body["items"]]
    return splits.count("public"), splits.count("private")


BOARD = [(1, "red-1", "Red"), (2, "q-1", "quinn")]
"""Both splits' best board: red-2 is off it (public: false), q-2 withdrawn; 8/10 and 6/10 public, 3/4 and 2/4
private; each row names its participant's team, else display name."""
EVERY_SUBMISSION = ["q-1", "q-2", "q-3", "red-1", "red-1", "red-2"]


@dataclass(frozen=True)
class Case:
    """A call and, per role, the status and the summary of the body (``seen``) it must answer."""

    name: str
    method: str
    url: str
    expected: dict[str, tuple[int, Any]]
    seen: Callable[[Any], Any] = lambda body: None
    body: dict[str, Any] | None = None


def _by_role(owners: tuple[int, Any], others: tuple[int, Any], anonymous: tuple[int, Any], **special: Any) -> dict:
    out = {role: owners if role in OWNERS else others for role in ROLES}
    out["anonymous"] = anonymous
    return out | special


def _everyone(status: int, seen: Any) -> dict:
    return {role: (status, seen) for role in ROLES}


NOT_SEEN = (404, None)
CASES = [
    Case(
        "benchmark",
        "get",
        "/v1/benchmarks/{bench}",
        _everyone(200, "Film questions, as a challenge"),
        lambda b: b["description"],
    ),
    Case("public board", "get", "/v1/benchmarks/{bench}/leaderboard?split=public", _everyone(200, BOARD), _models),
    Case(
        "private board",
        "get",
        "/v1/benchmarks/{bench}/leaderboard?split=private",
        _by_role((200, BOARD), (403, None), (403, None)),
        _models,
    ),
    Case(
        "public csv",
        "get",
        "/v1/benchmarks/{bench}/leaderboard.csv",
        _everyone(200, ["red-1", "q-1"]),
        lambda text: [line.split(",")[1] for line in text.splitlines()[1:]],
    ),
    Case(
        "leaderboard plot",
        "get",
        "/v1/benchmarks/{bench}/leaderboard/plot",
        _everyone(200, (True, True, False)),
        lambda text: ("red-1" in text, "q-1" in text, "q-3" in text),
    ),
    Case(
        "private csv",
        "get",
        "/v1/benchmarks/{bench}/leaderboard.csv?split=private",
        _by_role((200, 3), (403, None), (403, None)),
        lambda text: len(text.splitlines()),
    ),
    Case(
        "public compare",
        "get",
        "/v1/benchmarks/{bench}/compare?a={red1}&b={q1}",
        _everyone(200, (10, 0.8, 0.6)),
        lambda b: (b["n_common"], b["mean_a"], b["mean_b"]),
    ),
    Case(
        "private compare",
        "get",
        "/v1/benchmarks/{bench}/compare?a={red1}&b={q1}&split=private",
        _by_role((200, (4, 0.75, 0.5)), (403, None), (403, None)),
        lambda b: (b["n_common"], b["mean_a"], b["mean_b"]),
    ),
    Case(
        "compare with a submission off the board",
        "get",
        "/v1/benchmarks/{bench}/compare?a={red2}&b={red1}",
        _by_role((200, (10, 0.9, 0.8)), NOT_SEEN, NOT_SEEN, participant=(200, (10, 0.9, 0.8))),
        lambda b: (b["n_common"], b["mean_a"], b["mean_b"]),
    ),
    Case(
        "compare with a withdrawn submission",
        "get",
        "/v1/benchmarks/{bench}/compare?a={q2}&b={q1}",
        _by_role((200, (10, 0.3, 0.6)), NOT_SEEN, NOT_SEEN, other_participant=(200, (10, 0.3, 0.6))),
        lambda b: (b["n_common"], b["mean_a"], b["mean_b"]),
    ),
    Case(
        "compare with a hidden phase's submission before its end",
        "get",
        "/v1/benchmarks/{bench}/compare?a={q3}&b={q1}",
        _by_role((200, (10, 1.0, 0.6)), NOT_SEEN, NOT_SEEN, other_participant=(200, (10, 1.0, 0.6))),
        lambda b: (b["n_common"], b["mean_a"], b["mean_b"]),
    ),
    Case(
        "submissions",
        "get",
        "/v1/benchmarks/{bench}/submissions",
        _by_role(
            (200, EVERY_SUBMISSION),
            (200, []),
            (401, None),
            participant=(200, ["red-1", "red-1", "red-2"]),
            other_participant=(200, ["q-1", "q-2", "q-3"]),
        ),
        _submission_models,
    ),
    Case(
        "a submission",
        "get",
        "/v1/submissions/{red1}",
        _by_role((200, (0.8, 0.75)), NOT_SEEN, (401, None), participant=(200, (0.8, None))),
        lambda b: (b["scores"]["accuracy"]["value"], b["private"] and b["private"]["scores"]["accuracy"]["value"]),
    ),
    Case(
        "per-item scores",
        "get",
        "/v1/submissions/{red1}/items",
        _by_role((200, (10, 4)), NOT_SEEN, (401, None), participant=(200, (10, 0))),
        _items,
    ),
    Case(
        "per-item scores of a metric",
        "get",
        "/v1/submissions/{red1}/items?metric=accuracy",
        _by_role((200, (10, 4)), NOT_SEEN, (401, None), participant=(200, (10, 0))),
        _items,
    ),
    Case(
        "a submission off the board",
        "get",
        "/v1/submissions/{red2}",
        _by_role((200, False), NOT_SEEN, (401, None), participant=(200, False)),
        lambda b: b["public"],
    ),
    Case(
        "a withdrawn submission",
        "get",
        "/v1/submissions/{q2}",
        _by_role((200, True), NOT_SEEN, (401, None), other_participant=(200, True)),
        lambda b: b["withdrawn_at"] is not None,
    ),
    Case(
        "withdraw again",
        "delete",
        "/v1/submissions/{q2}",
        _by_role((200, True), NOT_SEEN, (401, None), other_participant=(200, True)),
        lambda b: b["withdrawn_at"] is not None,
    ),
    Case(
        "public flag (its maker's)",
        "patch",
        "/v1/submissions/{red1}",
        _by_role((403, None), NOT_SEEN, (401, None), participant=(200, True)),
        lambda b: b["public"],
        {"public": True},
    ),
    Case(
        "baseline flag (the owners')",
        "patch",
        "/v1/submissions/{red1}",
        _by_role((200, False), NOT_SEEN, (401, None), participant=(403, None)),
        lambda b: b["baseline"],
        {"baseline": False},
    ),
    Case(
        "owners",
        "get",
        "/v1/benchmarks/{bench}/owners",
        _by_role((200, [("olivia", True), ("cora", False)]), (403, None), (401, None)),
        lambda b: [(o["name"], o["creator"]) for o in b["items"]],
    ),
    Case(
        "add an owner already there",
        "post",
        "/v1/benchmarks/{bench}/owners",
        _by_role((409, None), (403, None), (401, None), coowner=(403, None)),
        body={"key_id": "{cora_key}"},
    ),
    Case(
        "remove the creator",
        "delete",
        "/v1/benchmarks/{bench}/owners/{owner_key}",
        _by_role((409, None), (403, None), (401, None), coowner=(403, None)),
    ),
    Case(
        "participants",
        "get",
        "/v1/benchmarks/{bench}/participants",
        _by_role((200, [("pat", "Red", None), ("quinn", None, None)]), (403, None), (401, None)),
        lambda b: [(p["display_name"], p["team"], p["revoked_at"]) for p in b["items"]],
    ),
    Case(
        "revoke an unknown participant",
        "delete",
        "/v1/benchmarks/{bench}/participants/nobody",
        _by_role((404, None), (403, None), (401, None)),
    ),
    Case(
        "revoke another benchmark's participant",
        "delete",
        "/v1/benchmarks/{elsewhere}/participants/{pat}",
        _by_role((403, None), (403, None), (401, None), admin=(404, None), other_owner=(404, None)),
    ),
    Case(
        "audit log",
        "get",
        "/v1/benchmarks/{bench}/audit",
        _by_role((200, "phase.frozen"), (403, None), (401, None)),
        lambda b: b["items"][0]["action"],
    ),
    Case(
        "the same answer key",
        "put",
        "/v1/benchmarks/{bench}/answer-key",
        _by_role((200, False), (403, None), (401, None), coowner=(403, None)),
        lambda b: b["created"],
        {"items": film_key_items()},
    ),
    Case(
        "answer-key versions",
        "get",
        "/v1/benchmarks/{bench}/answer-key/versions",
        _by_role((200, [(1, True)]), (403, None), (401, None)),
        lambda b: [(v["version"], v["current"]) for v in b["items"]],
    ),
    Case(
        "an answer-key version's items",
        "get",
        "/v1/benchmarks/{bench}/answer-key/versions/1",
        _by_role((200, (10, 4)), (403, None), (401, None)),
        _items,
    ),
    Case(
        "restore the current answer key",
        "post",
        "/v1/benchmarks/{bench}/answer-key/versions/1/restore",
        _by_role((200, (1, False)), (403, None), (401, None), coowner=(403, None)),
        lambda b: (b["answer_key_version"], b["created"]),
    ),
    Case(
        "phases",
        "get",
        "/v1/benchmarks/{bench}/phases",
        _everyone(200, [("final", "ended"), ("sprint", "open"), ("later", "upcoming")]),
        lambda b: [(p["name"], p["status"]) for p in b["items"]],
    ),
    Case(
        "an ended phase",
        "get",
        "/v1/benchmarks/{bench}/phases/{final}",
        _everyone(200, ("hidden_until_end", True)),
        lambda b: (b["leaderboard_visibility"], b["frozen_at"] is not None),
    ),
    Case(
        "create a phase overlapping another",
        "post",
        "/v1/benchmarks/{bench}/phases",
        _by_role((422, None), (403, None), (401, None)),
        body={"name": "overlap", "starts_at": "{overlap_start}", "ends_at": "{overlap_end}"},
    ),
    Case(
        "rename a phase to its name",
        "patch",
        "/v1/benchmarks/{bench}/phases/{sprint}",
        _by_role((200, "sprint"), (403, None), (401, None)),
        lambda b: b["name"],
        {"name": "sprint"},
    ),
    Case(
        "delete a phase holding a submission",
        "delete",
        "/v1/benchmarks/{bench}/phases/{final}",
        _by_role((409, None), (403, None), (401, None)),
    ),
    Case(
        "a hidden phase's board after its end, private split",
        "get",
        "/v1/benchmarks/{bench}/phases/{final}/leaderboard?split=private",
        _everyone(200, [(1, "red-1", "Red")]),
        _models,
    ),
    Case(
        "an open hidden phase's board",
        "get",
        "/v1/benchmarks/{bench}/phases/{sprint}/leaderboard",
        _by_role((200, [(1, "q-3", "quinn")]), (403, None), (403, None)),
        _models,
    ),
    Case(
        "a hidden phase's board before its end",
        "get",
        "/v1/benchmarks/{bench}/phases/{later}/leaderboard",
        _by_role((200, []), (403, None), (403, None)),
        _models,
    ),
    Case(
        "a split a phase does not show",
        "get",
        "/v1/benchmarks/{bench}/phases/{sprint}/leaderboard?split=private",
        _everyone(422, None),
    ),
]
"""The co-owner's key holds no benchmarks:write: putting or restoring an answer key needs that scope besides
ownership."""


def _fill(text: str, ids: dict[str, str]) -> str:
    return text.format(**ids)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_access_matrix(world: World, case: Case, role: str) -> None:
    kwargs: dict[str, Any] = {"headers": world.headers[role]}
    if case.body is not None:
        kwargs["json"] = {k: _fill(v, world.ids) if isinstance(v, str) else v for k, v in case.body.items()}
    r = getattr(world.client, case.method)(_fill(case.url, world.ids), **kwargs)
    status, seen = case.expected[role]
    assert r.status_code == status, (case.name, role, r.text)
    if status >= 400:
        assert r.headers["content-type"] == "application/problem+json"
        return
    body = r.json() if r.headers["content-type"].startswith("application/json") else r.text
    assert case.seen(body) == seen, (case.name, role)


def test_a_participants_key_writes_to_its_benchmark_only(world: World) -> None:
    pat = world.headers["participant"]
    r = world.client.post(
        f"/v1/benchmarks/{world.ids['elsewhere']}/submissions",
        json={"model": "stray", "predictions": {"items": []}},
        headers=pat,
    )
    assert r.status_code == 403 and "bound to another benchmark" in r.json()["detail"]
    me = world.client.get("/v1/api-keys/self", headers=pat).json()
    assert me["benchmark_id"] == world.ids["bench"] and me["scopes"] == ["submissions:write"]


def test_the_page_says_who_sees_a_hidden_split(world: World) -> None:
    """The private split without a key: the number of rows and who sees them, a key form, never "No submissions";
    the public split names each row's participant."""
    page = world.client.get(f"/benchmarks/{world.ids['bench']}?split=private")
    assert page.status_code == 403
    assert "has 2 rows, visible to the benchmark's owners" in page.text
    assert 'id="key-form"' in page.text and "/static/web/benchmark.js" in page.text
    assert "No submissions" not in page.text and "admins only" not in page.text
    public = world.client.get(f"/benchmarks/{world.ids['bench']}").text
    assert "<td>Red</td>" in public and "<td>quinn</td>" in public and "q-3" not in public
