"""The shapes of a reproduction check: steps to run, the outcome a judge returns, and the entry per paper."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["reproduced", "not_reproduced", "not_reproducible"]
Status = Literal["pending", "ready", "not_reproducible"]


@dataclass(frozen=True)
class Step:
    """One estimator call of a check: the registry name and its params (validated like any request)."""

    name: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Outcome:
    """What a judge concluded: the verdict, the measured figures (JSON values) and one sentence of reason."""

    verdict: Verdict
    figures: Mapping[str, Any]
    reason: str


Judge = Callable[[Sequence[Mapping[str, Any]]], Outcome]
Plot = Callable[[Sequence[Mapping[str, Any]], Outcome], Any]


@dataclass(frozen=True)
class Reproduction:
    """A paper's entry: slug, short title, the claim checked, and how (``judge`` None: nothing to run)."""

    paper: str
    title: str
    claim: str
    requires: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    judge: Judge | None = None
    plot: Plot | None = None
    unavailable: str = ""
    """Why the claim cannot be checked here (``not_reproducible``); empty when it can."""
    notes: tuple[str, ...] = field(default=())
    headline: tuple[str, ...] = ()
    """Names of the figures a summary shows first (the others follow in the full report)."""
    quick: bool = True
    """The check finishes in a few seconds (the test suite runs it; the slow ones run in ``make reproduce``)."""


def verdict(ok: bool) -> Verdict:
    """``reproduced`` when the judge's conditions hold, else ``not_reproduced``."""
    return "reproduced" if ok else "not_reproduced"


def status_of(entry: Reproduction, registered: set[str]) -> Status:
    """``not_reproducible`` (data out of reach), ``pending`` (estimator or scorer not built) or ``ready``."""
    if entry.unavailable:
        return "not_reproducible"
    if entry.judge is None or not set(entry.requires) <= registered:
        return "pending"
    return "ready"
