"""unrolling.jacobian_error: exact form = recursion, the curse-of-unrolling tables, bound, implicit baseline."""

import math

import numpy as np
import pydantic
import pytest

from service.errors import Cancelled, InvalidInput
from service.estimators.unrolling import (
    HARD_CAP,
    SPEC,
    SYNC_BUDGET,
    JacobianErrorParams,
    cost,
    jacobian_error,
)
from service.estimators.unrolling_error import Problem, closed_form_errors, eigen, recursion_errors, truth
from service.registry import no_progress


def spec_ridge(theta: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The reference set-up (docs/unrolling.md, "Validation against the measured figures"): n = 200, p = 50, XᵀX
    with 45 eigenvalues evenly in [0.9, 1] and 5 geomspaced in [0.01, 0.5] (X = U diag(√s) Vᵀ, U and V from QR of
    Gaussian matrices), y = Xw + 0.01ξ, seed 0, drawn in this order; returns H = XᵀX + θI and b = Xᵀy."""
    rng = np.random.default_rng(0)
    s = np.concatenate([np.linspace(0.9, 1.0, 45), np.geomspace(0.01, 0.5, 5)])
    u, _ = np.linalg.qr(rng.standard_normal((200, 50)))
    v, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    x = u @ np.diag(np.sqrt(s)) @ v.T
    y = x @ rng.standard_normal(50) + 0.01 * rng.standard_normal(200)
    return x.T @ x + theta * np.eye(50), x.T @ y


@pytest.fixture(scope="module")
def quad() -> dict[str, list]:
    """The reference's ridge problem at θ = 0 as a quadratic (∂H = I, ∂b = 0): θ = 0 is outside the ridge kind."""
    h, b = spec_ridge()
    return {"kind": "quadratic", "h": h.tolist(), "dh": np.eye(50).tolist(), "b": b.tolist(), "db": [0.0] * 50}


def call(problem: dict, **kw: object):
    return jacobian_error(JacobianErrorParams(problem=problem, **kw), no_progress)


def at(curve, t: int) -> float:
    return curve.rel_error[curve.t.index(t)]


def test_exact_form_equals_recursion() -> None:
    h, b = spec_ridge()
    rng = np.random.default_rng(4)
    # ∂H commuting with H but not a multiple of I: ∂H = H² − 0.3H (δ_i = λ_i² − 0.3λ_i), and ∂b ≠ 0.
    problem = Problem(h=h, dh=h @ h - 0.3 * h, b=b, db=rng.standard_normal(50))
    eig = eigen(problem)
    assert eig.delta is not None
    tr = truth(problem, eig)
    x0 = 3.0 * rng.standard_normal(50)
    for step in (1.0, math.sqrt(2.0) / eig.lam[-1], 2.0 / (eig.lam[0] + eig.lam[-1])):
        rec = recursion_errors(problem, tr, step, x0, [0, 7, 40], 400, lambda f: None)
        for i, k0 in enumerate([0, 7, 40]):
            exact = closed_form_errors(eig, eig.delta, tr, step, x0, k0, 400, lambda f: None)
            # spec: max |Δ| 2.5e-14 in relative units
            assert np.abs(exact - rec[:, i]).max() / np.linalg.norm(tr.j_star) < 1e-12


def test_exact_zero_of_the_error_is_resolved() -> None:
    # p = 1, H = 1, h = 0.5 (r = 0.5), b = 1 (x* = 1, J* = −1): e(m) = r^(m−1)(r·x* − m·h·(x0 − x*)) vanishes at
    # m = 4 for x0 = 1.25, where the power-sum form cancels completely.
    res = call(
        {"kind": "quadratic", "h": [[1.0]], "dh": [[1.0]], "b": [1.0], "db": [0.0]}, step=0.5, iterations=6, x0=[1.25]
    )
    assert at(res.curves[0], 4) < 1e-15
    assert at(res.curves[0], 5) == pytest.approx(0.5**4 * abs(0.5 - 5 * 0.5 * 0.25), rel=1e-12)


def test_non_commuting_dh_takes_the_recursion_and_matches_a_dense_unroll() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 6))
    h = a @ a.T + 0.5 * np.eye(6)
    dh = rng.standard_normal((6, 6))
    b, db = rng.standard_normal(6), rng.standard_normal(6)
    res = call(
        {"kind": "quadratic", "h": h.tolist(), "dh": dh.tolist(), "b": b.tolist(), "db": db.tolist()},
        step_rule="1/L",
        iterations=30,
        k0_list=[0, 3],
    )
    assert res.method == "recursion"
    step = 1.0 / np.linalg.eigvalsh(h)[-1]
    x_star = np.linalg.solve(h, b)
    j_star = np.linalg.solve(h, db - dh @ x_star)
    x, jac, k0 = np.zeros(6), np.zeros(6), 3
    for t in range(30):  # J_t = 0 for t ≤ 3
        if t >= k0:
            jac = jac - step * (h @ jac) - step * (dh @ x - db)
        x = x - step * (h @ x - b)
    assert res.curves[1].rel_error_at_K == pytest.approx(
        np.linalg.norm(jac - j_star) / np.linalg.norm(j_star), rel=1e-10
    )
    assert res.curves[1].rel_error[: res.curves[1].t.index(3) + 1] == [1.0] * (res.curves[1].t.index(3) + 1)


def test_spec_table_zero_start(quad: dict) -> None:
    small = call(quad, step_rule="1/L", iterations=1000)
    assert abs(small.L - 1.0) <= 1e-12 and small.mu == pytest.approx(0.01, rel=1e-10)
    assert small.kappa == pytest.approx(100.0, rel=1e-10) and not small.curse_expected
    c = small.curves[0]
    assert c.t_peak == 1 and c.peak_rel_error == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(c.rel_error) <= 1e-15)  # h ≤ 1/L, x0 = 0: monotone
    assert c.rel_error_at_K == pytest.approx(4.7e-4, rel=0.01)
    big = call(quad, step_rule="2/(mu+L)", iterations=1000, k0_list=[0, 5, 20, 50])
    assert big.step == pytest.approx(2 / 1.01, rel=1e-10) and big.curse_expected  # hL = 1.98 > √2
    peaks = [(c.peak_rel_error, c.t_peak) for c in big.curves]
    assert peaks[0][0] == pytest.approx(1.040, abs=5e-4) and peaks[0][1] == 12
    # errata: the peak after k0 excludes t = k0 (where J = 0 gives exactly 1)
    assert [p for p, _ in peaks[1:]] == pytest.approx([1.004, 0.990, 0.984], abs=5e-4)
    assert [c.rel_error_at_K for c in big.curves] == pytest.approx([4.6e-8, 4.6e-8, 4.6e-8, 4.7e-8], rel=0.015)


@pytest.mark.parametrize(
    ("c", "rule", "peaks", "t_peak"),
    [
        (10.0, "2/(mu+L)", [2.63, 0.95, 0.97], 13),
        (100.0, "2/(mu+L)", [28.4, 7.6, 0.93], 21),
        (100.0, "1/L", [17.7, 10.5, 3.6], 99),
    ],
)
def test_spec_table_poor_start(quad: dict, c: float, rule: str, peaks: list, t_peak: int) -> None:
    x0 = (c * np.random.default_rng(5).standard_normal(50)).tolist()
    res = call(quad, step_rule=rule, iterations=1000, k0_list=[0, 50, 150], x0=x0)
    # the table's 2-3 significant digits: half a unit of the last digit
    assert [cv.peak_rel_error for cv in res.curves] == pytest.approx(peaks, rel=0.006)
    assert res.curves[0].t_peak == t_peak
    for cv in res.curves:
        assert all(e <= b * (1 + 1e-12) for e, b in zip(cv.rel_error, cv.bound, strict=True))
        assert cv.stored_iterates == 1000 - cv.k0 and cv.stored_bytes == (1000 - cv.k0) * 50 * 8
    if rule == "1/L":  # t* = 1/ln(1/ρ) with ρ = 1 − μ/L = 0.99
        assert res.curves[0].predicted_t_peak == pytest.approx(1 / math.log(1 / 0.99), rel=1e-9)
        assert abs(res.curves[0].predicted_t_peak - t_peak) < 1


def test_bound_holds_on_random_problems() -> None:
    rng = np.random.default_rng(11)
    for trial in range(6):
        p = 8
        a = rng.standard_normal((p, p))
        h = a @ a.T / p + 0.05 * np.eye(p)
        dh = rng.standard_normal((p, p)) if trial % 2 else np.eye(p)
        problem = {"kind": "quadratic", "h": h.tolist(), "dh": dh.tolist(), "b": rng.standard_normal(p).tolist()}
        problem["db"] = rng.standard_normal(p).tolist()
        res = call(
            problem, step_rule="sqrt2/L", iterations=300, k0_list=[0, 10], x0=(5 * rng.standard_normal(p)).tolist()
        )
        for cv in res.curves:
            assert all(e <= b * (1 + 1e-12) for e, b in zip(cv.rel_error, cv.bound, strict=True))


def test_component_grows_iff_h_lambda_above_sqrt2() -> None:
    # p = 1, H = λ, x0 = 0, J0 = 0: e(2)/e(1) = |1 − (hλ)²| exactly.
    for step in (1.0, 1.3, 1.5, 1.9):
        res = call({"kind": "quadratic", "h": [[1.0]], "dh": [[1.0]], "b": [2.0], "db": [0.0]}, step=step, iterations=5)
        cv = res.curves[0]
        assert at(cv, 1) == pytest.approx(1.0, rel=1e-14)
        assert at(cv, 2) == pytest.approx(abs(1 - step**2), rel=1e-12)
        assert res.curse_expected == (step > math.sqrt(2.0))


def test_implicit_baseline(quad: dict) -> None:
    h, b = spec_ridge(theta=0.01)
    x_star = np.linalg.solve(h, b)
    j_star = -np.linalg.solve(h, x_star)
    errs = []
    for k in (50, 100, 300):
        res = call(quad | {"h": h.tolist()}, step_rule="2/(mu+L)", iterations=k)
        assert res.kappa == pytest.approx(50.5, rel=1e-9)
        x = np.zeros(50)
        for _ in range(k):
            x = x - res.step * (h @ x - b)
        direct = np.linalg.norm(np.linalg.solve(h, x - x_star)) / np.linalg.norm(j_star)
        assert res.implicit_error == pytest.approx(direct, rel=1e-8)
        assert res.implicit_error <= np.linalg.norm(x - x_star) / res.mu / np.linalg.norm(j_star)
        errs.append(res.implicit_error)
        assert res.implicit_error < res.curves[0].rel_error_at_K  # implicit beats unrolling at the same x_K
    # Ours: 0.121 / 0.0167 / 6.1e-6; the reference's second set-up (docs/unrolling.md, construction not given)
    # reports 6.3e-2 / 5.8e-3 /
    # 7.6e-7. Monotone in K (no bump), decaying at about ρ^K, ρ = (κ − 1)/(κ + 1).
    assert errs == pytest.approx([0.121, 0.0167, 6.07e-6], rel=0.01)
    assert errs[2] / errs[1] == pytest.approx((49.5 / 51.5) ** 200, rel=0.05)


def test_ridge_kind_equals_the_quadratic_it_defines() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((30, 5)), rng.standard_normal(30)
    ridge = call({"kind": "ridge", "x": x.tolist(), "y": y.tolist(), "theta": 0.5}, step_rule="1/L", iterations=50)
    h = x.T @ x + 0.5 * np.eye(5)
    q = {"kind": "quadratic", "h": h.tolist(), "dh": np.eye(5).tolist(), "b": (x.T @ y).tolist(), "db": [0.0] * 5}
    quad = call(q, step_rule="1/L", iterations=50)
    assert ridge.curves[0].rel_error == pytest.approx(quad.curves[0].rel_error, rel=1e-9)
    j_star = -np.linalg.solve(h, np.linalg.solve(h, x.T @ y))  # J* = −H⁻¹x* for ∂H = I
    assert ridge.j_star_norm == pytest.approx(np.linalg.norm(j_star), rel=1e-12)


@pytest.mark.slow
def test_samples_and_plot(quad: dict) -> None:
    res = call(quad, step_rule="2/(mu+L)", iterations=20_000, k0_list=[0, 300])
    for cv in res.curves:
        assert len(cv.t) <= 1000 and cv.t[-1] == 20_000 and cv.t_peak in cv.t and cv.k0 + 1 in cv.t
        assert at(cv, cv.t_peak) == cv.peak_rel_error and cv.rel_error[-1] == cv.rel_error_at_K
    fig = SPEC.plot(res)
    lines = fig.axes[0].lines
    assert lines[0].get_ydata().tolist() == res.curves[0].rel_error
    assert lines[1].get_ydata().tolist() == res.curves[0].bound
    assert lines[2].get_xdata().tolist() == res.curves[1].t


@pytest.mark.parametrize(
    ("kw", "loc"),
    [
        ({"step": 2.0}, ("step",)),
        ({"step": 0.5, "step_rule": "1/L"}, ("step",)),
        ({}, ("step",)),
        ({"step_rule": "1/L", "problem": {"h": [[2.0, 1.0], [0.0, 2.0]]}}, ("problem", "h")),
        ({"step_rule": "1/L", "problem": {"h": [[1.0, 2.0], [2.0, 1.0]]}}, ("problem",)),
        ({"step_rule": "1/L", "problem": {"h": [[1.0, 0.0], [0.0, 1e-13]]}}, ("problem",)),
        ({"step_rule": "1/L", "problem": {"b": [1.0]}}, ("problem", "b")),
        ({"step_rule": "1/L", "problem": {"dh": [[1.0, 0.0], [0.0]]}}, ("problem", "dh")),
        ({"step_rule": "1/L", "x0": [0.0, 0.0, 0.0]}, ("x0",)),
        ({"step_rule": "1/L", "k0_list": [10]}, ("k0_list",)),
        ({"step_rule": "1/L", "k0_list": [1, 1]}, ("k0_list",)),
    ],
)
def test_inconsistent_inputs_name_the_field(kw: dict, loc: tuple) -> None:
    problem = {"kind": "quadratic", "h": [[2.0, 0.0], [0.0, 1.0]], "dh": np.eye(2).tolist(), "b": [1.0, 1.0]}
    kw = dict(kw)  # popping from the parametrized dict itself would drop the case from a second run in one process
    problem = problem | {"db": [0.0, 0.0]} | kw.pop("problem", {})
    with pytest.raises(InvalidInput) as err:
        call(problem, iterations=10, **kw)
    assert err.value.loc == loc


@pytest.mark.parametrize(
    "kw",
    [
        {"iterations": 20_001},
        {"iterations": 10, "k0_list": list(range(17))},
        {"iterations": 10, "step": math.nan},
        {"iterations": 10, "step": -1.0},
        {"iterations": 10, "x0": [math.inf, 0.0]},
        {"iterations": 10, "step_rule": "1/mu"},
    ],
)
def test_schema_rejects(kw: dict) -> None:
    problem = {"kind": "quadratic", "h": [[2.0, 0.0], [0.0, 1.0]], "dh": np.eye(2).tolist(), "b": [1.0, 1.0]}
    with pytest.raises(pydantic.ValidationError):
        JacobianErrorParams(problem=problem | {"db": [0.0, 0.0]}, **kw)


def test_cost(quad: dict) -> None:
    spec_call = JacobianErrorParams(problem=quad, step_rule="1/L", iterations=1000, k0_list=[0, 50, 150])
    assert cost(spec_call) == pytest.approx(2 * 50**3 + 12 * 1000 * 50 * 3, rel=1e-12) and cost(spec_call) < SYNC_BUDGET
    general = quad | {"dh": (np.eye(50) + np.eye(50, k=1)).tolist()}
    rec = JacobianErrorParams(problem=general, step_rule="1/L", iterations=1000)
    assert cost(rec) == pytest.approx(4 * 50**3 + 1000 * (50 * 50 * 3 + 20_000), rel=1e-12)
    p = 500
    worst = JacobianErrorParams(
        problem={"kind": "quadratic", "h": [[0.0] * p] * p, "dh": [[1.0] * p] * p, "b": [0.0] * p, "db": [0.0] * p},
        step_rule="1/L",
        iterations=20_000,
        k0_list=list(range(16)),
    )
    assert SYNC_BUDGET < cost(worst) <= HARD_CAP  # every schema-valid call is feasible, the largest as a job


def test_step_too_small_to_contract_is_rejected() -> None:
    with pytest.raises(InvalidInput) as err:
        call({"kind": "quadratic", "h": [[1.0]], "dh": [[1.0]], "b": [1.0], "db": [0.0]}, step=1e-300, iterations=5)
    assert err.value.loc == ("step",)


@pytest.mark.parametrize("dh", [np.eye(3), np.diag([1.0, 2.0, 3.0]) + np.eye(3, k=1)])
def test_long_work_reports_progress_and_stops_on_cancel(dh: np.ndarray) -> None:
    seen: list[float] = []

    def cancel(fraction: float, message: str = "") -> None:
        seen.append(fraction)
        if fraction >= 0.5:
            raise Cancelled

    problem = {"kind": "quadratic", "h": np.diag([1.0, 0.5, 0.1]).tolist(), "dh": dh.tolist(), "b": [1.0] * 3}
    params = JacobianErrorParams(
        problem=problem | {"db": [0.0] * 3}, step_rule="1/L", iterations=20_000, k0_list=[0, 1]
    )
    with pytest.raises(Cancelled):
        jacobian_error(params, cancel)
    assert 0.5 <= seen[-1] < 1.0 and seen == sorted(seen)
