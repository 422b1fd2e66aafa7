"""The claim ledger: one row per result sentence of a paper's abstract, its status and the evidence behind it.

A paper's committed ledger (``ledger/<paper>.json``) holds the sentences, copied word for word, with what is needed
where a claim cannot be checked here. A check's :class:`Finding` per claim id (status, expected, measured,
tolerance, the independent computation) replaces those fields when the check runs; ``badge`` is the lowest status
of the headline claims in :data:`STATUS_ORDER`.
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ClaimStatus = Literal[
    "reproduced",
    "consistent",
    "implementation_verified",
    "contradicted",
    "needs_data",
    "needs_models",
    "not_checked",
]
ExpectedSource = Literal["paper_text", "published_table", "independent_computation", "reference_library"]

STATUS_RANK: Mapping[str, int] = {
    "contradicted": 0,
    "not_checked": 1,
    "needs_data": 2,
    "needs_models": 2,
    "implementation_verified": 3,
    "consistent": 4,
    "reproduced": 5,
}
"""The badge order: contradicted < not_checked < needs_data = needs_models < implementation_verified < consistent <
reproduced."""
STATUS_ORDER: tuple[str, ...] = tuple(sorted(STATUS_RANK, key=STATUS_RANK.__getitem__))

STATUS_DEFINITIONS: Mapping[str, str] = {
    "reproduced": "an estibench computation matches a figure the paper itself reports (its table, its stated "
    "threshold or rate), within a stated tolerance, on the paper's setting or a faithful small-scale one",
    "consistent": "the claimed mechanism or direction holds on a synthetic setting that is not generated from the "
    "code under test, with a margin that a wrong implementation or the named competing hypothesis does not meet",
    "implementation_verified": "the formula or algorithm agrees with an independent computation (brute force, finite "
    "differences, a reference library, a hand calculation), but the paper's empirical claim is not tested",
    "contradicted": "our computation disagrees with the claim on the setting tested (where and by how much is stated)",
    "needs_data": "it needs a data set that this service does not have (named, with whether it is public)",
    "needs_models": "it needs model weights or model outputs that this service does not have (named)",
    "not_checked": "no check yet",
}


class Evidence(BaseModel):
    """The runs a claim's check used, the report's plot and the independent computation named."""

    model_config = ConfigDict(extra="forbid")

    run_ids: list[str] = Field(default_factory=list, description="Estimator runs used (GET /v1/runs/{id}).")
    plot_url: str | None = Field(default=None, description="The report's figure, when the check draws one.")
    computation: str = Field(default="", description="The independent computation or source of the expected value.")


class Claim(BaseModel):
    """One result sentence of the abstract and what estibench found about it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9-]+$", max_length=64)
    text: str = Field(description="The abstract's sentence, word for word.")
    headline: bool = Field(description="The sentence states a result: a figure, a comparison or a scaling.")
    status: ClaimStatus
    expected_source: ExpectedSource | None = Field(
        default=None, description="Where the expected value comes from (null while nothing is compared)."
    )
    expected: Any = None
    measured: Any = None
    tolerance: Any = None
    evidence: Evidence = Field(default_factory=Evidence)
    mutation: str = Field(default="", description="The broken estimator the check is shown to catch.")
    needs: str = Field(default="", description="What a check would need that this service does not have.")
    reconstructed: list[str] = Field(
        default_factory=list, description="Definitions the check rests on that were reconstructed, not the paper's."
    )

    @model_validator(mode="after")
    def _honest(self) -> "Claim":
        if self.status == "reproduced" and self.reconstructed:
            raise ValueError(f"claim {self.id}: a check on reconstructed definitions cannot be 'reproduced'")
        if self.status in ("needs_data", "needs_models") and not self.needs:
            raise ValueError(f"claim {self.id}: status {self.status} must name what is needed")
        if self.status in ("reproduced", "consistent", "implementation_verified") and self.expected_source is None:
            raise ValueError(f"claim {self.id}: status {self.status} needs the expected value's source")
        return self


class Ledger(BaseModel):
    """A paper's claims with the code version and date of the run that produced their statuses."""

    model_config = ConfigDict(extra="forbid")

    paper: str
    code_version: str
    date: str
    claims: list[Claim] = Field(min_length=1)


@dataclass(frozen=True)
class Finding:
    """What a check found about one claim: its status, the expected and measured figures, the tolerance and the
    independent computation (or the source) the expected value comes from."""

    status: ClaimStatus
    expected_source: ExpectedSource
    expected: Any
    measured: Any
    tolerance: Any
    computation: str


def badge(claims: Iterable[Claim]) -> str:
    """The lowest status of the headline claims (``not_checked`` when there is none)."""
    headline = [c.status for c in claims if c.headline]
    return min(headline, key=STATUS_RANK.__getitem__) if headline else "not_checked"


def counts(claims: Iterable[Claim]) -> dict[str, int]:
    """Number of claims per status, every status listed."""
    out = dict.fromkeys(STATUS_ORDER, 0)
    for c in claims:
        out[c.status] += 1
    return out


@cache
def committed(paper: str) -> Ledger:
    """The committed ledger of ``paper`` (package data ``ledger/<paper>.json``)."""
    text = resources.files("service.reproductions").joinpath(f"ledger/{paper}.json").read_text()
    return Ledger.model_validate(json.loads(text))


def apply(
    claims: Iterable[Claim], findings: Mapping[str, Finding], run_ids: list[str], plot_url: str | None
) -> list[Claim]:
    """The claims with each finding's fields in place (claims without a finding keep theirs)."""
    out = []
    for claim in claims:
        f = findings.get(claim.id)
        if f is None:
            out.append(claim)
            continue
        evidence = Evidence(run_ids=run_ids, plot_url=plot_url, computation=f.computation)
        update = {
            "status": f.status,
            "expected_source": f.expected_source,
            "expected": f.expected,
            "measured": f.measured,
            "tolerance": f.tolerance,
            "evidence": evidence,
        }
        out.append(Claim.model_validate({**claim.model_dump(), **update}))
    return out
