"""Answer keys that registration and answer-key uploads accept can be scored (docs/scoring.md, "What registration
checks").

Every check a scorer makes of the answer key whatever the predictions (``ScorerSpec.check_key``) runs on each split
of the key when a benchmark is registered and when a new answer-key version is put: a key holding an item the
scorer would refuse at every submission is a 422 whose ``loc`` names that item's position in the submitted list and
its field, and nothing is stored (the benchmark count, or the benchmark's versions, are unchanged). Each broken key
is also given to the scorer's own ``score`` on the broken item's split, which must refuse it at the stated item (the
scoring-time check, unchanged): so registration refuses only what scoring would refuse. One app and database serve
the module; each test names its own benchmarks.
"""

import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import TypeAdapter

from service.errors import InvalidInput
from service.registry import SCORERS, load_all
from service.scoring import zbb
from tests.factories import ADMIN_KEY, api_key, serving
from usecases.settings import Settings

LONG_ANSWER = " ".join(["xy"] * 129)
"""129 tokens (386 characters): one more than scene3d_qa's and scene3d_densecap's 128."""
CAPTION_127 = " ".join(["xy"] * 127)
"""127 words: 129 tokens once scene3d_densecap wraps it as 'sos … eos'."""
CAPTION_126 = " ".join(["xy"] * 126)
"""126 words: 128 tokens wrapped, the most scene3d_densecap takes."""
BOX = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


@dataclass(frozen=True)
class Case:
    """A key (``items``) whose item ``broken`` (None: a whole split) the scorer refuses: the registration's error
    ``loc`` after "body", a fragment of its message, and the ``loc`` the scorer's ``score`` gives on that split
    (item index within the split's items in item_id order, as scoring sees them). ``preds`` are predictions
    ``score`` gets (zbb scores nothing without one); ``params`` the benchmark's scorer params."""

    scorer: str
    items: list[dict]
    broken: int | None
    loc: list[Any]
    msg: str
    score_loc: tuple[Any, ...]
    params: dict = field(default_factory=dict)
    preds: list[dict] = field(default_factory=list)


def film(i: str, k: int, answer: int, split: str = "private") -> dict:
    return {"item_id": i, "num_options": k, "answer_idx": answer, "film_id": "f", "split": split}


FILM = [film("q0", 4, 0, "public"), film("q1", 4, 3, "public"), film("p0", 2, 1)]


def side(i: str, gold: str, outcomes: list[str]) -> dict:
    return {"item_id": i, "task": "revealed_side", "side": gold, "outcomes": outcomes, "split": "private"}


STAKE = [
    {"item_id": "q0", "task": "commitment", "committed": True},
    {"item_id": "q1", "task": "future_action", "action": "HOLD"},
    side("p0", "YES", []),
]


def tel(i: str, dataset: str, task: str, ref: Any, split: str = "private") -> dict:
    return {"item_id": i, "dataset": dataset, "eval_task": task, "ref": ref, "split": split}


TEL = [tel("q0", "d0", "basic", ["paris"], "public"), tel("q1", "d0", "basic", ["x y"], "public")]
TEL.append(tel("p0", "d1", "basic", ["rome", {"all": ["a", "b"]}]))


def zb(i: str, user: str = "what is it", ref: str = "paris", aliases: list[str] | None = None) -> dict:
    return {"item_id": i, "user_text": user, "reference": ref, "aliases": aliases, "split": "private"}


ZBB = [{**zb("q0"), "split": "public"}, {**zb("q1"), "split": "public"}, zb("p0", "uh hello there")]
ZBB_PRED = [{"item_id": "p0", "response_text": "hello"}]

RAVEN_BASE = {"video_id": "v1", "level": "L1", "modality_requirement": "EO", "correct": "A", "split": "private"}


def rv(i: str, group: str, step: int, family: str = "consistency", split: str = "private") -> dict:
    return {**RAVEN_BASE, "item_id": i, "group_key": group, "group_step": step, "group_family": family, "split": split}


RAVEN = [rv("q0", "g0", 1, split="public"), rv("q1", "g0", 2, split="public"), rv("p0", "g1", 1)]


def vm(i: str, task: str = "EG", options: list[str] | None = None, gold: list[str] | None = None) -> dict:
    return {"item_id": i, "task": task, "options": options or [], "correct_options": gold or [], "split": "private"}


VIMU = [{**vm("q0", "OE"), "split": "public"}, {**vm("q1", "RM", ["A", "B"], ["B"]), "split": "public"}]
VIMU.append(vm("p0", "SV", ["A", "B", "C"], ["A", "C"]))


def ub(i: str, mask: Any, spacing: list[float] | None = None, split: str = "private") -> dict:
    return {"item_id": i, "mask": mask, "spacing": spacing, "split": split}


UBENCH = [ub("q0", [[0, 1], [1, 1]], split="public"), ub("q1", [[1]], [0.5, 2.0], "public"), ub("p0", [[[0, 1]]])]


def gr(i: str, boxes: list[list[float]], split: str = "private") -> dict:
    return {"item_id": i, "gt_boxes": boxes, "split": split}


GROUND = [gr("q0", [BOX], "public"), gr("q1", [[1, 2, 3, 0.5, 0.5, 0.5]], "public"), gr("p0", [BOX])]


def qa(i: str, refs: list[str], split: str = "private") -> dict:
    return {"item_id": i, "refs": refs, "split": split}


QA = [qa("q0", ["a chair"], "public"), qa("q1", ["two"], "public"), qa("p0", ["the table", " ".join(["xy"] * 128)])]


def dc(i: str, refs: list[str], box: list[float] = BOX, split: str = "private") -> dict:
    return {"item_id": i, "refs": refs, "gt_box": box, "split": split}


DENSE = [dc("q0", ["a chair"], split="public"), dc("q1", ["a bed"], split="public"), dc("p0", [CAPTION_126])]
QUICK = {"n_resamples": 0}

CASES: dict[str, Case] = {
    "film_mcq answer_idx = num_options": Case(
        "film_mcq", [*FILM, film("p1", 4, 4)], 3, ["answer_key", "items", 3, "answer_idx"],
        "answer_idx 4 is out of range for num_options=4", ("answer_key", "items", 1, "answer_idx"),
    ),
    "film_mcq answer_idx beyond a 2-option item": Case(
        "film_mcq", [film("p1", 2, 2), *FILM], 0, ["answer_key", "items", 0, "answer_idx"],
        "answer_idx 2 is out of range for num_options=2", ("answer_key", "items", 1, "answer_idx"),
    ),
    "stakebench side outside the outcomes": Case(
        "stakebench", [*STAKE, side("p1", "DRAW", ["HOME", "AWAY"])], 3, ["answer_key", "items", 3, "side"],
        "side must be one of ['HOME', 'AWAY']", ("answer_key", "items", 1, "side"),
    ),
    "stakebench side of a yes/no market": Case(
        "stakebench", [*STAKE, side("p1", "MAYBE", [])], 3, ["answer_key", "items", 3, "side"],
        "side must be one of ['YES', 'NO']", ("answer_key", "items", 1, "side"),
    ),
    "stakebench commitment without committed": Case(
        "stakebench", [*STAKE, {"item_id": "p1", "task": "commitment", "split": "private"}], 3,
        ["answer_key", "items", 3, "committed"], "commitment items need committed",
        ("answer_key", "items", 1, "committed"),
    ),
    "stakebench future_action without action": Case(
        "stakebench", [*STAKE, {"item_id": "p1", "task": "future_action", "split": "private"}], 3,
        ["answer_key", "items", 3, "action"], "future_action items need action", ("answer_key", "items", 1, "action"),
    ),
    "stakebench odds_projection without p_next": Case(
        "stakebench", [*STAKE, {"item_id": "p1", "task": "odds_projection", "p_prev": 0.2, "p_now": 0.3,
                                "split": "private"}], 3,
        ["answer_key", "items", 3, "p_now"], "odds_projection items need p_prev, p_now and p_next",
        ("answer_key", "items", 1, "p_now"),
    ),
    "televal alias of punctuation only": Case(
        "televal", [*TEL, tel("p1", "d1", "basic", ["rome", "?!."])], 3, ["answer_key", "items", 3, "ref"],
        "alias '?!.' has no tokens", ("answer_key", "items", 1, "ref"), QUICK,
    ),
    "televal alias of an all-of group without tokens": Case(
        "televal", [*TEL, tel("p1", "d1", "basic", [{"all": ["rome", "--"]}])], 3, ["answer_key", "items", 3, "ref"],
        "alias '--' has no tokens", ("answer_key", "items", 1, "ref"), QUICK,
    ),
    "televal basic item with a text ref": Case(
        "televal", [*TEL, tel("p1", "d1", "basic", "rome")], 3, ["answer_key", "items", 3, "ref"],
        "basic items need a non-empty list of aliases", ("answer_key", "items", 1, "ref"), QUICK,
    ),
    "televal choice item with ref E": Case(
        "televal", [*TEL, tel("p1", "d2", "choice", "E")], 3, ["answer_key", "items", 3, "ref"],
        "choice items need ref = one option letter A-D", ("answer_key", "items", 1, "ref"), QUICK,
    ),
    "televal dataset of two tasks": Case(
        "televal", [*TEL, tel("p1", "d1", "choice", "A")], 3, ["answer_key", "items", 3, "dataset"],
        "dataset 'd1' mixes eval_task/group/aspect", ("answer_key", "items", 1, "dataset"), QUICK,
    ),
    "zbb reference of punctuation only": Case(
        "zbb", [*ZBB, zb("p1", ref="?!~")], 3, ["answer_key", "items", 3, "reference"],
        "'?!~' has no tokens", ("answer_key", "items", 1, "reference"), preds=ZBB_PRED,
    ),
    "zbb alias of punctuation only": Case(
        "zbb", [*ZBB, zb("p1", aliases=["rome", "..."])], 3, ["answer_key", "items", 3, "aliases", 1],
        "'...' has no tokens", ("answer_key", "items", 1, "aliases", 1), preds=ZBB_PRED,
    ),
    "zbb user turn of fillers only": Case(
        "zbb", [*ZBB, zb("p1", user="uh, um... oh!")], 3, ["answer_key", "items", 3, "user_text"],
        "user_text has 0 non-filler tokens, n_initial is 1", ("answer_key", "items", 1, "user_text"),
        preds=ZBB_PRED,
    ),
    "zbb user turn shorter than n_initial": Case(
        "zbb", [*ZBB, zb("p1", user="hello")], 3, ["answer_key", "items", 3, "user_text"],
        "user_text has 1 non-filler tokens, n_initial is 2", ("answer_key", "items", 1, "user_text"),
        {"n_initial": 2}, ZBB_PRED,
    ),
    "zbb filler of two tokens": Case(
        "zbb", ZBB, None, ["scorer_params", "fillers", 1], "filler 'you know' is 2 tokens after normalisation",
        ("fillers", 1), {"fillers": ["uh", "you know"]}, ZBB_PRED,
    ),
    "raven group with a gap": Case(
        "raven", [*RAVEN, rv("p1", "g1", 3)], 3, ["answer_key", "items", 3, "group_step"],
        "group steps must be 1..k without gaps or repeats", ("answer_key", "items", 1, "group_step"), QUICK,
    ),
    "raven group with a repeated step": Case(
        "raven", [*RAVEN, rv("p1", "g1", 1)], 3, ["answer_key", "items", 3, "group_step"],
        "group steps must be 1..k without gaps or repeats", ("answer_key", "items", 1, "group_step"), QUICK,
    ),
    "raven group of two families": Case(
        "raven", [*RAVEN, rv("p1", "g1", 2, "coherence")], 3, ["answer_key", "items", 3, "group_family"],
        "a group has one group_family", ("answer_key", "items", 1, "group_family"), QUICK,
    ),
    "vimu OE item with options": Case(
        "vimu", [*VIMU, vm("p1", "OE", ["A"])], 3, ["answer_key", "items", 3, "options"],
        "OE items carry no options", ("answer_key", "items", 1, "options"), QUICK,
    ),
    "vimu multiple-choice item without options": Case(
        "vimu", [*VIMU, vm("p1", "EG")], 3, ["answer_key", "items", 3, "options"], "EG items need options",
        ("answer_key", "items", 1, "options"), QUICK,
    ),
    "vimu repeated option letter": Case(
        "vimu", [*VIMU, vm("p1", "RM", ["A", "B", "A"], ["B"])], 3, ["answer_key", "items", 3, "options"],
        "option letters must be unique", ("answer_key", "items", 1, "options"), QUICK,
    ),
    "vimu gold option not offered": Case(
        "vimu", [*VIMU, vm("p1", "SV", ["A", "B"], ["C"])], 3, ["answer_key", "items", 3, "correct_options"],
        "correct_options must be a subset of options", ("answer_key", "items", 1, "correct_options"), QUICK,
    ),
    "ubench ground truth holding 2": Case(
        "ubench", [*UBENCH, ub("p1", [[0, 2], [1, 1]])], 3, ["answer_key", "items", 3, "mask"],
        "the ground-truth mask must hold only 0 and 1", ("answer_key", "items", 1, "mask"), QUICK,
    ),
    "ubench ragged ground truth": Case(
        "ubench", [*UBENCH, ub("p1", [[0, 1], [1]])], 3, ["answer_key", "items", 3, "mask"],
        "a mask must be a rectangular 2-D or 3-D array", ("answer_key", "items", 1, "mask"), QUICK,
    ),
    "ubench spacing of three values for a 2-D mask": Case(
        "ubench", [*UBENCH, ub("p1", [[0, 1]], [1.0, 1.0, 1.0])], 3, ["answer_key", "items", 3, "spacing"],
        "spacing has 3 values for a 2-D mask", ("answer_key", "items", 1), QUICK,
    ),
    "scene3d_grounding scanrefer item of two boxes": Case(
        "scene3d_grounding", [*GROUND, gr("p1", [BOX, BOX])], 3, ["answer_key", "items", 3, "gt_boxes"],
        "a scanrefer item has exactly one ground-truth box", ("answer_key", "items", 1, "gt_boxes"), QUICK,
    ),
    "scene3d_grounding negative box size": Case(
        "scene3d_grounding", [*GROUND, gr("p1", [[0, 0, 0, 1, -1, 1]])], 3, ["answer_key", "items", 3, "gt_boxes"],
        "box sizes dx, dy, dz must be ≥ 0", ("answer_key", "items", 1, "gt_boxes"), QUICK,
    ),
    "scene3d_grounding zero box size without eps": Case(
        "scene3d_grounding", [*GROUND, gr("p1", [[0, 0, 0, 1, 1, 0]])], 3, ["answer_key", "items", 3, "gt_boxes"],
        "box sizes dx, dy, dz must be > 0", ("answer_key", "items", 1, "gt_boxes"), {**QUICK, "iou_eps": "none"},
    ),
    "scene3d_grounding thresholds without 0.5": Case(
        "scene3d_grounding", GROUND, None, ["scorer_params", "thresholds"], "thresholds must include 0.5",
        ("params", "thresholds"), {**QUICK, "thresholds": [0.25, 0.75]},
    ),
    "scene3d_grounding repeated threshold": Case(
        "scene3d_grounding", GROUND, None, ["scorer_params", "thresholds"], "thresholds must be distinct",
        ("params", "thresholds"), {**QUICK, "thresholds": [0.5, 0.5]},
    ),
    "scene3d_qa reference of 129 tokens": Case(
        "scene3d_qa", [*QA, qa("p1", ["a", LONG_ANSWER])], 3, ["answer_key", "items", 3, "refs", 1],
        "an answer has more than 128 tokens", ("answer_key", "items", 1, "refs", 1), QUICK,
    ),
    "scene3d_densecap reference of 129 tokens wrapped": Case(
        "scene3d_densecap", [*DENSE, dc("p1", ["a", CAPTION_127])], 3, ["answer_key", "items", 3, "refs", 1],
        "a caption has more than 128 tokens", ("answer_key", "items", 1, "refs", 1), QUICK,
    ),
    "scene3d_densecap flat ground-truth box": Case(
        "scene3d_densecap", [*DENSE, dc("p1", ["a"], [0, 0, 0, 1, 0, 1])], 3, ["answer_key", "items", 3, "gt_box"],
        "box sizes dx, dy, dz must be > 0", ("answer_key", "items", 1, "gt_box"), QUICK,
    ),
    "vimu split over the bootstrap budget": Case(
        "vimu", [*VIMU, *(vm(f"p{i:04d}", "OE") for i in range(1, 5001))], None, ["answer_key", "items"],
        "private split: 5001 items exceed the bootstrap budget", ("params", "n_resamples"), {"n_resamples": 10_000},
    ),
    "raven split over the bootstrap budget in videos": Case(
        "raven", [*RAVEN, *({**rv(f"p{i:04d}", "g", 1), "video_id": f"w{i}"} for i in range(1, 5001))], None,
        ["answer_key", "items"], "private split: 5001 videos exceed the bootstrap budget",
        ("params", "n_resamples"), {"n_resamples": 10_000},
    ),
}  # fmt: skip
"""The broken item is the private split's item ``p1`` (before it in that split: ``p0``), or the whole split."""


def test_every_scorer_with_key_checks_has_cases() -> None:
    load_all()
    assert {c.scorer for c in CASES.values()} == set(SCORERS)
    assert all(SCORERS[name].check_key is not None for name in SCORERS)


@pytest.fixture(scope="module")
def api(template_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One app over one database for the module (a copy of the SQLite template, or the PostgreSQL template)."""
    root = tmp_path_factory.mktemp("answer_key_checks")
    url = template_db
    if not url.startswith("postgresql"):
        shutil.copyfile(url.removeprefix("sqlite:///"), root / "estibench.db")
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
    with serving(settings) as c:
        yield c


@pytest.fixture(scope="module")
def owner(api: Any) -> dict[str, str]:
    return api_key(api, "benchmarks:write", name="owner")


def names(api: Any) -> list[str]:
    r = api.get("/v1/benchmarks", params={"limit": 100})
    assert r.status_code == 200 and r.json()["next_cursor"] is None
    return [b["name"] for b in r.json()["items"]]


def register(api: Any, owner: dict, name: str, case: Case, items: list[dict]) -> Any:
    body = {"name": name, "scorer": case.scorer, "scorer_params": case.params, "answer_key": {"items": items}}
    return api.post("/v1/benchmarks", json=body, headers=owner)


def refused_by_scoring(case: Case) -> tuple[Any, ...]:
    """The ``loc`` of the scorer's own refusal of the broken item's split (as the platform scores a split: its
    items in item_id order)."""
    spec = SCORERS[case.scorer]
    split = "private" if case.broken is None else case.items[case.broken].get("split", "public")
    key = TypeAdapter(list[spec.answer_key_item_model]).validate_python(case.items)  # type: ignore[name-defined]
    key = sorted((k for k in key if k.split == split), key=lambda k: k.item_id)
    preds = TypeAdapter(list[spec.prediction_item_model]).validate_python(case.preds)  # type: ignore[name-defined]
    with pytest.raises(InvalidInput) as exc:
        spec.score(key, preds, spec.params_model.model_validate(case.params))
    return exc.value.loc


def without_broken(case: Case) -> list[dict]:
    """The case's key without its broken item (or, for a whole split or the params, the first three items)."""
    return case.items[:3] if case.broken is None else [i for n, i in enumerate(case.items) if n != case.broken]


@pytest.mark.parametrize("what", sorted(CASES))
def test_registration_refuses_a_key_the_scorer_refuses(api: Any, owner: dict, what: str) -> None:
    case = CASES[what]
    assert refused_by_scoring(case) == case.score_loc
    before = names(api)
    name = f"r-{sorted(CASES).index(what)}"
    r = register(api, owner, name, case, case.items)
    assert r.status_code == 422, r.text
    (error,) = r.json()["errors"]
    assert error["loc"] == ["body", *case.loc]
    assert case.msg in error["msg"]
    assert names(api) == before
    if case.loc[0] == "answer_key":
        fixed = register(api, owner, name, case, without_broken(case))
        assert fixed.status_code == 201, fixed.text


@pytest.mark.parametrize("what", sorted(w for w, c in CASES.items() if c.loc[0] == "answer_key"))
def test_a_new_answer_key_version_is_refused_like_a_registration(api: Any, what: str) -> None:
    case = CASES[what]
    owner = api_key(api, "benchmarks:write", name=f"owner-{sorted(CASES).index(what)}")  # its own job quota
    bench = register(api, owner, f"p-{sorted(CASES).index(what)}", case, without_broken(case))
    assert bench.status_code == 201, bench.text
    url = f"/v1/benchmarks/{bench.json()['id']}"
    before = api.get(url).json()
    r = api.put(f"{url}/answer-key", json={"items": case.items}, headers=owner)
    assert r.status_code == 422, r.text
    (error,) = r.json()["errors"]
    assert error["loc"] == ["body", *case.loc]
    assert case.msg in error["msg"]
    after = api.get(url).json()
    assert after["versions"] == before["versions"] and after["answer_key_version"] == 1


def test_a_split_over_the_scorers_item_limit_is_refused(api: Any, owner: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """zbb scores at most ``MAX_ITEMS`` (20,000) items a split; lowered to 3 here, a private split of four items is
    refused (and was refused by scoring), three are taken, and the public split counts apart."""
    monkeypatch.setattr(zbb, "MAX_ITEMS", 3)
    items = [{**zb(f"q{i}"), "split": "public"} for i in range(3)] + [zb(f"p{i}") for i in range(4)]
    case = Case("zbb", items, None, ["answer_key", "items"], "private split: 4 items exceed the limit of 3",
                ("answer_key", "items"), preds=ZBB_PRED)  # fmt: skip
    assert refused_by_scoring(case) == case.score_loc
    before = names(api)
    r = register(api, owner, "limit", case, items)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "answer_key", "items"]
    assert case.msg in r.json()["errors"][0]["msg"] and names(api) == before
    bench = register(api, owner, "limit", case, items[:-1])
    assert bench.status_code == 201, bench.text
    r = api.put(f"/v1/benchmarks/{bench.json()['id']}/answer-key", json={"items": items}, headers=owner)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "answer_key", "items"]


def test_the_boundaries_are_accepted(api: Any, owner: dict) -> None:
    """The largest values the checks take: answer_idx = num_options - 1, a 128-token reference (wrapped for
    densecap), the filler-free first word of 'uh hello there', n_resamples·n = 5·10⁷ exactly."""
    cases = [
        Case("film_mcq", [film("p1", 26, 25), film("p2", 2, 0)], None, [], "", ()),
        Case("scene3d_qa", [qa("p1", [" ".join(["xy"] * 128)])], None, [], "", (), QUICK),
        Case("scene3d_densecap", [dc("p1", [CAPTION_126])], None, [], "", (), QUICK),
        Case("zbb", [zb("p1", "uh, hello there")], None, [], "", ()),
        Case("vimu", [vm(f"p{i:04d}", "OE") for i in range(5000)], None, [], "", (), {"n_resamples": 10_000}),
    ]
    for n, case in enumerate(cases):
        r = register(api, owner, f"edge-{n}", case, case.items)
        assert r.status_code == 201, r.text
    negative = Case("film_mcq", [film("p1", 4, -1)], None, [], "", ())
    r = register(api, owner, "edge-negative", negative, negative.items)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "answer_key", "items", 0, "answer_idx"]


# -- check_key agrees with score on random keys --------------------------------------------------------------------

MANY_X = {n: " ".join(["x"] * n) for n in (126, 127, 128, 129)}
KEY_VARIANTS: dict[str, tuple[list[dict], list[dict]]] = {
    "film_mcq": (
        [{"num_options": k, "answer_idx": a, "film_id": f} for k in (2, 4, 26) for a in (0, 1, 3, 25) for f in "fg"],
        [{}],
    ),
    "stakebench": (
        [{"task": "commitment", "committed": c} for c in (True, None)]
        + [{"task": "revealed_side", "side": s, "outcomes": o} for s in ("YES", "A", None) for o in ([], ["A", "B"])]
        + [{"task": "future_action", "action": a} for a in ("HOLD", None)]
        + [
            {"task": "odds_projection", "p_prev": 0.1, "p_now": b, "p_next": c}
            for b in (0.5, None)
            for c in (0.9, None)
        ],
        [{}, {"dead_band": 0.5, "flat_policy": "class"}],
    ),
    "televal": (
        [
            {"dataset": d, "eval_task": t, "ref": r}
            for d in ("d0", "d1")
            for t in ("basic", "choice", "empathetic_response", "dnsmos")
            for r in (["paris"], ["?!"], "A", "E", None, [["x", "..."]], [{"all": ["a", "-"]}])
        ],
        [QUICK, {**QUICK, "overall_formula": "group_macro"}],
    ),
    "zbb": (
        [
            {"user_text": u, "reference": r, "aliases": a}
            for u in ("uh hello there", "uh um", "hello")
            for r in ("paris", "?!")
            for a in (None, ["x"], ["..."])
        ],
        [{}, {"n_initial": 2}, {"skip_fillers": False}, {"fillers": ["uh", "you know"]}],
    ),
    "raven": (
        [
            {**RAVEN_BASE, "video_id": v, "group_key": g, "group_step": s, "group_family": f}
            for v in ("v0", "v1")
            for g in ("g0", "g1")
            for s in (1, 2, 3)
            for f in ("consistency", "coherence")
        ],
        [QUICK, {**QUICK, "mode": "circular"}],
    ),
    "vimu": (
        [
            {"task": t, "options": o, "correct_options": c}
            for t in ("OE", "EG", "SV")
            for o in ([], ["A", "B"], ["A", "A"])
            for c in ([], ["A"], ["C"])
        ],
        [QUICK],
    ),
    "ubench": (
        [
            {"mask": m, "spacing": s}
            for m in ([[0, 1], [1, 1]], [[0, 0], [0, 0]], [[0, 2], [1, 1]], [[0, 1], [1]], [[[0, 1]], [[1, 1]]])
            for s in (None, [1.0, 2.0], [1.0, 1.0, 1.0])
        ],
        [{**QUICK, "hd95": False}, {**QUICK, "empty_cases": "synapse"}],
    ),
    "scene3d_grounding": (
        [{"gt_boxes": b} for b in ([BOX], [BOX, BOX], [], [[0, 0, 0, 1, 0, 1]], [[0, 0, 0, 1, -1, 1]])],
        [QUICK, {**QUICK, "task": "multi3drefer"}, {**QUICK, "iou_eps": "none"}, {**QUICK, "thresholds": [0.25]}],
    ),
    "scene3d_qa": (
        [{"refs": r} for r in (["a chair"], [MANY_X[128]], [MANY_X[129]], ["two " * 100], ["a " * 129 + "b"])],
        [QUICK, {**QUICK, "normalize": "leo"}, {**QUICK, "normalize": "none"}, {**QUICK, "tokenizer": "whitespace"}],
    ),
    "scene3d_densecap": (
        [
            {"refs": [r], "gt_box": b}
            for r in ("a chair", MANY_X[126], MANY_X[127], f"sos {MANY_X[126]} eos")
            for b in (BOX, [0, 0, 0, 1, 0, 1])
        ],
        [QUICK, {**QUICK, "wrap": False}],
    ),
}
"""Per scorer: answer-key item variants (valid and broken) and params; random keys of one to four of them."""


@pytest.mark.parametrize("scorer", sorted(KEY_VARIANTS))
def test_check_key_refuses_exactly_the_keys_score_refuses(scorer: str) -> None:
    """On 60 seeded random keys per scorer, ``check_key`` refuses a key iff ``score`` (no predictions; zbb one)
    refuses it, at the same ``loc`` up to the field, and a key it accepts scores without any error."""
    load_all()
    spec = SCORERS[scorer]
    variants, params_list = KEY_VARIANTS[scorer]
    rng = random.Random(f"{scorer}-keys")
    outcomes = set()
    for _ in range(60):
        raw = [{**rng.choice(variants), "item_id": f"i{j}"} for j in range(rng.randint(1, 4))]
        key = TypeAdapter(list[spec.answer_key_item_model]).validate_python(raw)  # type: ignore[name-defined]
        params = spec.params_model.model_validate(rng.choice(params_list))
        preds = [zbb.PredictionItem(item_id="i0", response_text="hello x")] if scorer == "zbb" else []
        try:
            spec.check_key(key, params)  # type: ignore[misc]
            checked = None
        except InvalidInput as exc:
            checked = exc.loc
        try:
            spec.score(key, preds, params)
            scored = None
        except InvalidInput as exc:
            scored = exc.loc
        assert (checked is None) == (scored is None), (raw, params, checked, scored)
        if checked is not None and checked[0] == "answer_key":
            assert checked[:3] == scored[:3], (raw, params, checked, scored)
        outcomes.add(checked is None)
    assert outcomes == {True, False}
