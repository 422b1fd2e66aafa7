"""Reproduction checks of the LLM-internals papers: layer patching, persona steering gradients, hierarchical SAEs and
full-duplex state inertia, each on the synthetic setting that isolates the paper's mechanism."""

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from service.reproductions.base import Outcome, Step, verdict

Results = Sequence[Mapping[str, Any]]
TIE = 1e-9
"""Costs equal within 1e-9 count as ties (the DP and the chains sum the same floats in different orders)."""

LP = "layer_patching.plan"
KNAPSACK = {"block_sizes": [2, 3, 2, 3, 3, 3], "delta": [-1.243, -0.216, -1.344, -1.606, 0.426, 0.065]}
KNAPSACK_REFERENCE = {"dp": -2.587, "dp_patched": [0, 2], "greedy": -1.606, "greedy_patched": [3]}
MONOTONE = {"block_sizes": [2, 2, 2, 3], "delta": [-1.0, -2.0, -3.0, -4.0]}
MONOTONE_REFERENCE = {"last_to_first": -4.0, "dp": -5.0}
LP_INSTANCES = 300
LP_REFERENCE_GAP = 2.2545
GAP_TOLERANCE = 5e-5
"""The reference mean gap over the same 300 seeded instances has four decimals."""


def layer_patching_steps() -> tuple[Step, ...]:
    """The knapsack example at added depth 2, the unequal-block monotone example at depth 2, then 300 additive
    instances with two-layer blocks (seed 0: M = integers(3, 20), Δ = standard_normal(M) per instance)."""
    rng = np.random.default_rng(0)
    additive = []
    for _ in range(LP_INSTANCES):
        m = int(rng.integers(3, 20))
        delta = rng.standard_normal(m).tolist()
        additive.append(Step(LP, {"block_sizes": [2] * m, "cost_model": {"kind": "unary", "delta": delta}}))
    return (
        Step(
            LP,
            {
                "block_sizes": KNAPSACK["block_sizes"],
                "cost_model": {"kind": "unary", "delta": KNAPSACK["delta"]},
                "added_depths": [2],
            },
        ),
        Step(
            LP,
            {
                "block_sizes": MONOTONE["block_sizes"],
                "cost_model": {"kind": "unary", "delta": MONOTONE["delta"]},
                "added_depths": [2],
            },
        ),
        *additive,
    )


def layer_patching_judge(results: Results) -> Outcome:
    """*Understanding Layer Patching in Model Size Interpolation*: the layered shortest path (DP over (layer, depth)) is
    never above KLPatch's greedy chain or the sequential orders; with equal blocks and additive costs greedy equals it,
    with unequal blocks it can lose."""
    knap, mono, *additive = results
    k, m = knap["plans"][0], mono["plans"][0]
    chains = ("first_to_last", "last_to_first", "klpatch")
    dp_above = 0
    greedy_off = 0
    greedy_above_sequential = 0
    gaps = []
    for res in results:
        for plan in res["plans"]:
            dp = plan["dp"]["cost"]
            dp_above += sum(plan[c]["reachable"] and plan[c]["cost"] < dp - TIE for c in chains)
    for res in additive:
        for plan in res["plans"]:
            dp, greedy = plan["dp"]["cost"], plan["klpatch"]["cost"]
            best_seq = min(plan["first_to_last"]["cost"], plan["last_to_first"]["cost"])
            greedy_off += abs(greedy - dp) > TIE
            greedy_above_sequential += greedy > best_seq + TIE
            gaps.append(best_seq - dp)
    mean_gap = float(np.mean(gaps))
    figures = {
        "knapsack_dp": [k["dp"]["patched"], k["dp"]["cost"]],
        "knapsack_greedy": [k["klpatch"]["patched"], k["klpatch"]["cost"]],
        "monotone_dp": m["dp"]["cost"],
        "monotone_last_to_first": m["last_to_first"]["cost"],
        "instances": len(additive),
        "depth_pairs": len(gaps),
        "mean_gap_sequential_minus_dp": mean_gap,
        "reference_mean_gap": LP_REFERENCE_GAP,
        "dp_above_a_chain": dp_above,
        "greedy_not_dp_additive": greedy_off,
        "greedy_above_sequential_additive": greedy_above_sequential,
    }
    ok = (
        k["dp"]["patched"] == KNAPSACK_REFERENCE["dp_patched"]
        and abs(k["dp"]["cost"] - KNAPSACK_REFERENCE["dp"]) <= TIE
        and k["klpatch"]["patched"] == KNAPSACK_REFERENCE["greedy_patched"]
        and abs(k["klpatch"]["cost"] - KNAPSACK_REFERENCE["greedy"]) <= TIE
        and abs(m["dp"]["cost"] - MONOTONE_REFERENCE["dp"]) <= TIE
        and abs(m["last_to_first"]["cost"] - MONOTONE_REFERENCE["last_to_first"]) <= TIE
        and dp_above == 0
        and greedy_off == 0
        and greedy_above_sequential == 0
        and abs(mean_gap - LP_REFERENCE_GAP) <= GAP_TOLERANCE
    )
    reason = (
        f"knapsack example at depth 2: DP {k['dp']['patched']} at {k['dp']['cost']:.3f} against greedy "
        f"{k['klpatch']['patched']} at {k['klpatch']['cost']:.3f}; unequal blocks: DP {m['dp']['cost']:g} against "
        f"last-to-first {m['last_to_first']['cost']:g}; over {len(additive)} additive instances ({len(gaps)} depths) "
        f"DP = greedy <= sequential with {greedy_off + greedy_above_sequential} exceptions, mean sequential gap "
        f"{mean_gap:.4f} (reference {LP_REFERENCE_GAP}); DP above a chain {dp_above} times"
    )
    return Outcome(verdict(ok), figures, reason)


def layer_patching_plot(results: Results, outcome: Outcome) -> Any:
    """Left: the knapsack example's costs at depth 2 per method; right: best sequential minus DP per instance depth."""
    from matplotlib.figure import Figure

    plan = results[0]["plans"][0]
    methods = [m for m in ("dp", "klpatch", "last_to_first", "first_to_last") if plan[m]["reachable"]]
    gaps = [
        min(p["first_to_last"]["cost"], p["last_to_first"]["cost"]) - p["dp"]["cost"]
        for res in results[2:]
        for p in res["plans"]
    ]
    fig = Figure(figsize=(8, 3.5))
    left, right = fig.subplots(1, 2)
    left.bar(
        methods, [plan[m]["cost"] for m in methods], color=["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"][: len(methods)]
    )
    left.set_ylabel("cost at added depth 2")
    left.set_title("knapsack example")
    right.hist(gaps, bins=30)
    right.set_xlabel("best sequential cost - DP cost")
    right.set_ylabel("(instance, depth) pairs")
    right.set_title(
        f"{len(results) - 2} additive instances, mean {outcome.figures['mean_gap_sequential_minus_dp']:.3f}"
    )
    fig.tight_layout()
    return fig


STEER = "steering.gradient_signature"
READOUT_W = (2.0, -1.0, 0.5, 1.0)
READOUT_H = (0.25, 0.5, 0.0, 0.25)
STEER_AXIS = (0.6, 0.0, 0.0, 0.8)
SOFT_TARGET = 0.7
STEER_REFERENCE = {"pressure": [0.2756470, -0.3276191, -0.4903577]}
LAW_TOLERANCE = 1e-6
"""The reference pressures (at α* = 0.2986489 + ½ and + 1) have seven decimals."""


def _pressure_grads(target: float, alphas: Sequence[float]) -> dict[str, list]:
    """Per-example gradients g = (p_α − q)·w of the readout p_α = σ(w·(h + α v̂)) at each α, one example each."""
    w, h, axis = (np.array(a) for a in (READOUT_W, READOUT_H, STEER_AXIS))
    out = {}
    for i, alpha in enumerate(alphas):
        p = 1.0 / (1.0 + math.exp(-float(w @ (h + alpha * axis))))
        out[f"q{target:g}_alpha{i}"] = [[((p - target) * w).tolist()]]
    return out


def steering_steps() -> tuple[Step, ...]:
    """Soft target q = 0.7 at α = 0, α* + ½, α* + 1 (α* = (logit q − w·h)/(w·v̂)) and one-hot q = 1 at the same α."""
    w, h, axis = (np.array(a) for a in (READOUT_W, READOUT_H, STEER_AXIS))
    star = (math.log(SOFT_TARGET / (1 - SOFT_TARGET)) - float(w @ h)) / float(w @ axis)
    alphas = [0.0, star + 0.5, star + 1.0]
    grads = {**_pressure_grads(SOFT_TARGET, alphas), **_pressure_grads(1.0, alphas)}
    params = {"grads": grads, "axis": [list(STEER_AXIS)], "baseline": f"q{SOFT_TARGET:g}_alpha0"}
    return (Step(STEER, params),)


def steering_judge(results: Results) -> Outcome:
    """*Shifting the Gradient* (Grant et al.): the sign-reversal law π(α) = (q − p_α)·(w·v̂): positive steering reverses
    the trait pressure once the steered readout over-predicts a soft target, and never with a one-hot target; the
    gradients flip (cosine −1)."""
    (res,) = results
    pressure = {s["method"]: s["layers"][0]["pressure"] for s in res["signatures"]}
    soft = [pressure[f"q{SOFT_TARGET:g}_alpha{i}"] for i in range(3)]
    onehot = [pressure[f"q1_alpha{i}"] for i in range(3)]
    cos = res["cosines"][0]["mean_gradient"]
    methods = res["methods"]
    flip = cos[methods.index(f"q{SOFT_TARGET:g}_alpha0")][methods.index(f"q{SOFT_TARGET:g}_alpha2")]
    figures = {
        "pressure_soft_target": soft,
        "reference_pressure_soft_target": STEER_REFERENCE["pressure"],
        "pressure_one_hot": onehot,
        "cos_g0_g_star_plus_1": flip,
    }
    ok = (
        all(abs(a - b) <= LAW_TOLERANCE for a, b in zip(soft, STEER_REFERENCE["pressure"], strict=True))
        and soft[0] > 0 > soft[1] > soft[2]
        and all(p > 0 for p in onehot)
        and abs(flip + 1) <= LAW_TOLERANCE
    )
    reason = (
        f"on the synthetic logistic readout (real fine-tuning gradients are not public) the trait pressure along the "
        f"steering axis goes {soft[0]:+.7f}, {soft[1]:+.7f}, {soft[2]:+.7f} at alpha = 0, alpha*+1/2, alpha*+1 "
        f"(reference {', '.join(f'{p:+.7f}' for p in STEER_REFERENCE['pressure'])}) and stays positive with a "
        f"one-hot target ({min(onehot):+.4f} at least); the gradients before and after reversal have cosine {flip:.6f}"
    )
    return Outcome(verdict(ok), figures, reason)


def steering_plot(results: Results, outcome: Outcome) -> Any:
    """Trait pressure against the steering coefficient for a soft and a one-hot target."""
    from matplotlib.figure import Figure

    f = outcome.figures
    fig = Figure(figsize=(5.5, 4))
    ax = fig.add_subplot()
    labels = ["0", "alpha* + 1/2", "alpha* + 1"]
    ax.plot(labels, f["pressure_soft_target"], "o-", label=f"soft target q = {SOFT_TARGET}")
    ax.plot(labels, f["reference_pressure_soft_target"], "kx", label="reference")
    ax.plot(labels, f["pressure_one_hot"], "s-", label="one-hot target q = 1")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("steering coefficient")
    ax.set_ylabel("pressure along the trait axis")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


SAE_STEPS = (Step("sae.hierarchical_recovery", {"seed": 0}),)
"""Planted hierarchy at the defaults: 8 orthonormal parents in R^64 with 4 simplex children each, N = 12, m = 8,
s = 3, k = 3, 1500 steps of 256."""
SAE_PASS = {"max_fvu": 0.08, "parent_mean_cos": 0.95, "unique_parents": 8, "child_mean_cos": 0.78, "consistency": 24}
"""The reference measurement's pass criteria (its five seeds: FVU 0.045-0.057, parent cos 0.966-0.989, child cos
0.83-0.925, consistency 26-29 of 32)."""


def sae_judge(results: Results) -> Outcome:
    """*Incorporating Hierarchical Semantics in Sparse Autoencoder Architectures*: after training, the H-SAE's decoder
    matches every planted parent (max cosine), its child atoms match the children far better than the random
    initialisation, and most children sit under their own parent."""
    (res,) = results
    tr, rnd = res["trained"], res["random_init"]
    figures = {
        "test_fvu": res["test"]["fvu"],
        "parent_mean_cos": tr["parent_mean_cos"],
        "unique_parent_matches": tr["unique_parent_matches"],
        "child_mean_cos": tr["child_mean_cos"],
        "hierarchy_consistency": tr["hierarchy_consistency"],
        "n_true_children": tr["n_true_children"],
        "random_init_parent_mean_cos": rnd["parent_mean_cos"],
        "random_init_child_mean_cos": rnd["child_mean_cos"],
        "random_init_hierarchy_consistency": rnd["hierarchy_consistency"],
    }
    ok = (
        res["test"]["fvu"] < SAE_PASS["max_fvu"]
        and tr["parent_mean_cos"] > SAE_PASS["parent_mean_cos"]
        and tr["unique_parent_matches"] == SAE_PASS["unique_parents"]
        and tr["child_mean_cos"] > SAE_PASS["child_mean_cos"]
        and tr["hierarchy_consistency"] >= SAE_PASS["consistency"]
        and tr["child_mean_cos"] > rnd["child_mean_cos"]
        and tr["hierarchy_consistency"] > rnd["hierarchy_consistency"]
    )
    reason = (
        f"on planted synthetic data (the paper's LLM activations are not used) the trained H-SAE reaches test FVU "
        f"{res['test']['fvu']:.3f}, parent cosine {tr['parent_mean_cos']:.3f} ({tr['unique_parent_matches']} unique), "
        f"child cosine {tr['child_mean_cos']:.3f} and {tr['hierarchy_consistency']}/{tr['n_true_children']} children "
        f"under their parent, against {rnd['child_mean_cos']:.3f} and {rnd['hierarchy_consistency']} at random "
        "initialisation (pass: FVU < 0.08, parent > 0.95 with 8 unique, child > 0.78, >= 24)"
    )
    return Outcome(verdict(ok), figures, reason)


def sae_plot(results: Results, outcome: Outcome) -> Any:
    """Recovery scores, trained against random initialisation."""
    from matplotlib.figure import Figure

    f = outcome.figures
    n = f["n_true_children"]
    labels = ["parent mean cos", "child mean cos", "hierarchy consistency"]
    trained = [f["parent_mean_cos"], f["child_mean_cos"], f["hierarchy_consistency"] / n]
    random = [
        f["random_init_parent_mean_cos"],
        f["random_init_child_mean_cos"],
        f["random_init_hierarchy_consistency"] / n,
    ]
    fig = Figure(figsize=(6, 3.5))
    ax = fig.add_subplot()
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], trained, width=0.4, label="trained")
    ax.bar([i + 0.2 for i in x], random, width=0.4, label="random init")
    ax.set_xticks(list(x), labels)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


FD_D, FD_T, FD_T0 = 256, 48, 16
FD_DELAY, FD_TAU, FD_NOISE = 8.0, 2.0, 0.3
FD_ALPHAS = [0.0, 0.2, 0.4, 0.6]
FD_DIALOGUES = 20
FD_VECTOR_SEED = 7


def _generator(delay: float, alpha: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One dialogue of h(t) = μ_G + (σ((t − t₀ − L)/τ) + α)·v + noise·E[t], v = μ_P − μ_G (μ_P, μ_G, E drawn in
    that order from default_rng(seed)); returns (h, v̂, midpoint)."""
    rng = np.random.default_rng(seed)
    mu_p = rng.standard_normal(FD_D)
    mu_g = rng.standard_normal(FD_D)
    e = rng.standard_normal((FD_T, FD_D))
    v = mu_p - mu_g
    t = np.arange(FD_T)
    h = mu_g + (1.0 / (1.0 + np.exp(-(t - FD_T0 - delay) / FD_TAU)) + alpha)[:, None] * v + FD_NOISE * e
    return h, v / np.linalg.norm(v), (mu_p + mu_g) / 2


def fdslm_steps() -> tuple[Step, ...]:
    """The perception vector of one generated dialogue (delay 4, seed 7; frames before the onset generative, from
    10 frames after it perceptive), then the lag of 20 dialogues (delay 8, τ = 2, noise 0.3, seeds 8000-8019),
    scored on their planted axes, for each steering coefficient α with the steering law's prediction."""
    h, _, _ = _generator(4.0, 0.0, FD_VECTOR_SEED)
    labels = [-1] * FD_T0 + [0] * 10 + [1] * (FD_T - FD_T0 - 10)
    steps = [Step("fdslm.perception_vector", {"hidden_states": h[:, None, :].tolist(), "labels": labels})]
    for alpha in FD_ALPHAS:
        scores = []
        for r in range(FD_DIALOGUES):
            h, unit, mid = _generator(FD_DELAY, alpha, 8000 + r)
            scores.append(((h - mid) @ unit).tolist())
        law = {"delay": FD_DELAY, "tau": FD_TAU, "alphas": [alpha]}
        steps.append(Step("fdslm.state_lag", {"scores": scores, "onset": FD_T0, "steering": law}))
    return tuple(steps)


PLANTED_COS = 0.99
"""Noise 0.3 over 22 and 16 frames moves the estimated vector by about 1.6 against a norm near 22: cosine ≈ 0.997."""


def fdslm_judge(results: Results) -> Outcome:
    """*Overcoming State Inertia in Full-Duplex Spoken Language Models* (Chang et al.): the perception vector
    v = μ_P − μ_G recovers the planted state axis; the lag after an onset (first K = 2 perceptive frames) shrinks with
    the steering coefficient, its median following x* = L + τ ln((½ − α)/(½ + α))."""
    vec, *lags = results
    layer = vec["layers"][0]
    _, unit, _ = _generator(4.0, 0.0, FD_VECTOR_SEED)
    cos = float(np.dot(layer["vector"], unit) / layer["norm"])
    medians = [r["median_observed_frames"] for r in lags]
    predicted = [r["predicted"][0]["lag_frames"] for r in lags]
    figures = {
        "perception_vector_auc": layer["auc"],
        "perception_vector_cos_planted": cos,
        "alphas": FD_ALPHAS,
        "median_lag_frames": medians,
        "predicted_lag_frames": predicted,
        "lag_frames": [r["lag_frames"] for r in lags],
        "censoring_rate": [r["censoring_rate"] for r in lags],
    }
    unsteered = lags[0]["lag_frames"]
    ok = (
        cos > PLANTED_COS
        and layer["auc"] == 1.0
        and all(lag in (FD_DELAY, FD_DELAY + 1) for lag in unsteered)
        and medians == predicted
        and all(a > b for a, b in itertools.pairwise(medians))
    )
    reason = (
        f"on the logistic state-transition generator (real FD-SLM hidden states are not public) the perception vector "
        f"has cosine {cos:.4f} with the planted axis and AUC {layer['auc']:g}; the unsteered lag is "
        f"{int(FD_DELAY)} or {int(FD_DELAY) + 1} frames in every dialogue, and steering with alpha = "
        f"{', '.join(f'{a:g}' for a in FD_ALPHAS)} gives median lags {medians} against the law's {predicted}"
    )
    return Outcome(verdict(ok), figures, reason)


def fdslm_plot(results: Results, outcome: Outcome) -> Any:
    """Fraction of dialogues in the perceptive state after the onset, one curve per steering coefficient."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    for res, alpha in zip(results[1:], FD_ALPHAS, strict=True):
        frac = res["frac_perceptive"]
        ax.step(
            range(len(frac)), frac, where="post", label=f"alpha = {alpha:g}, median lag {res['median_observed_frames']}"
        )
    ax.set_xlabel("frames after the onset (80 ms each)")
    ax.set_ylabel("fraction perceptive")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
