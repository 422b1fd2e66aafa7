"""The reproduction entry of every paper served here, in the order of the papers' list."""

from functools import cache

from service.reproductions import benchmark_checks as bench
from service.reproductions import dynamics_checks as dyn
from service.reproductions import estimator_checks as est
from service.reproductions import internals_checks as llm
from service.reproductions.base import Reproduction

NO_MODEL_OUTPUTS = (
    "the claim rests on model outputs over the benchmark's items, which are not distributed with the paper in a "
    "form this service can fetch; the scoring protocol itself is tested on the worked examples"
)


@cache
def catalog() -> tuple[Reproduction, ...]:
    """All 19 entries (built once, on first use)."""
    return (
        Reproduction(
            "vimu",
            "ViMU: video metaphor and subtext understanding",
            "Even the strongest of 16 MLLMs stays below 50 All-Avg on ViMU, and its averages follow from the task "
            "scores.",
            requires=("vimu",),
            judge=bench.vimu_judge,
            plot=bench.vimu_plot,
            headline=("best_model", "best_all_avg", "max_recompute_error"),
        ),
        Reproduction(
            "hyperconnections",
            "Token dynamics of Transformers with hyper-connections",
            "A one-stream hyper-connection loses stability at a_r = 1 in a pitchfork (1 + 1/N with causal attention, "
            "1 − αβμ = 0.5 with V = +I/2), and two streams have a Hopf crossing at s = 0 with frequency 1.",
            requires=("hyperconnections.token_dynamics",),
            steps=dyn.HC_STEPS,
            judge=dyn.hyperconnections_judge,
            plot=dyn.hyperconnections_plot,
            headline=("pitchfork_at", "causal_at", "consensus_at", "hopf_at", "hopf_omega"),
        ),
        Reproduction(
            "unrolling",
            "The curse of unrolling: Jacobian error of differentiated iterations",
            "The unrolled Jacobian's error first grows, peaking near k0 + 1/ln(1/rho), before it converges.",
            requires=("unrolling.jacobian_error",),
            steps=dyn.unrolling_steps(),
            judge=dyn.unrolling_judge,
            plot=dyn.unrolling_plot,
            headline=("t_peak", "predicted_t_peak", "peak_rel_error", "bound_violations"),
        ),
        Reproduction(
            "snn-threshold",
            "Hard-threshold tails in spiking-network gradient estimators",
            "The surrogate gradient's mismatch with the smoothed objective's gradient ranks with the membrane "
            "potential mass near the threshold, and LocalZO averages to the surrogate direction.",
            requires=("snn.gradient_mismatch",),
            steps=dyn.SNN_STEPS,
            judge=dyn.snn_judge,
            plot=dyn.snn_plot,
            headline=("spearman_band_vs_mismatch_abs", "reference_spearman", "localzo_mc_rel_err"),
        ),
        Reproduction(
            "moead-omm",
            "MOEA/D on OneMinMax with solution exchange",
            "MOEA/D covers OneMinMax's Pareto front in Θ(n²) evaluations with neighbourhood exchange (r ≥ 1) "
            "and in Θ(n² log n) without (r = 0).",
            requires=("moead.omm_scaling",),
            steps=est.MOEAD_STEPS,
            judge=est.moead_judge,
            plot=est.moead_plot,
            headline=("slope_r0", "slope_r0_log_adjusted", "slope_r1"),
            quick=False,
        ),
        Reproduction(
            "axial-slr",
            "Axial attention in single-location regression",
            "At its oracle parameters the erf-inner axial predictor's risk tends to the Bayes risk ε² as the "
            "temperature falls, while its semi-linear simplifications stay far above it.",
            requires=("axial_slr.risk",),
            steps=dyn.AXIAL_STEPS,
            judge=dyn.axial_judge,
            plot=dyn.axial_plot,
            headline=("axial_nonlinear", "reference_axial_nonlinear", "axial_linear", "axial_const"),
        ),
        Reproduction(
            "predictive-coding",
            "Predictive coding versus backpropagation: target alignment",
            "For single samples, predictive coding's update aligns better with the target than backpropagation's.",
            requires=("predictive_coding.target_alignment",),
            steps=dyn.PC_STEPS,
            judge=dyn.predictive_coding_judge,
            plot=dyn.predictive_coding_plot,
            headline=("depth_width", "pc_minus_bp", "draws"),
        ),
        Reproduction(
            "layer-patching",
            "Zero-shot model size interpolation by layer patching",
            "The layered dynamic programme finds the cheapest patch set at every added depth, never worse than "
            "KLPatch's greedy chain or the sequential orders, and strictly better when blocks differ in size.",
            requires=("layer_patching.plan",),
            steps=llm.layer_patching_steps(),
            judge=llm.layer_patching_judge,
            plot=llm.layer_patching_plot,
            headline=("knapsack_dp", "knapsack_greedy", "mean_gap_sequential_minus_dp", "dp_above_a_chain"),
        ),
        Reproduction(
            "double-descent",
            "Double descent through universal compression",
            "The maximum-likelihood predictor's test loss peaks at the interpolation threshold p = n, while the "
            "Bayes mixture's stays flat.",
            requires=("compression.double_descent",),
            steps=est.DD_STEPS,
            judge=est.double_descent_judge,
            plot=est.double_descent_plot,
            headline=("peak_width", "peak_ratio", "bayes_max_over_min"),
        ),
        Reproduction(
            "cminhash",
            "C-MinHash variance",
            "C-MinHash with circulant permutations (σ, π) estimates Jaccard similarity with variance below the "
            "classic J(1−J)/K.",
            requires=("minhash.variance", "minhash.simulate"),
            steps=est.CMINHASH_STEPS,
            judge=est.cminhash_judge,
            plot=est.cminhash_plot,
            headline=("ratio_exact", "mc_over_exact", "trials"),
        ),
        Reproduction(
            "ubench",
            "U-Bench: a benchmark of U-Net variants for medical segmentation",
            "U-Score combines accuracy and efficiency (19.2588 for U-Net on BUSI), and the Friedman test with the "
            "Nemenyi critical difference ranks the models.",
            requires=("ubench.uscore", "ubench.friedman_nemenyi"),
            steps=bench.UBENCH_STEPS,
            judge=bench.ubench_judge,
            plot=bench.ubench_plot,
            headline=("uscore_unet_busi", "uscore_midpoint", "chi2", "p", "cd"),
        ),
        Reproduction(
            "televal",
            "TELEVAL: interaction-grounded evaluation of spoken language models",
            "TELEVAL's size-weighted group means (52.93, 21.15, 40.54) follow from its per-dataset scores.",
            requires=("televal",),
            judge=bench.televal_judge,
            plot=bench.televal_plot,
            headline=("basic_knowledge_gpt4o", "dialect_gpt4o", "dialect_qwen"),
        ),
        Reproduction(
            "stakebench",
            "StakeBench: language understanding grounded in market commitment",
            "LLMs reach Directed Accuracy between 0.506 and 0.599 and none beats the naive odds-direction baseline.",
            requires=("stakebench",),
            unavailable=NO_MODEL_OUTPUTS,
        ),
        Reproduction(
            "persona-steering",
            "Persona vectors and gradient signatures of defensive training",
            "Positive preventative steering reverses the gradient pressure along the trait axis once the steered "
            "model over-predicts the trait.",
            requires=("steering.gradient_signature",),
            steps=llm.steering_steps(),
            judge=llm.steering_judge,
            plot=llm.steering_plot,
            headline=("pressure_soft_target", "pressure_one_hot", "cos_g0_g_star_plus_1"),
        ),
        Reproduction(
            "scene3d",
            "3D scene grounding, QA and dense captioning",
            "The 3D-LMM's grounding, QA and captioning scores follow the benchmarks' standard metrics.",
            requires=("scene3d_grounding", "scene3d_qa", "scene3d_densecap"),
            unavailable=NO_MODEL_OUTPUTS,
        ),
        Reproduction(
            "raven",
            "RAVEN-Bench: reasoning over paired EO-IR aerial videos",
            "Aggregate accuracy overestimates reliable EO-IR reasoning: 83 % of questions right can come with no "
            "question group passed, and the cross-modal gain G_cm follows from the level scores.",
            requires=("raven",),
            judge=bench.raven_judge,
            plot=bench.raven_plot,
            headline=("eo_ir_overall_acc", "eo_ir_strict_pass", "eo_ir_s_main", "g_cm"),
        ),
        Reproduction(
            "fdslm",
            "State inertia in full-duplex spoken language models",
            "The model's internal state lags the user's speech, and steering along the perception vector shortens "
            "the lag.",
            requires=("fdslm.perception_vector", "fdslm.state_lag"),
            steps=llm.fdslm_steps(),
            judge=llm.fdslm_judge,
            plot=llm.fdslm_plot,
            headline=("perception_vector_cos_planted", "median_lag_frames", "predicted_lag_frames"),
        ),
        Reproduction(
            "hierarchical-sae",
            "Hierarchical sparse autoencoders",
            "A hierarchical SAE recovers a planted parent-child concept hierarchy better than a random initialisation.",
            requires=("sae.hierarchical_recovery",),
            steps=llm.SAE_STEPS,
            judge=llm.sae_judge,
            plot=llm.sae_plot,
            headline=("child_mean_cos", "random_init_child_mean_cos", "hierarchy_consistency", "test_fvu"),
            quick=False,
        ),
        Reproduction(
            "film-mcq",
            "A Hollywood-film multiple-choice benchmark",
            "Multimodal models answer questions about Hollywood films above chance, with film-clustered intervals.",
            requires=("film_mcq",),
            unavailable="the film clips are copyrighted and the question set is not public; " + NO_MODEL_OUTPUTS,
        ),
    )


def get(paper: str) -> Reproduction | None:
    """The entry with slug ``paper``, or None."""
    return next((entry for entry in catalog() if entry.paper == paper), None)
