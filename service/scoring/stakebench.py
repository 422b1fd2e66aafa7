"""StakeBench scorer (Pei et al.). Every definition here is RECONSTRUCTED from the abstract.

Four tasks: T1 ``commitment`` (does the commenter hold a position), T2 ``revealed_side`` (which side; the
model may abstain with NEUTRAL / UNCLEAR), T3 ``future_action`` (INCREASE / REDUCE / EXIT_FLIP / HOLD after
the comment), T4 ``odds_projection`` (direction of the market odds, dead band ε). Directed Accuracy is the
accuracy over directional T2 answers, always reported with coverage and strict accuracy; stake-weighted DA
weights by position size. T3 reports macro-F1, balanced accuracy and label-collapse diagnostics. T4 compares
the model with the momentum and favourite-drift baselines per setting, with an exact sign test across
settings. A missing prediction scores 0 (T2: counts as an abstention).
"""

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from service.errors import InvalidInput
from service.registry import MetricInfo, ScorerSpec, register
from service.scoring._common import KeyItemBase, Label, PredItemBase, column, match_items, metric, result
from service.stats import binom_tail_ge, cluster_robust_se, factorize, wilson
from service.types import Probability, StrictModel

Task = Literal["commitment", "revealed_side", "future_action", "odds_projection"]
Action = Literal["INCREASE", "REDUCE", "EXIT_FLIP", "HOLD"]
Direction = Literal["UP", "DOWN", "FLAT"]
ACTIONS = ("INCREASE", "REDUCE", "EXIT_FLIP", "HOLD")
ABSTAIN = ("NEUTRAL", "UNCLEAR")
_MISSING = "__missing__"


class AnswerKeyItem(KeyItemBase):
    """One StakeBench comment (item metadata [R]); the gold field depends on ``task``."""

    task: Task = Field(description="commitment (T1), revealed_side (T2), future_action (T3), odds_projection (T4).")
    committed: bool | None = Field(None, description="T1 gold: the commenter held a position at comment time.")
    side: Label | None = Field(None, description="T2 gold: 'YES' / 'NO', or an outcome id listed in outcomes.")
    outcomes: list[Label] = Field(
        default_factory=list, max_length=64, description="T2 multi-outcome markets: the outcome ids."
    )
    action: Action | None = Field(None, description="T3 gold: action in the window after the comment.")
    p_prev: Probability | None = Field(None, description="T4: market probability one step before the comment.")
    p_now: Probability | None = Field(None, description="T4: market probability at comment time.")
    p_next: Probability | None = Field(None, description="T4: market probability at the horizon.")
    market_id: Label | None = Field(None, description="Market (cluster for clustered SEs).")
    platform: Literal["polymarket", "manifold"] | None = Field(None, description="Platform (mandatory splits).")
    topic: Label | None = Field(None, description="Topic.")
    setting_id: Label | None = Field(None, description="Topic x platform setting (18 in the paper).")
    comment_id: Label | None = Field(None, description="Comment id (informational).")
    comment_time: Label | None = Field(None, description="Comment timestamp, ISO 8601 (informational).")
    position_side: Label | None = Field(None, description="Position side at comment time (informational).")
    position_size: float | None = Field(
        None, ge=0.0, le=1e12, description="Position size at comment time (USDC or mana): stake weight for T2."
    )
    post_action: Label | None = Field(None, description="Raw post-comment action (informational).")
    action_window: Label | None = Field(None, description="Action window, e.g. '7d' (informational).")
    horizon: Label | None = Field(None, description="T4 horizon, e.g. '24h' (informational).")
    resolved_outcome: Label | None = Field(None, description="Resolved outcome (informational).")


class PredictionItem(PredItemBase):
    """A model's answer; fill the field of the item's task (T4: ``direction`` or ``p_next``)."""

    committed: bool | None = Field(None, description="T1 answer.")
    side: Label | None = Field(None, description="T2 answer: YES / NO / an outcome id, or NEUTRAL / UNCLEAR.")
    action: Action | None = Field(None, description="T3 answer.")
    direction: Direction | None = Field(None, description="T4 answer: direction of the odds.")
    p_next: Probability | None = Field(None, description="T4 answer as a forecast probability (direction vs p_now).")


class Params(StrictModel):
    """StakeBench scoring settings [R]."""

    confidence: float = Field(0.95, gt=0.5, lt=1.0, description="Confidence level of Wilson intervals.")
    collapse_tau: float = Field(
        0.05, gt=0.0, lt=1.0, description="T3: a label is 'used' when its predicted share is >= tau."
    )
    collapse_max_labels: int = Field(2, ge=1, le=3, description="T3: collapsed when labels_used <= this.")
    dead_band: float = Field(
        0.0,
        ge=0.0,
        le=0.5,
        description="T4: |Δp| <= dead_band is FLAT (a move within 1e-9 of the band is equal to it).",
    )
    flat_policy: Literal["exclude", "class"] = Field(
        "exclude", description="T4: FLAT truths excluded from accuracy, or scored as their own class."
    )
    baseline: Literal["momentum", "favourite_drift"] = Field(
        "momentum", description="T4 baseline of the headline skill (both are always reported)."
    )
    consistency_share: float = Field(
        1.0, gt=0.5, le=1.0, description="T4: 'consistently improves' = skill > 0 in at least this share of settings."
    )


METRICS = {
    "commitment_accuracy": MetricInfo(True, (0.0, 1.0), "T1 accuracy (missing = wrong); Wilson CI."),
    "commitment_macro_f1": MetricInfo(True, (0.0, 1.0), "T1 macro-F1."),
    "commitment_mcc": MetricInfo(True, (-1.0, 1.0), "T1 Matthews correlation."),
    "directed_accuracy": MetricInfo(True, (0.0, 1.0), "T2 accuracy over directional answers; Wilson CI."),
    "side_coverage": MetricInfo(True, (0.0, 1.0), "T2 share of directional answers."),
    "side_strict_accuracy": MetricInfo(True, (0.0, 1.0), "T2 correct answers / all T2 items."),
    "stake_weighted_da": MetricInfo(True, (0.0, 1.0), "T2 directed accuracy weighted by position size."),
    "action_accuracy": MetricInfo(True, (0.0, 1.0), "T3 accuracy; Wilson CI."),
    "action_macro_f1": MetricInfo(True, (0.0, 1.0), "T3 macro-F1 over the labels present in gold or answers."),
    "action_balanced_accuracy": MetricInfo(True, (0.0, 1.0), "T3 mean recall over gold labels."),
    "action_effective_labels": MetricInfo(True, (1.0, 4.0), "T3 exp(entropy) of the answered label shares."),
    "odds_accuracy": MetricInfo(True, (0.0, 1.0), "T4 direction accuracy; Wilson CI."),
    "odds_skill": MetricInfo(True, (-1.0, 1.0), "T4 accuracy minus the declared baseline's accuracy."),
    "odds_settings_positive": MetricInfo(True, (0.0, 1e6), "T4 settings with skill > 0 (n = settings)."),
    "odds_sign_test_p": MetricInfo(False, (0.0, 1.0), "T4 exact one-sided sign test of skill > 0 across settings."),
}
RECONSTRUCTED = [*METRICS, "breakdown"]


def f1_scores(gold: np.ndarray, pred: np.ndarray, labels: Sequence[str]) -> dict[str, float]:
    """Per-label F1 (0 where precision + recall = 0)."""
    out = {}
    for label in labels:
        tp = np.count_nonzero((gold == label) & (pred == label))
        fp = np.count_nonzero((gold != label) & (pred == label))
        fn = np.count_nonzero((gold == label) & (pred != label))
        out[label] = 2.0 * tp / (2 * tp + fp + fn) if tp else 0.0
    return out


def collapse_diagnostics(pred: np.ndarray, tau: float, max_labels: int) -> dict[str, Any]:
    """Predicted-label shares, labels used (share >= tau), top-2 share, exp(entropy), collapsed flag (T3)."""
    names, counts = np.unique(pred, return_counts=True)
    shares = counts / counts.sum()
    order = np.argsort(-shares, kind="stable")
    used = int(np.count_nonzero(shares >= tau))
    return {
        "shares": {str(names[i]): float(shares[i]) for i in order},
        "labels_used": used,
        "top2_share": float(shares[order[:2]].sum()),
        "effective_labels": float(np.exp(-(shares @ np.log(shares)))),
        "collapsed": used <= max_labels,
        "tau": tau,
    }


BAND_TOLERANCE = 1e-9
"""A move within this of the dead band counts as equal to it: differences of decimal odds carry rounding
(0.51 - 0.50 = 0.010000000000000009 but 0.11 - 0.10 = 0.009999999999999995), far below any quoted tick."""


def directions(delta: np.ndarray, dead_band: float) -> np.ndarray:
    """UP / DOWN / FLAT of a probability change with dead band ε: ``|Δ| <= ε`` (to :data:`BAND_TOLERANCE`) is FLAT."""
    band = dead_band + BAND_TOLERANCE
    return np.where(delta > band, "UP", np.where(delta < -band, "DOWN", "FLAT"))


def _clustered(correct: np.ndarray, clusters: Sequence[str]) -> float | None:
    """Market-clustered SE of a 0/1 vector, or ``None`` with fewer than 2 markets."""
    codes, names = factorize(clusters)
    return cluster_robust_se(correct, codes, len(names)) if len(names) >= 2 else None


def _by(labels: Sequence[str | None], fn: Callable[[np.ndarray], Any]) -> dict[str, Any]:
    """``fn(mask)`` for every non-null label value."""
    codes, names = factorize(labels)
    return {str(name): fn(codes == c) for c, name in enumerate(names) if name is not None}


def _loc(j: int, field: str) -> tuple:
    return ("predictions", "items", j, field)


def _check_key(it: AnswerKeyItem, i: int) -> None:
    loc = ("answer_key", "items", i)
    if it.task == "commitment" and it.committed is None:
        raise InvalidInput("commitment items need committed", (*loc, "committed"))
    if it.task == "revealed_side":
        allowed = it.outcomes or ["YES", "NO"]
        if it.side not in allowed:
            raise InvalidInput(f"side must be one of {allowed}", (*loc, "side"))
    if it.task == "future_action" and it.action is None:
        raise InvalidInput("future_action items need action", (*loc, "action"))
    if it.task == "odds_projection" and None in (it.p_prev, it.p_now, it.p_next):
        raise InvalidInput("odds_projection items need p_prev, p_now and p_next", (*loc, "p_now"))


def check_key(key_items: list[AnswerKeyItem], params: Params) -> None:
    """The answer-key checks of :func:`score` (``ScorerSpec.check_key``): each item has its task's gold field, and
    a revealed_side gold is one of the item's outcomes (YES / NO without outcomes)."""
    for i, it in enumerate(key_items):
        _check_key(it, i)


def _answer(it: AnswerKeyItem, p: PredictionItem, j: int, dead_band: float) -> Any:
    """The prediction's answer for the item's task, validated."""
    if it.task == "commitment":
        if p.committed is None:
            raise InvalidInput("commitment predictions need committed", _loc(j, "committed"))
        return p.committed
    if it.task == "revealed_side":
        allowed = [*(it.outcomes or ["YES", "NO"]), *ABSTAIN]
        if p.side not in allowed:
            choices = f"this private item's outcomes or {' / '.join(ABSTAIN)}" if it.split == "private" else allowed
            raise InvalidInput(f"side must be one of {choices}", _loc(j, "side"))
        return p.side
    if it.task == "future_action":
        if p.action is None:
            raise InvalidInput("future_action predictions need action", _loc(j, "action"))
        return p.action
    if (p.direction is None) == (p.p_next is None):
        raise InvalidInput("odds_projection predictions need exactly one of direction, p_next", _loc(j, "direction"))
    if p.direction is not None:
        return p.direction
    return str(directions(np.array([p.p_next - it.p_now]), dead_band)[0])


def score(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> dict[str, Any]:
    """Score one split of StakeBench predictions; every metric is RECONSTRUCTED."""
    ids = column(key_items, "item_id")
    index = match_items(ids, column(pred_items, "item_id"))
    for i, it in enumerate(key_items):
        _check_key(it, i)
    answers: list[Any] = [_MISSING] * len(key_items)
    for j, (p, i) in enumerate(zip(pred_items, index.tolist(), strict=True)):
        answers[i] = _answer(key_items[i], p, j, params.dead_band)
    tasks = np.array(column(key_items, "task"), dtype=object)
    values = np.zeros(len(key_items))
    scores: dict[str, dict] = {}
    breakdown: dict[str, Any] = {"protocol": "reconstructed-v1"}
    for task, fn in (
        ("commitment", _commitment),
        ("revealed_side", _revealed_side),
        ("future_action", _future_action),
        ("odds_projection", _odds),
    ):
        members = np.flatnonzero(tasks == task)
        if members.size:
            items = [key_items[i] for i in members.tolist()]
            correct, task_scores, task_breakdown = fn(items, [answers[i] for i in members.tolist()], params)
            values[members] = correct
            scores |= task_scores
            breakdown[task] = task_breakdown
    return result(scores, breakdown, index.size / len(key_items), RECONSTRUCTED, ids, values)


def _prop(k: int, n: int, params: Params) -> dict:
    low, high = wilson(k, n, params.confidence)
    return metric(k / n, low, high, n)


def _commitment(items: list[AnswerKeyItem], answers: list[Any], params: Params) -> tuple:
    gold = np.array([it.committed for it in items])
    pred = np.array([(not g) if a == _MISSING else a for a, g in zip(answers, gold.tolist(), strict=True)])
    correct = (gold == pred).astype(np.float64)
    n = gold.size
    tp = np.count_nonzero(gold & pred)
    tn = np.count_nonzero(~gold & ~pred)
    fp = np.count_nonzero(~gold & pred)
    fn = np.count_nonzero(gold & ~pred)
    denom = np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    mcc = (tp * tn - fp * fn) / denom if denom > 0 else 0.0
    f1 = f1_scores(gold.astype(str), pred.astype(str), ["True", "False"])
    scores = {
        "commitment_accuracy": _prop(int(correct.sum()), n, params),
        "commitment_macro_f1": metric(float(np.mean(list(f1.values()))), n=n),
        "commitment_mcc": metric(float(mcc), n=n),
    }
    share = float(gold.mean())
    markets = [it.market_id or it.item_id for it in items]
    breakdown = {
        "n": n,
        "majority_baseline_accuracy": max(share, 1.0 - share),
        "f1": {"committed": f1["True"], "not_committed": f1["False"]},
        "clustered_se": _clustered(correct, markets),
        "by_platform": _by(
            [it.platform for it in items], lambda m: {"n": int(m.sum()), "accuracy": float(correct[m].mean())}
        ),
    }
    return correct, scores, breakdown


def _da(directional: np.ndarray, correct: np.ndarray) -> dict[str, Any]:
    d = int(directional.sum())
    return {
        "n": int(directional.size),
        "directional": d,
        "directed_accuracy": float(correct[directional].mean()) if d else None,
        "coverage": d / directional.size,
    }


def _revealed_side(items: list[AnswerKeyItem], answers: list[Any], params: Params) -> tuple:
    gold = np.array([it.side for it in items], dtype=object)
    pred = np.array(answers, dtype=object)
    directional = ~np.isin(pred, [*ABSTAIN, _MISSING])
    correct = (pred == gold).astype(np.float64)
    n, d = gold.size, int(directional.sum())
    k = int(correct.sum())
    scores = {"side_coverage": metric(d / n, n=n), "side_strict_accuracy": _prop(k, n, params)}
    breakdown: dict[str, Any] = {"n": n, "directional": d, "abstentions": n - d}
    if d:
        scores["directed_accuracy"] = _prop(int(correct[directional].sum()), d, params)
        sizes = np.array([np.nan if it.position_size is None else it.position_size for it in items])
        weighted = directional & ~np.isnan(sizes)
        if weighted.any() and sizes[weighted].sum() > 0:
            w = sizes[weighted]
            scores["stake_weighted_da"] = metric(float(w @ correct[weighted] / w.sum()), n=int(weighted.sum()))
        markets = [it.market_id or it.item_id for it, keep in zip(items, directional.tolist(), strict=True) if keep]
        breakdown["da_clustered_se"] = _clustered(correct[directional], markets)
    breakdown["by_platform"] = _by([it.platform for it in items], lambda m: _da(directional[m], correct[m]))
    breakdown["by_setting"] = _by([it.setting_id for it in items], lambda m: _da(directional[m], correct[m]))
    return correct, scores, breakdown


def _future_action(items: list[AnswerKeyItem], answers: list[Any], params: Params) -> tuple:
    gold = np.array([it.action for it in items], dtype=object)
    pred = np.array(answers, dtype=object)
    answered = pred != _MISSING
    correct = (gold == pred).astype(np.float64)
    n = gold.size
    labels = [a for a in ACTIONS if np.any(gold == a) or np.any(pred == a)]
    f1 = f1_scores(gold, pred, labels)
    recalls = [float(np.mean(pred[gold == a] == a)) for a in ACTIONS if np.any(gold == a)]
    scores = {
        "action_accuracy": _prop(int(correct.sum()), n, params),
        "action_macro_f1": metric(float(np.mean(list(f1.values()))), n=n),
        "action_balanced_accuracy": metric(float(np.mean(recalls)), n=n),
    }
    breakdown: dict[str, Any] = {"n": n, "answered": int(answered.sum()), "f1": f1}
    if answered.any():
        diag = collapse_diagnostics(pred[answered].astype(str), params.collapse_tau, params.collapse_max_labels)
        scores["action_effective_labels"] = metric(diag["effective_labels"], n=int(answered.sum()))
        breakdown["collapse"] = diag
    breakdown["by_platform"] = _by(
        [it.platform for it in items], lambda m: {"n": int(m.sum()), "accuracy": float(correct[m].mean())}
    )
    return correct, scores, breakdown


def _odds(items: list[AnswerKeyItem], answers: list[Any], params: Params) -> tuple:
    p_prev = np.array([it.p_prev for it in items], dtype=np.float64)
    p_now = np.array([it.p_now for it in items], dtype=np.float64)
    p_next = np.array([it.p_next for it in items], dtype=np.float64)
    truth = directions(p_next - p_now, params.dead_band)
    model = np.array(answers, dtype=object)
    momentum = directions(p_now - p_prev, params.dead_band)
    favourite = np.where(p_now > 0.5, "UP", "DOWN")
    correct = (model == truth).astype(np.float64)
    scored = truth != "FLAT" if params.flat_policy == "exclude" else np.ones(truth.size, dtype=bool)
    hits = {"model": correct, "momentum": (momentum == truth) * 1.0, "favourite_drift": (favourite == truth) * 1.0}

    def table(mask: np.ndarray) -> dict[str, Any]:
        m = mask & scored
        if not m.any():
            return {"n": 0}
        acc = {k: float(v[m].mean()) for k, v in hits.items()}
        return {
            "n": int(m.sum()),
            "accuracy": acc,
            "skill_vs_momentum": acc["model"] - acc["momentum"],
            "skill_vs_favourite_drift": acc["model"] - acc["favourite_drift"],
        }

    overall = table(np.ones(truth.size, dtype=bool))
    breakdown: dict[str, Any] = {
        "flat_policy": params.flat_policy,
        "dead_band": params.dead_band,
        "favourite_drift_rule": "UP iff p_now > 0.5 (p_now = 0.5 counts as DOWN)",
        "baseline": params.baseline,
        "n_flat_truth": int(np.count_nonzero(truth == "FLAT")),
        "overall": overall,
    }
    scores: dict[str, dict] = {}
    if overall["n"]:
        m = int(overall["n"])
        scores["odds_accuracy"] = _prop(int(correct[scored].sum()), m, params)
        scores["odds_skill"] = metric(overall[f"skill_vs_{params.baseline}"], n=m)
        settings = _by([it.setting_id or "all" for it in items], table)
        settings = {k: v for k, v in settings.items() if v["n"]}
        skills = np.array([v[f"skill_vs_{params.baseline}"] for v in settings.values()])
        positive, nonzero = int(np.count_nonzero(skills > 0)), int(np.count_nonzero(skills != 0))
        p_sign = binom_tail_ge(positive, nonzero, 0.5)
        scores["odds_settings_positive"] = metric(positive, n=len(settings))
        scores["odds_sign_test_p"] = metric(p_sign, n=nonzero)
        breakdown |= {
            "by_setting": settings,
            "settings_positive": positive,
            "settings_nonzero": nonzero,
            "sign_test_p": p_sign,
            "consistently_improves": positive >= params.consistency_share * len(settings),
            "clustered_se": _clustered(
                correct[scored], [it.market_id or it.item_id for it, s in zip(items, scored.tolist(), strict=True) if s]
            ),
            "by_platform": _by([it.platform for it in items], table),
        }
    return correct, scores, breakdown


COST_UNIT = "items (answer key plus predictions)"
SYNC_BUDGET = 2e5
"""Items scored in about 1 s of CPU (bench/scorer_costs.py: 2.1e5 items per CPU second at 100,000 key items)."""
HARD_CAP = 2e6
PAIRED_TESTS = {"directed_accuracy": "mcnemar"}
"""Per-item values are 0/1 correctness flags: exact McNemar."""


def cost(key_items: list[AnswerKeyItem], pred_items: list[PredictionItem], params: Params) -> float:
    """Answer-key plus prediction items (``COST_UNIT``)."""
    return float(len(key_items) + len(pred_items))


SPEC = register(
    ScorerSpec(
        name="stakebench",
        version="1",
        summary="StakeBench market-commitment benchmark [R]: commitment detection, Directed Accuracy with "
        "coverage and stake weighting, action macro-F1 with collapse diagnostics, odds-direction skill vs "
        "momentum and favourite-drift baselines with a sign test across settings.",
        paper="StakeBench",
        citation="Pei, Hu, Shi, Ma, Liu & Cartlidge, StakeBench, arXiv:2605.26074 (2026); protocol reconstructed",
        answer_key_item_model=AnswerKeyItem,
        prediction_item_model=PredictionItem,
        params_model=Params,
        metrics=METRICS,
        primary_metric="directed_accuracy",
        score=score,
        cost=cost,
        cost_unit=COST_UNIT,
        sync_budget=SYNC_BUDGET,
        hard_cap=HARD_CAP,
        paired_tests=PAIRED_TESTS,
        check_key=check_key,
    )
)
