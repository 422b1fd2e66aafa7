"""The SNN threshold-tail check (service/reproductions/dynamics_checks.py) on hand-made results: the rank
correlations against a partial correlation from the inverse correlation matrix of the ranks, each finding both ways,
the margins at their exact boundaries (with the rank functions patched where a boundary needs an exact value), the
objective bridge by hand and the drawn points (written for the mutation run of the module, docs/testing.md)."""

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from scipy.stats import rankdata

from service.reproductions import dynamics_checks as dyn
from service.reproductions.base import Step
from service.reproductions.reference import ranks


def _one(rate_gap: float, kernel_tail: float, gap: float) -> dict[str, Any]:
    return {"rate_gap": rate_gap, "gap": gap, "tail": {"kernel_tail": kernel_tail, "band_frac": [0.5]}}


def _net(band: float, rel: float, mismatch_abs: float, w: float, p: float, kt: float = 0.5, gap: float = 0.1) -> dict:
    return {
        "tail": {"band_frac": [band, 0.9], "kernel_tail": kt},
        "mismatch_rel": rel,
        "mismatch_abs": mismatch_abs,
        "w_scale": w,
        "p": p,
        "gap": gap,
        "rate_gap": 0.0,
    }


ONE_STEP = [_one(0.05 + 0.01 * i, 0.1 + 0.02 * i, 0.1 + 0.01 * i) for i in range(20)]
"""Twenty one-step networks with rate_gap = kernel_tail/2 exactly and gap/kernel_tail between 0.58 and 1."""
for _r in ONE_STEP:
    _r["rate_gap"] = _r["tail"]["kernel_tail"] / 2

BAND = [0.11, 0.32, 0.25, 0.47, 0.18, 0.52, 0.39, 0.6, 0.05, 0.44, 0.29, 0.71]
W = [1.2, 0.4, 0.9, 1.5, 0.7, 1.1, 0.3, 1.4, 0.8, 0.6, 1.0, 0.5]
P = [0.2, 0.5, 0.1, 0.35, 0.45, 0.15, 0.3, 0.05, 0.4, 0.25, 0.55, 0.6]
NOISE = [0.03, -0.05, 0.02, 0.04, -0.01, -0.06, 0.05, 0.01, -0.02, 0.06, -0.04, -0.03]
REL = [b + n for b, n in zip(BAND, NOISE, strict=True)]
ABS = [w * r for w, r in zip(W, REL, strict=True)]


def _nets(rel: list[float] = REL, **kw: Any) -> list[dict[str, Any]]:
    return [_net(b, r, a, w, p, **kw) for b, r, a, w, p in zip(BAND, rel, ABS, W, P, strict=True)]


def _zo(mc_rel_err: float = 0.1, spread: float = 2.0, draws: int = 64) -> dict[str, Any]:
    return {"localzo": {"mc_rel_err": mc_rel_err, "spread": spread, "draws": draws}, "tail": {"band_frac": [0.0]}}


def _results(one: list | None = None, nets: list | None = None, zo: dict | None = None) -> list[dict[str, Any]]:
    return [*(ONE_STEP if one is None else one), *(_nets() if nets is None else nets), _zo() if zo is None else zo]


def _partial(x: list[float], y: list[float], covariates: list[list[float]]) -> float:
    """The partial correlation of the ranks of x and y given the covariates' ranks, from the inverse of their
    correlation matrix."""
    c = np.corrcoef([rankdata(x), rankdata(y), *(rankdata(v) for v in covariates)])
    q = np.linalg.inv(c)
    return float(-q[0, 1] / math.sqrt(q[0, 0] * q[1, 1]))


def _spearman(x: list[float], y: list[float]) -> float:
    return float(np.corrcoef(rankdata(x), rankdata(y))[0, 1])


def test_snn_steps() -> None:
    steps = dyn.snn_steps(3)
    assert all(s.name == "snn.gradient_mismatch" for s in steps) and len(steps) == 20 + 3 + 1
    assert [s.params for s in steps[:20]] == [
        {"sizes": [20, 5], "time_steps": 1, "surrogate": kind, "seed": seed}
        for kind in ("gaussian", "sigmoid", "atan", "rect")
        for seed in range(5)
    ]
    assert [s.params for s in steps[20:23]] == [
        {"sizes": [20, 30, 5], "surrogate": "gaussian", "width": 0.5, "eps": [0.5], "seed": s} for s in range(3)
    ]
    assert steps[23] == Step("snn.gradient_mismatch", {"sizes": [20, 30, 5], "eps": [0.5], "localzo": {"draws": 64}})
    assert len(dyn.snn_steps()) == 20 + 300 + 1


def test_judge_figures_against_the_ranks_by_hand() -> None:
    out = dyn.snn_judge(_results())
    f = dict(out.figures)
    bridge = f.pop("objective_bridge")
    partial = _partial(BAND, REL, [W, P])
    lower = math.tanh(math.atanh(partial) - 3.0 / math.sqrt(12 - 3 - 2))
    assert f == {
        "networks": 12,
        "spearman_band_vs_mismatch_abs": pytest.approx(_spearman(BAND, ABS), abs=1e-12),
        "spearman_band_vs_mismatch_rel": pytest.approx(_spearman(BAND, REL), abs=1e-12),
        "partial_spearman_rel_given_scale_p": pytest.approx(partial, abs=1e-12),
        "partial_lower_3se": pytest.approx(lower, abs=1e-12),
        "localzo_mc_rel_err": 0.1,
        "localzo_allowance": 0.75,
        "localzo_draws": 64,
    }
    assert partial > 0.8 and lower > 0  # the data rank together, the weight scale and p aside
    assert {k: v.status for k, v in out.findings.items()} == {
        "tail-controls-mismatch": "consistent",
        "localzo-mean": "implementation_verified",
        "guarantee": "implementation_verified",
    }
    t = out.findings["tail-controls-mismatch"]
    assert (t.expected_source, t.expected) == ("independent_computation", {"partial_spearman_at_least": 0.0})
    assert t.measured == {
        "partial_spearman": f["partial_spearman_rel_given_scale_p"],
        "lower_3se": f["partial_lower_3se"],
        "spearman_rel": f["spearman_band_vs_mismatch_rel"],
        "spearman_abs": f["spearman_band_vs_mismatch_abs"],
    }
    assert t.tolerance == "3 standard errors on the Fisher scale"
    assert t.computation == (
        "reference.ranks.partial_spearman over 12 networks, ranks of weight scale and firing probability partialled "
        "out; competing hypothesis: weight scale alone drives the mismatch (partial correlation 0)"
    )
    z = out.findings["localzo-mean"]
    assert (z.expected_source, z.expected, z.measured) == (
        "independent_computation",
        {"mc_rel_err_at_most": 0.75},
        {"mc_rel_err": 0.1},
    )
    assert z.tolerance == "3 Monte-Carlo standard errors"
    assert z.computation == (
        "the identity E[LocalZO] = g_F for the gaussian surrogate (derived by hand): the mean of the LocalZO draws "
        "against the surrogate's backward pass (two code paths of the estimator, not an outside computation)"
    )
    assert bridge == {
        "networks": 20,
        "max_identity_error": 0.0,
        "bound_holds": 20,
        "max_gap_over_tail": pytest.approx(max(r["gap"] / r["tail"]["kernel_tail"] for r in ONE_STEP)),
        "deep_bound_holds": 12,
        "deep_max_gap_over_tail": 0.2,
    }
    assert out.reason == (
        f"over 12 networks the band fraction at |u| <= 0.5 ranks with the relative mismatch at Spearman "
        f"{f['spearman_band_vs_mismatch_rel']:.3f} ({partial:.3f} with weight scale and firing probability partialled "
        f"out, lower 3-SE end {lower:.3f}; the absolute mismatch, which scale drives, at "
        f"{f['spearman_band_vs_mismatch_abs']:.3f}); 64 LocalZO draws average to the surrogate direction within "
        "0.1000 (allowance 0.7500); |L - L_F| <= kernel tail in 20 of 20 one-step networks (12 of 12 two-layer, "
        "8-step ones)"
    )


def test_tail_finding_three_ways() -> None:
    # a positive partial correlation too weak for 12 networks: the direction holds, the margin does not
    weak = [BAND[i] + 0.25 * math.sin(7.0 * i) for i in range(12)]
    out = dyn.snn_judge(_results(nets=_nets(rel=weak)))
    f = out.figures
    assert f["partial_spearman_rel_given_scale_p"] == pytest.approx(_partial(BAND, weak, [W, P]), abs=1e-12)
    assert f["partial_spearman_rel_given_scale_p"] > 0 > f["partial_lower_3se"]
    assert out.findings["tail-controls-mismatch"].status == "not_checked"
    # the mismatch falling with the band fraction: contradicted
    falling = [1.0 - r for r in REL]
    out = dyn.snn_judge(_results(nets=_nets(rel=falling)))
    assert out.figures["partial_spearman_rel_given_scale_p"] == pytest.approx(-_partial(BAND, REL, [W, P]), abs=1e-12)
    assert out.findings["tail-controls-mismatch"].status == "contradicted"


def _fake_ranks(partial: float, lower: float) -> SimpleNamespace:
    calls: list[tuple] = []

    def partial_spearman(x: Any, y: Any, covariates: Any) -> float:
        calls.append(("partial_spearman", x, y, covariates))
        return partial if covariates else 0.25

    def fisher_lower(*args: Any) -> float:
        calls.append(("fisher_lower", *args))
        return lower

    return SimpleNamespace(partial_spearman=partial_spearman, fisher_lower=fisher_lower, calls=calls)


def test_tail_finding_at_its_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    for partial, lower, status in (
        (0.5, 1e-300, "consistent"),
        (0.5, 0.0, "not_checked"),
        (1e-300, -0.5, "not_checked"),
        (0.0, -0.5, "contradicted"),
    ):
        fake = _fake_ranks(partial, lower)
        monkeypatch.setattr(dyn, "ranks", fake)
        out = dyn.snn_judge(_results())
        assert out.findings["tail-controls-mismatch"].status == status, (partial, lower)
    assert fake.calls == [
        ("partial_spearman", BAND, ABS, []),
        ("partial_spearman", BAND, REL, []),
        ("partial_spearman", BAND, REL, [W, P]),
        ("fisher_lower", 0.0, 12, 2, 3.0),
    ]


def test_localzo_allowance_is_inclusive() -> None:
    """3 · spread / √draws = 3 · 2 / 8 = 0.75 exactly."""
    assert dyn.snn_judge(_results(zo=_zo(0.75))).findings["localzo-mean"].status == "implementation_verified"
    above = float(np.nextafter(0.75, 1.0))
    assert dyn.snn_judge(_results(zo=_zo(above))).findings["localzo-mean"].status == "contradicted"
    out = dyn.snn_judge(_results(zo=_zo(0.3, spread=1.0, draws=100)))
    assert out.figures["localzo_allowance"] == pytest.approx(0.3) and out.figures["localzo_draws"] == 100
    assert out.findings["localzo-mean"].status == "implementation_verified"
    out = dyn.snn_judge(_results(zo=_zo(0.31, spread=1.0, draws=100)))
    assert out.findings["localzo-mean"].status == "contradicted"


def test_bridge_by_hand() -> None:
    one = [_one(0.3, 0.5, 0.25), _one(0.2, 0.4, 0.4), _one(0.0, 0.0, 0.0)]
    deep = [_net(0.1, 0.1, 0.1, 1.0, 0.1, kt=kt, gap=g) for kt, g in ((0.5, 0.25), (0.25, 0.5), (0.0, 1.0), (2, 2))]
    bridge, figures = dyn._snn_bridge(one, deep)
    assert figures == {
        "networks": 3,
        "max_identity_error": pytest.approx(0.05),
        "bound_holds": 3,
        "max_gap_over_tail": 1.0,
        "deep_bound_holds": 2,
        "deep_max_gap_over_tail": 2.0,
    }
    assert bridge.status == "contradicted"  # the identity misses by 0.05
    assert (bridge.expected_source, bridge.expected) == (
        "independent_computation",
        {"rate_gap_minus_half_kernel_tail": 0.0, "gap_over_kernel_tail_at_most": 1.0},
    )
    assert bridge.measured == {
        "networks": 3,
        "max_identity_error": pytest.approx(0.05),
        "max_gap_over_tail": 1.0,
        "deep_max_gap_over_tail": 2.0,
    }
    assert bridge.tolerance == 1e-12
    assert bridge.computation == (
        "by hand, one layer and one time step: r̃ − r = F(u) − H(u) per node, so rate_gap = kernel_tail/2 and "
        "|L − L_F| <= kernel_tail; 3 networks 20 → 5 (four surrogates, seeds 0-4); the two-layer 8-step networks' "
        "ratio gap/kernel_tail is reported, not bounded by hand; the paper's convergence rate and its regularity "
        "assumptions (not available) are not tested"
    )
    _, figures = dyn._snn_bridge(one, [_net(0.1, 0.1, 0.1, 1.0, 0.1, kt=0.0, gap=1.0)])
    assert figures["deep_bound_holds"] == 0 and figures["deep_max_gap_over_tail"] is None


def test_bridge_tolerances_are_inclusive() -> None:
    edge = 0.5 * (1 + 1e-12)
    one = [_one(0.25, 0.5, edge), _one(1e-12, 0.0, 0.0), _one(0.5, 1.0, 0.25)]
    bridge, figures = dyn._snn_bridge(one, [])
    assert figures["max_identity_error"] == 1e-12 and figures["bound_holds"] == 3
    assert bridge.status == "implementation_verified"
    assert figures["max_gap_over_tail"] == edge / 0.5 and figures["deep_max_gap_over_tail"] is None
    one[1] = _one(float(np.nextafter(1e-12, 1.0)), 0.0, 0.0)
    assert dyn._snn_bridge(one, [])[0].status == "contradicted"
    one[1] = _one(-1e-12, 0.0, 0.0)
    assert dyn._snn_bridge(one, [])[0].status == "implementation_verified"
    one[1] = _one(0.0, 0.0, 0.0)
    one[0] = _one(0.25, 0.5, float(np.nextafter(edge, 1.0)))
    bridge, figures = dyn._snn_bridge(one, [])
    assert figures["bound_holds"] == 2 and bridge.status == "contradicted"


def test_judge_reports_the_bridge() -> None:
    one = list(ONE_STEP)
    one[7] = _one(0.3, 0.5, 0.6)
    out = dyn.snn_judge(_results(one=one, nets=_nets(kt=0.25, gap=0.5)))
    assert out.findings["guarantee"].status == "contradicted"
    assert out.figures["objective_bridge"]["bound_holds"] == 19
    assert out.figures["objective_bridge"]["deep_max_gap_over_tail"] == 2.0
    assert out.reason.endswith("in 19 of 20 one-step networks (0 of 12 two-layer, 8-step ones)")


def test_snn_plot() -> None:
    results = _results()
    out = dyn.snn_judge(results)
    fig = dyn.snn_plot(results, out)
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((5.5, 4))
    (points,) = ax.collections
    assert points.get_offsets().tolist() == [[b, r] for b, r in zip(BAND, REL, strict=True)]
    assert list(points.get_array()) == W and list(points.get_sizes()) == [10]
    assert ax.get_xlabel() == "band fraction P(|v - threshold| <= 0.5)"
    assert ax.get_ylabel() == "||g_F - grad L_F|| / ||grad L_F|| (colour: weight scale)"
    assert ax.get_title() == f"partial Spearman {out.figures['partial_spearman_rel_given_scale_p']:.2f}"
    assert ax.get_position().x0 != pytest.approx(0.125)  # tight_layout moved the axes


def test_reference_ranks_agree_with_the_inverse_correlation() -> None:
    assert ranks.partial_spearman(BAND, REL, [W, P]) == pytest.approx(_partial(BAND, REL, [W, P]), abs=1e-12)
