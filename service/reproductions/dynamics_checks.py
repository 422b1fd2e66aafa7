"""Reproduction checks of the dynamics papers: hyper-connection bifurcations, the curse of unrolling, SNN threshold
tails, axial single-location regression and predictive-coding target alignment."""

import math
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from service.reproductions import training_models as training
from service.reproductions.base import Outcome, Step, finding
from service.reproductions.claims import Finding
from service.reproductions.reference import hyperconnections as ref_hc
from service.reproductions.reference import predictive_coding as ref_pc
from service.reproductions.reference import ranks
from service.reproductions.reference import unrolling as ref_unrolling

Results = Sequence[Mapping[str, Any]]


HC = "hyperconnections.token_dynamics"
HC_BASE = {"n_tokens": 4, "dim": 2}
HC_ONE = {**HC_BASE, "n_streams": 1, "alpha": [1.0], "beta": [1.0]}
HC_TWO = {**HC_BASE, "n_streams": 2, "alpha": [1.0, 0.5], "beta": [0.5, 0.5], "simulate": False}
HC_SWEEP = {"target": "a_r[0][0]", "lo": 0.5, "hi": 1.5, "n_points": 20}
HC_STEPS = (
    Step(HC, {**HC_ONE, "a_r": [[0.8]], "simulate": False, "sweep": HC_SWEEP}),
    Step(
        HC,
        {
            **HC_ONE,
            "a_r": [[0.8]],
            "v": [[0.5, 0.0], [0.0, 0.5]],
            "simulate": False,
            "sweep": {**HC_SWEEP, "lo": 0.2, "hi": 1.2},
        },
    ),
    Step(HC, {**HC_ONE, "a_r": [[0.8]]}),
    Step(HC, {**HC_ONE, "a_r": [[1.3]]}),
    Step(HC, {**HC_TWO, "a_r": [[0.9, -1.0], [1.0, 1.0]], "sweep": HC_SWEEP}),
    Step(HC, {**HC_TWO, "a_r": [[1.0, 0.2], [0.2, 0.5]], "sweep": HC_SWEEP}),
    Step(HC, {**HC_ONE, "a_r": [[0.8]], "causal": True, "simulate": False, "sweep": HC_SWEEP}),
)
"""N = 4 tokens of dimension 2, W = I, V = −I unless noted. One stream, α = β = 1: the a_r sweep, the same with
V = +I/2, simulations at a_r = 0.8 and 1.3. Two streams, α = (1, 0.5), β = (0.5, 0.5): A_r = I + [[s, −1], [1, 0]]
and I + [[s, 0.2], [0.2, −0.5]] swept in a_r[0][0] = 1 + s. Last, one causal stream (V = −I) swept in a_r."""
HC_SWEEPS = {"pitchfork": 0, "consensus": 1, "hopf": 4, "static_two": 5, "causal": 6}
"""The steps whose sweeps locate each crossing (by hand: 1, 1 − αβμ = 0.5, Hopf at s = 0 with ω = 1, static at
1 − 0.04/0.5 = 0.92 and, causal, 1 + 1/N = 1.25 since the causal averaging matrix has eigenvalues 1/t)."""
CROSSING_TOLERANCE = 1e-8
"""Bisection locates a crossing to 1e-10 in the parameter; 1e-8 leaves room for the grid's rounding."""
HC_ONE_STREAM_INSTANCES = 8
HC_ONE_STREAM_SWEEP = {"target": "a_r[0][0]", "lo": -2.0, "hi": 4.0, "n_points": 30}
HC_COMPLEX_V = [[0.5, -1.0], [1.0, 0.5]]
"""A value matrix with eigenvalues 0.5 ± i: by hand one stream (α = β = 1) then has the consensus pair
a_r − 0.5 ± i, which crosses first, at a_r = 0.5 with ω = 1 (the zero-mean modes a_r − 1 cross later)."""


def hc_one_stream_instances() -> list[dict[str, Any]]:
    """Eight random single streams (seed 11): N = 4 tokens of dimension 3, α and β of random sign and size in
    [0.5, 1], a_r in [0.5, 1.5], V symmetric with N(0, 1/4) entries (a real spectrum), every other one causal."""
    rng = np.random.default_rng(11)
    out = []
    for i in range(HC_ONE_STREAM_INSTANCES):
        a = rng.normal(0.0, 0.5, (3, 3))
        alpha, beta = rng.choice([-1.0, 1.0], 2) * rng.uniform(0.5, 1.0, 2)
        out.append(
            {
                "n_tokens": 4,
                "dim": 3,
                "n_streams": 1,
                "alpha": [float(alpha)],
                "beta": [float(beta)],
                "a_r": [[float(rng.uniform(0.5, 1.5))]],
                "v": ((a + a.T) / 2).tolist(),
                "causal": i % 2 == 1,
                "simulate": False,
                "sweep": HC_ONE_STREAM_SWEEP,
            }
        )
    return out


def hc_steps() -> tuple[Step, ...]:
    """``HC_STEPS``, then the random single streams and the single stream with a complex-spectrum V."""
    complex_v = {**HC_ONE, "a_r": [[0.2]], "v": HC_COMPLEX_V, "simulate": False, "sweep": {**HC_SWEEP, "lo": 0.0}}
    return (*HC_STEPS, *(Step(HC, p) for p in hc_one_stream_instances()), Step(HC, complex_v))


def hc_reference() -> dict[str, dict[str, Any]]:
    """The crossing of each sweep from ``reference.hyperconnections`` (its own Jacobian and bisection)."""
    out = {}
    for name, i in HC_SWEEPS.items():
        p = HC_STEPS[i].params
        sweep = p["sweep"]
        (crossing,) = ref_hc.crossings(
            np.array(p["a_r"], dtype=float),
            p["alpha"],
            p["beta"],
            np.array(p.get("v", [[-1.0, 0.0], [0.0, -1.0]])),
            p["n_tokens"],
            bool(p.get("causal", False)),
            sweep["lo"],
            sweep["hi"],
            sweep["n_points"],
        )
        out[name] = crossing
    return out


def _crossing(res: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return res["crossings"][0] if len(res["crossings"]) == 1 else None


def hyperconnections_judge(results: Results) -> Outcome:
    """*Token dynamics of Transformers with hyper-connections*: one stream crosses at a_r = 1 (1 + 1/N causal,
    1 − αβμ = 0.5 with V = +I/2), collapses below and settles at a non-trivial state of norm 1.57 above; two streams
    have a Hopf crossing at s = 0 with ω = 1 and a static one at s = −0.04/0.5. Crossings are those of the Jacobian at
    H = 0 of the continuous-depth ODE dH_i/dt = Σ_j R_ij H_j + β_i SA(Σ_k α_k H_k)."""
    pitch, consensus, below, above, hopf, static, causal = results[: len(HC_STEPS)]
    crossings = {
        "pitchfork": _crossing(pitch),
        "consensus": _crossing(consensus),
        "hopf": _crossing(hopf),
        "static_two": _crossing(static),
        "causal": _crossing(causal),
    }
    found = {k: (c["value"] if c else None) for k, c in crossings.items()}
    types = {k: (c["type"] if c else None) for k, c in crossings.items()}
    omega = crossings["hopf"]["omega"] if crossings["hopf"] else None
    figures = {
        **{f"{k}_at": v for k, v in found.items()},
        **{f"{k}_type": v for k, v in types.items()},
        "hopf_omega": omega,
        "critical_a_r": pitch["critical_a_r"],
        "regime_a_r_0_8": below["simulation"]["regime"],
        "regime_a_r_1_3": above["simulation"]["regime"],
        "norm_a_r_1_3": above["simulation"]["final_norm"],
    }
    ref = hc_reference()
    agrees = {
        k: found[k] is not None and abs(found[k] - ref[k]["value"]) <= CROSSING_TOLERANCE and types[k] == ref[k]["type"]
        for k in HC_SWEEPS
    }
    one_ok = (
        agrees["pitchfork"]
        and agrees["consensus"]
        and agrees["causal"]
        and figures["regime_a_r_0_8"] == "collapse"
        and figures["regime_a_r_1_3"] == "nontrivial"
    )
    two_ok = (
        agrees["hopf"]
        and agrees["static_two"]
        and omega is not None
        and abs(omega - ref["hopf"]["omega"]) <= CROSSING_TOLERANCE
    )
    computation = (
        "reference.hyperconnections: eigenvalues of the Jacobian at H = 0 built by Kronecker products, crossings by "
        "bisection on the spectral abscissa"
    )

    def pick(names: tuple[str, ...], source: dict) -> dict:
        return {k: source[k] for k in names}

    one = ("pitchfork", "consensus", "causal")
    two = ("hopf", "static_two")
    findings = {
        "one-stream-pitchfork": finding(
            one_ok,
            "implementation_verified",
            "independent_computation",
            {k: ref[k]["value"] for k in one},
            {
                **pick(one, found),
                "regime_a_r_0_8": figures["regime_a_r_0_8"],
                "regime_a_r_1_3": figures["regime_a_r_1_3"],
            },
            CROSSING_TOLERANCE,
            computation + "; collapse below and a non-trivial state above from the simulation",
        ),
        "two-stream-boundaries": finding(
            two_ok,
            "implementation_verified",
            "independent_computation",
            {**{k: ref[k]["value"] for k in two}, "hopf_omega": ref["hopf"]["omega"]},
            {**pick(two, found), "types": pick(two, types), "hopf_omega": omega},
            CROSSING_TOLERANCE,
            computation,
        ),
    }

    one_stream, one_figures = _hc_one_stream(results[len(HC_STEPS) :], types["hopf"], omega)
    findings["no-one-stream-counterpart"] = one_stream
    figures["one_stream"] = one_figures

    def show(v: float | None) -> str:
        return "none" if v is None else f"{v:.10f}"

    ref_values = ", ".join(show(ref[k]["value"]) for k in HC_SWEEPS)
    reason = (
        f"one stream loses stability at a_r = {show(found['pitchfork'])} ({show(found['consensus'])} with V = +I/2), "
        f"collapses at 0.8 and settles at norm {figures['norm_a_r_1_3']:.3f} at 1.3; two streams cross "
        f"{types['hopf']} at a_r[0][0] = {show(found['hopf'])} with omega = {show(omega)} and {types['static_two']} "
        f"at {show(found['static_two'])}; a causal stream crosses at {show(found['causal'])}; the reference Jacobian "
        f"gives {ref_values}; {one_figures['static_crossings']} of {HC_ONE_STREAM_INSTANCES} random single streams "
        f"with a symmetric V lose stability in one static crossing and none in a Hopf one"
    )
    return Outcome(figures, reason, findings)


def _hc_one_stream(results: Results, two_stream_type: str | None, two_stream_omega: float | None) -> tuple:
    """Single streams with a symmetric V: one static crossing each, where the reference Jacobian crosses, and a real
    spectrum; the single stream with a complex-spectrum V is reported beside them (a Hopf crossing)."""
    *instances, complex_v = results
    params = hc_one_stream_instances()
    static, offsets, imag, ref_imag = 0, [], [], []
    for p, res in zip(params, instances, strict=True):
        a_r = np.array(p["a_r"], dtype=float)
        v = np.array(p["v"], dtype=float)
        sweep = p["sweep"]
        ref = ref_hc.crossings(
            a_r, p["alpha"], p["beta"], v, p["n_tokens"], p["causal"], sweep["lo"], sweep["hi"], sweep["n_points"]
        )
        found = res["crossings"]
        if len(found) == 1 == len(ref) and found[0]["type"] == "static" == ref[0]["type"]:
            static += 1
            offsets.append(abs(found[0]["value"] - ref[0]["value"]))
        imag.append(max(abs(e["im"]) for e in res["eigenvalues"]))
        jac = ref_hc.jacobian(a_r, p["alpha"], p["beta"], v, p["n_tokens"], p["causal"])
        ref_imag.append(float(np.abs(np.linalg.eigvals(jac).imag).max()))
    complex_crossings = [{k: c[k] for k in ("type", "value", "omega")} for c in complex_v["crossings"]]
    figures = {
        "instances": len(instances),
        "static_crossings": static,
        "max_crossing_offset": max(offsets) if offsets else None,
        "max_abs_imag": max(imag),
        "reference_max_abs_imag": max(ref_imag),
        "two_stream_type": two_stream_type,
        "two_stream_omega": two_stream_omega,
        "complex_v_one_stream": complex_crossings,
    }
    ok = (
        static == len(instances)
        and max(offsets) <= CROSSING_TOLERANCE
        and max(imag) == 0.0
        and max(ref_imag) <= 1e-9
        and two_stream_type == "hopf"
    )
    return finding(
        ok,
        "implementation_verified",
        "independent_computation",
        {"crossings_per_stream": 1, "type": "static", "max_abs_imag": 0.0, "two_stream_type": "hopf"},
        {k: figures[k] for k in ("static_crossings", "max_crossing_offset", "max_abs_imag", "complex_v_one_stream")},
        CROSSING_TOLERANCE,
        "by hand, one stream's eigenvalues a_r − 1 + pαβμ are real when V's are (p real), so it has no Hopf crossing "
        "and all its modes move together in a_r (one boundary); reference.hyperconnections: the dense Jacobian's "
        f"eigenvalues and crossings of {len(instances)} random single streams with a symmetric V (seed 11, a_r swept "
        "over [−2, 4]), against the two-stream Hopf crossing above; limit: with V = [[0.5, −1], [1, 0.5]] "
        "(eigenvalues 0.5 ± i) one stream loses stability in a Hopf crossing at a_r = "
        + ", ".join(f"{c['value']:.4f} (omega {c['omega']:.3f})" for c in complex_crossings if c["type"] == "hopf")
        + ", so on this ODE the claim holds for a V with a real spectrum only",
    ), figures


def hyperconnections_plot(results: Results, outcome: Outcome) -> Any:
    """Spectral abscissa against the swept a_r[0][0] for the four sweeps, crossings marked."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 4))
    ax = fig.add_subplot()
    labels = (
        "1 stream, V = −I",
        "1 stream, V = +I/2",
        None,
        None,
        "2 streams, rotation",
        "2 streams, symmetric",
        "1 causal stream, V = −I",
    )
    for res, label in zip(results[: len(HC_STEPS)], labels, strict=True):
        if label is None:
            continue
        curve = res["sweep_curve"]
        ax.plot([p["value"] for p in curve], [p["spectral_abscissa"] for p in curve], ".-", label=label)
        for c in res["crossings"]:
            ax.plot([c["value"]], [0.0], "kx" if c["type"] == "static" else "r*", ms=9)
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("a_r[0][0]")
    ax.set_ylabel("spectral abscissa at H = 0")
    ax.set_title("crossings: x static, * Hopf")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


UNROLL_K0 = [0, 50, 150]
UNROLL_PEAK_TOLERANCE = 1e-9
"""Relative agreement of the estimator's peak errors with the reference recursion (both are exact in floating point;
they differ only by round-off)."""
PEAK_TIME_TOLERANCE = 0.15
"""The bound's transient term places the peak; the error's other component moves it by up to about a tenth of
1/ln(1/ρ), so the peak must lie within 15 % of 1/ln(1/ρ) of k0 + 1/ln(1/ρ)."""


def unrolling_steps() -> tuple[Step, ...]:
    """Gradient descent with h = 1/L on ridge at θ = 0 (n = 200, p = 50, XᵀX with 45 eigenvalues evenly in
    [0.9, 1] and 5 geometric in [0.01, 0.5], y = Xw + 0.01ξ, seed 0) from x0 = 100·z (z ~ N(0, I), seed 5)."""
    rng = np.random.default_rng(0)
    s = np.concatenate([np.linspace(0.9, 1.0, 45), np.geomspace(0.01, 0.5, 5)])
    u, _ = np.linalg.qr(rng.standard_normal((200, 50)))
    v, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    x = u @ np.diag(np.sqrt(s)) @ v.T
    y = x @ rng.standard_normal(50) + 0.01 * rng.standard_normal(200)
    h = x.T @ x
    problem = {
        "kind": "quadratic",
        "h": ((h + h.T) / 2).tolist(),
        "dh": np.eye(50).tolist(),
        "b": (x.T @ y).tolist(),
        "db": [0.0] * 50,
    }
    x0 = (100.0 * np.random.default_rng(5).standard_normal(50)).tolist()
    params = {"problem": problem, "step_rule": "1/L", "iterations": 1000, "k0_list": UNROLL_K0, "x0": x0}
    return (Step("unrolling.jacobian_error", params),)


def unrolling_reference() -> dict[str, Any]:
    """ρ and, per k0, the peak iteration and peak relative error of the forward recursion in ``reference.unrolling``."""
    p = unrolling_steps()[0].params
    problem = {k: np.array(v, dtype=float) for k, v in p["problem"].items() if k != "kind"}
    x0 = np.array(p["x0"], dtype=float)
    curves = [
        ref_unrolling.relative_errors(problem["h"], problem["dh"], problem["b"], problem["db"], x0, p["iterations"], k0)
        for k0 in p["k0_list"]
    ]
    return {
        "rho": ref_unrolling.contraction(problem["h"]),
        "t_peak": [int(np.argmax(c)) + 1 for c in curves],
        "peak_rel_error": [float(c.max()) for c in curves],
    }


def unrolling_judge(results: Results) -> Outcome:
    """*Understanding the Curse of Unrolling* (Mehmood, Knoll & Ochs): the unrolled Jacobian's relative error, set
    against an independent forward recursion, peaks near k0 + 1/ln(1/ρ) (the transient term of
    ‖e_t‖ ≤ ρ^m‖J*‖ + m h ρ^(m−1)‖∂H‖ρ^k0‖x0 − x*‖), under the bound, and truncating the first k0 iterations of the
    derivative lowers the peak."""
    (res,) = results
    ref = unrolling_reference()
    curves = res["curves"]
    horizon = 1.0 / math.log(1.0 / ref["rho"])
    peaks = [c["peak_rel_error"] for c in curves]
    offsets = [c["t_peak"] - (c["k0"] + horizon) for c in curves]
    violations = sum(
        e > b * (1 + 1e-12) for c in curves for e, b in zip(c["rel_error"], c["bound"], strict=True) if e is not None
    )
    figures = {
        "rho": res["rho"],
        "one_over_ln_inv_rho": horizon,
        "k0": [c["k0"] for c in curves],
        "t_peak": [c["t_peak"] for c in curves],
        "predicted_t_peak": [c["k0"] + horizon for c in curves],
        "peak_rel_error": peaks,
        "reference_t_peak": ref["t_peak"],
        "reference_peak_rel_error": ref["peak_rel_error"],
        "rel_error_at_K": [c["rel_error_at_K"] for c in curves],
        "bound_violations": violations,
    }
    agrees = [c["t_peak"] for c in curves] == ref["t_peak"] and all(
        abs(p / q - 1) <= UNROLL_PEAK_TOLERANCE for p, q in zip(peaks, ref["peak_rel_error"], strict=True)
    )
    analysis_ok = (
        agrees
        and abs(res["rho"] - ref["rho"]) <= 1e-12
        and all(abs(o) <= PEAK_TIME_TOLERANCE * horizon for o in offsets)
        and violations == 0
    )
    mitigates = agrees and all(
        a > b and c["peak_rel_error"] > 1 for a, b, c in zip(peaks, peaks[1:], curves, strict=False)
    )
    computation = (
        "reference.unrolling: the forward derivative recursion J_{t+1} = J_t - h(H J_t + dH x_t - db) from J = 0 at "
        "t = k0, and rho from the eigenvalues of H"
    )
    findings = {
        "non-asymptotic-analysis": finding(
            analysis_ok,
            "implementation_verified",
            "independent_computation",
            {"t_peak": ref["t_peak"], "predicted_t_peak": figures["predicted_t_peak"], "bound_violations": 0},
            {"t_peak": figures["t_peak"], "bound_violations": violations},
            f"peak within {PEAK_TIME_TOLERANCE:.0%} of 1/ln(1/rho) of k0 + 1/ln(1/rho); no bound violation",
            computation,
        ),
        "truncation-mitigates": finding(
            mitigates,
            "consistent",
            "independent_computation",
            {"reference_peak_rel_error": ref["peak_rel_error"]},
            {"k0": figures["k0"], "peak_rel_error": peaks, "stored_iterations": [1000 - k for k in UNROLL_K0]},
            f"relative {UNROLL_PEAK_TOLERANCE:g} against the reference; the peak falls at each larger k0",
            computation + "; competing hypothesis: truncation leaves the peak unchanged",
        ),
    }
    predicted = ", ".join(f"{t:.1f}" for t in figures["predicted_t_peak"])
    reason = (
        f"peaks at t = {', '.join(str(c['t_peak']) for c in curves)} against k0 + 1/ln(1/rho) = "
        f"{predicted} (within {PEAK_TIME_TOLERANCE:.0%} of {horizon:.1f}), peak errors "
        f"{', '.join(f'{p:.4g}' for p in peaks)} against the reference recursion's "
        f"{', '.join(f'{p:.4g}' for p in ref['peak_rel_error'])}; the bound holds at every iteration "
        f"({violations} violations)"
    )
    return Outcome(figures, reason, findings)


def unrolling_plot(results: Results, outcome: Outcome) -> Any:
    """Relative Jacobian error and its bound against the iteration, one colour per k0, predicted peaks dashed."""
    from matplotlib.figure import Figure

    (res,) = results
    fig = Figure(figsize=(6.5, 4))
    ax = fig.add_subplot()
    for c, colour in zip(res["curves"], ("C0", "C1", "C2"), strict=True):
        ax.plot(c["t"], c["rel_error"], color=colour, label=f"k0 = {c['k0']}")
        ax.plot(c["t"], c["bound"], color=colour, ls=":", lw=1)
        ax.axvline(c["predicted_t_peak"], color=colour, ls="--", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("relative Jacobian error (dotted: bound)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


SNN = "snn.gradient_mismatch"
SNN_SIZES = [20, 30, 5]
SNN_SEEDS = 300
SNN_WIDTH = 0.5


SNN_SURROGATES = ["gaussian", "sigmoid", "atan", "rect"]
SNN_ONE_STEP_SEEDS = 5
SNN_ONE_STEP = [
    {"sizes": [20, 5], "time_steps": 1, "surrogate": kind, "seed": seed}
    for kind in SNN_SURROGATES
    for seed in range(SNN_ONE_STEP_SEEDS)
]
"""One-layer LIF networks 20 → 5 over one time step (B = 32, each surrogate at its default width, seeds 0-4)."""
SNN_IDENTITY = 1e-12


def snn_steps(seeds: int = SNN_SEEDS) -> tuple[Step, ...]:
    """One-layer, one-step networks for the objective bridge; then random LIF networks 20 → 30 → 5 (T = 8, B = 32,
    seeds 0..seeds−1, weight scale and firing probability drawn per seed) with the gaussian(0.5) surrogate, then
    LocalZO with 64 draws on seed 0."""
    return (
        *(Step(SNN, p) for p in SNN_ONE_STEP),
        *(
            Step(SNN, {"sizes": SNN_SIZES, "surrogate": "gaussian", "width": SNN_WIDTH, "eps": [SNN_WIDTH], "seed": s})
            for s in range(seeds)
        ),
        Step(SNN, {"sizes": SNN_SIZES, "eps": [SNN_WIDTH], "localzo": {"draws": 64}}),
    )


SNN_Z = 3.0
"""The partial rank correlation must stay positive 3 standard errors (Fisher scale) below its value: 300 networks
give 0.63 (60 give 0.37, too few to clear the margin)."""
LOCALZO_SE_FACTOR = 3.0
"""The mean of R LocalZO draws misses E ĝ = g_F by about spread/√R; three times that is the allowance."""


def snn_judge(results: Results) -> Outcome:
    """SG / LocalZO direct SNN training via a threshold-tail functional: the band fraction P(|v − ϑ| ≤ δ) ranks with the
    RELATIVE mismatch ‖g_F − ∇L_F‖/‖∇L_F‖ once the weight scale and firing probability (which drive both sides of
    the absolute mismatch) are partialled out; and the LocalZO mean direction equals the gaussian surrogate's g_F
    within its Monte-Carlo error."""
    one_step, (*nets, zo) = results[: len(SNN_ONE_STEP)], results[len(SNN_ONE_STEP) :]
    band = [r["tail"]["band_frac"][0] for r in nets]
    rel = [r["mismatch_rel"] for r in nets]
    drivers = [[r["w_scale"] for r in nets], [r["p"] for r in nets]]
    rho_abs = ranks.partial_spearman(band, [r["mismatch_abs"] for r in nets], [])
    rho_rel = ranks.partial_spearman(band, rel, [])
    partial = ranks.partial_spearman(band, rel, drivers)
    lower = ranks.fisher_lower(partial, len(nets), len(drivers), SNN_Z)
    lz = zo["localzo"]
    allowance = LOCALZO_SE_FACTOR * lz["spread"] / math.sqrt(lz["draws"])
    figures = {
        "networks": len(nets),
        "spearman_band_vs_mismatch_abs": rho_abs,
        "spearman_band_vs_mismatch_rel": rho_rel,
        "partial_spearman_rel_given_scale_p": partial,
        "partial_lower_3se": lower,
        "localzo_mc_rel_err": lz["mc_rel_err"],
        "localzo_allowance": allowance,
        "localzo_draws": lz["draws"],
    }
    findings = {
        "tail-controls-mismatch": finding(
            lower > 0,
            "consistent",
            "independent_computation",
            {"partial_spearman_at_least": 0.0},
            {"partial_spearman": partial, "lower_3se": lower, "spearman_rel": rho_rel, "spearman_abs": rho_abs},
            f"{SNN_Z:g} standard errors on the Fisher scale",
            f"reference.ranks.partial_spearman over {len(nets)} networks, ranks of weight scale and firing probability "
            "partialled out; competing hypothesis: weight scale alone drives the mismatch (partial correlation 0)",
            direction_holds=partial > 0,
        ),
        "localzo-mean": finding(
            lz["mc_rel_err"] <= allowance,
            "implementation_verified",
            "independent_computation",
            {"mc_rel_err_at_most": allowance},
            {"mc_rel_err": lz["mc_rel_err"]},
            f"{LOCALZO_SE_FACTOR:g} Monte-Carlo standard errors",
            "the identity E[LocalZO] = g_F for the gaussian surrogate (derived by hand): the mean of the LocalZO draws "
            "against the surrogate's backward pass (two code paths of the estimator, not an outside computation)",
        ),
    }
    bridge, bridge_figures = _snn_bridge(one_step, nets)
    findings["guarantee"] = bridge
    figures["objective_bridge"] = bridge_figures
    reason = (
        f"over {len(nets)} networks the band fraction at |u| <= {SNN_WIDTH} ranks with the relative mismatch at "
        f"Spearman {rho_rel:.3f} ({partial:.3f} with weight scale and firing probability partialled out, lower "
        f"3-SE end {lower:.3f}; the absolute mismatch, which scale drives, at {rho_abs:.3f}); {lz['draws']} LocalZO "
        f"draws average to the surrogate direction within {lz['mc_rel_err']:.4f} (allowance {allowance:.4f}); "
        f"|L - L_F| <= kernel tail in {bridge_figures['bound_holds']} of {len(one_step)} one-step networks "
        f"({bridge_figures['deep_bound_holds']} of {len(nets)} two-layer, 8-step ones)"
    )
    return Outcome(figures, reason, findings)


def _snn_bridge(one_step: Results, deep: Results) -> tuple[Finding, dict[str, Any]]:
    """The bridge from the smoothed objective to the discrete-spike one through the threshold tail: with one layer and
    one step, r̃ − r = F(u) − H(u) at every output node, so mean |r̃ − r| = mean κ_F/2 exactly, and since r, r̃ and Y
    lie in [0, 1], |L − L_F| <= 2 mean |r̃ − r| = mean κ_F (by hand)."""
    identity = [abs(r["rate_gap"] - r["tail"]["kernel_tail"] / 2) for r in one_step]
    holds = sum(r["gap"] <= r["tail"]["kernel_tail"] * (1 + 1e-12) for r in one_step)
    deep_ratio = [r["gap"] / r["tail"]["kernel_tail"] for r in deep if r["tail"]["kernel_tail"] > 0]
    figures = {
        "networks": len(one_step),
        "max_identity_error": max(identity),
        "bound_holds": holds,
        "max_gap_over_tail": max(r["gap"] / r["tail"]["kernel_tail"] for r in one_step if r["tail"]["kernel_tail"] > 0),
        "deep_bound_holds": sum(q <= 1 for q in deep_ratio),
        "deep_max_gap_over_tail": max(deep_ratio) if deep_ratio else None,
    }
    return finding(
        max(identity) <= SNN_IDENTITY and holds == len(one_step),
        "implementation_verified",
        "independent_computation",
        {"rate_gap_minus_half_kernel_tail": 0.0, "gap_over_kernel_tail_at_most": 1.0},
        {k: figures[k] for k in ("networks", "max_identity_error", "max_gap_over_tail", "deep_max_gap_over_tail")},
        SNN_IDENTITY,
        "by hand, one layer and one time step: r̃ − r = F(u) − H(u) per node, so rate_gap = kernel_tail/2 and "
        f"|L − L_F| <= kernel_tail; {len(one_step)} networks 20 → 5 (four surrogates, seeds 0-4); the two-layer "
        "8-step networks' ratio gap/kernel_tail is reported, not bounded by hand; the paper's convergence rate and "
        "its regularity assumptions (not available) are not tested",
    ), figures


def snn_plot(results: Results, outcome: Outcome) -> Any:
    """Relative gradient mismatch against the threshold band fraction, one point per network."""
    from matplotlib.figure import Figure

    nets = results[len(SNN_ONE_STEP) : -1]
    fig = Figure(figsize=(5.5, 4))
    ax = fig.add_subplot()
    ax.scatter(
        [r["tail"]["band_frac"][0] for r in nets],
        [r["mismatch_rel"] for r in nets],
        s=10,
        c=[r["w_scale"] for r in nets],
    )
    ax.set_xlabel(f"band fraction P(|v - threshold| <= {SNN_WIDTH})")
    ax.set_ylabel("||g_F - grad L_F|| / ||grad L_F|| (colour: weight scale)")
    ax.set_title(f"partial Spearman {outcome.figures['partial_spearman_rel_given_scale_p']:.2f}")
    fig.tight_layout()
    return fig


AXIAL_SETTINGS = [(100.0, 0.05), (1000.0, 0.005)]
AXIAL_STEPS = tuple(Step("axial_slr.risk", {"ell": ell, "lambda_r": lam}) for ell, lam in AXIAL_SETTINGS)
"""Oracle risks at M = N = 5, d = 20, γ = 1, ε = 0.1, 20,000 draws (seed 0)."""
AXIAL_PREDICTORS = ["axial_nonlinear", "axial_linear", "axial_const", "flattened_1d"]
AXIAL_NOISE = 0.1
"""ε of y = target + ε ξ: the Bayes risk, the noise variance ε², is 0.01."""
NEAR_BAYES = 1.05
SEMILINEAR_GAP = 100.0
"""At the smaller temperature the erf predictor is within 5 % of ε² and the semi-linear ones 100 times above it."""
PGD_SEEDS = [1, 2, 3, 4]
PGD_BASE = {"m": 3, "n": 3, "d": 10, "ell": 50.0, "lr": 5e-4, "batch_size": 64, "init": "manifold", "iterations": 10000}
PGD_SCHEDULES = {
    "inverse": {"schedule": "inverse", "lambda0": 0.06, "switch": 6000, "inc": 1e-3},
    "constant_start": {"schedule": "constant", "lambda0": 0.06},
    "constant_end": {"schedule": "constant", "lambda0": 0.012},
}
"""PGD on the sphere, M = N = 3, d = 10, ℓ = 50, B = 64, lr = 5e-4, 10,000 steps from an initialisation on the
invariant manifold (seeds 1-4): the supplementary code's inverse schedule (λ = 0.06 for 6,000 steps, then
0.06/(1 + 1e-3(t − 6000)), 0.012 at the end) against a constant λ at its first and at its last value."""
PGD_ORACLE = 0.95
"""A run reaches the oracle parameters when |κ| = |kᵀk*| and sign(κ)·vᵀv* are both at least 0.95 (1 at k*, v*)."""


def axial_steps() -> tuple[Step, ...]:
    """The oracle risks at the two temperatures, then PGD under each schedule from each initialisation."""
    pgd = (
        Step("axial_slr.pgd", {**PGD_BASE, **schedule, "seed": seed})
        for schedule in PGD_SCHEDULES.values()
        for seed in PGD_SEEDS
    )
    return (*AXIAL_STEPS, *pgd)


def axial_judge(results: Results) -> Outcome:
    """Single-location regression with axial attention: the erf-inner predictor's oracle risk tends to the Bayes risk ε²
    as λ → 0 with λℓ fixed; the linear- and constant-inner simplifications stay O(1)."""
    pgd = results[len(AXIAL_STEPS) :]
    results = results[: len(AXIAL_STEPS)]
    risks = [{v["predictor"]: v for v in r["variants"]} for r in results]
    bayes = AXIAL_NOISE**2
    figures = {
        "ell_lambda": AXIAL_SETTINGS,
        "bayes_risk": bayes,
        "reported_bayes_risk": results[-1]["bayes_risk"],
        **{name: [r[name]["risk"] for r in risks] for name in AXIAL_PREDICTORS},
    }
    erf = [r["axial_nonlinear"] for r in risks]
    semi = min(risks[-1]["axial_linear"]["risk"], risks[-1]["axial_const"]["risk"])
    ok = (
        abs(results[-1]["bayes_risk"] - bayes) <= 1e-12
        and erf[-1]["risk"] <= NEAR_BAYES * bayes
        and erf[-1]["risk"] < erf[0]["risk"]
        and semi >= SEMILINEAR_GAP * bayes
    )
    findings = {
        "bayes-optimality": finding(
            ok,
            "consistent",
            "independent_computation",
            {"bayes_risk": bayes, "erf_at_most": NEAR_BAYES * bayes, "semi_linear_at_least": SEMILINEAR_GAP * bayes},
            {"erf_risk": [e["risk"] for e in erf], "semi_linear_min": semi},
            f"erf within {NEAR_BAYES - 1:.0%} of the Bayes risk; semi-linear {SEMILINEAR_GAP:g} times above it",
            "Bayes risk = noise variance eps² (hand calculation, eps = 0.1), 20,000 Monte-Carlo draws of the model; "
            "competing hypothesis: a semi-linear simplification also reaches the Bayes risk",
        )
    }
    reason = (
        f"the erf-inner risk falls from {erf[0]['risk']:.4f} to {erf[-1]['risk']:.4f} (Bayes {bayes:.4f}) while the "
        f"linear and constant inner variants stay at {risks[-1]['axial_linear']['risk']:.1f} and "
        f"{risks[-1]['axial_const']['risk']:.2f}"
    )
    if pgd:  # the PGD runs (a check given only the risk steps judges the Bayes-optimality claim alone)
        pgd_findings, pgd_figures = _pgd(pgd)
        findings.update(pgd_findings)
        figures["pgd"] = pgd_figures
        reached = pgd_figures["reached_oracle"]
        reason += "; PGD reaches the oracle parameters from " + ", ".join(
            f"{reached[name]} of {len(PGD_SEEDS)} initialisations ({name})" for name in PGD_SCHEDULES
        )
    return Outcome(figures, reason, findings)


def _pgd(results: Results) -> tuple[dict[str, Finding], dict[str, Any]]:
    """Projected gradient descent under the inverse schedule and the two constant temperatures: how many
    initialisations reach the oracle parameters (|κ| and sign(κ)ν at least 0.95)."""
    size = len(PGD_SEEDS)
    runs = {name: results[i * size : (i + 1) * size] for i, name in enumerate(PGD_SCHEDULES)}
    kappa = {name: [r["abs_kappa"] for r in rs] for name, rs in runs.items()}
    nu = {name: [r["signed_nu"] for r in rs] for name, rs in runs.items()}
    reached = {
        name: sum(k >= PGD_ORACLE and n >= PGD_ORACLE for k, n in zip(kappa[name], nu[name], strict=True))
        for name in PGD_SCHEDULES
    }
    failed = [s for s, k, n in zip(PGD_SEEDS, kappa["inverse"], nu["inverse"], strict=True) if min(k, n) < PGD_ORACLE]
    figures = {
        "seeds": PGD_SEEDS,
        "abs_kappa": kappa,
        "signed_nu": nu,
        "kappa0": [r["trajectory"][0]["abs_kappa"] for r in runs["inverse"]],
        "final_risk": {name: [r["final_risk"] for r in rs] for name, rs in runs.items()},
        "reached_oracle": reached,
        "inverse_failed_seeds": failed,
    }
    oracle = {"abs_kappa": 1.0, "signed_nu": 1.0}
    setting = (
        "axial_slr.pgd, M = N = 3, d = 10, ell = 50, B = 64, lr = 5e-4, 10,000 steps from initialisations on the "
        f"invariant manifold (seeds {', '.join(map(str, PGD_SEEDS))}); the oracle parameters k* = e1, v* = e2 are "
        "planted by hand in the data (|kappa| = sign(kappa) nu = 1 there)"
    )
    where = "; ".join(
        f"seed {s} (kappa0 {k0:.3f}) ends at |kappa| {k:.3f}, sign(kappa) nu {n:.3f}"
        for s, k0, k, n in zip(PGD_SEEDS, figures["kappa0"], kappa["inverse"], nu["inverse"], strict=True)
        if s in failed
    )
    findings = {
        "pgd-convergence": finding(
            not failed,
            "consistent",
            "paper_text",
            oracle,
            {"abs_kappa": kappa["inverse"], "signed_nu": nu["inverse"], "reached": reached["inverse"]},
            f"|kappa| and sign(kappa) nu at least {PGD_ORACLE} from every initialisation",
            setting + "; the inverse schedule is the supplementary code's (the paper's own temperature scaling was "
            "not available)" + (f"; where contradicted: {where}" if where else ""),
        ),
        "temperature-scheduling": finding(
            reached["inverse"] >= len(PGD_SEEDS) - 1 and reached["constant_start"] == reached["constant_end"] == 0,
            "consistent",
            "paper_text",
            {"inverse_reaches_oracle": "from most initialisations", "constant_reaches_oracle": 0},
            {"reached_oracle": reached, "abs_kappa": kappa},
            f"|kappa| and sign(kappa) nu at least {PGD_ORACLE}; the schedule from all but at most one initialisation, "
            "neither constant from any",
            setting + "; competing hypothesis: a constant inverse temperature (the schedule's first or last value) "
            "converges as well",
        ),
    }
    return findings, figures


def axial_plot(results: Results, outcome: Outcome) -> Any:
    """Oracle risk of the four predictors at both temperatures (log scale), Bayes risk dashed."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 4))
    ax = fig.add_subplot()
    names = AXIAL_PREDICTORS
    width = 0.38
    for i, (res, (ell, lam)) in enumerate(zip(results[: len(AXIAL_STEPS)], AXIAL_SETTINGS, strict=True)):
        by = {v["predictor"]: v["risk"] for v in res["variants"]}
        ax.bar(
            [j + (i - 0.5) * width for j in range(len(names))],
            [by[n] for n in names],
            width=width,
            label=f"l = {ell:g}, lambda = {lam:g}",
        )
    ax.axhline(outcome.figures["bayes_risk"], color="k", ls="--", lw=1, label="Bayes risk")
    ax.set_xticks(range(len(names)), ["erf inner", "linear inner", "constant inner", "flattened 1-D"])
    ax.set_yscale("log")
    ax.set_ylabel("oracle risk")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


PC_DEPTHS = [2, 4, 6, 8, 12]
PC_NETS = [(d, 8) for d in PC_DEPTHS] + [(8, 64)]
PC_DRAWS = 500
PC_LR = 1e-3
PC_FORMULA_DEPTHS = [4, 8]
PC_FORMULA_DRAWS = 50
PC_FORMULA_LRS = [PC_LR, PC_LR / 10]
PC_OPTIMAL_DRAWS = 200


def _pc_dims(depth: int, width: int) -> list[int]:
    return [20] + [width] * (depth - 1) + [5]


PC_TRAIN_RATES = [0.003, 0.01, 0.03, 0.1, 0.3]
PC_TRAIN_SEEDS = [0, 1, 2, 3, 4]
PC_TRAIN_SAMPLES = 300
PC_CHECKPOINTS = [0, 100, 300]
PC_CHECKPOINT_RATE = 0.01
PC_BENEFIT_EXCLUDED = 0.1
"""A benefit counts as absent when PC's area is not below BP's by 3 SE and 3 SE above the mean difference stays
under a tenth of BP's area (a benefit of 10 % or more is excluded)."""


@cache
def pc_training() -> dict[str, dict[str, Any]]:
    """``training_models.best_rate`` for BP and PC on the linear and the tanh network: each method at its best rate
    of ``PC_TRAIN_RATES`` (area under the test-loss curve over 300 samples, seeds 0-4)."""
    out: dict[str, dict[str, Any]] = {}
    for model, nonlinear in (("linear", False), ("tanh", True)):
        for method in ("bp", "pc"):
            best, areas, by_rate = training.best_rate(
                method, nonlinear, PC_TRAIN_RATES, PC_TRAIN_SAMPLES, PC_TRAIN_SEEDS
            )
            out[f"{model}_{method}"] = {"rate": best, "areas": areas, "mean_area_by_rate": by_rate}
    return out


@cache
def pc_checkpoint_steps() -> tuple[Step, ...]:
    """TA of BP and PC (200 draws each) at the weights of the linear network trained by BP (rate 0.01, seed 0)
    after 0, 100 and 300 samples: trained weights instead of the random ones the analysis assumes."""
    traj = training.train("bp", False, PC_CHECKPOINT_RATE, PC_TRAIN_SAMPLES, 0)
    every = PC_TRAIN_SAMPLES // (len(traj.losses) - 1)
    return tuple(
        Step(
            "predictive_coding.target_alignment",
            {"weights": [w.tolist() for w in traj.weights[t // every]], "n_draws": 200},
        )
        for t in PC_CHECKPOINTS
    )


def pc_steps() -> tuple[Step, ...]:
    """``PC_STEPS`` and the checkpoints of a trained network."""
    return (*PC_STEPS, *pc_checkpoint_steps())


PC_STEPS = (
    *(
        Step("predictive_coding.target_alignment", {"dims": _pc_dims(depth, width), "n_draws": PC_DRAWS})
        for depth, width in PC_NETS
    ),
    *(
        Step(
            "predictive_coding.target_alignment",
            {"dims": _pc_dims(depth, 8), "n_draws": PC_FORMULA_DRAWS, "lr": lr},
        )
        for lr in PC_FORMULA_LRS
        for depth in PC_FORMULA_DEPTHS
    ),
    *(
        Step(
            "predictive_coding.target_alignment",
            {"dims": _pc_dims(depth, 8), "n_draws": PC_OPTIMAL_DRAWS, "lr": PC_LR, "optimal_pc_lr": True},
        )
        for depth in PC_FORMULA_DEPTHS
    ),
)
"""Deep linear networks 20 → width → … → 5 (depth weight layers), one sample per draw, η = 1e-3, seed 0: width 8 at
depths 2-12, and depth 8 at width 64 (the depth curve); then 50 draws at depths 4 and 8, width 8, at η = 1e-3 and
1e-4 (the same draws: the generator does not depend on η), compared draw by draw with ``reference.predictive_coding``
(the analytical expressions); then 200 draws of each with PC's layer-wise rates η_l = η/(x_{l−1}ᵀa_{l−1}) (the
optimal-alignment condition)."""
PC_MATCH = 1e-9
"""The estimator's four TAs per draw against the reference's (both exact up to round-off)."""
PC_FIRST_ORDER_SHRINK = 5.0
"""The closed forms are first order in η: the finite-step TAs approach them linearly, so a tenfold smaller η must
shrink the largest per-draw difference at least fivefold (by hand, about tenfold)."""
PC_OPTIMAL = 1e-12
"""First-order TA_PC under the condition is 1 by the hand calculation Σ_l U_l U_lᵀ S⁻¹e = e; round-off only."""
PC_OPTIMAL_FINITE = 0.99
"""At η = 1e-3 the finite-step TA_PC under the condition must stay above 0.99 in every included draw."""
PC_SE = 3.0
"""Differences count when they exceed three standard errors (paired over the draws, or of two independent gaps)."""


def predictive_coding_judge(results: Results) -> Outcome:
    """*Understanding Sample Efficiency in Predictive Coding*: target alignment of one-sample updates (cosine between
    the output change and the output error, exact PC equilibrium). PC beats BP at every depth; the claim that the
    benefit is especially pronounced in deep networks is read off the curve of the gap over depths 2-12 at width 8:
    it is contradicted where the gap at the deepest network falls below the peak by more than three standard
    errors."""
    curves, rest = results[: len(PC_NETS)], results[len(PC_NETS) :]
    gaps = [r["pc_minus_bp"] for r in curves]
    ses = [r["pc_minus_bp_se"] for r in curves]
    narrow = len(PC_DEPTHS)
    curve, curve_se = gaps[:narrow], ses[:narrow]
    peak = max(range(narrow), key=curve.__getitem__)
    drop = curve[peak] - curve[-1]
    drop_se = math.hypot(curve_se[peak], curve_se[-1])
    figures = {
        "depth_width": PC_NETS,
        "draws": PC_DRAWS,
        "ta_bp": [r["ta_bp"] for r in curves],
        "ta_pc": [r["ta_pc"] for r in curves],
        "pc_minus_bp": gaps,
        "pc_minus_bp_se": ses,
        "peak_depth": PC_DEPTHS[peak],
    }
    pc_wins = all(g > PC_SE * s for g, s in zip(gaps, ses, strict=True))
    figures["pc_beats_bp_everywhere"] = pc_wins
    grows_first = curve[1] - curve[0] > PC_SE * math.hypot(curve_se[0], curve_se[1])
    narrow_more = gaps[PC_DEPTHS.index(8)] - gaps[-1] > PC_SE * math.hypot(ses[PC_DEPTHS.index(8)], ses[-1])
    deep_falls = drop > PC_SE * drop_se
    status = "contradicted" if deep_falls or not pc_wins else "consistent"
    findings = {
        "pc-more-efficient": finding(
            status == "consistent" and grows_first and narrow_more,
            "consistent",
            "paper_text",
            "PC > BP at every depth; the gap grows with depth and shrinks with width",
            {"depths": PC_DEPTHS, "gap_width_8": curve, "se": curve_se, "gap_depth_8_width_64": gaps[-1]},
            f"{PC_SE:g} standard errors",
            f"target alignment over {PC_DRAWS} single-sample draws per network; where contradicted: the gap peaks at "
            f"depth {PC_DEPTHS[peak]} ({curve[peak]:.3f}) and falls to {curve[-1]:.3f} at depth {PC_DEPTHS[-1]} "
            f"({drop / drop_se:.1f} SE); PC beats BP at every depth ({'yes' if pc_wins else 'no'}), the gap shrinks "
            f"with width ({'yes' if narrow_more else 'no'}); pre-trained networks are not tested",
        )
    }
    reason = (
        f"over {PC_DRAWS} single-sample draws PC beats BP by "
        f"{', '.join(f'{g:.3f}' for g in curve)} at depths {', '.join(map(str, PC_DEPTHS))} (width 8) and by "
        f"{gaps[-1]:.3f} at depth 8 width 64: the gap peaks at depth {PC_DEPTHS[peak]} and falls by {drop:.3f} "
        f"({drop / drop_se:.1f} standard errors) to depth {PC_DEPTHS[-1]}"
    )
    if rest:  # the formula, optimal-rate and checkpoint runs (a check given only the depth curve judges it alone)
        n_formula = len(PC_FORMULA_DEPTHS) * len(PC_FORMULA_LRS)
        n_optimal = n_formula + len(PC_FORMULA_DEPTHS)
        formulas, formula_figures = _pc_formulas(rest[:n_formula])
        optimal, optimal_figures = _pc_optimal(rest[n_formula:n_optimal], formula_figures["mean_ta_pc"])
        trajectories, trajectory_figures = _pc_trajectories(rest[n_optimal:])
        findings.update(
            {
                "analytical-expressions": formulas,
                "optimal-conditions": optimal,
                "training-trajectories": trajectories,
            }
        )
        figures.update(
            {"formulas": formula_figures, "optimal_rates": optimal_figures, "trajectories": trajectory_figures}
        )
        relative = trajectory_figures["relative_benefit"]
        reason += (
            f"; the closed forms match the estimator's first-order TAs within "
            f"{formula_figures['max_first_order_difference']:.1e} and its finite-step TAs come "
            f"{formula_figures['shrink']:.1f} times closer at a tenth of the rate; under the layer-wise rates the "
            f"first-order TA_PC is 1 within {optimal_figures['max_first_order_gap']:.1e}; over 300 samples of online "
            f"training PC's mean test loss is {relative['linear']:.1%} below BP's in the linear network and "
            f"{relative['tanh']:.1%} below it in the tanh network (each at its best rate)"
        )
    return Outcome(figures, reason, findings)


def _pc_trajectories(checkpoints: Results) -> tuple[Finding, dict[str, Any]]:
    """Full online training of a linear and a tanh network 20-8-8-8-5 on a teacher of the same shape by BP and by PC,
    each at its best rate: the area under the test-loss curve, paired over seeds; and the single-sample TA gap at
    checkpoints of the trained linear network (the estimator, weights given)."""
    runs = pc_training()
    benefit, relative, verdicts = {}, {}, {}
    for model in ("linear", "tanh"):
        bp, pc = runs[f"{model}_bp"]["areas"], runs[f"{model}_pc"]["areas"]
        diffs = [b - p for b, p in zip(bp, pc, strict=True)]
        mean = sum(diffs) / len(diffs)
        se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1) / len(diffs))
        scale = sum(bp) / len(bp)
        benefit[model] = {"bp_minus_pc": mean, "se": se, "bp_area": scale, "pc_area": sum(pc) / len(pc)}
        relative[model] = mean / scale
        if mean > PC_SE * se:
            verdicts[model] = "benefit"
        elif mean + PC_SE * se < PC_BENEFIT_EXCLUDED * scale:
            verdicts[model] = "absent"
        else:
            verdicts[model] = "undecided"
    ta_gap = [r["pc_minus_bp"] for r in checkpoints]
    ta_se = [r["pc_minus_bp_se"] for r in checkpoints]
    ta_holds = all(g > PC_SE * e for g, e in zip(ta_gap, ta_se, strict=True))
    figures = {
        "rates": {k: v["rate"] for k, v in runs.items()},
        "mean_area_by_rate": {  # null for a rate whose runs diverged
            k: {str(lr): a if math.isfinite(a) else None for lr, a in v["mean_area_by_rate"].items()}
            for k, v in runs.items()
        },
        "benefit": benefit,
        "relative_benefit": relative,
        "verdicts": verdicts,
        "checkpoint_samples": PC_CHECKPOINTS,
        "checkpoint_ta_gap": ta_gap,
        "checkpoint_ta_gap_se": ta_se,
    }
    ok = all(v == "benefit" for v in verdicts.values()) and ta_holds
    absent = [m for m, v in verdicts.items() if v == "absent"]
    where = "; ".join(
        f"{m}: PC's area {benefit[m]['pc_area']:.3f} against BP's {benefit[m]['bp_area']:.3f} (difference "
        f"{benefit[m]['bp_minus_pc']:+.4f} ± {benefit[m]['se']:.4f})"
        for m in absent
    )
    return finding(
        ok,
        "consistent",
        "paper_text",
        "PC learns faster than BP over full training, in linear and non-linear networks",
        {
            "relative_benefit": relative,
            "bp_minus_pc": {m: [b["bp_minus_pc"], b["se"]] for m, b in benefit.items()},
            "checkpoint_ta_gap": ta_gap,
        },
        f"{PC_SE:g} SE of the paired difference over seeds; absent when a benefit of "
        f"{PC_BENEFIT_EXCLUDED:.0%} of BP's area is excluded",
        "training_models: online training (one sample per update, 300 samples, seeds 0-4) of 20-8-8-8-5 networks, "
        "linear and tanh, on a teacher of the same shape; BP by the chain rule, PC at the exact equilibrium (linear) "
        "or relaxed by steps of 0.2 until every |dF/dx| < 1e-4 (tanh); each method at its best rate of 0.003-0.3 "
        "by the area under the test-loss curve; the estimator's TA gap at the BP-trained linear network's weights "
        "after 0, 100 and 300 samples; competing hypothesis: the benefit vanishes once the assumptions (one step, "
        "linear network, random weights) are violated"
        + (f"; where contradicted: {where}" if absent and not ok else ""),
        direction_holds=not absent,
    ), figures


def _pc_reference(depth: int, count: int, lr: float = PC_LR) -> list[dict[str, float]]:
    """``reference.predictive_coding`` on the estimator's draws (seed 0, width 8, ``count`` draws)."""
    weights, x, y = ref_pc.draws(0, _pc_dims(depth, 8), count)
    return [ref_pc.alignments([w[i] for w in weights], x[i], y[i], lr) for i in range(count)]


TA_KEYS = ("ta_bp", "ta_pc", "ta_bp_first_order", "ta_pc_first_order")


def _pc_formulas(results: Results) -> tuple[Finding, dict[str, Any]]:
    """Analytical target alignment: the closed forms (first order in η) against the estimator's per-draw TAs, and the
    finite-step TAs (which validate the closed forms empirically) against them."""
    match, to_finite, ta_pc, ta_bp = [], {lr: [] for lr in PC_FORMULA_LRS}, [], []
    runs = zip([lr for lr in PC_FORMULA_LRS for _ in PC_FORMULA_DEPTHS], PC_FORMULA_DEPTHS * 2, results, strict=True)
    for lr, depth, res in runs:
        ref = _pc_reference(depth, res["n_draws"], lr)
        for ours, theirs in zip(ref, res["per_draw"], strict=True):
            if theirs["ta_bp"] is None:  # a zero error: no alignment (none in these draws)
                continue
            match.append(max(abs(ours[k] - theirs[k]) for k in TA_KEYS))
            to_finite[lr].append(
                max(abs(ours["ta_bp_first_order"] - theirs["ta_bp"]), abs(ours["ta_pc_first_order"] - theirs["ta_pc"]))
            )
        if lr == PC_LR:
            ta_pc.append(res["ta_pc"])
            ta_bp.append(res["ta_bp"])
    gaps = [max(to_finite[lr]) for lr in PC_FORMULA_LRS]
    figures = {
        "depths": PC_FORMULA_DEPTHS,
        "lrs": PC_FORMULA_LRS,
        "draws": len(match),
        "max_first_order_difference": max(match),
        "max_closed_form_vs_finite": gaps,
        "shrink": gaps[0] / gaps[1],
        "mean_ta_bp": ta_bp,
        "mean_ta_pc": ta_pc,
    }
    ok = figures["max_first_order_difference"] <= PC_MATCH and figures["shrink"] >= PC_FIRST_ORDER_SHRINK
    return finding(
        ok,
        "implementation_verified",
        "independent_computation",
        {"closed_form_vs_estimator_at_most": PC_MATCH, "shrink_with_lr_over_10_at_least": PC_FIRST_ORDER_SHRINK},
        {k: figures[k] for k in ("draws", "max_first_order_difference", "max_closed_form_vs_finite", "shrink")},
        {"per_draw_match": PC_MATCH, "finite_step_approach": f"linear in lr (at least {PC_FIRST_ORDER_SHRINK:g}x)"},
        "reference.predictive_coding: per draw (the estimator's documented draws, seed 0, depths 4 and 8, width 8, "
        "50 draws each, lr 1e-3 and 1e-4) the PC equilibrium by least squares over the stacked hidden activities, "
        "both updates applied and the network run forward, and the closed forms TA_BP = cos(Σ_l ‖a_{l−1}‖² U_l U_lᵀ e, "
        "e) and TA_PC = cos(Σ_l (x_{l−1}ᵀa_{l−1}) U_l U_lᵀ S⁻¹e, e), S = Σ_l U_l U_lᵀ, derived by hand for one "
        "sample; the estimator's finite-step TAs approach them as lr falls (the empirical validation)",
    ), figures


def _pc_optimal(results: Results, equal_rate_ta_pc: list[float]) -> tuple[Finding, dict[str, Any]]:
    """The optimal-alignment condition η_l ∝ 1/(x_{l−1}ᵀa_{l−1}): the estimator's first-order TA_PC is 1 in every
    included draw, as the reference's, the finite step keeps it above 0.99, and PC at equal rates stays below."""
    gaps, ref_gaps, finite, bp, excluded = [], [], [], [], 0
    for depth, res in zip(PC_FORMULA_DEPTHS, results, strict=True):
        for ours, theirs in zip(_pc_reference(depth, res["n_draws"]), res["per_draw"], strict=True):
            if theirs["ta_pc_first_order"] is None:
                excluded += 1
                continue
            gaps.append(1.0 - theirs["ta_pc_first_order"])
            ref_gaps.append(1.0 - ours["pc_optimal_first_order"])
            finite.append(theirs["ta_pc"])
        bp.append(res["ta_bp"])
    figures = {
        "depths": PC_FORMULA_DEPTHS,
        "included_draws": len(gaps),
        "excluded_draws": excluded,
        "max_first_order_gap": max(gaps),
        "reference_max_first_order_gap": max(ref_gaps),
        "min_finite_ta_pc": min(finite),
        "mean_ta_bp_same_normalisation": bp,
        "equal_rate_mean_ta_pc": equal_rate_ta_pc,
    }
    ok = (
        max(gaps) <= PC_OPTIMAL
        and max(ref_gaps) <= PC_OPTIMAL
        and min(finite) >= PC_OPTIMAL_FINITE
        and all(t < PC_OPTIMAL_FINITE for t in equal_rate_ta_pc)
    )
    return finding(
        ok,
        "implementation_verified",
        "independent_computation",
        {"first_order_ta_pc": 1.0, "finite_step_ta_pc_at_least": PC_OPTIMAL_FINITE},
        {k: figures[k] for k in ("included_draws", "max_first_order_gap", "min_finite_ta_pc", "equal_rate_mean_ta_pc")},
        {"first_order": PC_OPTIMAL, "finite_step_at_least": PC_OPTIMAL_FINITE},
        "by hand, for one sample, η_l = η/(x_{l−1}ᵀa_{l−1}) gives Δŷ_PC = η Σ_l U_l U_lᵀ S⁻¹e = η e, so TA_PC = 1; "
        "reference.predictive_coding recomputes it per draw from its least-squares equilibrium errors (Σ_l U_l ε_l); "
        "draws with some x_{l−1}ᵀa_{l−1} <= 0 are excluded; competing hypothesis: equal rates already align "
        "optimally (their mean TA_PC stays below 0.99)",
    ), figures


def predictive_coding_plot(results: Results, outcome: Outcome) -> Any:
    """The PC − BP target-alignment gap against depth at width 8 (± 3 standard errors), depth 8 width 64 marked."""
    from matplotlib.figure import Figure

    f = outcome.figures
    n = len(PC_DEPTHS)
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.errorbar(
        PC_DEPTHS,
        f["pc_minus_bp"][:n],
        yerr=[PC_SE * s for s in f["pc_minus_bp_se"][:n]],
        fmt="o-",
        capsize=3,
        label="width 8",
    )
    ax.errorbar([8], f["pc_minus_bp"][n:], yerr=[PC_SE * s for s in f["pc_minus_bp_se"][n:]], fmt="s", label="width 64")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("depth (weight layers)")
    ax.set_ylabel(f"TA(PC) - TA(BP), mean of {PC_DRAWS} draws (bars: 3 SE)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
