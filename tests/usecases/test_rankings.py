"""Maintained leaderboard rows (``usecases.rankings``): a board row's signed sort key, the choice of a model's row
(best: value, then a present ci_low, then the earlier submission, then the smaller id; latest: the latest
submission, then the greater id), and a model's rows after each scoring, rescoring and withdrawal, checked against
the rows chosen by hand; ``rebuild`` and ``refresh_models`` give the same rows. Also a short run of generated
submissions against the reference board of ``tests/db/test_rankings.py``. Written for the mutation run of
``usecases.rankings``."""

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, select

from db import locks
from db.models import LeaderboardEntry
from db.repositories import phases as phase_repo
from db.repositories import rankings as rank_repo
from db.repositories.rankings import EntryRow, LiveScore
from db.repositories.submissions import ScoreRow
from service.registry import MetricInfo
from tests.db.test_rankings import _metrics, _scores, assert_boards_exact, new_benchmark, store, submit, withdraw
from usecases import rankings
from usecases.services import Services

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
HIGHER = MetricInfo(True, (0.0, 1.0), "")
LOWER = MetricInfo(False, (0.0, 1.0), "")


def live(sid: str, value: float, ci_low: float | None = None, minutes: int = 0, **kw: object) -> LiveScore:
    fields: dict[str, object] = {
        "submission_id": sid, "model": "m", "api_key_id": "k", "submitted_at": T0 + timedelta(minutes=minutes),
        "scoring_id": 7, "answer_key_version": 2, "split": "public", "metric": "accuracy", "value": value,
        "ci_low": ci_low,
    }  # fmt: skip
    return LiveScore(**(fields | kw))  # type: ignore[arg-type]


# --- entry, choose, the grouping ----------------------------------------------------------------------------------


def test_a_row_copies_its_score_and_signs_its_sort_key() -> None:
    score = live("s", 0.75, 0.5, minutes=3, api_key_id="key-9", scoring_id=9, answer_key_version=4, split="private")
    assert rankings.entry(score, "best", True) == EntryRow(
        split="private", metric="accuracy", rank_by="best", model="m", submission_id="s", scoring_id=9,
        answer_key_version=4, api_key_id="key-9", submitted_at=T0 + timedelta(minutes=3), sort_value=-0.75,
        ci_missing=False, sort_ci=-0.5, baseline=None,
    )  # fmt: skip
    lower = rankings.entry(score, "latest", False)
    assert (lower.rank_by, lower.sort_value, lower.ci_missing, lower.sort_ci) == ("latest", 0.75, False, 0.5)


def test_a_missing_interval_sorts_last_and_a_baseline_is_marked() -> None:
    row = rankings.entry(live("s", 0.25), "best", True)
    assert (row.ci_missing, row.sort_ci, row.baseline) == (True, 0.0, None)
    assert rankings.entry(live("s", 0.25, 0.0), "best", False).ci_missing is False  # 0 is an interval
    assert rankings.entry(live("s", 0.25, baseline=True), "best", True).baseline is True


def test_the_best_row_is_the_best_value_then_a_present_interval_then_the_earlier_then_the_smaller_id() -> None:
    def best(higher: bool, *scores: LiveScore) -> str:
        chosen = rankings.choose("best", [rankings.entry(s, "best", higher) for s in scores])
        assert chosen is not None
        return chosen.submission_id

    assert best(True, live("a", 0.5), live("b", 0.75), live("c", 0.25)) == "b"
    assert best(False, live("a", 0.5), live("b", 0.75), live("c", 0.25)) == "c"
    assert best(True, live("a", 0.5), live("b", 0.5, 0.1)) == "b"  # an interval beats none
    assert best(False, live("a", 0.5), live("b", 0.5, 0.9)) == "b"
    assert best(True, live("a", 0.5, 0.1), live("b", 0.5, 0.3)) == "b"  # higher ci_low
    assert best(False, live("a", 0.5, 0.1), live("b", 0.5, 0.3)) == "a"
    assert best(True, live("a", 0.5, minutes=2), live("b", 0.5, minutes=1)) == "b"  # earlier
    assert best(True, live("b", 0.5), live("a", 0.5)) == "a"  # smaller id
    assert best(True, live("a", 0.5, 0.1, minutes=1), live("b", 0.75, minutes=9)) == "b"  # value first


def test_the_latest_row_is_the_latest_submission_then_the_greater_id() -> None:
    def latest(*scores: LiveScore) -> str:
        chosen = rankings.choose("latest", [rankings.entry(s, "latest", True) for s in scores])
        assert chosen is not None
        return chosen.submission_id

    assert latest(live("a", 0.9, minutes=1), live("b", 0.1, minutes=2), live("c", 0.5)) == "b"
    assert latest(live("b", 0.1, minutes=2), live("c", 0.5, minutes=2), live("a", 0.9, minutes=2)) == "c"
    assert rankings.choose("latest", []) is None and rankings.choose("best", iter([])) is None


def test_scores_are_grouped_by_split_and_metric_and_unknown_metrics_left_out() -> None:
    scores = [
        live("a", 0.1),
        live("b", 0.2, split="private"),
        live("c", 0.3),
        live("d", 0.4, metric="gone"),
        live("e", 0.5, metric="chance"),
    ]
    grouped = rankings._by_slot(scores, {"accuracy": HIGHER, "chance": LOWER})
    assert dict(grouped) == {
        ("public", "accuracy"): [scores[0], scores[2]],
        ("private", "accuracy"): [scores[1]],
        ("public", "chance"): [scores[4]],
    }
    rows = rankings._candidates([scores[0], scores[4]], "latest", {"accuracy": HIGHER, "chance": LOWER})
    assert [(r.sort_value, r.rank_by) for r in rows] == [(-0.1, "latest"), (0.5, "latest")]


# --- a model's rows through scorings, rescorings and withdrawals --------------------------------------------------


def _rows(services: Services, bench: str) -> dict[tuple[str, str, str, str], tuple[str, float]]:
    """(split, metric, rank_by, model) -> (submission_id, sort_value) of the benchmark's board rows."""
    e = LeaderboardEntry
    cols = (e.split, e.metric, e.rank_by, e.model, e.submission_id, e.sort_value)
    with services.engines.read.connect() as conn:
        found = conn.execute(select(*cols).where(e.benchmark_id == bench, e.phase_id.is_(None))).all()
    out = {(r[0], r[1], r[2], r[3]): (r[4], r[5]) for r in found}
    assert len(out) == len(found)  # one row per model and board
    return out


def _acc(value: float, ci_low: float | None = None) -> list[ScoreRow]:
    return [ScoreRow("public", "accuracy", value, ci_low, None if ci_low is None else 1.0, 10)]


def _board(rows: dict, metric: str = "accuracy", model: str = "m") -> dict[str, tuple[str, float] | None]:
    return {rank_by: rows.get(("public", metric, rank_by, model)) for rank_by in ("best", "latest")}


def test_a_models_rows_follow_its_scorings_and_withdrawals(services: Services) -> None:
    """accuracy: higher is better (sort value -value); chance: lower is better (sort value +value)."""
    bench = new_benchmark(services)
    other = submit(services, bench, "other", None, T0, _acc(0.9))
    s1 = submit(services, bench, "m", None, T0, [*_acc(0.5), ScoreRow("public", "chance", 0.25, None, None, 10)])
    assert _board(_rows(services, bench)) == {"best": (s1, -0.5), "latest": (s1, -0.5)}
    assert _board(_rows(services, bench), "chance") == {"best": (s1, 0.25), "latest": (s1, 0.25)}
    m = timedelta(minutes=1)
    s2 = submit(services, bench, "m", None, T0 + m, [*_acc(0.25), ScoreRow("public", "chance", 0.2, None, None, 10)])
    assert _board(_rows(services, bench)) == {"best": (s1, -0.5), "latest": (s2, -0.25)}
    assert _board(_rows(services, bench), "chance") == {"best": (s2, 0.2), "latest": (s2, 0.2)}
    s3 = submit(services, bench, "m", None, T0 + 2 * m, _acc(0.5, 0.1))  # as good, with an interval
    assert _board(_rows(services, bench)) == {"best": (s3, -0.5), "latest": (s3, -0.5)}
    assert _board(_rows(services, bench), "chance") == {"best": (s2, 0.2), "latest": (s2, 0.2)}

    store(services, bench, s3, 1, _acc(0.0, 0.0))  # rescored lower: the best goes back to s1
    assert _board(_rows(services, bench)) == {"best": (s1, -0.5), "latest": (s3, -0.0)}
    store(services, bench, s3, 1, _acc(0.75))  # and higher again
    assert _board(_rows(services, bench)) == {"best": (s3, -0.75), "latest": (s3, -0.75)}
    store(services, bench, s2, 1, _acc(0.25))  # s2's chance is gone: s1 holds the chance boards
    assert _board(_rows(services, bench)) == {"best": (s3, -0.75), "latest": (s3, -0.75)}
    assert _board(_rows(services, bench), "chance") == {"best": (s1, 0.25), "latest": (s1, 0.25)}

    withdraw(services, bench, s3)
    assert _board(_rows(services, bench)) == {"best": (s1, -0.5), "latest": (s2, -0.25)}
    assert _board(_rows(services, bench), "chance") == {"best": (s1, 0.25), "latest": (s1, 0.25)}
    withdraw(services, bench, s1)
    assert _board(_rows(services, bench)) == {"best": (s2, -0.25), "latest": (s2, -0.25)}
    assert _board(_rows(services, bench), "chance") == {"best": None, "latest": None}
    withdraw(services, bench, s2)
    assert _rows(services, bench) == {
        ("public", "accuracy", rank_by, "other"): (other, -0.9) for rank_by in ("best", "latest")
    }


def test_an_equal_rescoring_and_ties_keep_the_earlier_submission(services: Services) -> None:
    bench = new_benchmark(services)
    s1 = submit(services, bench, "m", None, T0, _acc(0.5, 0.2))
    s2 = submit(services, bench, "m", None, T0 + timedelta(minutes=1), _acc(0.5, 0.2))
    assert _board(_rows(services, bench)) == {"best": (s1, -0.5), "latest": (s2, -0.5)}
    store(services, bench, s1, 1, _acc(0.5, 0.2))  # the same scores again: s1 keeps its row
    assert _board(_rows(services, bench)) == {"best": (s1, -0.5), "latest": (s2, -0.5)}
    store(services, bench, s1, 1, _acc(0.5, 0.1))  # a lower interval: s2 is now better
    assert _board(_rows(services, bench)) == {"best": (s2, -0.5), "latest": (s2, -0.5)}


def test_a_metric_the_scorer_no_longer_reports_loses_its_rows(services: Services) -> None:
    bench = new_benchmark(services)
    chance = [ScoreRow("public", "chance", 0.2, None, None, 10)]
    s1 = submit(services, bench, "m", None, T0, _acc(0.5) + chance)
    only_accuracy = {k: v for k, v in _metrics().items() if k != "chance"}
    with services.engines.write.begin() as conn:
        rankings.refresh(conn, bench, s1, only_accuracy)
    rows = _rows(services, bench)
    assert _board(rows) == {"best": (s1, -0.5), "latest": (s1, -0.5)}
    assert _board(rows, "chance") == {"best": None, "latest": None}


def test_rebuild_and_refresh_models_choose_the_same_rows(services: Services) -> None:
    bench = new_benchmark(services)
    rng = random.Random(11)
    subs = [submit(services, bench, f"m{i % 4}", None, T0 + timedelta(minutes=i % 3), _scores(rng)) for i in range(12)]
    withdraw(services, bench, subs[0])
    store(services, bench, subs[5], 1, _scores(rng))
    maintained = _rows(services, bench)
    assert len(maintained) == 4 * 6  # 4 models on 6 boards
    with services.engines.write.begin() as conn:
        rank_repo.delete_benchmark(conn, bench)
        rankings.refresh_models(conn, bench, ["m3", "m1", "m3"], _metrics())
    assert _rows(services, bench) == {k: v for k, v in maintained.items() if k[3] in ("m1", "m3")}
    with services.engines.write.begin() as conn:
        rankings.refresh_models(conn, bench, ["m0", "m2"], _metrics())
        rankings.refresh_models(conn, bench, ["m0"], _metrics())  # nothing changes: nothing written
    assert _rows(services, bench) == maintained
    with services.engines.write.begin() as conn:
        rank_repo.delete_benchmark(conn, bench)
        assert rankings.rebuild(conn, bench, _metrics()) == 24
    assert _rows(services, bench) == maintained
    with services.engines.write.begin() as conn:  # over the maintained rows: replaces them
        assert rankings.rebuild(conn, bench, _metrics()) == 24
    assert _rows(services, bench) == maintained
    assert_boards_exact(services, bench)


def test_generated_submissions_keep_the_board_equal_to_a_recomputation(services: Services) -> None:
    """A short run of the slow ``tests/db/test_rankings.py`` check: submissions, withdrawals, lowering rescorings."""
    rng = random.Random(5)
    bench = new_benchmark(services)
    subs = [
        submit(services, bench, f"m{rng.randrange(4)}", None, T0 + timedelta(minutes=rng.randrange(3)), _scores(rng))
        for _ in range(16)
    ]
    for sid in rng.sample(subs, 4):
        withdraw(services, bench, sid)
        subs.remove(sid)
    for sid in rng.sample(subs, 6):
        store(services, bench, sid, 1, _scores(rng))
    assert assert_boards_exact(services, bench) > 0


def test_a_submission_of_another_benchmark_is_refused(services: Services) -> None:
    bench, other = new_benchmark(services), new_benchmark(services)
    sid = submit(services, bench, "m", None, T0, _acc(0.5))
    with pytest.raises(AssertionError), services.engines.write.begin() as conn:
        rankings.refresh(conn, other, sid, _metrics())
    assert _rows(services, other) == {}


def _phase(services: Services, bench: str) -> str:
    """A phase whose submissions are on the board as they come (public visibility)."""
    row = phase_repo.PhaseRow(
        0, str(uuid.uuid4()), bench, "open", T0 - timedelta(hours=1), T0 + timedelta(hours=1), ["public"],
        None, None, "public", "refuse", T0 - timedelta(days=1), None,
    )  # fmt: skip
    with services.engines.write.begin() as conn:
        phase_repo.insert(conn, row)
    return row.id


def test_writers_take_the_phase_then_the_models_turn(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """The locks a refresh takes (recorded: on SQLite they take nothing): a phase's submission takes its phase's
    turn before its model's; each (benchmark, model) and each phase is its own lock; refresh_models takes each
    model's, as refresh does."""
    bench = new_benchmark(services)
    phases = [_phase(services, bench), _phase(services, bench)]
    taken: list[str] = []
    real = locks.serialize_on

    def recorded(conn: Connection, name: str) -> None:
        taken.append(name)
        real(conn, name)

    monkeypatch.setattr(locks, "serialize_on", recorded)
    a = submit(services, bench, "a", None, T0, _acc(0.75), phases[0])
    b = submit(services, bench, "b", None, T0, _acc(0.25), phases[1])
    c = submit(services, bench, "a", None, T0 + timedelta(minutes=1), _acc(0.5))
    assert _board(_rows(services, bench), model="a") == {"best": (a, -0.75), "latest": (c, -0.5)}
    assert _board(_rows(services, bench), model="b") == {"best": (b, -0.25), "latest": (b, -0.25)}
    assert len(taken) == 5 and all(isinstance(name, str) for name in taken)
    phase_a, model_a, phase_b, model_b, model_a_again = taken
    assert model_a == model_a_again and len({phase_a, phase_b, model_a, model_b}) == 4
    other = new_benchmark(services)
    submit(services, other, "a", None, T0, _acc(0.5))
    assert taken[5:] == [taken[-1]] and taken[-1] not in taken[:5]  # model a of another benchmark: another lock
    del taken[:]
    with services.engines.write.begin() as conn:
        rankings.refresh_models(conn, bench, ["b", "a", "b"], _metrics())
    assert taken == [model_a, model_b]  # in order, once each
