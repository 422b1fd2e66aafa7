"""The hyper-connections check (service/reproductions/dynamics_checks.py) on hand-made results: the reference
crossings against their values by hand, each finding both ways, the tolerances at their exact boundaries (on a
reference patched to values where the boundary is representable), the random single streams replayed from their
seed, and the drawn curves (written for the mutation run of the module, docs/testing.md)."""

import math
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from service.reproductions import dynamics_checks as dyn
from service.reproductions.base import Step
from service.reproductions.reference import hyperconnections as ref_hc
from tests.service.colors import rgba

HAND = {"pitchfork": 1.0, "consensus": 0.5, "hopf": 1.0, "static_two": 0.92, "causal": 1.25}
"""By hand: one stream crosses at a_r = 1, at 1 − αβμ = 0.5 with V = +I/2, causal at 1 + 1/N = 1.25; two streams
at s = 0 (a_r[0][0] = 1, Hopf with ω = 1) and, static, at 1 − 0.04/0.5 = 0.92."""
TYPES = {"pitchfork": "static", "consensus": "static", "hopf": "hopf", "static_two": "static", "causal": "static"}
COMPUTATION = (
    "reference.hyperconnections: eigenvalues of the Jacobian at H = 0 built by Kronecker products, crossings by "
    "bisection on the spectral abscissa"
)


def _c(value: float, kind: str = "static", omega: float | None = None) -> dict[str, Any]:
    return {"param": "a_r[0][0]", "type": kind, "value": value, "omega": omega}


def _res(crossings: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "eigenvalues": [{"re": -0.2, "im": 0.0}],
        "critical_a_r": None,
        "simulation": None,
        "crossings": crossings,
        "sweep_curve": [{"value": 0.5, "spectral_abscissa": -0.5}, {"value": 1.5, "spectral_abscissa": 0.5}],
        **extra,
    }


@cache
def _instance_refs() -> tuple[tuple[dict[str, Any], ...], ...]:
    """Each random single stream's crossings by the reference, from the documented recipe (not the judge's call)."""
    out = []
    for p in dyn.hc_one_stream_instances():
        found = ref_hc.crossings(
            np.array(p["a_r"]), p["alpha"], p["beta"], np.array(p["v"]), 4, p["causal"], -2.0, 4.0, 30
        )
        out.append(tuple(found))
    return tuple(out)


def _instances(offset: float = 0.0) -> list[dict[str, Any]]:
    return [
        _res([_c(c["value"] + offset) for c in refs], eigenvalues=[{"re": -0.1, "im": 0.0}, {"re": 0.3, "im": -0.0}])
        for refs in _instance_refs()
    ]


def _results(**change: Any) -> list[dict[str, Any]]:
    """Results agreeing with the hand values; ``change`` replaces whole steps by name."""
    steps = {
        "pitch": _res([_c(HAND["pitchfork"])], critical_a_r=1.0),
        "consensus": _res([_c(HAND["consensus"])]),
        "below": _res([], simulation={"regime": "collapse", "final_norm": 1e-14}),
        "above": _res([], simulation={"regime": "nontrivial", "final_norm": 1.5736}),
        "hopf": _res([_c(HAND["hopf"], "hopf", 1.0)]),
        "static": _res([_c(HAND["static_two"])]),
        "causal": _res([_c(HAND["causal"])]),
        "instances": _instances(),
        "complex_v": _res([_c(0.5, "hopf", 1.0)]),
    }
    steps.update(change)
    return [
        *(steps[k] for k in ("pitch", "consensus", "below", "above", "hopf", "static", "causal")),
        *steps["instances"],
        steps["complex_v"],
    ]


HC_REFERENCE = dyn.hc_reference


@cache
def _reference() -> dict[str, dict[str, Any]]:
    return HC_REFERENCE()


def _memo(fn: Any) -> Any:
    seen: dict[tuple, Any] = {}

    def wrapped(*args: Any) -> Any:
        key = tuple(a.tobytes() + repr(a.shape).encode() if isinstance(a, np.ndarray) else repr(a) for a in args)
        if key not in seen:
            seen[key] = fn(*args)
        return seen[key]

    return wrapped


MEMO = SimpleNamespace(crossings=_memo(ref_hc.crossings), jacobian=_memo(ref_hc.jacobian))


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's results computed once per process (the judge's own reference call is tested apart)."""
    monkeypatch.setattr(dyn, "hc_reference", lambda: {k: dict(v) for k, v in _reference().items()})
    monkeypatch.setattr(dyn, "ref_hc", MEMO)


def _statuses(results: list[dict[str, Any]]) -> dict[str, str]:
    return {k: f.status for k, f in dyn.hyperconnections_judge(results).findings.items()}


VERIFIED = {
    "one-stream-pitchfork": "implementation_verified",
    "two-stream-boundaries": "implementation_verified",
    "no-one-stream-counterpart": "implementation_verified",
}


def test_hc_reference_by_hand() -> None:
    ref = dyn.hc_reference()
    assert set(ref) == set(HAND)
    for k, v in HAND.items():
        assert ref[k]["value"] == pytest.approx(v, abs=1e-10), k
        assert ref[k]["type"] == TYPES[k]
        assert ref[k]["omega"] == pytest.approx(1.0 if k == "hopf" else 0.0, abs=1e-10)


def test_hc_steps() -> None:
    steps = dyn.hc_steps()
    assert len(steps) == 7 + 8 + 1 and all(s.name == "hyperconnections.token_dynamics" for s in steps)
    assert steps[:7] == dyn.HC_STEPS
    assert [s.params for s in steps[7:15]] == dyn.hc_one_stream_instances()
    assert steps[15] == Step(
        "hyperconnections.token_dynamics",
        {
            "n_tokens": 4,
            "dim": 2,
            "n_streams": 1,
            "alpha": [1.0],
            "beta": [1.0],
            "a_r": [[0.2]],
            "v": [[0.5, -1.0], [1.0, 0.5]],
            "simulate": False,
            "sweep": {"target": "a_r[0][0]", "lo": 0.0, "hi": 1.5, "n_points": 20},
        },
    )


def test_hc_one_stream_instances_replayed_from_their_seed() -> None:
    rng = np.random.default_rng(11)
    out = dyn.hc_one_stream_instances()
    assert len(out) == 8
    for i, p in enumerate(out):
        a = rng.normal(0.0, 0.5, (3, 3))
        signs = rng.choice([-1.0, 1.0], 2)
        sizes = rng.uniform(0.5, 1.0, 2)
        a_r = rng.uniform(0.5, 1.5)
        assert p == {
            "n_tokens": 4,
            "dim": 3,
            "n_streams": 1,
            "alpha": [signs[0] * sizes[0]],
            "beta": [signs[1] * sizes[1]],
            "a_r": [[a_r]],
            "v": ((a + a.T) / 2).tolist(),
            "causal": i % 2 == 1,
            "simulate": False,
            "sweep": {"target": "a_r[0][0]", "lo": -2.0, "hi": 4.0, "n_points": 30},
        }
        assert all(type(x) is float for x in (*p["alpha"], *p["beta"], p["a_r"][0][0]))
        v = np.array(p["v"])
        assert np.array_equal(v, v.T) and 0.5 <= abs(p["alpha"][0]) <= 1.0 and 0.5 <= p["a_r"][0][0] <= 1.5
    assert {math.copysign(1.0, p["alpha"][0]) for p in out} == {-1.0, 1.0}


def test_crossing_only_when_exactly_one() -> None:
    assert dyn._crossing({"crossings": [_c(0.3)]}) == _c(0.3)
    assert dyn._crossing({"crossings": []}) is None
    assert dyn._crossing({"crossings": [_c(0.3), _c(0.4)]}) is None


def test_judge_on_the_hand_values() -> None:
    out = dyn.hyperconnections_judge(_results())
    f = out.figures
    one = f.pop("one_stream")
    assert f == {
        "pitchfork_at": 1.0,
        "consensus_at": 0.5,
        "hopf_at": 1.0,
        "static_two_at": 0.92,
        "causal_at": 1.25,
        "pitchfork_type": "static",
        "consensus_type": "static",
        "hopf_type": "hopf",
        "static_two_type": "static",
        "causal_type": "static",
        "hopf_omega": 1.0,
        "critical_a_r": 1.0,
        "regime_a_r_0_8": "collapse",
        "regime_a_r_1_3": "nontrivial",
        "norm_a_r_1_3": 1.5736,
    }
    assert one == {
        "instances": 8,
        "static_crossings": 8,
        "max_crossing_offset": 0.0,
        "max_abs_imag": 0.0,
        "reference_max_abs_imag": pytest.approx(0.0, abs=1e-12),
        "two_stream_type": "hopf",
        "two_stream_omega": 1.0,
        "complex_v_one_stream": [{"type": "hopf", "value": 0.5, "omega": 1.0}],
    }
    assert {k: v.status for k, v in out.findings.items()} == VERIFIED
    p = out.findings["one-stream-pitchfork"]
    assert p.expected_source == "independent_computation"
    assert p.expected == {k: pytest.approx(HAND[k], abs=1e-10) for k in ("pitchfork", "consensus", "causal")}
    assert p.measured == {
        "pitchfork": 1.0,
        "consensus": 0.5,
        "causal": 1.25,
        "regime_a_r_0_8": "collapse",
        "regime_a_r_1_3": "nontrivial",
    }
    assert p.tolerance == 1e-8
    assert p.computation == COMPUTATION + "; collapse below and a non-trivial state above from the simulation"
    t = out.findings["two-stream-boundaries"]
    assert t.expected_source == "independent_computation"
    assert t.expected == {
        "hopf": pytest.approx(1.0, abs=1e-10),
        "static_two": pytest.approx(0.92, abs=1e-10),
        "hopf_omega": pytest.approx(1.0, abs=1e-10),
    }
    assert t.measured == {
        "hopf": 1.0,
        "static_two": 0.92,
        "types": {"hopf": "hopf", "static_two": "static"},
        "hopf_omega": 1.0,
    }
    assert (t.tolerance, t.computation) == (1e-8, COMPUTATION)
    s = out.findings["no-one-stream-counterpart"]
    assert s.expected_source == "independent_computation"
    assert s.expected == {"crossings_per_stream": 1, "type": "static", "max_abs_imag": 0.0, "two_stream_type": "hopf"}
    assert s.measured == {
        "static_crossings": 8,
        "max_crossing_offset": 0.0,
        "max_abs_imag": 0.0,
        "complex_v_one_stream": [{"type": "hopf", "value": 0.5, "omega": 1.0}],
    }
    assert s.tolerance == 1e-8
    assert s.computation == (
        "by hand, one stream's eigenvalues a_r − 1 + pαβμ are real when V's are (p real), so it has no Hopf crossing "
        "and all its modes move together in a_r (one boundary); reference.hyperconnections: the dense Jacobian's "
        "eigenvalues and crossings of 8 random single streams with a symmetric V (seed 11, a_r swept over [−2, 4]), "
        "against the two-stream Hopf crossing above; limit: with V = [[0.5, −1], [1, 0.5]] (eigenvalues 0.5 ± i) one "
        "stream loses stability in a Hopf crossing at a_r = 0.5000 (omega 1.000), so on this ODE the claim holds for "
        "a V with a real spectrum only"
    )
    assert out.reason == (
        "one stream loses stability at a_r = 1.0000000000 (0.5000000000 with V = +I/2), collapses at 0.8 and settles "
        "at norm 1.574 at 1.3; two streams cross hopf at a_r[0][0] = 1.0000000000 with omega = 1.0000000000 and "
        "static at 0.9200000000; a causal stream crosses at 1.2500000000; the reference Jacobian gives 1.0000000000, "
        "0.5000000000, 1.0000000000, 0.9200000000, 1.2500000000; 8 of 8 random single streams with a symmetric V "
        "lose stability in one static crossing and none in a Hopf one"
    )


@pytest.mark.parametrize("step", ["pitch", "consensus", "causal"])
def test_one_stream_crossing_off_wrong_type_or_not_single(step: str, fast: None) -> None:
    name = {"pitch": "pitchfork", "consensus": "consensus", "causal": "causal"}[step]
    off = _statuses(_results(**{step: _res([_c(HAND[name] + 2e-8)])}))
    assert off == {**VERIFIED, "one-stream-pitchfork": "contradicted"}
    assert _statuses(_results(**{step: _res([_c(HAND[name], "hopf", 1.0)])}))["one-stream-pitchfork"] == "contradicted"
    two = _results(**{step: _res([_c(HAND[name]), _c(HAND[name] + 1.0)])})
    out = dyn.hyperconnections_judge(two)
    assert out.findings["one-stream-pitchfork"].status == "contradicted"
    assert out.figures[f"{name}_at"] is None and out.figures[f"{name}_type"] is None
    assert "none" in out.reason


def test_one_stream_needs_both_regimes(fast: None) -> None:
    for change in (
        {"below": _res([], simulation={"regime": "nontrivial", "final_norm": 1.0})},
        {"above": _res([], simulation={"regime": "collapse", "final_norm": 1.5})},
    ):
        assert _statuses(_results(**change)) == {**VERIFIED, "one-stream-pitchfork": "contradicted"}


def test_two_streams_both_ways(fast: None) -> None:
    contradicted = {**VERIFIED, "two-stream-boundaries": "contradicted"}
    assert _statuses(_results(hopf=_res([_c(1.0 - 2e-8, "hopf", 1.0)]))) == contradicted
    assert _statuses(_results(hopf=_res([_c(1.0, "hopf", 1.0 + 2e-8)]))) == contradicted
    assert _statuses(_results(hopf=_res([_c(1.0, "hopf", None)]))) == contradicted
    assert _statuses(_results(static=_res([_c(0.92 + 2e-8)]))) == contradicted
    assert _statuses(_results(static=_res([_c(0.92, "hopf", 0.5)]))) == contradicted
    assert _statuses(_results(static=_res([]))) == contradicted
    # a static crossing where the Hopf one should be: neither two-stream nor the one-stream contrast holds
    static_hopf = dyn.hyperconnections_judge(_results(hopf=_res([_c(1.0, "static", 0.0)])))
    assert {k: v.status for k, v in static_hopf.findings.items()} == {
        **contradicted,
        "no-one-stream-counterpart": "contradicted",
    }
    assert static_hopf.figures["one_stream"]["two_stream_type"] == "static"
    # no crossing at all: no omega, nothing to compare
    none = dyn.hyperconnections_judge(_results(hopf=_res([])))
    assert none.figures["hopf_omega"] is None and none.figures["one_stream"]["two_stream_omega"] is None
    assert none.findings["two-stream-boundaries"].status == "contradicted"
    assert "omega = none" in none.reason and "cross None at a_r[0][0] = none" in none.reason


def _exact_reference() -> dict[str, dict[str, Any]]:
    """A reference at 0.0 (ω = 0 for the Hopf one), where a found value of ±1e-8 is exactly at the tolerance."""
    return {k: {"value": 0.0, "type": TYPES[k], "omega": 0.0} for k in HAND}


def _at(value: float, omega: float) -> list[dict[str, Any]]:
    return _results(
        pitch=_res([_c(value)], critical_a_r=1.0),
        consensus=_res([_c(-value)]),
        hopf=_res([_c(value, "hopf", omega)]),
        static=_res([_c(-value)]),
        causal=_res([_c(value)]),
    )


def test_crossing_tolerance_is_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "hc_reference", _exact_reference)
    monkeypatch.setattr(dyn, "ref_hc", MEMO)
    tol = dyn.CROSSING_TOLERANCE
    assert tol == 1e-8
    assert _statuses(_at(tol, tol)) == VERIFIED
    above = float(np.nextafter(tol, 1.0))
    assert _statuses(_at(above, tol)) == {
        **VERIFIED,
        "one-stream-pitchfork": "contradicted",
        "two-stream-boundaries": "contradicted",
    }
    assert _statuses(_at(tol, above)) == {**VERIFIED, "two-stream-boundaries": "contradicted"}
    assert _statuses(_at(tol, -tol)) == VERIFIED


def test_each_single_crossing_counts_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "hc_reference", _exact_reference)
    monkeypatch.setattr(dyn, "ref_hc", MEMO)
    above = float(np.nextafter(1e-8, 1.0))
    for i in (0, 1, 6):
        results = _at(0.0, 0.0)
        results[i] = _res([_c(above)])
        assert _statuses(results)["one-stream-pitchfork"] == "contradicted", i
    for i in (4, 5):
        results = _at(0.0, 0.0)
        results[i] = _res([_c(-above, TYPES["hopf" if i == 4 else "static_two"], 0.0)])
        assert _statuses(results)["two-stream-boundaries"] == "contradicted", i


def test_one_stream_instances_both_ways(fast: None) -> None:
    assert _statuses(_results(instances=_instances(offset=2e-8))) == {
        **VERIFIED,
        "no-one-stream-counterpart": "contradicted",
    }
    off = dyn.hyperconnections_judge(_results(instances=_instances(offset=-2e-8))).figures["one_stream"]
    assert off["max_crossing_offset"] == pytest.approx(2e-8, rel=1e-6) and off["static_crossings"] == 8
    for change in (
        lambda r: r.update(crossings=[]),
        lambda r: r.update(crossings=r["crossings"] * 2),
        lambda r: r["crossings"][0].update(type="hopf"),
    ):
        instances = _instances()
        change(instances[3])
        out = dyn.hyperconnections_judge(_results(instances=instances))
        assert out.figures["one_stream"]["static_crossings"] == 7
        assert out.findings["no-one-stream-counterpart"].status == "contradicted"
        assert "; 7 of 8 random single streams" in out.reason
    instances = _instances()
    instances[5]["eigenvalues"] = [{"re": 0.1, "im": 0.25}, {"re": 0.1, "im": -0.5}]
    out = dyn.hyperconnections_judge(_results(instances=instances))
    assert out.figures["one_stream"]["max_abs_imag"] == 0.5
    assert out.findings["no-one-stream-counterpart"].status == "contradicted"
    none = dyn.hyperconnections_judge(_results(instances=[_res([]) for _ in range(8)])).figures["one_stream"]
    assert none["static_crossings"] == 0 and none["max_crossing_offset"] is None


def _fake_reference(crossing: float, imag: float) -> SimpleNamespace:
    """Every random single stream crosses at ``crossing`` (static) and its Jacobian has eigenvalues ``imag``·i and
    0; the calls are recorded."""
    calls: list[tuple] = []

    def crossings(*args: Any) -> list[dict[str, Any]]:
        calls.append(("crossings", *args))
        return [{"value": crossing, "type": "static", "omega": 0.0}]

    def jacobian(*args: Any) -> np.ndarray:
        calls.append(("jacobian", *args))
        return np.diag([imag * 1j, 0.0])

    return SimpleNamespace(crossings=crossings, jacobian=jacobian, calls=calls)


def _streams_at(value: float) -> list[dict[str, Any]]:
    return [_res([_c(value)]) for _ in range(8)]


def test_one_stream_tolerances_are_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    tol = 1e-8
    above = float(np.nextafter(tol, 1.0))
    fake = _fake_reference(0.0, 1e-9)
    monkeypatch.setattr(dyn, "ref_hc", fake)
    one, figures = dyn._hc_one_stream([*_streams_at(tol), _res([])], "hopf", 1.0)
    assert one.status == "implementation_verified" and figures["max_crossing_offset"] == tol
    assert figures["reference_max_abs_imag"] == 1e-9 and figures["complex_v_one_stream"] == []
    calls = list(fake.calls)
    streams = _streams_at(-tol)
    streams[6] = _res([_c(above)])
    assert dyn._hc_one_stream([*streams, _res([])], "hopf", 1.0)[0].status == "contradicted"
    monkeypatch.setattr(dyn, "ref_hc", _fake_reference(0.0, float(np.nextafter(1e-9, 1.0))))
    one, figures = dyn._hc_one_stream([*_streams_at(0.0), _res([])], "hopf", 1.0)
    assert one.status == "contradicted" and figures["reference_max_abs_imag"] > 1e-9
    # the reference is asked about each stream as built: its a_r, α, β, V, N, causal flag and sweep
    expected = []
    for p in dyn.hc_one_stream_instances():
        a_r, v = np.array(p["a_r"]), np.array(p["v"])
        expected.append(("crossings", a_r, p["alpha"], p["beta"], v, 4, p["causal"], -2.0, 4.0, 30))
        expected.append(("jacobian", a_r, p["alpha"], p["beta"], v, 4, p["causal"]))
    assert len(calls) == len(expected)
    for got, want in zip(calls, expected, strict=True):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            if isinstance(w, np.ndarray):
                assert isinstance(g, np.ndarray) and g.dtype == np.float64 and np.array_equal(g, w)
            else:
                assert g == w and type(g) is type(w)


def test_one_stream_against_the_two_stream_crossing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dyn, "ref_hc", _fake_reference(0.0, 0.0))
    complex_v = _res([_c(0.25, "static"), _c(0.5, "hopf", 1.25), _c(0.75, "hopf", 2.0)])
    one, figures = dyn._hc_one_stream([*_streams_at(0.0), complex_v], "static", 0.5)
    assert one.status == "contradicted"
    assert (figures["two_stream_type"], figures["two_stream_omega"]) == ("static", 0.5)
    assert figures["complex_v_one_stream"] == [
        {"type": "static", "value": 0.25, "omega": None},
        {"type": "hopf", "value": 0.5, "omega": 1.25},
        {"type": "hopf", "value": 0.75, "omega": 2.0},
    ]
    assert "at a_r = 0.5000 (omega 1.250), 0.7500 (omega 2.000), so on" in one.computation
    assert dyn._hc_one_stream([*_streams_at(0.0), complex_v], "hopf", None)[0].status == "implementation_verified"


def _line_data(line: Any) -> tuple[list[float], list[float]]:
    return [float(x) for x in line.get_xdata()], [float(y) for y in line.get_ydata()]


def test_hyperconnections_plot(fast: None) -> None:
    results = _results()
    for i, res in enumerate(results[:7]):
        res["sweep_curve"] = [
            {"value": 0.1 * i, "spectral_abscissa": -1.0 - i},
            {"value": 0.1 * i + 0.05, "spectral_abscissa": 2.0 + i},
        ]
    results[4]["crossings"] = [_c(1.0, "hopf", 1.0), _c(1.1)]
    results[2]["crossings"] = [_c(7.0)]  # the simulations are not drawn
    out = dyn.hyperconnections_judge(results)
    fig = dyn.hyperconnections_plot(results, out)
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((6.5, 4))
    lines = ax.get_lines()
    drawn = [i for i in range(7) if i not in (2, 3)]
    expected: list[tuple] = []
    for i in drawn:
        res = results[i]
        expected.append(([0.1 * i, 0.1 * i + 0.05], [-1.0 - i, 2.0 + i], ".", "-"))
        for c in res["crossings"]:
            expected.append(([c["value"]], [0.0], "x" if c["type"] == "static" else "*", "None"))
    curves = lines[: len(expected)]
    assert [(*_line_data(line), line.get_marker(), line.get_linestyle()) for line in curves] == expected
    markers = [line for line in curves if line.get_linestyle() == "None"]
    assert [rgba(line.get_color()) for line in markers] == [
        rgba("k") if line.get_marker() == "x" else rgba("r") for line in markers
    ]
    assert all(line.get_markersize() == 9 for line in markers)
    assert [line.get_label() for line in curves if line.get_linestyle() == "-"] == [
        "1 stream, V = −I",
        "1 stream, V = +I/2",
        "2 streams, rotation",
        "2 streams, symmetric",
        "1 causal stream, V = −I",
    ]
    (zero,) = lines[len(expected) :]
    assert list(zero.get_ydata()) == [0.0, 0.0] and rgba(zero.get_color()) == rgba("k") and zero.get_linewidth() == 0.5
    assert ax.get_xlabel() == "a_r[0][0]" and ax.get_ylabel() == "spectral abscissa at H = 0"
    assert ax.get_title() == "crossings: x static, * Hopf"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "1 stream, V = −I",
        "1 stream, V = +I/2",
        "2 streams, rotation",
        "2 streams, symmetric",
        "1 causal stream, V = −I",
    ]
    assert legend.get_texts()[0].get_fontsize() == 8
    assert ax.get_position().x0 != pytest.approx(0.125)  # tight_layout moved the axes


def test_hc_reference_asks_about_each_documented_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """W = I and V = −I unless noted (V = +I/2 for the consensus sweep), N = 4, sweeps of 20 points."""
    calls: list[tuple] = []

    def crossings(*args: Any) -> list[dict[str, Any]]:
        calls.append(args)
        return [{"value": float(len(calls)), "type": "static", "omega": 0.0}]

    monkeypatch.setattr(dyn, "ref_hc", SimpleNamespace(crossings=crossings))
    assert dyn.hc_reference() == {
        k: {"value": float(i), "type": "static", "omega": 0.0} for i, k in enumerate(HAND, start=1)
    }
    minus_i, half_i = [[-1.0, 0.0], [0.0, -1.0]], [[0.5, 0.0], [0.0, 0.5]]
    one, two = ([1.0], [1.0]), ([1.0, 0.5], [0.5, 0.5])
    assert [(a[0].tolist(), a[1], a[2], a[3].tolist(), *a[4:]) for a in calls] == [
        ([[0.8]], *one, minus_i, 4, False, 0.5, 1.5, 20),
        ([[0.8]], *one, half_i, 4, False, 0.2, 1.2, 20),
        ([[0.9, -1.0], [1.0, 1.0]], *two, minus_i, 4, False, 0.5, 1.5, 20),
        ([[1.0, 0.2], [0.2, 0.5]], *two, minus_i, 4, False, 0.5, 1.5, 20),
        ([[0.8]], *one, minus_i, 4, True, 0.5, 1.5, 20),
    ]
    assert all(type(a[5]) is bool for a in calls)


def test_results_out_of_step_with_the_instances_are_refused(fast: None) -> None:
    results = _results()
    with pytest.raises(ValueError, match="zip"):
        dyn.hyperconnections_judge([*results[:7], *results[8:]])  # one random stream missing
    with pytest.raises(ValueError, match="zip"):
        dyn.hyperconnections_plot(results[:6], dyn.hyperconnections_judge(results))
