"""The continuation of hyperconnections.token_dynamics (service/estimators/hyperconnections_sweep.py): the swept
families of systems, the leading eigenvalue's tie rule, and crossings in α, β and the scale of V located against
hand-solved one-stream spectra.

One stream, N = 2 bidirectional tokens, d = 1, V = −I: the attention eigenvalues are p = 1 (consensus) and p = 0,
so the Jacobian's eigenvalues are λ₀ = a_r − 1 (p = 0) and λ₁ = a_r − 1 + αβμ (p = 1, μ = −1 the eigenvalue of V).
"""

import numpy as np
import pytest

from service.errors import InvalidInput
from service.estimators.hyperconnections_ode import System, attention_spectrum
from service.estimators.hyperconnections_sweep import continuation, family, leading_eigenvalue

LOC = ("sweep", "target")


def two_streams() -> System:
    return System(
        a_r=np.array([[1.0, 2.0], [3.0, 4.0]]),
        alpha=np.array([0.5, 0.7]),
        beta=np.array([0.2, 0.3]),
        w=np.eye(2),
        v=np.array([[1.0, 2.0], [3.0, 4.0]]),
        n_tokens=3,
        causal=False,
    )


def one_stream(alpha: float = 1.0, beta: float = 1.0, v: float = -1.0, a_r: float = 0.5) -> System:
    return System(np.array([[a_r]]), np.array([alpha]), np.array([beta]), np.eye(1), np.array([[v]]), 2, False)


def unchanged(system: System) -> bool:
    ref = two_streams()
    return all(np.array_equal(getattr(system, f), getattr(ref, f)) for f in ("a_r", "alpha", "beta", "w", "v"))


@pytest.mark.parametrize(
    ("target", "field", "expected"),
    [
        ("a_r[0][1]", "a_r", [[1.0, 9.0], [3.0, 4.0]]),
        ("a_r[1][0]", "a_r", [[1.0, 2.0], [9.0, 4.0]]),
        ("alpha[1]", "alpha", [0.5, 9.0]),
        ("beta[0]", "beta", [9.0, 0.3]),
        ("scale_v", "v", [[9.0, 18.0], [27.0, 36.0]]),
    ],
)
def test_family_sets_only_the_named_entry_and_leaves_the_system_as_it_was(
    target: str, field: str, expected: list
) -> None:
    system = two_streams()
    moved = family(system, target, LOC)(9.0)
    assert getattr(moved, field).tolist() == expected
    others = {"a_r", "alpha", "beta", "w", "v"} - {field}
    assert all(np.array_equal(getattr(moved, f), getattr(system, f)) for f in others)
    assert (moved.n_tokens, moved.causal) == (3, False)
    assert unchanged(system)  # the swept copy is a copy


@pytest.mark.parametrize("target", ["alpha[2]", "beta[3]", "a_r[2][0]", "a_r[0][2]"])
def test_family_refuses_an_index_past_the_streams(target: str) -> None:
    with pytest.raises(InvalidInput) as err:
        family(two_streams(), target, LOC)
    assert err.value.loc == LOC


def test_leading_eigenvalue_prefers_the_complex_pair_within_1e_12_of_the_largest_real_part() -> None:
    """a_r = 1, αβ = 1, V with μ = −5e−13 ± i: λ₀ = 0 and λ₁ = −5e−13 ± i. The real 0 leads by 5e−13 < 1e−12, so the
    leading eigenvalue is one of the complex pair; with μ = −5e−12 ± i the real 0 leads alone."""
    for shift, expected_imag in ((5e-13, 1.0), (5e-12, 0.0)):
        v = np.array([[-shift, 1.0], [-1.0, -shift]])
        system = System(np.array([[1.0]]), np.ones(1), np.ones(1), np.eye(2), v, 2, False)
        mu = np.linalg.eigvals(v)
        p, _ = attention_spectrum(2, False)
        lead = leading_eigenvalue(system, np.repeat(p, mu.size), np.tile(mu, p.size))
        assert abs(lead.imag) == pytest.approx(expected_imag, abs=1e-12)
        assert lead.real == pytest.approx(-shift if expected_imag else 0.0, abs=1e-15)


def test_leading_eigenvalue_is_the_largest_real_part() -> None:
    """λ₀ = −0.5 and λ₁ = −0.5 − αβ = −2.5 (α = 2): the leading eigenvalue is −0.5, not the most negative."""
    lead = leading_eigenvalue(one_stream(alpha=2.0), np.array([1.0, 0.0]), np.array([-1.0, -1.0]))
    assert lead == -0.5


def test_crossing_in_alpha_from_unstable_to_stable() -> None:
    """a_r = 0.5, β = 1: λ₁ = −0.5 − α crosses 0 at α = −0.5; the abscissa is max(−0.5, −0.5 − α)."""
    grid = np.linspace(-1.0, 0.2, 4)  # −1, −0.6, −0.2, 0.2
    abscissa, found = continuation(one_stream(), "alpha[0]", grid, LOC, lambda f: None)
    assert abscissa == pytest.approx([0.5, 0.1, -0.3, -0.5], abs=1e-14)
    assert len(found) == 1
    assert found[0].type == "static" and found[0].omega is None
    assert found[0].value == pytest.approx(-0.5, abs=1e-10)


def test_crossing_in_beta() -> None:
    """a_r = 0.5, α = 2: λ₁ = −0.5 − 2β crosses 0 at β = −0.25."""
    grid = np.array([-1.0, 0.0, 1.0])
    abscissa, found = continuation(one_stream(alpha=2.0), "beta[0]", grid, LOC, lambda f: None)
    assert abscissa == pytest.approx([1.5, -0.5, -0.5], abs=1e-14)
    assert [(c.type, c.omega) for c in found] == [("static", None)]
    assert found[0].value == pytest.approx(-0.25, abs=1e-10)


def test_crossing_in_the_scale_of_v_scales_its_eigenvalues() -> None:
    """V = s·(−1): μ = −s, so λ₁ = −0.5 − s crosses 0 at s = −0.5 (a_r = 0.5, α = β = 1)."""
    grid = np.array([-2.0, -1.0, 0.0, 1.0])
    abscissa, found = continuation(one_stream(), "scale_v", grid, LOC, lambda f: None)
    assert abscissa == pytest.approx([1.5, 0.5, -0.5, -0.5], abs=1e-14)
    assert len(found) == 1 and found[0].type == "static"
    assert found[0].value == pytest.approx(-0.5, abs=1e-10)


def test_two_crossings_each_located_and_progress_in_two_halves() -> None:
    """V = diag(−1, 1), a_r = 0.5, β = 1: the p = 1 modes are −0.5 ∓ α, so the abscissa max(−0.5, −0.5 + |α|) is
    unstable for |α| > 0.5: a crossing at −0.5 (into stability) and one at +0.5 (out of it). Progress: the grid's
    half, 0.5·(i + 1)/4 after each of the 4 points, then 0.5 + 0.5·(j + 1)/2 after each of the 2 crossings."""
    system = System(np.array([[0.5]]), np.ones(1), np.ones(1), np.eye(2), np.diag([-1.0, 1.0]), 2, False)
    seen: list[float] = []
    abscissa, found = continuation(system, "alpha[0]", np.linspace(-1.0, 1.0, 4), LOC, seen.append)
    assert abscissa == pytest.approx([0.5, -1 / 6, -1 / 6, 0.5], abs=1e-14)
    assert [c.value for c in found] == pytest.approx([-0.5, 0.5], abs=1e-10)
    assert [(c.type, c.omega) for c in found] == [("static", None)] * 2
    assert seen == pytest.approx([0.125, 0.25, 0.375, 0.5, 0.75, 1.0], abs=1e-15)


def test_hopf_crossing_reports_the_frequency_of_the_pair_past_it() -> None:
    """One stream, V = [[0, 1], [−1, 0]] (μ = ±i), αβ = 1: λ₀ = a_r − 1 and λ₁ = a_r − 1 ± 2i·… with β = 2: λ₁ =
    a_r − 1 ± 2i. Every mode crosses at a_r = 1; the leading one past it is the complex pair, so the crossing is a
    Hopf with ω = 2 (the real λ₀ ties in real part and loses the tie to |Im| = 2)."""
    system = System(
        np.array([[0.5]]), np.ones(1), np.array([2.0]), np.eye(2), np.array([[0.0, 1.0], [-1.0, 0.0]]), 2, False
    )
    _, found = continuation(system, "a_r[0][0]", np.array([0.3, 1.7]), LOC, lambda f: None)
    assert len(found) == 1 and found[0].type == "hopf"
    assert found[0].value == pytest.approx(1.0, abs=1e-10) and found[0].omega == pytest.approx(2.0, abs=1e-12)


def test_leading_eigenvalue_of_a_large_real_part() -> None:
    """α = 100, β = 200, V = 1, a_r = 1: λ₁ = 2e4, λ₀ = 0. Above 2¹⁴ the spacing of doubles exceeds 2e−12, so
    2e4 − 1e−12 rounds back to 2e4: the tie window must still hold the maximum itself."""
    lead = leading_eigenvalue(one_stream(alpha=100.0, beta=200.0, v=1.0, a_r=1.0), np.array([1.0, 0.0]), np.ones(2))
    assert lead == 2e4


def test_leading_eigenvalue_tie_does_not_depend_on_the_order_of_the_blocks() -> None:
    """The real λ₀ = 0 listed before the pair −5e−13 ± i: still the complex one leads."""
    v = np.array([[-5e-13, 1.0], [-1.0, -5e-13]])
    mu = np.linalg.eigvals(v)
    system = System(np.array([[1.0]]), np.ones(1), np.ones(1), np.eye(2), v, 2, False)
    lead = leading_eigenvalue(system, np.array([0.0, 0.0, 1.0, 1.0]), np.tile(mu, 2))
    assert abs(lead.imag) == pytest.approx(1.0, abs=1e-12)


def test_an_abscissa_of_exactly_1e_12_is_not_unstable() -> None:
    """a_r = 1, β = 1, V = 1: λ₁ = α exactly, λ₀ = 0; the zero state counts as unstable once the abscissa exceeds
    1e−12, so the grid [−1, 1e−12] (abscissa 0 and 1e−12) has no crossing, and [−1, 2e−12] has one."""
    system = one_stream(v=1.0, a_r=1.0)
    abscissa, found = continuation(system, "alpha[0]", np.array([-1.0, 1e-12]), LOC, lambda f: None)
    assert abscissa.tolist() == [0.0, 1e-12] and found == []
    _, found = continuation(system, "alpha[0]", np.array([-1.0, 2e-12]), LOC, lambda f: None)
    assert len(found) == 1


def test_crossings_into_and_out_of_stability_between_neighbouring_points() -> None:
    """V = diag(−1, 1), a_r = 0.5, β = 1 on the grid −1, 0, 1: unstable, stable, unstable; each crossing is bracketed
    by its own two neighbours (at −0.5 and +0.5)."""
    system = System(np.array([[0.5]]), np.ones(1), np.ones(1), np.eye(2), np.diag([-1.0, 1.0]), 2, False)
    _, found = continuation(system, "alpha[0]", np.array([-1.0, 0.0, 1.0]), LOC, lambda f: None)
    assert [c.value for c in found] == pytest.approx([-0.5, 0.5], abs=1e-10)


def test_a_crossing_in_a_bracket_symmetric_about_zero_is_bisected() -> None:
    """a_r = 0.5, β = 1, V = −1: the crossing at α = −0.5 lies in the one bracket [−1, 1]."""
    _, found = continuation(one_stream(), "alpha[0]", np.array([-1.0, 1.0]), LOC, lambda f: None)
    assert len(found) == 1 and found[0].value == pytest.approx(-0.5, abs=1e-10)


def test_hopf_needs_an_imaginary_part_above_1e_6() -> None:
    """V = [[0, w], [−w, 0]] (μ = ±iw exactly), αβ = 1, a_r swept through 1: past the crossing the pair leads with
    |Im λ| = w (ties in real part with λ₀); w = 1e−6 is not above the Hopf threshold (static), w = 2e−6 is."""
    for w, kind, omega in ((1e-6, "static", None), (2e-6, "hopf", 2e-6)):
        system = System(np.array([[0.5]]), np.ones(1), np.ones(1), np.eye(2), np.array([[0.0, w], [-w, 0.0]]), 2, False)
        _, found = continuation(system, "a_r[0][0]", np.array([0.3, 1.7]), LOC, lambda f: None)
        assert [(c.type, c.omega) for c in found] == [(kind, omega)]
        assert found[0].value == pytest.approx(1.0, abs=1e-10)
