"""The reproduction entry of every paper served here, in the order of the papers' list."""

from functools import cache

from service.reproductions import benchmark_checks as bench
from service.reproductions import dynamics_checks as dyn
from service.reproductions import estimator_checks as est
from service.reproductions import internals_checks as llm
from service.reproductions.base import Reproduction

STAKEBENCH_UNAVAILABLE = (
    "the model-side claims rest on the 15 LLMs' outputs, which are not released; the naive odds-direction baseline "
    "needs StakeBench's released data set (CC-BY 4.0, packaged with the paper's evaluation code: market-odds "
    "trajectories of the 2,261 resolved Polymarket and Manifold markets), which is not shipped here"
)
SCENE3D_UNAVAILABLE = (
    "the claim rests on SceneScaffold's outputs on ScanRefer, ScanQA and Scan2Cap, which are not public (the ScanNet "
    "scenes need a signed licence); the scorers are tested on worked examples"
)
FILM_UNAVAILABLE = (
    "the films were chosen for likely public-domain status, so their clips may be obtainable, but the benchmark's "
    "question set is not shipped here and the claim rests on the vision-language and audio-visual models' answers"
)


@cache
def catalog() -> tuple[Reproduction, ...]:
    """All 19 entries (built once, on first use)."""
    return (
        Reproduction(
            "vimu",
            "ViMU: video metaphor and subtext understanding",
            "ViMU's published averages (all 16 MLLMs below 50 All-Avg) recompute from its published task scores.",
            requires=("vimu",),
            judge=bench.vimu_judge,
            plot=bench.vimu_plot,
        ),
        Reproduction(
            "hyperconnections",
            "Token dynamics of Transformers with hyper-connections",
            "A one-stream hyper-connection loses stability at a_r = 1 in a pitchfork (1 + 1/N with causal attention, "
            "1 − αβμ = 0.5 with V = +I/2), and two streams have a Hopf crossing at s = 0 with frequency 1.",
            requires=("hyperconnections.token_dynamics",),
            build_steps=dyn.hc_steps,
            judge=dyn.hyperconnections_judge,
            plot=dyn.hyperconnections_plot,
        ),
        Reproduction(
            "unrolling",
            "The curse of unrolling: Jacobian error of differentiated iterations",
            "The unrolled Jacobian's error first grows, peaking near k0 + 1/ln(1/rho), before it converges.",
            requires=("unrolling.jacobian_error",),
            build_steps=dyn.unrolling_steps,
            judge=dyn.unrolling_judge,
            plot=dyn.unrolling_plot,
        ),
        Reproduction(
            "snn-threshold",
            "Hard-threshold tails in spiking-network gradient estimators",
            "The surrogate gradient's relative mismatch with the smoothed objective's gradient ranks with the membrane "
            "potential mass near the threshold beyond what weight scale explains, and LocalZO averages to the "
            "surrogate direction.",
            requires=("snn.gradient_mismatch",),
            build_steps=dyn.snn_steps,
            judge=dyn.snn_judge,
            plot=dyn.snn_plot,
        ),
        Reproduction(
            "moead-omm",
            "MOEA/D on OneMinMax with solution exchange",
            "MOEA/D covers OneMinMax's Pareto front in Θ(n²) evaluations with neighbourhood exchange (r = 1) and in "
            "Θ(n² log n) without (r = 0): fitted slopes that exclude the competing rate by 3 standard errors.",
            requires=("moead.omm_scaling",),
            build_steps=est.moead_steps,
            judge=est.moead_judge,
            plot=est.moead_plot,
            quick=False,
        ),
        Reproduction(
            "axial-slr",
            "Axial attention in single-location regression",
            "At its oracle parameters the erf-inner axial predictor's risk tends to the Bayes risk ε² as the "
            "temperature falls, while its semi-linear simplifications stay far above it.",
            requires=("axial_slr.risk", "axial_slr.pgd"),
            build_steps=dyn.axial_steps,
            judge=dyn.axial_judge,
            plot=dyn.axial_plot,
            quick=False,
        ),
        Reproduction(
            "predictive-coding",
            "Predictive coding versus backpropagation: target alignment",
            "For single samples, predictive coding's update aligns better with the target than backpropagation's, "
            "and the gap over depths 2-12 tells whether the benefit grows with depth.",
            requires=("predictive_coding.target_alignment",),
            build_steps=dyn.pc_steps,
            judge=dyn.predictive_coding_judge,
            plot=dyn.predictive_coding_plot,
            quick=False,
        ),
        Reproduction(
            "layer-patching",
            "Zero-shot model size interpolation by layer patching",
            "The layered dynamic programme finds the cheapest patch set at every added depth, never worse than "
            "KLPatch's greedy chain or the sequential orders, and strictly better when blocks differ in size.",
            requires=("layer_patching.plan",),
            build_steps=llm.layer_patching_steps,
            judge=llm.layer_patching_judge,
            plot=llm.layer_patching_plot,
        ),
        Reproduction(
            "double-descent",
            "Double descent through universal compression",
            "The maximum-likelihood predictor's test loss peaks near the interpolation threshold while the Bayes "
            "mixture's stays flat; the height of the peak is set beside the paper's factor of about five.",
            requires=("compression.double_descent",),
            build_steps=lambda: est.DD_STEPS,
            judge=est.double_descent_judge,
            plot=est.double_descent_plot,
        ),
        Reproduction(
            "cminhash",
            "C-MinHash variance",
            "The approximate variance of the Minner estimator under circulant permutations (σ, π) matches its "
            "simulated MSE, and Li & Li's exact C-MinHash variance matches its simulation.",
            requires=("minhash.variance",),
            build_steps=lambda: est.CMINHASH_STEPS,
            judge=est.cminhash_judge,
            plot=est.cminhash_plot,
        ),
        Reproduction(
            "ubench",
            "U-Bench: a benchmark of U-Net variants for medical segmentation",
            "U-Score and the Friedman test with the Nemenyi critical difference agree with SciPy and a hand "
            "calculation (a unit test of the formulas, not of the paper's findings).",
            requires=("ubench.uscore", "ubench.friedman_nemenyi"),
            build_steps=lambda: bench.UBENCH_STEPS,
            judge=bench.ubench_judge,
            plot=bench.ubench_plot,
        ),
        Reproduction(
            "televal",
            "TELEVAL: interaction-grounded evaluation of spoken language models",
            "TELEVAL's published size-weighted group means (52.93, 21.15, 40.54) recompute from its published "
            "per-dataset scores.",
            requires=("televal",),
            judge=bench.televal_judge,
            plot=bench.televal_plot,
        ),
        Reproduction(
            "stakebench",
            "StakeBench: language understanding grounded in market commitment",
            "LLMs reach Directed Accuracy between 0.506 and 0.599 and none beats the naive odds-direction baseline.",
            requires=("stakebench",),
            unavailable=STAKEBENCH_UNAVAILABLE,
        ),
        Reproduction(
            "persona-steering",
            "Persona vectors and gradient signatures of defensive training",
            "On a small trained network, steering along its persona direction reverses the gradient pressure along "
            "that axis once the steered network over-predicts the trait.",
            requires=("steering.gradient_signature",),
            build_steps=llm.steering_steps,
            judge=llm.steering_judge,
            plot=llm.steering_plot,
        ),
        Reproduction(
            "scene3d",
            "3D scene grounding, QA and dense captioning",
            "The 3D-LMM's grounding, QA and captioning scores follow the benchmarks' standard metrics.",
            requires=("scene3d_grounding", "scene3d_qa", "scene3d_densecap"),
            unavailable=SCENE3D_UNAVAILABLE,
        ),
        Reproduction(
            "raven",
            "RAVEN-Bench: reasoning over paired EO-IR aerial videos",
            "The scorer's group metrics (level scores, consistency, coherence, strict pass, cross-modal gain) agree "
            "with a hand computation on a hand-built fixture.",
            requires=("raven",),
            judge=bench.raven_judge,
            plot=bench.raven_plot,
        ),
        Reproduction(
            "fdslm",
            "State inertia in full-duplex spoken language models",
            "The lag and perception-vector estimators recover the hand-computed lag of a leaky-integrator dialogue "
            "state, with and without steering.",
            requires=("fdslm.perception_vector", "fdslm.state_lag"),
            build_steps=llm.fdslm_steps,
            judge=llm.fdslm_judge,
            plot=llm.fdslm_plot,
        ),
        Reproduction(
            "hierarchical-sae",
            "Hierarchical sparse autoencoders",
            "On planted data, a hierarchical SAE against a flat top-k SAE of the same width and active budget: "
            "recovery of the planted parent-child hierarchy and reconstruction.",
            requires=("sae.hierarchical_recovery", "sae.hierarchical_train"),
            build_steps=llm.sae_steps,
            judge=llm.sae_judge,
            plot=llm.sae_plot,
            quick=False,
        ),
        Reproduction(
            "film-mcq",
            "A Hollywood-film multiple-choice benchmark",
            "Multimodal models answer questions about Hollywood films above chance, with film-clustered intervals.",
            requires=("film_mcq",),
            unavailable=FILM_UNAVAILABLE,
        ),
    )


def get(paper: str) -> Reproduction | None:
    """The entry with slug ``paper``, or None."""
    return next((entry for entry in catalog() if entry.paper == paper), None)
