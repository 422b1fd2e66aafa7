"""sae's figures and overlay curves, drawn from results written by hand (no training): the loss plot of both
estimators and the recovery bar chart (trained against random init)."""

import numpy as np
import pytest
from matplotlib import rcParams
from matplotlib.font_manager import FontProperties

from service.estimators import sae
from service.registry import ESTIMATORS

CURVE = [
    {"step": 0, "loss": 4.0, "mse": 3.0, "l1": 0.5, "xortho": 0.25, "mse_top": 3.5},
    {"step": 5, "loss": 2.0, "mse": 1.5, "l1": 0.25, "xortho": 0.125, "mse_top": 1.75},
    {"step": 10, "loss": 1.0, "mse": 0.5, "l1": 0.25, "xortho": 0.125, "mse_top": 0.75},
]
METRICS = {
    "n": 4,
    "mse": 0.5,
    "fvu": 0.25,
    "explained_variance": 0.75,
    "cos": 0.9,
    "l0_parents": 2.0,
    "l0_children": 1.0,
    "l0_total": 3.0,
}


def scores(parent: float, child: float, consistent: int) -> dict:
    return {
        "parent_mean_cos": parent,
        "parent_min_cos": parent / 2,
        "unique_parent_matches": 3,
        "child_mean_cos": child,
        "hierarchy_consistency": consistent,
        "n_true_children": 8,
    }


@pytest.fixture(scope="module")
def recovery() -> sae.HierarchicalRecoveryResult:
    return sae.HierarchicalRecoveryResult.model_validate(
        {
            "trained": scores(0.9, 0.8, 6),
            "random_init": scores(0.3, 0.2, 1),
            "train": METRICS,
            "test": METRICS,
            "dead_parents": 0,
            "dead_children": 1,
            "loss_curve": CURVE,
            "reconstructed": ["trained", "random_init"],
        }
    )


def test_loss_plot_draws_loss_and_reconstruction_on_a_log_scale(recovery: sae.HierarchicalRecoveryResult) -> None:
    fig = sae.loss_plot(recovery)
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)
    (ax,) = fig.axes
    loss, mse = ax.get_lines()
    assert (list(loss.get_xdata()), list(loss.get_ydata())) == ([0, 5, 10], [4.0, 2.0, 1.0])
    assert (list(mse.get_xdata()), list(mse.get_ydata())) == ([0, 5, 10], [3.0, 1.5, 0.5])
    assert ax.get_yscale() == "log" and ax.get_xscale() == "linear"
    assert ax.get_xlabel() == "step"
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["loss", "mean‖x − x̂‖²"]
    assert legend.get_texts()[0].get_fontsize() == 8
    # tight_layout moved the axes off the default subplot box
    default = (rcParams["figure.subplot.left"], rcParams["figure.subplot.bottom"])
    assert (ax.get_position().x0, ax.get_position().y0) != pytest.approx(default, abs=1e-3)


def test_overlay_curves_are_the_loss_and_its_reconstruction_part(recovery: sae.HierarchicalRecoveryResult) -> None:
    curves = sae.loss_curves(recovery)
    assert (curves.x_label, curves.y_label, curves.x_log, curves.y_log) == ("step", "loss", False, True)
    assert [(c.label, list(c.x), list(c.y)) for c in curves.curves] == [
        ("loss", [0, 5, 10], [4.0, 2.0, 1.0]),
        ("mean‖x − x̂‖²", [0, 5, 10], [3.0, 1.5, 0.5]),
    ]
    train_spec, recovery_spec = ESTIMATORS["sae.hierarchical_train"], ESTIMATORS["sae.hierarchical_recovery"]
    assert (train_spec.plot, train_spec.overlay) == (sae.loss_plot, sae.loss_curves)
    assert recovery_spec.plot is sae.recovery_plot


def test_recovery_plot_sets_trained_beside_random_init(recovery: sae.HierarchicalRecoveryResult) -> None:
    # Three groups at 0, 1, 2: parent mean cos, child mean cos, consistency = 6/8 and 1/8 of the true children;
    # trained bars 0.4 wide centred 0.2 left of each group, random-init bars 0.2 right.
    fig = sae.recovery_plot(recovery)
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)
    (ax,) = fig.axes
    trained, random_init = ax.containers
    assert trained.get_label() == "trained" and random_init.get_label() == "random init"
    for bars, centres, heights in (
        (trained, [-0.2, 0.8, 1.8], [0.9, 0.8, 0.75]),
        (random_init, [0.2, 1.2, 2.2], [0.3, 0.2, 0.125]),
    ):
        np.testing.assert_allclose([b.get_x() + b.get_width() / 2 for b in bars], centres, atol=1e-12)
        np.testing.assert_allclose([b.get_width() for b in bars], [0.4] * 3, atol=1e-12)
        np.testing.assert_allclose([b.get_height() for b in bars], heights, rtol=1e-12)
        assert [b.get_y() for b in bars] == [0.0] * 3
    assert list(ax.get_xticks()) == [0, 1, 2]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["parent mean cos", "child mean cos", "consistency"]
    assert ax.get_ylim() == (0.0, 1.05)
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["trained", "random init"]
    assert legend.get_texts()[0].get_fontsize() == FontProperties(size=8).get_size_in_points()
    default = (rcParams["figure.subplot.left"], rcParams["figure.subplot.bottom"])
    assert (ax.get_position().x0, ax.get_position().y0) != pytest.approx(default, abs=1e-3)


def test_recovery_plot_keeps_zero_as_the_floor_below_a_negative_mean_cosine(
    recovery: sae.HierarchicalRecoveryResult,
) -> None:
    # A random initialisation whose child atoms point away from the true children on average (mean cos −0.25):
    # its bar goes below the axis, the y range stays [0, 1.05] (cosines above 0 are what the chart compares).
    below = recovery.model_copy(update={"random_init": sae.RecoveryScores(**scores(0.3, -0.25, 1))})
    (ax,) = sae.recovery_plot(below).axes
    assert ax.containers[1][1].get_height() == -0.25
    assert ax.get_ylim() == (0.0, 1.05)
