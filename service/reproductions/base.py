"""The shapes of a reproduction check: steps to run, the outcome a judge returns, and the entry per paper."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from service.reproductions.claims import ClaimStatus, ExpectedSource, Finding

Status = Literal["pending", "ready", "not_reproducible"]


@dataclass(frozen=True)
class Step:
    """One estimator call of a check: the registry name and its params (validated like any request)."""

    name: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Outcome:
    """What a judge concluded: the measured figures (JSON values), one sentence of reason and a finding per claim id
    of the paper's ledger that the check speaks to."""

    figures: Mapping[str, Any]
    reason: str
    findings: Mapping[str, Finding] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """No finding of the check is ``contradicted``."""
        return all(f.status != "contradicted" for f in self.findings.values())


Judge = Callable[[Sequence[Mapping[str, Any]]], Outcome]
Plot = Callable[[Sequence[Mapping[str, Any]], Outcome], Any]


@dataclass(frozen=True)
class Reproduction:
    """A paper's entry: slug, short title, the claim checked, and how (``judge`` None: nothing to run)."""

    paper: str
    title: str
    claim: str
    requires: tuple[str, ...] = ()
    build_steps: Callable[[], tuple[Step, ...]] = tuple
    """The check's estimator calls, built on first use (some rest on a small trained model or generated data)."""
    judge: Judge | None = None
    plot: Plot | None = None
    unavailable: str = ""
    """Why the claim cannot be checked here (``not_reproducible``); empty when it can."""
    quick: bool = True
    """The check finishes in a few seconds (the test suite runs it; the slow ones run in ``make reproduce``)."""

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.build_steps()


def finding(
    ok: bool,
    earned: ClaimStatus,
    source: ExpectedSource,
    expected: Any,
    measured: Any,
    tolerance: Any,
    computation: str,
    direction_holds: bool = False,
) -> Finding:
    """The claim's finding: the status the check earns when its conditions hold; else ``not_checked`` when only the
    margin is missing (the measured direction agrees with the claim, the data are too few to tell), and
    ``contradicted`` otherwise."""
    status = earned if ok else ("not_checked" if direction_holds else "contradicted")
    return Finding(status, source, expected, measured, tolerance, computation)


def status_of(entry: Reproduction, registered: set[str]) -> Status:
    """``not_reproducible`` (data out of reach), ``pending`` (estimator or scorer not built) or ``ready``."""
    if entry.unavailable:
        return "not_reproducible"
    if entry.judge is None or not set(entry.requires) <= registered:
        return "pending"
    return "ready"
