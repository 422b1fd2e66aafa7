"""Reproduction checks and the claim ledger: every paper has a committed ledger, each quick check gives the statuses
its ledger records, the badge follows the status order, and expected values never come from the code judged."""

import ast
import copy
import io
import json
import os
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from service.registry import ESTIMATORS, SCORERS, load_all, no_progress
from service.reproductions import catalog, get, status_of
from service.reproductions import dynamics_checks as dyn
from service.reproductions import internals_checks as llm
from service.reproductions import training_models as training
from service.reproductions.claims import STATUS_ORDER, Claim, apply, badge, committed, counts
from service.reproductions.reference import predictive_coding as ref_pc
from service.reproductions.reference import sae as ref_sae

PACKAGE = Path(__file__).resolve().parents[2] / "service" / "reproductions"
INDEPENDENT = [
    *sorted((PACKAGE / "reference").glob("*.py")),
    PACKAGE / "synthetic_models.py",
    PACKAGE / "training_models.py",
]
ALLOWED_IMPORTS = {"collections", "dataclasses", "functools", "itertools", "math", "numpy", "scipy", "typing"}


@pytest.fixture(scope="module")
def registered() -> set[str]:
    load_all()
    return set(ESTIMATORS) | set(SCORERS)


@cache
def _results(paper: str) -> tuple[dict, ...]:
    load_all()
    out = []
    for step in get(paper).steps:
        spec = ESTIMATORS[step.name]
        out.append(spec.fn(spec.params_model.model_validate(dict(step.params)), no_progress).model_dump(mode="json"))
    return tuple(out)


def run_steps(paper: str) -> list[dict]:
    """The check's estimator results as JSON dicts (computed once per paper, a fresh copy each call)."""
    return copy.deepcopy(list(_results(paper)))


def statuses(paper: str, results: list[dict]) -> dict[str, str]:
    return {k: f.status for k, f in get(paper).judge(results).findings.items()}


HEAVY = {"hierarchical-sae"}
"""Quick checks that still take over 10 s (hierarchical-sae trains two SAEs: 15 s); with the checks that are not
quick they run in ``make test-heavy``."""


SLOW_CHECKS = {"snn-threshold", "double-descent", "hyperconnections", "layer-patching", "cminhash", "unrolling"}
"""Quick checks of 0.6 s or more, out of ``make test-quick`` (the faster checks keep the path covered there)."""


def _by_speed(papers: list[str]) -> list:
    def marked(p: str) -> object:
        if not get(p).quick or p in HEAVY:
            return pytest.param(p, marks=[pytest.mark.slow, pytest.mark.heavy])
        return pytest.param(p, marks=pytest.mark.slow) if p in SLOW_CHECKS else p

    return [marked(p) for p in papers]


READY = [e.paper for e in catalog() if e.judge is not None]
FULL_SIZE_ONLY_IN_MAKE_REPRODUCE = {"moead-omm"}
"""Minutes at its full size (n up to 256, 120 replicates): ``make reproduce`` writes its ledger; the mutation tests run
it at a quick size where it still earns its status."""


def test_catalog_has_one_entry_per_paper():
    slugs = [e.paper for e in catalog()]
    assert len(slugs) == 19 and len(set(slugs)) == 19  # the 19 abstracts of the papers' list
    assert get("no-such-paper") is None


def test_status_follows_the_registry(registered):
    entry = get("cminhash")
    assert status_of(entry, registered) == "ready"
    assert status_of(entry, registered - {"minhash.variance"}) == "pending"
    assert status_of(get("film-mcq"), registered) == "not_reproducible"


@pytest.mark.parametrize("paper", [e.paper for e in catalog()])
def test_every_paper_has_a_ledger_with_a_headline_claim(paper):
    ledger = committed(paper)
    assert ledger.paper == paper and ledger.code_version and ledger.date
    ids = [c.id for c in ledger.claims]
    assert len(ids) == len(set(ids)) and any(c.headline for c in ledger.claims)
    for claim in ledger.claims:
        assert claim.text[0].isupper() or claim.text[0] == "n", claim.id  # a sentence (or clause) copied whole
        if claim.status in ("needs_data", "needs_models"):
            assert claim.needs, claim.id
        if claim.status in ("reproduced", "consistent", "implementation_verified", "contradicted"):
            assert claim.evidence.computation, claim.id  # what the status rests on


def test_unavailable_papers_name_what_they_need():
    stake = {c.id: c for c in committed("stakebench").claims}
    assert stake["odds-baseline"].status == "needs_data" and "CC-BY 4.0" in stake["odds-baseline"].needs
    assert stake["directed-accuracy"].status == "needs_models"
    film = committed("film-mcq").claims[0]
    assert "public-domain" in film.needs and "copyright" not in film.needs
    assert "public-domain" in get("film-mcq").unavailable and "copyrighted" not in get("film-mcq").unavailable


def _claim(status: str, headline: bool = True, **extra) -> Claim:
    source = (
        {"expected_source": "paper_text"} if status in ("reproduced", "consistent", "implementation_verified") else {}
    )
    needs = {"needs": "x"} if status.startswith("needs") else {}
    return Claim(id="c", text="T.", headline=headline, status=status, **source, **needs, **extra)


def test_badge_is_the_lowest_headline_status():
    assert STATUS_ORDER[0] == "contradicted" and STATUS_ORDER[-1] == "reproduced"
    assert badge([_claim("reproduced"), _claim("consistent")]) == "consistent"
    assert badge([_claim("reproduced"), _claim("contradicted", headline=False)]) == "reproduced"
    assert badge([_claim("needs_models"), _claim("needs_data")]) in ("needs_data", "needs_models")
    assert badge([_claim("implementation_verified"), _claim("not_checked")]) == "not_checked"
    assert badge([_claim("contradicted"), _claim("not_checked")]) == "contradicted"
    assert badge([_claim("reproduced", headline=False)]) == "not_checked"
    assert counts([_claim("consistent"), _claim("consistent")])["consistent"] == 2


def test_a_reconstructed_check_cannot_be_reproduced_and_needs_name_what():
    with pytest.raises(ValidationError, match="reconstructed"):
        _claim("reproduced", reconstructed=["an ODE"])
    with pytest.raises(ValidationError, match="must name"):
        Claim(id="c", text="T.", headline=True, status="needs_data")
    with pytest.raises(ValidationError, match="source"):
        Claim(id="c", text="T.", headline=True, status="consistent")


def test_findings_replace_the_claims_they_name():
    claims = committed("unrolling").claims
    findings = get("unrolling").judge(run_steps("unrolling")).findings
    out = apply(claims, findings, ["r1"], "/plot")
    by_id = {c.id: c for c in out}
    peak = by_id["truncation-mitigates"]
    assert peak.evidence.run_ids == ["r1"] and peak.evidence.plot_url == "/plot"
    assert by_id["meta-learning"] == next(c for c in claims if c.id == "meta-learning")  # no finding: unchanged


@pytest.mark.slow
def test_every_check_with_a_judge_is_ready(registered):
    """No typo in ``requires``: each written check's estimators are registered."""
    for entry in catalog():
        if entry.judge is not None:
            assert status_of(entry, registered) == "ready", entry.paper
            assert {s.name for s in entry.steps} <= set(entry.requires)


@pytest.mark.parametrize("paper", _by_speed([p for p in READY if p not in FULL_SIZE_ONLY_IN_MAKE_REPRODUCE]))
def test_check_gives_its_ledger_statuses_and_plots(paper):
    """The committed ledger is what the check finds today: same status for every claim it speaks to."""
    entry = get(paper)
    results = run_steps(paper)
    outcome = entry.judge(results)
    ledger = {c.id: c for c in committed(paper).claims}
    assert outcome.findings and set(outcome.findings) <= set(ledger)
    for claim_id, found in outcome.findings.items():
        assert found.status == ledger[claim_id].status, (claim_id, outcome.reason)
    fig = entry.plot(results, outcome)
    assert fig.axes and any(ax.lines or ax.patches or ax.collections for ax in fig.axes)
    fig.savefig(io.BytesIO(), format="svg")


@pytest.mark.parametrize("path", INDEPENDENT, ids=lambda p: p.name)
def test_reference_modules_import_nothing_from_the_code_they_judge(path):
    """Expected values come from here: only the standard library, NumPy and SciPy, never ``service.*``. Inside a
    mutation run (``MUTANT_UNDER_TEST`` set) every mutated module also imports mutmut's trampoline, which is not
    counted."""
    allowed = ALLOWED_IMPORTS | ({"mutmut"} if "MUTANT_UNDER_TEST" in os.environ else set())
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        assert all(n.split(".")[0] in allowed for n in names), (path.name, names)


def test_checked_claims_say_where_the_expected_value_comes_from():
    """A literal names its sentence or table; a computed value names the reference module, library or hand
    calculation that gives it."""
    for entry in catalog():
        for claim in committed(entry.paper).claims:
            if claim.status not in ("reproduced", "consistent", "implementation_verified", "contradicted"):
                continue
            text = claim.evidence.computation
            if claim.expected_source in ("independent_computation", "reference_library"):
                assert "reference." in text or "hand" in text or "planted" in text, (entry.paper, claim.id)
            else:
                assert claim.expected_source in ("paper_text", "published_table") and text, (entry.paper, claim.id)


@pytest.mark.slow  # the check trains 100 small networks (about a minute)
@pytest.mark.heavy
def test_predictive_coding_depth_curve_and_its_verdict():
    f = get("predictive-coding").judge(run_steps("predictive-coding")).figures
    gaps = f["pc_minus_bp"]
    # PC beats BP at every depth; the gap rises from depth 2 to 4 and falls again by depth 12 (width 8)
    assert all(g > 0 for g in gaps) and gaps[1] > gaps[0] and gaps[4] < gaps[1]
    assert f["peak_depth"] in (4, 6)
    grows = copy.deepcopy(run_steps("predictive-coding"))
    for i, r in enumerate(grows[:5]):
        r["pc_minus_bp"] = 0.05 + 0.02 * i  # a gap that keeps growing with depth
        r["pc_minus_bp_se"] = 0.002
    assert statuses("predictive-coding", grows)["pc-more-efficient"] == "consistent"


def test_unrolling_agrees_with_the_forward_recursion():
    f = get("unrolling").judge(run_steps("unrolling")).figures
    assert f["t_peak"] == f["reference_t_peak"] == [99, 152, 259]
    assert f["peak_rel_error"] == pytest.approx(f["reference_peak_rel_error"], rel=1e-9)


def test_fdslm_lags_are_the_hand_lags():
    f = get("fdslm").judge(run_steps("fdslm")).figures
    assert f["median_lag_frames"] == f["hand_lag_frames"] == [7, 5, 3]  # ln(1/2 + a)/ln 0.9 = 6.58, 4.09, 2.12
    assert f["perception_vector_cos_axis"] > llm.PLANTED_COS


def test_persona_steering_reverses_on_the_trained_network():
    f = get("persona-steering").judge(run_steps("persona-steering")).figures
    assert f["pressure"] == pytest.approx(f["pressure_direct"], abs=1e-9)
    assert f["pressure"][0] > 0 > f["pressure"][2]
    assert f["mean_trait_probability"][0] < f["target_trait_rate"] < f["mean_trait_probability"][2]


@pytest.mark.slow
def test_hyperconnections_crossings_and_a_shifted_one():
    results = run_steps("hyperconnections")
    assert set(statuses("hyperconnections", results).values()) == {"implementation_verified"}
    shifted = copy.deepcopy(results)
    shifted[dyn.HC_SWEEPS["hopf"]]["crossings"][0]["value"] += 1e-6
    assert statuses("hyperconnections", shifted)["two-stream-boundaries"] == "contradicted"


def test_committed_ledger_files_are_valid_json_per_paper():
    for entry in catalog():
        data = json.loads((PACKAGE / "ledger" / f"{entry.paper}.json").read_text())
        assert data["paper"] == entry.paper


def test_reference_pc_equilibrium_by_hand():
    """Network 1 → 1 → 1 with W1 = 2, W2 = 3, x = 1, y = 10: F = ½(x1 − 2)² + ½(10 − 3x1)² is least at x1 = 3.2
    (10 x1 = 32), the closed form's ε2 = e/S = 4/10 and ε1 = 3·0.4 = 1.2; one layer per unit makes every update
    parallel to the error (TA = 1)."""
    weights = [np.array([[2.0]]), np.array([[3.0]])]
    xs = ref_pc.equilibrium(weights, np.array([1.0]), np.array([10.0]))
    assert xs[1] == pytest.approx([3.2], abs=1e-12)
    out = ref_pc.alignments(weights, np.array([1.0]), np.array([10.0]), 1e-3)
    assert out["equilibrium_gap"] < 1e-12 and out["ta_pc"] == pytest.approx(1.0) and out["ta_bp"] == pytest.approx(1.0)


def test_reference_sae_counts_the_released_config_by_hand():
    """d = 2304, N = 16384, m = 16, s = 4, k = 32: 16384·2304 + 32·(4·2304 + 16·4) = 38,045,696 against
    16384·17·2304 = 641,728,512 for a flat encoder over the same latents."""
    assert ref_sae.hierarchical_encoder_macs(2304, 16384, 16, 4, 32) == 38_045_696
    assert ref_sae.flat_encoder_macs(2304, 16384, 16) == 641_728_512


@pytest.mark.parametrize("nonlinear", [False, True])
def test_training_models_bp_update_is_minus_the_gradient(nonlinear):
    """The BP update of the trajectory check against central differences of ½‖y − f(x)‖² (h = 1e-6)."""
    rng = np.random.default_rng(3)
    weights = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in [(4, 3), (3, 3), (3, 2)]]
    x, y = rng.standard_normal(4), rng.standard_normal(2)

    def loss(ws: list[np.ndarray]) -> float:
        return float(0.5 * ((y - training.forward(ws, x, nonlinear)[-1]) ** 2).sum())

    update = training._bp_update(weights, x, y, nonlinear)
    for layer, w in enumerate(weights):
        for idx in np.ndindex(w.shape):
            shifted = [[v.copy() for v in weights] for _ in range(2)]
            shifted[0][layer][idx] += 1e-6
            shifted[1][layer][idx] -= 1e-6
            fd = (loss(shifted[0]) - loss(shifted[1])) / 2e-6
            assert update[layer][idx] == pytest.approx(-fd, abs=1e-7)


def test_training_models_linear_pc_equilibrium_is_the_least_squares_one():
    """The trajectory check's closed-form PC equilibrium of a linear network equals the reference's least-squares
    minimiser of F (two derivations apart)."""
    rng = np.random.default_rng(4)
    weights = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in [(6, 4), (4, 4), (4, 3)]]
    x, y = rng.standard_normal(6), rng.standard_normal(3)
    ours = training._linear_equilibrium(weights, x, y)
    ref = ref_pc.equilibrium(weights, x, y)
    for a, b in zip(ours, ref, strict=True):
        assert a == pytest.approx(b, abs=1e-10)
