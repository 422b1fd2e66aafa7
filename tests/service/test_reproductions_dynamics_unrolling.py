"""The curse-of-unrolling check (service/reproductions/dynamics_checks.py): its problem replayed from the documented
recipe, the reference's peaks against the estimator's closed form, the judge on hand-made curves against a patched
reference (each finding both ways, the tolerances at their exact boundaries) and the drawn curves (written for the
mutation run of the module, docs/testing.md)."""

import math
from typing import Any

import numpy as np
import pytest

from service.registry import ESTIMATORS, load_all, no_progress
from service.reproductions import dynamics_checks as dyn
from tests.service.colors import rgba

COMPUTATION = (
    "reference.unrolling: the forward derivative recursion J_{t+1} = J_t - h(H J_t + dH x_t - db) from J = 0 at "
    "t = k0, and rho from the eigenvalues of H"
)


def test_unrolling_steps_replayed() -> None:
    (step,) = dyn.unrolling_steps()
    assert step.name == "unrolling.jacobian_error"
    p = step.params
    assert set(p) == {"problem", "step_rule", "iterations", "k0_list", "x0"}
    assert (p["step_rule"], p["iterations"], p["k0_list"]) == ("1/L", 1000, [0, 50, 150])
    problem = p["problem"]
    assert set(problem) == {"kind", "h", "dh", "b", "db"} and problem["kind"] == "quadratic"
    h = np.array(problem["h"])
    assert h.shape == (50, 50) and np.array_equal(h, h.T)
    spectrum = np.concatenate([np.linspace(0.9, 1.0, 45), np.geomspace(0.01, 0.5, 5)])
    assert np.allclose(np.sort(np.linalg.eigvalsh(h)), np.sort(spectrum), atol=1e-12)
    assert problem["dh"] == np.eye(50).tolist() and problem["db"] == [0.0] * 50
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.standard_normal((200, 50)))
    v, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    x = u @ np.diag(np.sqrt(spectrum)) @ v.T
    y = x @ rng.standard_normal(50) + 0.01 * rng.standard_normal(200)
    assert np.allclose(h, x.T @ x, atol=1e-13) and np.allclose(problem["b"], x.T @ y, atol=1e-12)
    assert p["x0"] == (100.0 * np.random.default_rng(5).standard_normal(50)).tolist()


def test_reference_against_the_estimators_closed_form() -> None:
    """The forward recursion's peaks against the estimator's closed form (eigen-decomposition) on the same problem;
    ρ = 1 − 0.01/1 by hand."""
    load_all()
    (step,) = dyn.unrolling_steps()
    spec = ESTIMATORS[step.name]
    res = spec.fn(spec.params_model.model_validate(dict(step.params)), no_progress).model_dump(mode="json")
    ref = dyn.unrolling_reference()
    assert ref["rho"] == pytest.approx(0.99, abs=1e-12)
    assert ref["t_peak"] == [c["t_peak"] for c in res["curves"]] == [99, 152, 259]
    assert all(type(t) is int for t in ref["t_peak"]) and all(type(e) is float for e in ref["peak_rel_error"])
    assert ref["peak_rel_error"] == pytest.approx([c["peak_rel_error"] for c in res["curves"]], rel=1e-9)
    out = dyn.unrolling_judge([res])
    assert {k: f.status for k, f in out.findings.items()} == {
        "non-asymptotic-analysis": "implementation_verified",
        "truncation-mitigates": "consistent",
    }


def _curve(k0: int, t_peak: float, peak: float, rel: list[float | None] | None = None) -> dict[str, Any]:
    rel = [0.5, peak, 0.25] if rel is None else rel
    return {
        "k0": k0,
        "t": [1, 2, 3][: len(rel)],
        "t_peak": t_peak,
        "peak_rel_error": peak,
        "rel_error": rel,
        "bound": [2.0 * peak] * len(rel),
        "rel_error_at_K": peak / 10,
        "predicted_t_peak": k0 + 0.5,
    }


RHO = 0.9
HORIZON = 1.0 / math.log(1.0 / RHO)
K0 = [0, 50, 150]
PEAKS = [8.0, 4.0, 2.0]


def _reference(rho: float = RHO, t_peak: list[float] | None = None, peaks: list[float] | None = None) -> Any:
    horizon = 1.0 / math.log(1.0 / rho)
    t_peak = [k + horizon for k in K0] if t_peak is None else t_peak
    return lambda: {"rho": rho, "t_peak": list(t_peak), "peak_rel_error": list(PEAKS if peaks is None else peaks)}


def _results(rho: float = RHO, t_peak: list[float] | None = None, peaks: list[float] | None = None) -> list[dict]:
    horizon = 1.0 / math.log(1.0 / rho)
    t_peak = [k + horizon for k in K0] if t_peak is None else t_peak
    peaks = PEAKS if peaks is None else peaks
    return [{"rho": rho, "curves": [_curve(k, t, p) for k, t, p in zip(K0, t_peak, peaks, strict=True)]}]


def _statuses(results: list[dict]) -> dict[str, str]:
    return {k: f.status for k, f in dyn.unrolling_judge(results).findings.items()}


OK = {"non-asymptotic-analysis": "implementation_verified", "truncation-mitigates": "consistent"}


def test_judge_on_hand_made_curves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "unrolling_reference", _reference())
    out = dyn.unrolling_judge(_results())
    assert out.figures == {
        "rho": RHO,
        "one_over_ln_inv_rho": HORIZON,
        "k0": K0,
        "t_peak": [k + HORIZON for k in K0],
        "predicted_t_peak": [k + HORIZON for k in K0],
        "peak_rel_error": PEAKS,
        "reference_t_peak": [k + HORIZON for k in K0],
        "reference_peak_rel_error": PEAKS,
        "rel_error_at_K": [0.8, 0.4, 0.2],
        "bound_violations": 0,
    }
    assert {k: f.status for k, f in out.findings.items()} == OK
    a = out.findings["non-asymptotic-analysis"]
    assert a.expected_source == "independent_computation"
    assert a.expected == {
        "t_peak": [k + HORIZON for k in K0],
        "predicted_t_peak": [k + HORIZON for k in K0],
        "bound_violations": 0,
    }
    assert a.measured == {"t_peak": [k + HORIZON for k in K0], "bound_violations": 0}
    assert a.tolerance == "peak within 15% of 1/ln(1/rho) of k0 + 1/ln(1/rho); no bound violation"
    assert a.computation == COMPUTATION
    m = out.findings["truncation-mitigates"]
    assert m.expected_source == "independent_computation"
    assert m.expected == {"reference_peak_rel_error": PEAKS}
    assert m.measured == {"k0": K0, "peak_rel_error": PEAKS, "stored_iterations": [1000, 950, 850]}
    assert m.tolerance == "relative 1e-09 against the reference; the peak falls at each larger k0"
    assert m.computation == COMPUTATION + "; competing hypothesis: truncation leaves the peak unchanged"
    t = [f"{k + HORIZON:.1f}" for k in K0]
    assert abs(HORIZON - 9.49122) < 1e-5
    assert out.reason == (
        f"peaks at t = {K0[0] + HORIZON}, {K0[1] + HORIZON}, {K0[2] + HORIZON} against k0 + 1/ln(1/rho) = "
        f"{', '.join(t)} (within 15% of 9.5), peak errors 8, 4, 2 against the reference recursion's 8, 4, 2; "
        "the bound holds at every iteration (0 violations)"
    )


def test_judge_on_integer_peaks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "unrolling_reference", _reference(t_peak=[9, 59, 160], peaks=[17.5, 10.25, 3.125]))
    out = dyn.unrolling_judge(_results(t_peak=[9, 59, 160], peaks=[17.5, 10.25, 3.125]))
    assert {k: f.status for k, f in out.findings.items()} == OK
    assert out.reason.startswith("peaks at t = 9, 59, 160 against k0 + 1/ln(1/rho) = 9.5, 59.5, 159.5 (")
    assert "peak errors 17.5, 10.25, 3.125 against the reference recursion's 17.5, 10.25, 3.125;" in out.reason


def test_peaks_must_match_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    both = {"non-asymptotic-analysis": "contradicted", "truncation-mitigates": "contradicted"}
    t = [k + HORIZON for k in K0]
    monkeypatch.setattr(dyn, "unrolling_reference", _reference(t_peak=[t[0], t[1], t[2] + 1]))
    assert _statuses(_results()) == both
    for i in range(3):
        peaks = list(PEAKS)
        peaks[i] *= 1 + 3e-9
        monkeypatch.setattr(dyn, "unrolling_reference", _reference(peaks=peaks))
        assert _statuses(_results()) == both, i
        peaks[i] = PEAKS[i] * (1 + 5e-10)
        monkeypatch.setattr(dyn, "unrolling_reference", _reference(peaks=peaks))
        assert _statuses(_results()) == OK, i
        peaks[i] = PEAKS[i] * (1 - 5e-10)
        monkeypatch.setattr(dyn, "unrolling_reference", _reference(peaks=peaks))
        assert _statuses(_results()) == OK, i


def test_rho_must_match_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2e-12 − 1e-12 is exactly 1e-12 in floating point: the tolerance is inclusive
    small = 1e-12
    horizon = 1.0 / math.log(1.0 / small)
    monkeypatch.setattr(dyn, "unrolling_reference", _reference(rho=small, t_peak=[k + horizon for k in K0]))
    results = _results(rho=2 * small, t_peak=[k + horizon for k in K0])
    assert _statuses(results) == OK
    results[0]["rho"] = 2 * small + 1e-24
    assert _statuses(results) == {**OK, "non-asymptotic-analysis": "contradicted"}
    results[0]["rho"] = 0.0
    assert _statuses(results) == OK
    results[0]["rho"] = -small
    assert _statuses(results) == {**OK, "non-asymptotic-analysis": "contradicted"}


def _boundary_rho() -> tuple[float, float, float]:
    """ρ near 0.9 where some peak time t lies exactly 15 % of 1/ln(1/ρ) below k0 + 1/ln(1/ρ) (k0 = 0) in floating
    point, with ρ's horizon and t."""
    rho = 0.9
    for _ in range(1000):
        horizon = 1.0 / math.log(1.0 / rho)
        tol = 0.15 * horizon
        for t in (horizon - tol, np.nextafter(horizon - tol, 0.0), np.nextafter(horizon - tol, 20.0)):
            if abs(float(t) - (0 + horizon)) == tol:
                return rho, horizon, float(t)
        rho = float(np.nextafter(rho, 1.0))
    raise AssertionError("no boundary found")


def test_peak_time_tolerance_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    rho, horizon, t = _boundary_rho()
    assert dyn.PEAK_TIME_TOLERANCE == 0.15
    for peak_times, ok in (
        ([t, 50 + horizon, 150 + horizon], True),
        ([float(np.nextafter(t, 0.0)), 50 + horizon, 150 + horizon], False),
        ([t - 1.0, 50 + horizon, 150 + horizon], False),
        ([horizon, 50 + horizon, 150 + 1.1 * horizon], True),
        ([horizon, 50 + horizon + 0.16 * horizon, 150 + horizon], False),
        ([horizon, 50 + horizon, 150 + horizon - 0.16 * horizon], False),
    ):
        monkeypatch.setattr(dyn, "unrolling_reference", _reference(rho=rho, t_peak=peak_times))
        expected = OK if ok else {**OK, "non-asymptotic-analysis": "contradicted"}
        assert _statuses(_results(rho=rho, t_peak=peak_times)) == expected, peak_times


def test_bound_violations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "unrolling_reference", _reference())
    edge = 1.0 * (1 + 1e-12)
    results = _results()
    curve = results[0]["curves"][1]
    curve["bound"] = [1.0, 1.0, 1.0, 3.0]
    curve["rel_error"] = [edge, None, 0.5, 2.0]
    curve["t"] = [1, 2, 3, 4]
    out = dyn.unrolling_judge(results)
    assert out.figures["bound_violations"] == 0 and {k: f.status for k, f in out.findings.items()} == OK
    curve["rel_error"] = [float(np.nextafter(edge, 2.0)), None, 1.5, 3.5]
    out = dyn.unrolling_judge(results)
    assert out.figures["bound_violations"] == 3
    assert {k: f.status for k, f in out.findings.items()} == {**OK, "non-asymptotic-analysis": "contradicted"}
    assert out.findings["non-asymptotic-analysis"].measured == {
        "t_peak": [k + HORIZON for k in K0],
        "bound_violations": 3,
    }
    assert out.reason.endswith("the bound holds at every iteration (3 violations)")


def test_truncation_must_lower_the_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    for peaks, ok in (
        ([8.0, 8.0, 2.0], False),
        ([8.0, 4.0, 4.0], False),
        ([4.0, 8.0, 2.0], False),
        ([8.0, 4.0, 0.5], True),  # the last peak need not exceed 1
        ([1.5, 1.25, 1.0], True),
        ([1.0, 0.5, 0.25], False),  # a peak error of 1 is no curse
        ([2.0, 1.0, 0.5], False),
    ):
        monkeypatch.setattr(dyn, "unrolling_reference", _reference(peaks=peaks))
        expected = OK if ok else {**OK, "truncation-mitigates": "contradicted"}
        assert _statuses(_results(peaks=peaks)) == expected, peaks


def test_unrolling_plot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "unrolling_reference", _reference())
    results = _results()
    for i, c in enumerate(results[0]["curves"]):
        c["t"] = [1 + i, 2 + i, 3 + i]
        c["bound"] = [10.0 + i, 11.0 + i, 12.0 + i]
        c["predicted_t_peak"] = 7.5 + i
    fig = dyn.unrolling_plot(results, dyn.unrolling_judge(results))
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((6.5, 4))
    lines = ax.get_lines()
    assert len(lines) == 9
    for i, (c, colour) in enumerate(zip(results[0]["curves"], ("C0", "C1", "C2"), strict=True)):
        error, bound, peak = lines[3 * i : 3 * i + 3]
        assert list(error.get_xdata()) == c["t"] and list(error.get_ydata()) == c["rel_error"]
        assert rgba(error.get_color()) == rgba(colour) and error.get_label() == f"k0 = {K0[i]}"
        assert error.get_linestyle() == "-"
        assert list(bound.get_xdata()) == c["t"] and list(bound.get_ydata()) == c["bound"]
        assert rgba(bound.get_color()) == rgba(colour) and bound.get_linestyle() == ":" and bound.get_linewidth() == 1
        assert list(peak.get_xdata()) == [7.5 + i] * 2 and rgba(peak.get_color()) == rgba(colour)
        assert peak.get_linestyle() == "--" and peak.get_linewidth() == 0.8
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "iteration t" and ax.get_ylabel() == "relative Jacobian error (dotted: bound)"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["k0 = 0", "k0 = 50", "k0 = 150"]
    assert legend.get_texts()[0].get_fontsize() == 8
    assert ax.get_position().x0 != pytest.approx(0.125)  # tight_layout moved the axes


def test_plot_refuses_curves_out_of_step_with_the_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "unrolling_reference", _reference())
    results = _results()
    outcome = dyn.unrolling_judge(results)
    results[0]["curves"].append(_curve(300, 310.0, 1.5))
    with pytest.raises(ValueError, match="zip"):
        dyn.unrolling_plot(results, outcome)


def test_judge_refuses_errors_out_of_step_with_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "unrolling_reference", _reference())
    results = _results()
    results[0]["curves"][2]["bound"].pop()
    with pytest.raises(ValueError, match="zip"):
        dyn.unrolling_judge(results)
