"""usecases/benchmarks.py called directly, leaderboards and comparisons: the page's fields and rows (pending rows
after a new version, baselines without rank, participants' labels), keyset paging and every malformed rank cursor,
the caller's own row and the board's size; which submissions a caller may compare, the test chosen for the values;
RAVEN-Bench's cross-modal gain from stored scorings and its refusals."""

import dataclasses
import json
import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from db.repositories import phases as phase_repo
from db.repositories import submissions as sub_repo
from db.repositories.phases import PhaseRow
from db.repositories.submissions import SplitItems
from service.errors import InvalidInput
from service.registry import SCORERS, load_all
from service.stats import mcnemar, paired_bootstrap, wilcoxon_signed_rank
from tests.factories import (
    admin,
    film_key_items,
    film_predictions,
    principal,
    scored_submission,
    stored_benchmark,
)
from tests.service.test_scoring_raven import TABLE as RAVEN_TABLE
from tests.service.test_scoring_raven import answers, video_key
from usecases import cursors
from usecases.benchmarks import (
    _decode_rank_cursor,
    _encode_rank_cursor,
    board_size,
    compare,
    leaderboard,
    own_row,
    put_answer_key,
    raven_cross_modal,
)
from usecases.challenges import invite
from usecases.errors import Forbidden, InvalidFields, NotFound
from usecases.services import Services
from usecases.submissions import NewSubmission, patch, submit, withdraw


@pytest.fixture(autouse=True)
def _scorers() -> None:
    load_all()


def _send(services: Services, who: Any, bench_id: str, model: str, correct: int, private: int = 0) -> str:
    new = NewSubmission(model, film_predictions(correct, private)["items"], {})
    return json.loads(submit(services, who, bench_id, new, None).json)["id"]


def _page(services: Services, bench_id: str, who: Any = None, **kw: Any) -> Any:
    args = {"split": "public", "metric": None, "rank_by": "best", "limit": 10, "cursor": None} | kw
    return leaderboard(services, who, bench_id, **args)


def _error(exc: InvalidFields) -> tuple[list, str, str]:
    (error,) = exc.errors
    return error["loc"], error["type"], error["msg"]


# -- leaderboards ------------------------------------------------------------------------------------------------


def test_a_leaderboard_page_and_its_rows(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    alice = principal(services, "submissions:write", name="alice")
    a = _send(services, alice, bench_id, "a", 6, 1)
    _, token = invite(services, owner, bench_id, "Pat", "Team P")
    from usecases.api_keys import authenticate

    pat = authenticate(services, token)
    b = _send(services, pat, bench_id, "b", 9, 2)
    page = _page(services, bench_id)
    assert (page.benchmark_id, page.split, page.metric, page.higher_is_better, page.rank_by) == (
        bench_id,
        "public",
        "accuracy",
        True,
        "best",
    )
    assert (page.answer_key_version, page.next_cursor) == (1, None)
    assert page.metrics_present == list(SCORERS["film_mcq"].metrics)
    first, second = page.rows
    assert {k: first[k] for k in ("rank", "baseline", "participant", "submission_id", "model", "pending")} == {
        "rank": 1,
        "baseline": False,
        "participant": "Team P",
        "submission_id": b,
        "model": "b",
        "pending": False,
    }
    assert (second["rank"], second["participant"], second["submission_id"], second["answer_key_version"]) == (
        2,
        None,
        a,
        1,
    )
    assert first["scores"]["accuracy"]["value"] == pytest.approx(0.9)
    assert set(first) == {
        "rank", "baseline", "participant", "submission_id", "model", "submitted_at", "answer_key_version", "scores",
        "pending",
    }  # fmt: skip
    assert first["submitted_at"] > second["submitted_at"]  # b was sent after a
    assert second["scores"]["coverage"]["value"] == pytest.approx(1.0)
    low = _page(services, bench_id, metric="p_value_vs_chance")
    assert (low.metric, low.higher_is_better) == ("p_value_vs_chance", False)
    assert [r["submission_id"] for r in low.rows] == [b, a]  # the smaller p-value first
    private = _page(services, bench_id, owner, split="private")
    assert [(r["model"], r["scores"]["accuracy"]["value"]) for r in private.rows] == [
        ("b", pytest.approx(0.5)),
        ("a", pytest.approx(0.25)),
    ]
    latest = _page(services, bench_id, rank_by="latest")
    assert latest.rank_by == "latest" and [r["model"] for r in latest.rows] == ["b", "a"]
    with pytest.raises(InvalidFields) as unknown:
        _page(services, bench_id, metric="nope")
    assert _error(unknown.value) == (["query", "metric"], "enum", f"one of {sorted(SCORERS['film_mcq'].metrics)}")
    with pytest.raises(Forbidden):
        _page(services, bench_id, alice, split="private")
    with pytest.raises(NotFound):
        _page(services, "no-such-benchmark")


def test_rows_of_an_earlier_version_are_pending_and_a_baseline_takes_no_rank(
    services: Services, monkeypatch: Any
) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    alice = principal(services, "submissions:write", name="alice")
    subs = [_send(services, alice, bench_id, m, c) for m, c in (("a", 5), ("b", 8), ("c", 3))]
    patch(services, owner, subs[1], baseline=True, public=None)
    page = _page(services, bench_id)
    assert [(r["model"], r["rank"], r["baseline"]) for r in page.rows] == [
        ("b", None, True),
        ("a", 1, False),
        ("c", 2, False),
    ]
    monkeypatch.setattr(services, "jobs", SimpleNamespace(available=True, submit=lambda **_: None))
    put_answer_key(services, owner, bench_id, film_key_items(4, 0), None)  # version 2, not yet re-scored
    pending = _page(services, bench_id)
    assert pending.answer_key_version == 2
    assert [(r["model"], r["answer_key_version"], r["pending"]) for r in pending.rows] == [
        ("b", 1, True),
        ("a", 1, True),
        ("c", 1, True),
    ]


def test_a_leaderboard_is_read_a_page_at_a_time(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    alice = principal(services, "submissions:write", name="alice")
    for model, correct in (("a", 2), ("b", 9), ("c", 5), ("d", 5), ("e", 7)):
        _send(services, alice, bench_id, model, correct)
    seen, cursor, sizes = [], None, []
    while True:
        page = _page(services, bench_id, limit=2, cursor=cursor)
        seen += [(r["rank"], r["model"]) for r in page.rows]
        sizes.append(len(page.rows))
        if page.next_cursor is None:
            break
        last = page.rows[-1]
        expected = [last["scores"]["accuracy"]["value"], last["scores"]["accuracy"]["ci_low"]]
        assert cursors.decode(page.next_cursor)[:2] == [-expected[0], -expected[1]]
        assert cursors.decode(page.next_cursor)[3] == last["submission_id"]
        cursor = page.next_cursor
    assert seen == [(1, "b"), (2, "e"), (3, "c"), (4, "d"), (5, "a")] and sizes == [2, 2, 1]
    assert _page(services, bench_id, limit=5).next_cursor is None
    assert board_size(services, bench_id, split="public", metric=None, rank_by="best") == 5
    assert board_size(services, bench_id, split="private", metric="coverage", rank_by="latest") == 5
    with pytest.raises(InvalidFields):
        board_size(services, bench_id, split="public", metric="nope", rank_by="best")


def test_the_callers_own_best_row(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner).row.id
    alice = principal(services, "submissions:write", name="alice")
    bob = principal(services, "submissions:write", name="bob")
    _send(services, bob, bench_id, "top", 9)
    _send(services, alice, bench_id, "x", 4)
    mine = _send(services, alice, bench_id, "y", 7)
    got = own_row(services, alice, bench_id, split="public", metric=None, rank_by="best")
    assert got is not None and (got["rank"], got["submission_id"], got["model"], got["participant"]) == (
        2,
        mine,
        "y",
        None,
    )
    assert got["scores"]["accuracy"]["value"] == pytest.approx(0.7) and got["pending"] is False
    assert own_row(services, owner, bench_id, split="public", metric=None, rank_by="best") is None
    assert own_row(services, owner, bench_id, split="private", metric=None, rank_by="best") is None  # owners may
    with pytest.raises(Forbidden):
        own_row(services, alice, bench_id, split="private", metric=None, rank_by="best")
    with pytest.raises(InvalidFields):
        own_row(services, alice, bench_id, split="public", metric="nope", rank_by="best")
    _, token = invite(services, owner, bench_id, "Pat", None)
    from usecases.api_keys import authenticate

    pat = authenticate(services, token)
    _send(services, pat, bench_id, "p", 1)
    row = own_row(services, pat, bench_id, split="public", metric=None, rank_by="best")
    assert row is not None and (row["rank"], row["participant"]) == (4, "Pat")


AT = "2026-01-02T03:04:05.000006Z"
WHEN = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_rank_cursors_round_trip() -> None:
    assert _decode_rank_cursor(cursors.encode([-0.5, None, AT, "s1"])) == (-0.5, True, 0.0, WHEN, "s1")
    got = _decode_rank_cursor(cursors.encode([1, -2, AT, "s2"]))
    assert got == (1.0, False, -2.0, WHEN, "s2") and type(got[0]) is float and type(got[2]) is float
    assert cursors.decode(_encode_rank_cursor((-0.5, True, 0.0, WHEN, "s1"))) == [-0.5, None, AT, "s1"]
    assert cursors.decode(_encode_rank_cursor((-0.5, False, 0.25, WHEN, "s1"))) == [-0.5, 0.25, AT, "s1"]
    naive = WHEN.replace(tzinfo=None)  # SQLite's datetimes
    assert _decode_rank_cursor(_encode_rank_cursor((2.0, False, 1.0, naive, "s"))) == (2.0, False, 1.0, WHEN, "s")


@pytest.mark.parametrize(
    "key",
    [
        {"a": 1},
        "text",
        [0.5, None, AT],
        [0.5, None, AT, "s", "x"],
        [True, None, AT, "s"],
        ["0.5", None, AT, "s"],
        [None, None, AT, "s"],
        [0.5, False, AT, "s"],
        [0.5, "0.1", AT, "s"],
        [0.5, None, 1, "s"],
        [0.5, None, AT, 7],
        [0.5, None, "2026-01-02 03:04:05", "s"],
        [0.5, None, "2026-01-02T03:04:05Z", "s"],
        [0.5, None, "yesterday", "s"],
    ],
)
def test_malformed_rank_cursors_are_refused_naming_the_cursor(key: Any) -> None:
    with pytest.raises(InvalidFields) as refused:
        _decode_rank_cursor(cursors.encode(key))
    assert _error(refused.value) == (["query", "cursor"], "value_error", "invalid cursor")


@pytest.mark.parametrize(
    "text", ['[Infinity, null, "%s", "s"]', '[0.5, NaN, "%s", "s"]', '[0.5, -Infinity, "%s", "s"]']
)
def test_non_finite_rank_cursors_are_refused(text: str) -> None:
    import base64

    raw = base64.urlsafe_b64encode((text % AT).encode()).decode()
    with pytest.raises(InvalidFields):
        _decode_rank_cursor(raw)


def test_a_malformed_cursor_is_refused_by_the_leaderboard(services: Services) -> None:
    bench_id = stored_benchmark(services, principal(services, "benchmarks:write")).row.id
    with pytest.raises(InvalidFields):
        _page(services, bench_id, cursor=cursors.encode([0.5]))
    assert _page(services, bench_id, cursor="").rows == []  # an empty cursor is the first page


# -- comparisons -------------------------------------------------------------------------------------------------

KEY = film_key_items(8, 4)


def _store(
    services: Services,
    bench_id: str,
    values: dict[str, list[float]],
    key_id: str | None = None,
    **flags: Any,
) -> str:
    """A submission of ``key_id`` scored against version 1 with ``values`` ({split: accuracy per item in item_id
    order}) and the submission's ``flags`` (public, withdrawn_at, phase_id)."""
    items = {
        split: (sorted(k["item_id"] for k in KEY if k.get("split", "public") == split), vals)
        for split, vals in values.items()
    }
    return scored_submission(services, bench_id, items, key_id, **flags)


def _cmp(services: Services, who: Any, bench_id: str, a: str, b: str, split: str = "public", **kw: Any) -> Any:
    return compare(
        services, who, bench_id, a, b, split=split, metric=kw.get("metric"), n_resamples=200, seed=kw.get("seed", 1)
    )


def test_the_paired_test_follows_the_values_and_the_declared_test(services: Services, monkeypatch: Any) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner, items=KEY).row.id
    binary = [1, 0, 1, 1, 0, np.nan, 1, 0]
    graded = [0.5, 0.0, 1.0, 0.25, np.nan, 1.0, 0.75, 0.0]
    a = _store(services, bench_id, {"public": binary, "private": [1, 1, 0, 0]})
    b = _store(services, bench_id, {"public": graded, "private": [0, 1, 1, 1]})
    c = _store(services, bench_id, {"public": [0, 0, 1, 1, 1, 1, 0, 1]})
    both = [0, 1, 2, 3, 6, 7]
    got = _cmp(services, owner, bench_id, a, b)
    xa, xb = np.array(binary, dtype=float)[both], np.array(graded)[both]
    assert (got.a, got.b, got.split, got.metric, got.n_common) == (a, b, "public", "accuracy", 6)
    assert (got.test, got.result) == ("paired_bootstrap", paired_bootstrap(xa, xb, 200, 1))
    assert (got.mean_a, got.mean_b) == (pytest.approx(4 / 6), pytest.approx(2.5 / 6))
    assert _cmp(services, owner, bench_id, a, b, seed=2).result == paired_bootstrap(xa, xb, 200, 2)
    got = _cmp(services, owner, bench_id, b, a)
    assert (got.test, got.mean_a) == ("paired_bootstrap", pytest.approx(2.5 / 6))
    exact = _cmp(services, owner, bench_id, a, c)
    kept = [0, 1, 2, 3, 4, 6, 7]
    ya, yc = np.array(binary, dtype=float)[kept], np.array([0, 0, 1, 1, 1, 1, 0, 1], dtype=float)[kept]
    assert (exact.test, exact.n_common, exact.result) == ("mcnemar_exact", 7, mcnemar(ya, yc))
    private = _cmp(services, owner, bench_id, a, b, "private")
    assert (private.test, private.n_common, private.split) == ("mcnemar_exact", 4, "private")
    spec = SCORERS["film_mcq"]
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(spec, paired_tests={"accuracy": "wilcoxon"}))
    ranked = _cmp(services, owner, bench_id, a, b)
    assert (ranked.test, ranked.result) == ("wilcoxon_signed_rank", wilcoxon_signed_rank(xa, xb))
    assert _cmp(services, owner, bench_id, a, c).test == "mcnemar_exact"
    with pytest.raises(InvalidFields) as metric:
        _cmp(services, owner, bench_id, a, b, metric="coverage")
    assert _error(metric.value)[:2] == (["query", "metric"], "enum")


def test_two_submissions_without_common_values_cannot_be_compared(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner, items=KEY).row.id
    nan = np.nan
    a = _store(services, bench_id, {"public": [1, 1, 1, 1, nan, nan, nan, nan]})
    b = _store(services, bench_id, {"public": [nan, nan, nan, nan, 0, 0, 0, 0]})
    public_only = _store(services, bench_id, {"public": [1] * 8})
    both = _store(services, bench_id, {"public": [0] * 8, "private": [1, 0, 1, 0]})
    pairs = (
        (a, b, "public"),
        (a, public_only, "private"),
        (both, public_only, "private"),
        (public_only, both, "private"),
    )
    for x, y, split in pairs:
        with pytest.raises(InvalidInput) as refused:
            _cmp(services, owner, bench_id, x, y, split)
        assert refused.value.loc == ("b",)
    assert _cmp(services, owner, bench_id, a, public_only).n_common == 4


def test_who_may_compare_which_submissions(services: Services) -> None:
    owner = principal(services, "benchmarks:write", name="maintainer")
    bench_id = stored_benchmark(services, owner, items=KEY).row.id
    other_id = stored_benchmark(services, owner, items=KEY, name="other").row.id
    alice = principal(services, "submissions:write", name="alice")
    bob = principal(services, "submissions:write", name="bob")
    vals = {"public": [1, 0, 1, 0, 1, 0, 1, 0], "private": [1, 0, 0, 1]}
    shown = _store(services, bench_id, vals, bob.key_id)
    hidden = _store(services, bench_id, vals, bob.key_id, public=False)
    gone = _store(services, bench_id, vals, bob.key_id, withdrawn_at=datetime.now(UTC))
    mine = _store(services, bench_id, vals, alice.key_id, public=False)
    elsewhere = _store(services, other_id, vals, bob.key_id)
    now = datetime.now(UTC)
    phases = {}
    for name, visibility in (("hid", "hidden_until_end"), ("pub", "public")):
        phase = PhaseRow(
            0, str(uuid.uuid4()), bench_id, name, now - timedelta(days=1), now + timedelta(days=1), ["public"],
            None, None, visibility, "reject", now, owner.key_id,
        )  # fmt: skip
        with services.engines.write.begin() as conn:
            phase_repo.insert(conn, phase)
        phases[name] = phase.id
    in_hidden = _store(services, bench_id, vals, bob.key_id, phase_id=phases["hid"])
    in_public = _store(services, bench_id, vals, bob.key_id, phase_id=phases["pub"])
    for who in (alice, None):
        assert _cmp(services, who, bench_id, shown, in_public).n_common == 8
        for sid in (hidden, gone, elsewhere, in_hidden, "no-such-submission"):
            with pytest.raises(NotFound):
                _cmp(services, who, bench_id, shown, sid)
            with pytest.raises(NotFound):
                _cmp(services, who, bench_id, sid, shown)
        with pytest.raises(Forbidden):
            _cmp(services, who, bench_id, shown, shown, "private")
    assert _cmp(services, alice, bench_id, mine, shown).n_common == 8  # its own, though not public
    with pytest.raises(NotFound):
        _cmp(services, bob, bench_id, mine, shown)
    assert _cmp(services, bob, bench_id, hidden, gone).n_common == 8  # bob's own
    for who in (owner, admin(services)):
        assert _cmp(services, who, bench_id, hidden, mine, "private").n_common == 4
        assert _cmp(services, who, bench_id, gone, in_hidden).n_common == 8
        with pytest.raises(NotFound):
            _cmp(services, who, bench_id, elsewhere, shown)
    later = _store(services, bench_id, vals, bob.key_id)
    with services.engines.write.begin() as conn:  # a second scoring against version 1: the latest is compared
        sub_repo.insert_scoring(
            conn,
            submission_id=later,
            answer_key_version=1,
            scorer_version="1",
            details="{}",
            when=datetime.now(UTC),
            scores=[],
            items=[SplitItems("public", sorted(f"q{i}" for i in range(8)), {"accuracy": np.zeros(8)})],
        )
    got = _cmp(services, owner, bench_id, shown, later)
    assert got.mean_b == 0.0  # its latest scoring against the version
    withdraw(services, bob, shown)
    with pytest.raises(NotFound):
        _cmp(services, alice, bench_id, shown, later)


# -- RAVEN-Bench cross-modal gain -----------------------------------------------------------------------------------


def _makers(services: Services, ids: dict[str, str]) -> set[Any]:
    """The principals of the submissions' makers (the key named "alice" of ``_raven``)."""
    from usecases.api_keys import Principal

    with services.engines.read.connect() as conn:
        keys = {sub_repo.get(conn, sid).api_key_id for sid in ids.values()}
    (key_id,) = keys
    return {Principal(key_id, "alice", frozenset({"submissions:write"}))}


def _raven(services: Services) -> tuple[Any, str, dict[str, str]]:
    owner = principal(services, "benchmarks:write", name="maintainer")
    keys = video_key("v")
    bench_id = stored_benchmark(
        services,
        owner,
        name="raven",
        scorer="raven",
        items=[k.model_dump(mode="json") for k in keys],
        scorer_params={"n_resamples": 0},
    ).row.id
    alice = principal(services, "submissions:write", name="alice")
    ids = {}
    for setting, (c1, h1, *_) in RAVEN_TABLE.items():
        preds = [p.model_dump(mode="json", exclude_none=True) for p in answers(keys, c1 + h1)]
        new = NewSubmission("m", preds, {"setting": setting})
        ids[setting] = json.loads(submit(services, alice, bench_id, new, None).json)["id"]
    return owner, bench_id, ids


def test_the_cross_modal_gain_of_three_stored_submissions(services: Services) -> None:
    owner, bench_id, ids = _raven(services)
    out = raven_cross_modal(
        services, None, bench_id, [ids["ir_only"], "", ids["eo_ir"], ids["eo_only"]], split="public"
    )
    assert (out.benchmark_id, out.split, out.answer_key_version, out.submissions) == (
        bench_id,
        "public",
        1,
        {"ir_only": ids["ir_only"], "eo_ir": ids["eo_ir"], "eo_only": ids["eo_only"]},
    )
    assert out.g_cm == pytest.approx(0.0952381, abs=5e-8) and out.missing_settings == []
    assert out.s_main == pytest.approx({s: row[4] for s, row in RAVEN_TABLE.items()}, abs=5e-7)
    assert out.reliance_eo == pytest.approx(0.738095 / 0.833333, abs=1e-6)
    assert out.reliance_ir == pytest.approx(0.488095 / 0.833333, abs=1e-6)
    assert out.modality_matrix["eo_only"]["EO"] == pytest.approx(0.666667, abs=5e-7)
    reader = principal(services, "submissions:write", name="reader")  # any key reads the public split
    assert raven_cross_modal(services, reader, bench_id, list(ids.values()), split="public") == dataclasses.replace(
        out, submissions=ids
    )
    alice = next(iter(_makers(services, ids)))
    patch(services, alice, ids["eo_only"], baseline=None, public=False)  # off the board: its maker still uses it
    assert raven_cross_modal(services, alice, bench_id, [ids["eo_only"]], split="public").submissions == {
        "eo_only": ids["eo_only"]
    }
    with pytest.raises(NotFound):
        raven_cross_modal(services, reader, bench_id, [ids["eo_only"]], split="public")
    partial = raven_cross_modal(services, owner, bench_id, [ids["eo_only"]], split="public")
    assert partial.g_cm is None and partial.missing_settings == ["ir_only", "eo_ir"]
    assert partial.submissions == {"eo_only": ids["eo_only"]}


def test_cross_modal_refusals_name_the_parameter(services: Services) -> None:
    owner, bench_id, ids = _raven(services)
    s = list(ids.values())
    for given in ([], [""], [*s, s[0] + "x"], [s[0], s[0]]):
        with pytest.raises(InvalidFields) as refused:
            raven_cross_modal(services, owner, bench_id, given, split="public")
        assert _error(refused.value) == (["query", "submissions"], "value_error", "1-3 distinct ids")
    again = json.loads(
        submit(
            services,
            principal(services, "submissions:write", name="bob"),
            bench_id,
            NewSubmission("m2", [], {"setting": "eo_ir"}),
            None,
        ).json
    )["id"]
    with pytest.raises(InvalidFields) as twice:
        raven_cross_modal(services, owner, bench_id, [ids["eo_ir"], again], split="public")
    assert _error(twice.value)[:2] == (["query", "submissions"], "value_error")
    assert f"{ids['eo_ir']!r} and {again!r} are both eo_ir" in twice.value.detail
    with pytest.raises(InvalidFields) as private:
        raven_cross_modal(services, owner, bench_id, [ids["eo_ir"]], split="private")
    assert _error(private.value)[:2] == (["query", "submissions"], "value_error")
    with pytest.raises(Forbidden):
        raven_cross_modal(services, None, bench_id, [ids["eo_ir"]], split="private")
    with pytest.raises(NotFound):
        raven_cross_modal(services, None, bench_id, ["no-such-submission"], split="public")
    films = stored_benchmark(services, owner).row.id
    with pytest.raises(InvalidFields) as scorer:
        raven_cross_modal(services, owner, films, [ids["eo_ir"]], split="public")
    assert _error(scorer.value)[:2] == (["path", "benchmark_id"], "scorer")
