"""The reproduction package's small parts on hand-made inputs: the outcome's verdict, a finding's status rule, a
check's status against the registry, the claim ledger's badge, counts and update, and the numpy models the checks
train apart from the estimators (written for the mutation run's survivors, docs/testing.md)."""

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest

from service.reproductions import synthetic_models as sm
from service.reproductions import training_models as training
from service.reproductions.base import Outcome, Reproduction, Step, finding, status_of
from service.reproductions.claims import STATUS_ORDER, Claim, Evidence, Finding, apply, badge, counts
from service.reproductions.reference import fdslm as ref_fdslm
from service.reproductions.reference import hyperconnections as ref_hc
from service.reproductions.reference import layer_patching as ref_lp
from service.reproductions.reference import minhash as ref_minhash
from service.reproductions.reference import predictive_coding as ref_pc
from service.reproductions.reference import ranks as ref_ranks
from service.reproductions.reference import raven as ref_raven
from service.reproductions.reference import sae as ref_sae
from service.reproductions.reference import slopes as ref_slopes
from service.reproductions.reference import ubench as ref_ubench
from service.reproductions.reference import unrolling as ref_unrolling


def _found(status: str) -> Finding:
    return Finding(status, "paper_text", 1, 1, 0, "by hand")


def test_an_outcome_passes_unless_a_finding_is_contradicted() -> None:
    assert Outcome({}, "r").passed  # nothing found, nothing contradicted
    assert Outcome({}, "r", {"a": _found("not_checked"), "b": _found("reproduced")}).passed
    assert not Outcome({}, "r", {"a": _found("reproduced"), "b": _found("contradicted")}).passed
    assert not Outcome({}, "r", {"a": _found("contradicted")}).passed
    assert Outcome({"x": 1}, "r").findings == {}


def test_a_finding_earns_its_status_or_is_not_checked_or_contradicted() -> None:
    ok = finding(True, "consistent", "independent_computation", 2.0, 2.1, 0.2, "reference.x")
    assert ok == Finding("consistent", "independent_computation", 2.0, 2.1, 0.2, "reference.x")
    missed = finding(False, "consistent", "paper_text", 2.0, 3.0, 0.2, "p", direction_holds=True)
    assert missed == Finding("not_checked", "paper_text", 2.0, 3.0, 0.2, "p")
    wrong = finding(False, "reproduced", "published_table", [1], [2], {"t": 1}, "c", direction_holds=False)
    assert wrong == Finding("contradicted", "published_table", [1], [2], {"t": 1}, "c")
    assert finding(False, "reproduced", "paper_text", 1, 2, 0, "c").status == "contradicted"  # direction not held
    assert finding(True, "reproduced", "paper_text", 1, 1, 0, "c", direction_holds=True).status == "reproduced"


def test_status_of_an_entry() -> None:
    def judge(results):
        return Outcome({}, "r")

    ready = Reproduction("p", "t", "c", requires=("a", "b"), judge=judge)
    assert status_of(ready, {"a", "b", "c"}) == "ready"
    assert status_of(ready, {"a", "b"}) == "ready"  # exactly what it needs
    assert status_of(ready, {"a"}) == "pending"
    assert status_of(Reproduction("p", "t", "c", requires=("a",)), {"a"}) == "pending"  # no judge written
    assert status_of(Reproduction("p", "t", "c", judge=judge), set()) == "ready"  # needs nothing
    gone = Reproduction("p", "t", "c", requires=("a",), judge=judge, unavailable="the data are private")
    assert status_of(gone, {"a"}) == "not_reproducible"
    assert status_of(Reproduction("p", "t", "c", unavailable="x"), set()) == "not_reproducible"


def test_steps_are_built_on_each_use() -> None:
    calls = []

    def build() -> tuple[Step, ...]:
        calls.append(1)
        return (Step("e", {"n": 1}),)

    entry = Reproduction("p", "t", "c", build_steps=build)
    assert entry.steps == (Step("e", {"n": 1}),) and entry.steps == (Step("e", {"n": 1}),)
    assert len(calls) == 2
    assert Reproduction("p", "t", "c").steps == ()
    assert Reproduction("p", "t", "c").quick and Reproduction("p", "t", "c").unavailable == ""


def _claim(cid: str, status: str, headline: bool = True) -> Claim:
    extra = (
        {"expected_source": "paper_text"} if status in ("reproduced", "consistent", "implementation_verified") else {}
    )
    if status.startswith("needs"):
        extra["needs"] = "a data set"
    return Claim(id=cid, text="A sentence.", headline=headline, status=status, **extra)


def test_badge_takes_the_lowest_headline_status_in_the_written_order() -> None:
    order = ["contradicted", "not_checked", "needs_data", "implementation_verified", "consistent", "reproduced"]
    for i, low in enumerate(order):
        claims = [_claim(f"c{j}", s) for j, s in enumerate(order[i:])]
        assert badge(claims) == low
        assert badge(list(reversed(claims))) == low
    assert badge([_claim("a", "needs_models"), _claim("b", "implementation_verified")]) == "needs_models"
    assert badge([_claim("a", "contradicted", headline=False), _claim("b", "consistent")]) == "consistent"
    assert badge([]) == "not_checked"


def test_counts_list_every_status() -> None:
    claims = [_claim("a", "consistent"), _claim("b", "consistent"), _claim("c", "needs_data", headline=False)]
    assert counts(claims) == {
        "contradicted": 0,
        "not_checked": 0,
        "needs_data": 1,
        "needs_models": 0,
        "implementation_verified": 0,
        "consistent": 2,
        "reproduced": 0,
    }
    assert list(counts([])) == list(STATUS_ORDER)
    assert STATUS_ORDER == (
        "contradicted",
        "not_checked",
        "needs_data",
        "needs_models",
        "implementation_verified",
        "consistent",
        "reproduced",
    )


def test_apply_puts_each_finding_in_place_and_keeps_the_rest() -> None:
    kept = _claim("kept", "needs_data")
    named = Claim(id="named", text="B.", headline=False, status="not_checked", mutation="m", needs="n")
    found = Finding("consistent", "independent_computation", {"e": 1}, [2.0], 0.5, "reference.x by hand")
    out = apply([kept, named], {"named": found, "absent": found}, ["r1", "r2"], "/plot.svg")
    assert out[0] == kept
    assert out[1] == Claim(
        id="named",
        text="B.",
        headline=False,
        status="consistent",
        expected_source="independent_computation",
        expected={"e": 1},
        measured=[2.0],
        tolerance=0.5,
        evidence=Evidence(run_ids=["r1", "r2"], plot_url="/plot.svg", computation="reference.x by hand"),
        mutation="m",
        needs="n",
    )
    assert apply([named], {"named": found}, [], None)[0].evidence == Evidence(computation="reference.x by hand")


def _mean_ce(net: sm.SteeringNet, x: np.ndarray, y: np.ndarray) -> float:
    a = x @ net.w0.T
    h = np.tanh(a @ net.w1.T + net.b1)
    p = 1.0 / (1.0 + np.exp(-(h @ net.w2 + net.b2)))
    return float(np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p)))


def _small_net(seed: int) -> sm.SteeringNet:
    rng = np.random.default_rng(seed)
    return sm.SteeringNet(
        rng.standard_normal((3, 10)), rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal(4), 0.3
    )


def test_steering_net_forward_by_hand() -> None:
    """One input, a = W0 x + shift, h = tanh(W1 a + b1), p = σ(w2·h + b2), each written out."""
    net = sm.SteeringNet(
        w0=np.array([[1.0, 0.0], [0.0, 2.0]]),
        w1=np.array([[1.0, -1.0]]),
        b1=np.array([0.5]),
        w2=np.array([2.0]),
        b2=-1.0,
    )
    a, h, p = net.forward(np.array([[1.0, 1.0]]), np.array([0.0, 1.0]))
    assert a.tolist() == [[1.0, 3.0]]
    assert h[0, 0] == pytest.approx(np.tanh(1.0 - 3.0 + 0.5), abs=1e-15)
    assert p[0] == pytest.approx(1 / (1 + np.exp(-(2 * np.tanh(-1.5) - 1.0))), abs=1e-15)


def test_activation_gradients_are_the_cross_entropys_by_finite_differences() -> None:
    net = _small_net(5)
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((4, 10)), np.array([1.0, 0.0, 1.0, 0.0])
    shift = rng.standard_normal(3)
    grads = net.activation_gradients(x, y, shift)

    def loss(row: int, a_shift: np.ndarray) -> float:
        _, _, p = net.forward(x[row : row + 1], a_shift)
        return float(-y[row] * np.log(p[0]) - (1 - y[row]) * np.log(1 - p[0]))

    for row in range(4):
        for k in range(3):
            e = np.zeros(3)
            e[k] = 1e-6
            fd = (loss(row, shift + e) - loss(row, shift - e)) / 2e-6
            assert grads[row, k] == pytest.approx(fd, abs=1e-7)


def test_teacher_labels_follow_the_documented_rule() -> None:
    x, y = sm.teacher_data(2000, 3)
    assert x.shape == (2000, 10) and set(np.unique(y)) == {0.0, 1.0}
    assert abs(x.mean()) < 0.05 and x.std() == pytest.approx(1.0, abs=0.03)
    score = np.tanh(x[:, 0] + x[:, 1]) + 0.5 * x[:, 2] * x[:, 3]
    agree = np.mean((score > 0) == (y == 1))
    assert 0.85 < agree < 0.99  # noise 0.3 flips only the labels near the boundary
    assert np.all(y[score > 1.5] == 1) and np.all(y[score < -1.5] == 0)  # 5 noise sd: never flipped
    other = np.tanh(x[:, 0] - x[:, 1]) + 0.5 * x[:, 2] * x[:, 3]  # a wrong teacher agrees far less
    assert np.mean((other > 0) == (y == 1)) < 0.8


def _assert_half_gradient_step(
    before: sm.SteeringNet, after: sm.SteeringNet, x: np.ndarray, y: np.ndarray, fields: tuple[str, ...]
) -> None:
    """Every entry of ``fields`` moved from ``before`` to ``after`` by −0.5 × the central difference (h = 1e-6) of
    the mean cross-entropy over (x, y) at ``before``."""
    for field in fields:
        value = np.atleast_1d(np.asarray(getattr(before, field), dtype=float))
        moved = np.atleast_1d(np.asarray(getattr(after, field), dtype=float))
        for idx in np.ndindex(value.shape):
            shifted = []
            for sign in (1, -1):
                v = value.copy()
                v[idx] += sign * 1e-6
                shifted.append(replace(before, **{field: v if field != "b2" else float(v[0])}))
            fd = (_mean_ce(shifted[0], x, y) - _mean_ce(shifted[1], x, y)) / 2e-6
            assert moved[idx] - value[idx] == pytest.approx(-0.5 * fd, abs=1e-8), (field, idx)


def test_one_training_step_is_half_the_mean_cross_entropy_gradient() -> None:
    """steps = 0 gives the initial network; one step moves every parameter by −0.5 × its gradient of the mean
    cross-entropy over the 1000 teacher examples (central differences)."""
    seed = 2
    start = sm.train_steering_net(seed, steps=0, width=3, hidden=2)
    after = sm.train_steering_net(seed, steps=1, width=3, hidden=2)
    x, y = sm.teacher_data(1000, seed + 1)
    assert start.b2 == 0.0 and not start.b1.any()
    assert start.w0.shape == (3, 10) and start.w1.shape == (2, 3) and start.w2.shape == (2,)
    _assert_half_gradient_step(start, after, x, y, ("w0", "w1", "b1", "w2", "b2"))
    # initial scale 1/sqrt(fan-in): sample spreads of the 30 + 6 entries
    wide = sm.train_steering_net(seed, steps=0, width=400, hidden=60)
    assert wide.w0.std() == pytest.approx(1 / np.sqrt(10), rel=0.025)  # 4000 draws: 1.1 % standard error
    assert wide.w1.std() == pytest.approx(1 / np.sqrt(400), rel=0.025)
    assert wide.w2.std() == pytest.approx(1 / np.sqrt(60), rel=0.3)


def test_the_second_training_step_uses_the_biases_the_first_one_learnt() -> None:
    """From step 1 to step 2 (b1, b2 no longer 0) every parameter moves by −0.5 × its gradient at step 1."""
    seed = 4
    mid = sm.train_steering_net(seed, steps=1, width=3, hidden=2)
    after = sm.train_steering_net(seed, steps=2, width=3, hidden=2)
    x, y = sm.teacher_data(1000, seed + 1)
    assert mid.b2 != 0.0 and mid.b1.all()
    _assert_half_gradient_step(mid, after, x, y, ("w1", "b1", "w2", "b2"))


@pytest.mark.slow  # 400 full-batch steps, twice (about a second)
def test_the_default_schedule_is_400_steps() -> None:
    default, explicit = sm.train_steering_net(3), sm.train_steering_net(3, steps=400, width=16, hidden=32)
    assert default.w0.tolist() == explicit.w0.tolist() and default.b2 == explicit.b2


def test_teacher_labels_replayed_on_the_generator() -> None:
    """x first, then the label noise ξ, from default_rng(seed): y = 1[tanh(x₀ + x₁) + ½x₂x₃ + 0.3ξ > 0]."""
    x, y = sm.teacher_data(500, 12)
    rng = np.random.default_rng(12)
    x_exp = rng.standard_normal((500, 10))
    xi = rng.standard_normal(500)
    assert x.tolist() == x_exp.tolist()
    expected = np.tanh(x_exp[:, 0] + x_exp[:, 1]) + 0.5 * x_exp[:, 2] * x_exp[:, 3] + 0.3 * xi > 0
    assert y.tolist() == expected.astype(float).tolist()


def test_training_lowers_the_loss() -> None:
    x, y = sm.teacher_data(1000, 8)
    start, net = sm.train_steering_net(7, steps=0), sm.train_steering_net(7, steps=60)
    assert net.w0.shape == (16, 10) and net.w1.shape == (32, 16)  # the default widths
    assert _mean_ce(net, x, y) < 0.6 * _mean_ce(start, x, y)


def test_persona_direction_is_the_difference_of_class_means() -> None:
    """W0 = I (a = x), W1 = [1 0], w2 = [10]: p > ½ exactly when x₀ > 0."""
    net = sm.SteeringNet(np.eye(2), np.array([[1.0, 0.0]]), np.zeros(1), np.array([10.0]), 0.0)
    x = np.array([[1.0, 5.0], [3.0, 1.0], [-1.0, 2.0], [-2.0, 0.0], [-3.0, 4.0]])
    assert sm.persona_direction(net, x).tolist() == pytest.approx([2.0 - (-2.0), 3.0 - 2.0])
    x = np.array([[1.0, 5.0], [0.0, 1.0]])  # x₀ = 0: p = ½ counts as negative
    assert sm.persona_direction(net, x).tolist() == pytest.approx([1.0, 4.0])
    # a layer of width 3 on 2 inputs: a = (x₀, x₁, x₀ + x₁), positive when x₀ > 0
    wide = sm.SteeringNet(
        np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([[1.0, 0.0, 0.0]]), np.zeros(1), np.array([10.0]), 0.0
    )
    x = np.array([[2.0, 1.0], [-1.0, 3.0], [-3.0, 1.0]])
    assert sm.persona_direction(wide, x).tolist() == pytest.approx([2.0 - (-2.0), 1.0 - 2.0, 3.0 - 0.0])


def test_leaky_dialogue_states_by_hand() -> None:
    """κ = ½, onset 2, α = 0.1: z = 0, 0, 0 + 0.1, ½ + 0.1, ¾ + 0.1; without noise every dialogue is
    μ_G + z(μ_P − μ_G)."""
    states, mu_g, mu_p = sm.leaky_dialogues(0.5, 0.1, 2, 5, 3, 0.0, 2, 4)
    assert states.shape == (2, 5, 3) and mu_g.shape == mu_p.shape == (3,)
    z = [0.0, 0.0, 0.1, 0.6, 0.85]
    for d in range(2):
        for t in range(5):
            assert states[d, t] == pytest.approx(mu_g + z[t] * (mu_p - mu_g), abs=1e-12)
    rng = np.random.default_rng(4)
    assert mu_g.tolist() == rng.standard_normal(3).tolist() and mu_p.tolist() == rng.standard_normal(3).tolist()
    noisy, g, p = sm.leaky_dialogues(0.5, 0.1, 2, 5, 3, 2.0, 400, 4)
    residual = noisy - (g + np.array(z)[None, :, None] * (p - g))
    assert residual.std() == pytest.approx(2.0, rel=0.05) and abs(residual.mean()) < 0.1
    rng.standard_normal(0)  # the noise is the generator's next draw after μ_G and μ_P: + noise·ξ
    assert residual == pytest.approx(2.0 * rng.standard_normal((400, 5, 3)), abs=1e-12)


def test_training_forward_by_hand() -> None:
    """1 → 1 → 1 with W1 = 2, W2 = 3 at x = 2: the input is not squashed, the hidden layer is (tanh network)."""
    ws = [np.array([[2.0]]), np.array([[3.0]])]
    lin = training.forward(ws, np.array([2.0]), False)
    assert [a.tolist() for a in lin] == [[2.0], [4.0], [12.0]]
    tanh = training.forward(ws, np.array([2.0]), True)
    assert [a.tolist() for a in tanh[:2]] == [[2.0], [4.0]] and tanh[2][0] == pytest.approx(3 * np.tanh(4.0))


def _free_energy_minimum(weights: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """The hidden activities minimising F = ½ Σ_l ‖x_l − W_l φ(x_{l−1})‖² (φ = tanh on hidden layers) by SciPy's
    BFGS from the feed-forward values."""
    from scipy.optimize import minimize

    sizes = [w.shape[0] for w in weights[:-1]]

    def split(z: np.ndarray) -> list[np.ndarray]:
        out, start = [x], 0
        for s in sizes:
            out.append(z[start : start + s])
            start += s
        return [*out, y]

    def free_energy(z: np.ndarray) -> float:
        xs = split(z)
        return 0.5 * sum(
            float(np.sum((xs[i + 1] - w @ (xs[i] if i == 0 else np.tanh(xs[i]))) ** 2)) for i, w in enumerate(weights)
        )

    start = np.concatenate(training.forward(weights, x, True)[1:-1])
    z = minimize(free_energy, start, method="BFGS", options={"gtol": 1e-12}).x
    return split(z)


def test_pc_update_of_the_tanh_network_is_the_error_at_the_free_energy_minimum() -> None:
    rng = np.random.default_rng(11)
    weights = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in [(3, 4), (4, 3), (3, 2)]]
    x, y = rng.standard_normal(3), rng.standard_normal(2)
    xs = _free_energy_minimum(weights, x, y)
    update = training._pc_update(weights, x, y, True, 5000, 0.2)
    for i, w in enumerate(weights):
        prev = xs[i] if i == 0 else np.tanh(xs[i])
        assert update[i] == pytest.approx(np.outer(xs[i + 1] - w @ prev, prev), abs=2e-4)
    # no relaxation step: the feed-forward activities, whose only error is the output's
    raw = training._pc_update(weights, x, y, True, 0, 0.2)
    acts = training.forward(weights, x, True)
    assert not raw[0].any() and not raw[1].any()
    assert raw[2] == pytest.approx(np.outer(y - acts[-1], np.tanh(acts[2])), abs=1e-14)


def test_pc_relaxation_stops_once_relaxed() -> None:
    """Started at the minimum (the target is the network's own output), no step is taken even with a huge γ."""
    rng = np.random.default_rng(12)
    weights = [rng.standard_normal((o, i)) for i, o in [(3, 3), (3, 2)]]
    x = rng.standard_normal(3)
    y = training.forward(weights, x, True)[-1]
    update = training._pc_update(weights, x, y, True, 50, 1e6)
    assert all(np.abs(u).max() < 1e-12 for u in update)
    assert training.RELAXED == 1e-4 and training.DIVERGED == 1e6


def test_pc_update_of_the_linear_network_is_the_reference_equilibriums_error() -> None:
    rng = np.random.default_rng(13)
    weights = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in [(4, 3), (3, 3), (3, 2)]]
    x, y = rng.standard_normal(4), rng.standard_normal(2)
    xs = ref_pc.equilibrium(weights, x, y)
    update = training._pc_update(weights, x, y, False, 0, 0.0)
    for i, w in enumerate(weights):
        assert update[i] == pytest.approx(np.outer(xs[i + 1] - w @ xs[i], xs[i]), abs=1e-12)


def _replay_bp(seed: int, lr: float, samples: int, n_test: int) -> tuple[list[float], list[list[np.ndarray]]]:
    """The documented run replayed on the same generator: teacher, student, test inputs, then the samples; each
    update −lr ∂/∂W of ½‖y − f(x)‖² by central differences (tanh network)."""
    rng = np.random.default_rng(seed)
    dims = training.DIMS
    teacher = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in pairwise(dims)]
    student = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in pairwise(dims)]
    x_test = rng.standard_normal((dims[0], n_test))
    xs = rng.standard_normal((samples, dims[0]))

    def out(ws: list[np.ndarray], x: np.ndarray) -> np.ndarray:
        a = x
        for i, w in enumerate(ws):
            a = w @ (a if i == 0 else np.tanh(a))
        return a

    def test_loss(ws: list[np.ndarray]) -> float:
        return float(np.mean(0.5 * np.sum((out(teacher, x_test) - out(ws, x_test)) ** 2, axis=0)))

    losses, kept = [test_loss(student)], [student]
    for x in xs:
        y = out(teacher, x)
        new = []
        for layer, w in enumerate(student):
            grad = np.zeros_like(w)
            for idx in np.ndindex(w.shape):
                pair = []
                for sign in (1, -1):
                    ws = [v.copy() for v in student]
                    ws[layer][idx] += sign * 1e-6
                    pair.append(0.5 * float(np.sum((y - out(ws, x)) ** 2)))
                grad[idx] = (pair[0] - pair[1]) / 2e-6
            new.append(w - lr * grad)
        student = new
        losses.append(test_loss(student))
        kept.append(student)
    return losses, kept


def test_bp_training_replays_by_hand() -> None:
    losses, kept = _replay_bp(3, 0.05, 2, 7)
    run = training.train("bp", True, 0.05, 2, 3, every=1, n_test=7)
    assert run.losses == pytest.approx(losses, rel=1e-8)
    for ours, theirs in zip(run.weights, kept, strict=True):
        for a, b in zip(ours, theirs, strict=True):
            assert a == pytest.approx(b, abs=1e-8)


def test_training_keeps_every_nth_point_and_pads_a_divergence_with_infinity() -> None:
    run = training.train("bp", False, 0.01, 6, 1, every=3, n_test=5)
    assert len(run.losses) == len(run.weights) == 3  # steps 0, 3, 6
    assert [w.shape for w in run.weights[0]] == [(8, 20), (8, 8), (8, 8), (5, 8)]
    assert not any(np.array_equal(a, b) for a, b in zip(run.weights[0], run.weights[1], strict=True))
    still = training.train("bp", False, 0.0, 4, 1, every=2, n_test=5)
    assert still.losses == [still.losses[0]] * 3 and still.losses[0] > 0
    with np.errstate(over="ignore", invalid="ignore"):
        blown = training.train("bp", False, 1e4, 10, 1, every=2, n_test=5)
    assert len(blown.losses) == 6 and blown.losses[-1] == float("inf") and np.isfinite(blown.losses[0])
    assert len(blown.weights) < 6
    pc = training.train("pc", True, 0.05, 2, 1, every=1, n_test=5, inference_steps=3)
    bp = training.train("bp", True, 0.05, 2, 1, every=1, n_test=5)
    assert pc.losses[0] == bp.losses[0] and pc.losses[1] != bp.losses[1]


def test_best_rate_takes_the_lowest_mean_area(monkeypatch: pytest.MonkeyPatch) -> None:
    curves = {  # (lr, seed) -> losses; area = mean of the points
        (0.1, 0): [4.0, 2.0],
        (0.1, 1): [4.0, 4.0],
        (0.2, 0): [2.0, 1.0],
        (0.2, 1): [3.0, 2.0],
        (0.3, 0): [1.0, float("inf")],
        (0.3, 1): [0.0, 0.0],
        (0.4, 0): [float("nan"), 1.0],  # a loss that is not a number counts as infinite too
        (0.4, 1): [1.0, 1.0],
    }
    seen = []

    def fake(method, nonlinear, lr, samples, seed):
        seen.append((method, nonlinear, samples))
        return training.Trajectory(curves[lr, seed], [])

    monkeypatch.setattr(training, "train", fake)
    best, per_seed, areas = training.best_rate("pc", True, [0.1, 0.2, 0.3, 0.4], 9, [0, 1])
    assert best == 0.2 and per_seed == [1.5, 2.5]
    assert areas == {0.1: 3.5, 0.2: 2.0, 0.3: float("inf"), 0.4: float("inf")}
    assert set(seen) == {("pc", True, 9)}


def _topk_forward(x: np.ndarray, enc: np.ndarray, b_d: np.ndarray, dec: np.ndarray, k: int) -> np.ndarray:
    """x̂ = D TopK_k(ReLU(W_e(x − b_d))) + b_d, one row at a time with a full sort (b_e = 0)."""
    return np.array([dec @ _codes(row, enc, b_d, k) + b_d for row in x])


def test_flat_sae_before_training_is_the_tied_top_k_autoencoder() -> None:
    """steps = 0: unit-norm decoder columns, the encoder its transpose (tied start), b_d the training mean; the test
    FVU is Σ‖x − x̂‖² / Σ‖x − x̄‖² of that forward pass."""
    rng = np.random.default_rng(0)
    x_train, x_test = rng.standard_normal((50, 5)), rng.standard_normal((30, 5))
    out = sm.flat_topk_sae(x_train, x_test, width=6, k=2, steps=0, batch=8, seed=9)
    dec = out["decoder"]
    assert dec.shape == (5, 6) and np.linalg.norm(dec, axis=0) == pytest.approx(np.ones(6), abs=1e-12)
    drawn = np.random.default_rng(9).standard_normal((5, 6))
    assert dec == pytest.approx(drawn / np.linalg.norm(drawn, axis=0), abs=1e-12)
    recon = _topk_forward(x_test, dec.T, x_train.mean(axis=0), dec, 2)
    fvu = np.sum((x_test - recon) ** 2) / np.sum((x_test - x_test.mean(axis=0)) ** 2)
    assert out["fvu"] == pytest.approx(fvu, rel=1e-12)
    assert 0 < out["fvu"] < 1


def test_flat_sae_first_adam_step_moves_each_decoder_entry_by_the_rate_against_its_gradient() -> None:
    """Adam's first bias-corrected step is lr·g/(|g| + 1e-8): every decoder entry moves by 5e-3 against the sign of
    ∂/∂D of the batch's mean ‖x̂ − x‖² (central differences), then the columns are normalised again. The batch is
    the documented generator's next draw after the decoder."""
    rng = np.random.default_rng(1)
    x_train = rng.standard_normal((40, 4)) + np.array([2.0, 0.0, -1.0, 0.5])
    seed, batch, k = 5, 16, 2
    gen = np.random.default_rng(seed)
    dec0 = gen.standard_normal((4, 6))
    dec0 /= np.linalg.norm(dec0, axis=0)
    xb = x_train[gen.integers(0, 40, batch)]
    b_d = x_train.mean(axis=0)
    z = np.array([_codes(row, dec0.T, b_d, k) for row in xb])

    def loss(d: np.ndarray) -> float:
        return float(np.mean(np.sum((z @ d.T + b_d - xb) ** 2, axis=1)))

    grad = np.zeros_like(dec0)
    for idx in np.ndindex(dec0.shape):
        step = np.zeros_like(dec0)
        step[idx] = 1e-6
        grad[idx] = (loss(dec0 + step) - loss(dec0 - step)) / 2e-6
    moved = dec0 - 5e-3 * grad / (np.abs(grad) + 1e-8)
    expected = moved / np.linalg.norm(moved, axis=0)
    out = sm.flat_topk_sae(x_train, x_train, width=6, k=k, steps=1, batch=batch, seed=seed)
    assert out["decoder"] == pytest.approx(expected, abs=1e-7)
    assert np.abs(grad).min() > 1e-4  # every entry moved (no tie at g = 0)


def _codes(row: np.ndarray, enc: np.ndarray, b_d: np.ndarray, k: int) -> np.ndarray:
    """TopK_k(ReLU(W_e(x − b_d))) of one row by a full sort."""
    pre = np.maximum(enc @ (row - b_d), 0.0)
    z = np.zeros_like(pre)
    top = np.argsort(-pre, kind="stable")[:k]
    z[top] = pre[top]
    return z


def test_flat_sae_learns_one_hot_data() -> None:
    """Rows c·e_j (c > 0, one of 3 axes): a 3-wide top-1 SAE can reconstruct them exactly; training takes its FVU
    far below the untrained one."""
    rng = np.random.default_rng(2)
    x = np.eye(3)[rng.integers(0, 3, 300)] * rng.uniform(1.0, 2.0, (300, 1))
    before = sm.flat_topk_sae(x[:200], x[200:], width=3, k=1, steps=0, batch=32, seed=3)["fvu"]
    after = sm.flat_topk_sae(x[:200], x[200:], width=3, k=1, steps=200, batch=32, seed=3)["fvu"]
    assert after < 0.1 < before


def test_leaky_lag_by_hand_and_by_counting_frames() -> None:
    assert ref_fdslm.leaky_lag(0.1, 0.0) == 7  # ln ½ / ln 0.9 = 6.58
    assert ref_fdslm.leaky_lag(0.1, 0.49) == 1  # z_0 + α = 0.49, z_1 + α = 0.59
    assert ref_fdslm.leaky_lag(0.1, 0.5) == 0 and ref_fdslm.leaky_lag(0.3, 0.7) == 0
    for kappa in (0.05, 0.2, 0.5):
        for alpha in (0.0, 0.1, 0.3):
            k = 0
            while 1 - (1 - kappa) ** k + alpha <= 0.5:
                k += 1
            assert ref_fdslm.leaky_lag(kappa, alpha) == k, (kappa, alpha)


def test_brute_force_patch_sets_by_hand() -> None:
    # sets {}, {0}, {1}, {0, 1}: depths 0, 1, 2, 3 at costs 0, 1, 5, 6
    assert ref_lp.brute_force([2, 3], [1.0, 5.0]) == {0: 0.0, 1: 1.0, 2: 5.0, 3: 6.0}
    assert ref_lp.brute_force([2, 2], [3.0, 1.0]) == {0: 0.0, 1: 1.0, 2: 4.0}  # the cheaper block for one layer
    assert ref_lp.brute_force([3], [2.5]) == {0: 0.0, 2: 2.5}  # depth 1 cannot be reached


def test_partial_spearman_against_the_one_covariate_formula() -> None:
    from scipy.stats import spearmanr

    rng = np.random.default_rng(21)
    x, y, c = rng.standard_normal(40), rng.standard_normal(40), rng.standard_normal(40)
    y = y + x + c
    assert ref_ranks.partial_spearman(x, y, []) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    r_xy, r_xc, r_yc = (spearmanr(a, b).statistic for a, b in ((x, y), (x, c), (y, c)))
    partial = (r_xy - r_xc * r_yc) / np.sqrt((1 - r_xc**2) * (1 - r_yc**2))
    assert ref_ranks.partial_spearman(x, y, [c]) == pytest.approx(partial, abs=1e-12)


def test_fisher_lower_by_hand() -> None:
    # tanh(atanh 0.5 − 2/√(28 − 3 − 1)) = tanh(0.549306 − 0.408248) = tanh(0.141058)
    assert ref_ranks.fisher_lower(0.5, 28, 1, 2.0) == pytest.approx(0.140131, abs=2e-6)
    assert ref_ranks.fisher_lower(0.5, 28, 0, 0.0) == pytest.approx(0.5, abs=1e-15)


def test_raven_metrics_by_hand() -> None:
    groups = [
        {"group_family": "consistency", "levels": ["L1", "L2", "L3"]},
        {"group_family": "coherence", "levels": ["L1", "L2", "L3", "L3"]},
        {"group_family": "coherence", "levels": ["L1", "L2"]},
    ]
    out = ref_raven.metrics(groups, ["110", "1101", "11"])
    # 7 of 9 right; L1 3/3, L2 3/3, L3 1 of the three L3 answers
    assert out["overall_acc"] == pytest.approx(7 / 9)
    assert (out["s_l1"], out["s_l2"], out["s_l3"]) == pytest.approx((1.0, 1.0, 1 / 3))
    assert out["s_main"] == pytest.approx((1 + 1 + 1 / 3) / 3)
    assert out["s_cons"] == pytest.approx((2 / 3) ** 2)  # one consistency group, 2 of 3
    assert out["s_coh"] == pytest.approx((2 / 4 + 2 / 2) / 2)  # prefixes 2 of 4 and 2 of 2
    assert out["strict_pass"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="zip"):  # one answer string per group, even when the lengths add up
        ref_raven.metrics(groups[:2], ["1101101"])


def test_sae_macs_by_hand() -> None:
    assert ref_sae.hierarchical_encoder_macs(10, 4, 3, 2, 2) == 10 * 4 + 2 * (2 * 10 + 3 * 2)
    assert ref_sae.flat_encoder_macs(10, 4, 3) == 10 * 4 * 4


def test_fitted_slope_and_its_standard_error_by_hand() -> None:
    """n = 2, 4: w = ∓1/ln 2, so b = ln(m₂/m₁)/ln 2 and se = √((se₁/m₁)² + (se₂/m₂)²)/ln 2."""
    b, se = ref_slopes.fitted_slope([2, 4], [3.0, 12.0], [0.09, 0.48])
    assert b == pytest.approx(2.0, abs=1e-12)
    assert se == pytest.approx(0.05 / np.log(2), abs=1e-12)
    b, _ = ref_slopes.fitted_slope([2, 4, 8], [5.0 * n**1.5 for n in (2, 4, 8)], [0.0] * 3)
    assert b == pytest.approx(1.5, abs=1e-12)


def test_curve_slope_by_hand() -> None:
    """Over n = e, e²: x = 1, 2 and ln x = 0, ln 2, so the slope of a·x + b·ln x is a + b ln 2."""
    e = float(np.e)
    assert ref_slopes.curve_slope([e, e**2], 2.0, 1.0) == pytest.approx(2 + np.log(2), abs=1e-12)
    assert ref_slopes.curve_slope([8, 16, 64], 2.0, 0.0) == pytest.approx(2.0, abs=1e-12)


def test_friedman_nemenyi_by_hand() -> None:
    """3 datasets × 3 models, one order throughout: ranks 1, 2, 3; χ² = 12/(3·3·4)·(3² + 6² + 9²) − 3·3·4 = 6,
    p = e⁻³ (2 degrees of freedom); CD = q√(3·4/18) with Demšar's q₀.₀₅ = 2.343 for k = 3."""
    out = ref_ubench.friedman_nemenyi([[9, 5, 1], [8, 6, 2], [7, 4, 3]])
    assert out["avg_ranks"] == [1.0, 2.0, 3.0]
    assert out["chi2"] == pytest.approx(6.0) and out["p"] == pytest.approx(np.exp(-3.0))
    assert out["cd"] == pytest.approx(2.343 * np.sqrt(12 / 18), abs=2e-3)
    four = ref_ubench.friedman_nemenyi([[4, 3, 2, 1]] * 5, alpha=0.10)
    assert four["cd"] == pytest.approx(2.291 * np.sqrt(20 / 30), abs=2e-3)  # Demšar's q₀.₁₀ for k = 4


def test_unrolled_jacobian_errors_by_hand() -> None:
    """H = diag(2, 1), b = (2, 1), ∂H = I, ∂b = 0, x₀ = 0, η = ½: x* = (1, 1), J* = −H⁻¹x* = (−½, −1);
    x_t = (1, ½), (1, ¾), (1, ⅞); from k0 = 0, J = 0, (−½, −¼), (−½, −½) (errors 1, 0.75/√1.25, 0.5/√1.25);
    from k0 = 2 the first update is at t = 2, J = (−½, −⅜)."""
    h, b, dh, db, x0 = np.diag([2.0, 1.0]), np.array([2.0, 1.0]), np.eye(2), np.zeros(2), np.zeros(2)
    out = ref_unrolling.relative_errors(h, dh, b, db, x0, 3, 0)
    assert out == pytest.approx([1.0, 0.75 / np.sqrt(1.25), 0.5 / np.sqrt(1.25)], abs=1e-12)
    late = ref_unrolling.relative_errors(h, dh, b, db, x0, 3, 2)
    assert late == pytest.approx([1.0, 1.0, 0.625 / np.sqrt(1.25)], abs=1e-12)
    assert ref_unrolling.contraction(np.diag([4.0, 1.0, 3.0])) == pytest.approx(0.75)
    # ∂H = 0, ∂b = (1, 0): J* = H⁻¹∂b = (½, 0), reached by the first update J = 0 − ½(0 + 0 − ∂b)
    shifted = ref_unrolling.relative_errors(h, np.zeros((2, 2)), b, np.array([1.0, 0.0]), x0, 3, 0)
    assert shifted == pytest.approx([0.0, 0.0, 0.0], abs=1e-15)


def test_hyperconnection_jacobian_of_one_stream_by_hand() -> None:
    """One stream, two tokens, d = 1: J = (a − 1)I + βα v P with P the averaging (or causal) attention."""
    full = ref_hc.jacobian(np.array([[0.3]]), [2.0], [1.5], np.array([[0.5]]), 2, causal=False)
    assert full == pytest.approx(-0.7 * np.eye(2) + 1.5 * np.full((2, 2), 0.5), abs=1e-15)
    causal = ref_hc.jacobian(np.array([[0.3]]), [2.0], [1.5], np.array([[0.5]]), 2, causal=True)
    assert causal == pytest.approx(-0.7 * np.eye(2) + 1.5 * np.array([[1.0, 0.0], [0.5, 0.5]]), abs=1e-15)
    # two streams, one token, d = 2: the stream mixing acts on whole blocks, Vᵀ inside them
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    two = ref_hc.jacobian(np.array([[1.0, 0.5], [0.0, 2.0]]), [1.0, 2.0], [3.0, 0.0], v, 1, causal=False)
    expected = np.block([[np.zeros((2, 2)) + 3 * v.T, 0.5 * np.eye(2) + 6 * v.T], [np.zeros((2, 2)), np.eye(2)]])
    assert two == pytest.approx(expected, abs=1e-15)


def test_spectral_abscissa_by_hand() -> None:
    assert ref_hc.abscissa(np.array([[-1.0, -2.0], [2.0, -1.0]])) == pytest.approx((-1.0, 2.0))  # −1 ± 2i
    assert ref_hc.abscissa(np.array([[1.0, 0.0], [0.0, -3.0]])) == pytest.approx((1.0, 0.0))
    top, omega = ref_hc.abscissa(np.diag([0.5, 0.5, -2.0]) + np.array([[0, -3, 0], [3, 0, 0], [0, 0, 0]]))
    assert (top, omega) == pytest.approx((0.5, 3.0))  # 0.5 ± 3i above the real −2


def test_crossings_static_and_hopf_by_hand() -> None:
    """One stream, two tokens, v = ½, α = β = 1: the abscissa is a − 1 + ½, crossing at a = ½ on a real eigenvalue.
    Two streams with A_r − I = [[a − 1, −1], [1, 0]] and v = 0: eigenvalues (a − 1)/2 ± i√(1 − ((a − 1)/2)²),
    crossing at a = 1 with frequency 1."""
    (static,) = ref_hc.crossings(np.array([[0.0]]), [1.0], [1.0], np.array([[0.5]]), 2, False, 0.0, 1.0, 5)
    assert static["value"] == pytest.approx(0.5, abs=1e-10) and static["type"] == "static"
    assert static["omega"] == pytest.approx(0.0, abs=1e-6)
    (hopf,) = ref_hc.crossings(
        np.array([[0.0, -1.0], [1.0, 1.0]]), [1.0, 1.0], [1.0, 1.0], np.array([[0.0]]), 1, False, 0.1, 1.7, 7
    )
    assert hopf["value"] == pytest.approx(1.0, abs=1e-10) and hopf["type"] == "hopf"
    assert hopf["omega"] == pytest.approx(1.0, abs=1e-8)
    assert ref_hc.crossings(np.array([[0.0]]), [1.0], [1.0], np.array([[0.5]]), 2, False, 0.6, 1.0, 5) == []
    # causal attention, β = −1: eigenvalues a − 1 − ½·1 and a − 1 − ½·½ (P's are 1 and ½), crossing at a = 1.25
    causal = ref_hc.crossings(np.array([[0.0]]), [1.0], [-1.0], np.array([[0.5]]), 2, True, 0.0, 3.0, 4)
    assert [c["value"] for c in causal] == pytest.approx([1.25], abs=1e-10)


def _minner_by_loops(v, n_x, n_y, d, k, trials, seed):
    """Minner's T_v under circulant hashing, one permutation index at a time (the same generator draws)."""
    rng = np.random.default_rng(seed)
    xs, ys = list(range(n_x)), list(range(n_x - v, n_x - v + n_y))
    out = []
    for _ in range(trials):
        sigma, pi = rng.permutation(d), rng.permutation(d)
        c = m = 0
        for shift in range(1, k + 1):
            h = {e: int(pi[(sigma[e] + shift) % d]) for e in set(xs) | set(ys)}
            winner = min(ys, key=h.__getitem__)
            c += winner < n_x
            m += sum(h[e] < h[winner] for e in xs)
        out.append(0.0 if c == 0 else min(c * n_x / (c + m), c * n_y / k))
    return np.array(out)


def test_minner_simulation_against_a_loop_by_loop_one() -> None:
    est = _minner_by_loops(3, 6, 5, 13, 4, 30, 7)
    out = ref_minhash.minner_mse_circulant(3, 6, 5, 13, 4, 30, 7)
    assert out["mean"] == pytest.approx(est.mean(), abs=1e-12)
    assert out["mse"] == pytest.approx(np.mean((est - 3) ** 2), abs=1e-12)
    assert out["mse_se"] == pytest.approx(np.std((est - 3) ** 2, ddof=1) / np.sqrt(30), abs=1e-12)
    same = ref_minhash.minner_mse_circulant(5, 5, 5, 11, 3, 5, 1)  # X = Y: every estimate is |X|
    assert same == {"mean": 5.0, "mse": 0.0, "mse_se": 0.0}


def test_cminhash_simulation_against_a_loop_by_loop_one() -> None:
    rng = np.random.default_rng(4)
    est = []
    for _ in range(25):
        sigma, pi = rng.permutation(11), rng.permutation(11)
        hits = [min(range(6), key=lambda e, s=s: pi[(sigma[e] + s) % 11]) < 2 for s in range(1, 4)]
        est.append(np.mean(hits))
    out = ref_minhash.cminhash_jaccard_variance(2, 6, 11, 3, 25, 4)
    assert out["mean"] == pytest.approx(np.mean(est), abs=1e-12)
    assert out["variance"] == pytest.approx(np.var(est, ddof=1), abs=1e-12)


def test_pc_reference_draws_follow_the_documented_order() -> None:
    weights, x, y = ref_pc.draws(5, [3, 2, 4], 2)
    rng = np.random.default_rng(5)
    w1, w2 = rng.standard_normal((2, 2, 3)) / np.sqrt(3), rng.standard_normal((2, 4, 2)) / np.sqrt(2)
    x_exp, y_exp = rng.standard_normal((2, 3, 1))[:, :, 0], rng.standard_normal((2, 4, 1))[:, :, 0]
    assert weights[0] == pytest.approx(w1, abs=0) and weights[1] == pytest.approx(w2, abs=0)
    assert x == pytest.approx(x_exp, abs=0) and y == pytest.approx(y_exp, abs=0)


def test_pc_reference_alignments_on_a_two_layer_network_by_hand() -> None:
    """W1 = [[1], [1]], W2 = [1, 1] (1 → 2 → 1), x = 1, y = 4: ŷ = 2, e = 2. U1 = W2, U2 = 1, S = 2 + 1 = 3,
    ε2 = e/S = 2/3, ε1 = W2ᵀε2 = (2/3, 2/3), x1 = W1 x + ε1 = (5/3, 5/3). With a single output every
    update changes ŷ along ±e, so every alignment is 1 for a small rate."""
    weights = [np.array([[1.0], [1.0]]), np.array([[1.0, 1.0]])]
    xs = ref_pc.equilibrium(weights, np.array([1.0]), np.array([4.0]))
    assert xs[1] == pytest.approx([5 / 3, 5 / 3], abs=1e-12)
    out = ref_pc.alignments(weights, np.array([1.0]), np.array([4.0]), 1e-3)
    for key in ("ta_bp", "ta_pc", "ta_bp_first_order", "ta_pc_first_order", "pc_optimal_first_order"):
        assert out[key] == pytest.approx(1.0, abs=1e-12), key
    assert out["equilibrium_gap"] < 1e-12
    # x_{l−1}ᵀ a_{l−1}: layer 1 gives 1·1, layer 2 gives x1·a1 = 2·5/3
    assert out["min_x_dot_a"] == pytest.approx(1.0, abs=1e-12)


def test_pc_reference_alignments_against_direct_updates() -> None:
    """A 2 → 2 → 2 network: BP's change of the output through W + lr·δaᵀ, PC's through W + lr·εxᵀ at the
    least-squares equilibrium, each against the error (cosines computed here), and the first-order forms."""
    rng = np.random.default_rng(8)
    weights = [rng.standard_normal((2, 2)), rng.standard_normal((2, 2))]
    x, y = rng.standard_normal(2), rng.standard_normal(2)
    lr = 0.05
    a1 = weights[0] @ x
    e = y - weights[1] @ a1
    bp_deltas = [lr * np.outer(weights[1].T @ e, x), lr * np.outer(e, a1)]
    xs = ref_pc.equilibrium(weights, x, y)
    pc_deltas = [lr * np.outer(xs[1] - weights[0] @ x, x), lr * np.outer(y - weights[1] @ xs[1], xs[1])]

    def cos_change(deltas: list[np.ndarray]) -> float:
        change = (weights[1] + deltas[1]) @ (weights[0] + deltas[0]) @ x - weights[1] @ a1
        return float(change @ e / np.linalg.norm(change) / np.linalg.norm(e))

    out = ref_pc.alignments(weights, x, y, lr)
    assert out["ta_bp"] == pytest.approx(cos_change(bp_deltas), abs=1e-12)
    assert out["ta_pc"] == pytest.approx(cos_change(pc_deltas), abs=1e-12)
    small = ref_pc.alignments(weights, x, y, 1e-7)
    assert out["ta_bp_first_order"] == pytest.approx(small["ta_bp"], abs=1e-5)
    assert out["ta_pc_first_order"] == pytest.approx(small["ta_pc"], abs=1e-5)
    assert out["min_x_dot_a"] == pytest.approx(min(x @ x, xs[1] @ a1), abs=1e-12)
    assert out["equilibrium_gap"] < 1e-10
    optimal = weights[1] @ (xs[1] - weights[0] @ x) + (y - weights[1] @ xs[1])  # U1 ε1 + U2 ε2, U1 = W2, U2 = I
    assert out["pc_optimal_first_order"] == pytest.approx(optimal @ e / np.linalg.norm(optimal) / np.linalg.norm(e))


def test_abscissa_counts_only_eigenvalues_within_1e_9_of_the_top() -> None:
    """0 and −5e-9 ± 3i: the pair lies 5e-9 below the top, outside the 1e-9 band, so the frequency is 0."""
    j = np.zeros((3, 3))
    j[1:, 1:] = [[-5e-9, -3.0], [3.0, -5e-9]]
    assert ref_hc.abscissa(j) == (0.0, 0.0)
    j[1, 1] = j[2, 2] = -5e-10  # inside the band: the pair's frequency counts
    assert ref_hc.abscissa(j)[1] == pytest.approx(3.0)


def test_crossings_both_ways_in_one_range() -> None:
    """A_r = [[a, 1], [−1, 1.5]], v = 0: J = [[a − 1, 1], [−1, ½]], eigenvalues (p + ½)/2 ± √(((p − ½)/2)² − 1) with
    p = a − 1. Falling through zero at a = −1 (real: 0 and −1.5) and rising at a = ½ (complex, ω = √(1 − ½²))."""
    a_r, v = np.array([[0.0, 1.0], [-1.0, 1.5]]), np.array([[0.0]])
    found = ref_hc.crossings(a_r, [1.0, 1.0], [1.0, 1.0], v, 1, False, -1.6, 1.1, 4)
    assert [c["value"] for c in found] == pytest.approx([-1.0, 0.5], abs=1e-10)
    assert [c["type"] for c in found] == ["static", "hopf"]
    assert [c["omega"] for c in found] == pytest.approx([0.0, np.sqrt(0.75)], abs=1e-8)
    # on a grid of two points both ends are positive: the two crossings between them are not seen
    assert ref_hc.crossings(a_r, [1.0, 1.0], [1.0, 1.0], v, 1, False, -1.6, 1.1, 2) == []
    # the grid spans [lo, hi] only: no crossing in [−0.8, 0.4]
    assert ref_hc.crossings(a_r, [1.0, 1.0], [1.0, 1.0], v, 1, False, -0.8, 0.4, 3) == []
    # a grid point exactly on the root (abscissa 0.0 at a = −1) with a negative right end: the root is that point
    (edge,) = ref_hc.crossings(a_r, [1.0, 1.0], [1.0, 1.0], v, 1, False, -1.0, -0.5, 2)
    assert edge["value"] == pytest.approx(-1.0, abs=1e-10)


def test_a_frequency_of_exactly_1e_6_is_static() -> None:
    """One stream, one token, Vᵀ = [[0, −1e-6], [1e-6, 0]]: J = (a − 1)I + Vᵀ, eigenvalues a − 1 ± 1e-6 i."""
    v = np.array([[0.0, 1e-6], [-1e-6, 0.0]])
    (c,) = ref_hc.crossings(np.array([[0.0]]), [1.0], [1.0], v, 1, False, 0.0, 2.0, 2)
    assert c["value"] == pytest.approx(1.0, abs=1e-10) and c["omega"] == 1e-6 and c["type"] == "static"


def test_pc_reference_alignments_of_a_three_layer_network() -> None:
    """2 → 3 → 4 → 2: BP's update is −lr times the gradient of ½‖y − f(x)‖² (central differences), PC's is
    lr·ε_l x_{l−1}ᵀ at the closed-form equilibrium of training_models (another derivation than the reference's least
    squares); the optimal first-order change is Σ_l U_l ε_l with U_l = W_L ⋯ W_{l+1}."""
    rng = np.random.default_rng(9)
    weights = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in [(2, 3), (3, 4), (4, 2)]]
    x, y = rng.standard_normal(2), rng.standard_normal(2)
    lr = 0.05

    def f(ws: list[np.ndarray]) -> np.ndarray:
        return ws[2] @ ws[1] @ ws[0] @ x

    e = y - f(weights)
    grads = []
    for layer, w in enumerate(weights):
        g = np.zeros_like(w)
        for idx in np.ndindex(w.shape):
            pair = []
            for sign in (1, -1):
                ws = [v.copy() for v in weights]
                ws[layer][idx] += sign * 1e-6
                pair.append(0.5 * float(np.sum((y - f(ws)) ** 2)))
            g[idx] = (pair[0] - pair[1]) / 2e-6
        grads.append(g)
    xs = training._linear_equilibrium(weights, x, y)
    eps = [xs[i + 1] - w @ xs[i] for i, w in enumerate(weights)]

    def cos(change: np.ndarray) -> float:
        return float(change @ e / np.linalg.norm(change) / np.linalg.norm(e))

    out = ref_pc.alignments(weights, x, y, lr)
    bp = f([w - lr * g for w, g in zip(weights, grads, strict=True)]) - f(weights)
    pc = f([w + lr * np.outer(d, xi) for w, d, xi in zip(weights, eps, xs, strict=False)]) - f(weights)
    assert out["ta_bp"] == pytest.approx(cos(bp), abs=1e-7)
    assert out["ta_pc"] == pytest.approx(cos(pc), abs=1e-9)
    u = [weights[2] @ weights[1], weights[2], np.eye(2)]
    assert out["pc_optimal_first_order"] == pytest.approx(cos(sum(ul @ el for ul, el in zip(u, eps, strict=True))))
    assert out["equilibrium_gap"] < 1e-10


def _student_and_samples(seed: int, samples: int, n_test: int) -> tuple[list, list, np.ndarray]:
    """The documented generator's draws: teacher, student, test inputs, then the training samples."""
    rng = np.random.default_rng(seed)
    teacher = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in pairwise(training.DIMS)]
    student = [rng.standard_normal((o, i)) / np.sqrt(i) for i, o in pairwise(training.DIMS)]
    rng.standard_normal((training.DIMS[0], n_test))
    return teacher, student, rng.standard_normal((samples, training.DIMS[0]))


def test_training_defaults_and_the_points_it_keeps() -> None:
    """A point every 25 samples on 500 test inputs by default; with every = 2 the points are after samples 2 and 4."""
    (first,) = training.train("bp", True, 0.1, 0, 3).losses
    assert first == pytest.approx(_replay_bp(3, 0.1, 0, 500)[0][0], rel=1e-12)
    assert len(training.train("bp", False, 0.0, 50, 3, n_test=5).losses) == 3  # samples 0, 25, 50
    losses, kept = _replay_bp(3, 0.05, 4, 7)
    run = training.train("bp", True, 0.05, 4, 3, every=2, n_test=7)
    assert run.losses == pytest.approx([losses[0], losses[2], losses[4]], rel=1e-8)
    assert run.weights[1][0] == pytest.approx(kept[2][0], abs=1e-8)


def test_pc_training_takes_the_relaxed_tanh_update_with_the_default_schedule() -> None:
    """One PC step of the tanh network is lr times the relaxed update (500 steps of γ = 0.2 by default)."""
    teacher, student, xs = _student_and_samples(4, 1, 5)
    y = training.forward(teacher, xs[0], True)[-1]
    update = training._pc_update(student, xs[0], y, True, 500, 0.2)
    run = training.train("pc", True, 0.05, 1, 4, every=1, n_test=5)
    for w0, w1, u in zip(run.weights[0], run.weights[1], update, strict=True):
        assert w1 - w0 == pytest.approx(0.05 * u, abs=1e-12)


def test_a_run_stops_once_a_weight_reaches_the_divergence_bound() -> None:
    """BP at lr = 100: the second step takes the weights past 1e6 while they are still finite; the run stops there
    and its remaining points are infinite."""
    with np.errstate(over="ignore", invalid="ignore"):
        run = training.train("bp", False, 100.0, 6, 1, every=1, n_test=5)
    assert len(run.weights) == 2 and all(np.abs(w).max() < 1e6 for ws in run.weights for w in ws)
    assert np.isfinite(run.losses[:2]).all() and run.losses[2:] == [float("inf")] * 5


def _flat_sae_replay(x_train: np.ndarray, width: int, k: int, steps: int, batch: int, seed: int) -> np.ndarray:
    """The flat SAE's documented training replayed on the same generator: unit-norm random decoder, tied encoder,
    b_e = 0, b_d the training mean; per step a batch drawn with replacement, every gradient of the batch's mean
    ‖x̂ − x‖² by central differences, Adam (lr 5e-3, β = (0.9, 0.999), ε = 1e-8), decoder columns renormalised."""
    rng = np.random.default_rng(seed)
    dec = rng.standard_normal((x_train.shape[1], width))
    dec /= np.linalg.norm(dec, axis=0)
    params = {"dec": dec, "b_d": x_train.mean(axis=0), "enc": dec.T.copy(), "b_e": np.zeros(width)}
    moments = {name: (np.zeros_like(p), np.zeros_like(p)) for name, p in params.items()}
    for step in range(1, steps + 1):
        xb = x_train[rng.integers(0, x_train.shape[0], batch)]

        def loss(p: dict, xb: np.ndarray = xb) -> float:
            recon = []
            for row in xb:
                pre = np.maximum(p["enc"] @ (row - p["b_d"]) + p["b_e"], 0.0)
                z = np.zeros_like(pre)
                top = np.argsort(-pre, kind="stable")[:k]
                z[top] = pre[top]
                recon.append(p["dec"] @ z + p["b_d"])
            return float(np.mean(np.sum((np.array(recon) - xb) ** 2, axis=1)))

        grads = {}
        for name, value in params.items():
            g = np.zeros_like(value)
            for idx in np.ndindex(value.shape):
                pair = []
                for sign in (1, -1):
                    shifted = {**params, name: value.copy()}
                    shifted[name][idx] += sign * 1e-6
                    pair.append(loss(shifted))
                g[idx] = (pair[0] - pair[1]) / 2e-6
            grads[name] = g
        for name, g in grads.items():
            m, v = moments[name]
            m[...] = 0.9 * m + 0.1 * g
            v[...] = 0.999 * v + 0.001 * g**2
            params[name] = params[name] - 5e-3 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        params["dec"] = params["dec"] / np.linalg.norm(params["dec"], axis=0)
    return params["dec"]


def test_flat_sae_three_adam_steps_replayed() -> None:
    rng = np.random.default_rng(3)
    x_train = rng.standard_normal((30, 3)) @ np.array([[1.0, 0.5, 0.0], [0.0, 1.0, -0.5], [0.3, 0.0, 1.0]])
    x_train += np.array([1.0, -2.0, 0.5])
    out = sm.flat_topk_sae(x_train, x_train, width=4, k=2, steps=3, batch=8, seed=6)
    assert out["decoder"] == pytest.approx(_flat_sae_replay(x_train, 4, 2, 3, 8, 6), abs=1e-6)


def test_flat_sae_keeps_the_k_largest_codes() -> None:
    """Before training, against a full sort: 12 latents, k = 3 and 5, on 40 rows."""
    rng = np.random.default_rng(10)
    x_train, x_test = rng.standard_normal((60, 6)), rng.standard_normal((40, 6))
    for k in (3, 5):
        out = sm.flat_topk_sae(x_train, x_test, width=12, k=k, steps=0, batch=8, seed=2)
        dec = out["decoder"]
        recon = _topk_forward(x_test, dec.T, x_train.mean(axis=0), dec, k)
        fvu = np.sum((x_test - recon) ** 2) / np.sum((x_test - x_test.mean(axis=0)) ** 2)
        assert out["fvu"] == pytest.approx(fvu, rel=1e-12), k
