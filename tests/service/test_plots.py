"""Estimator plots: each draws exactly the numbers of the result it is given."""

import numpy as np
import pytest

from service.registry import ESTIMATORS, load_all, no_progress


@pytest.fixture(scope="module", autouse=True)
def _registry() -> None:
    load_all()


def run(name: str, params: dict):
    spec = ESTIMATORS[name]
    result = spec.fn(spec.params_model.model_validate(params), no_progress)
    return spec, result


def test_moead_scaling_plot_draws_means_and_the_ols_line():
    spec, result = run("moead.omm_scaling", {"r": 1, "reps": 5, "ns": [8, 16, 32]})
    ax = spec.plot(result).axes[0]
    means = [pt.mean for pt in result.points]
    line = ax.lines[-1]
    assert list(ax.lines[0].get_ydata()) == pytest.approx(means, rel=1e-12)  # the error-bar markers
    fit_slope = np.polyfit(np.log(line.get_xdata()), np.log(line.get_ydata()), 1)[0]
    assert fit_slope == pytest.approx(result.slope, rel=1e-9)  # the drawn line has the reported OLS slope
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_double_descent_plot_skips_missing_pnml_points():
    spec, result = run(
        "compression.double_descent",
        {"experiment": "rf_regression", "n": 20, "widths": [5, 10, 20, 40], "reps": 1, "n_test": 100},
    )
    ax = spec.plot(result).axes[0]
    mle, bayes, pnml = ax.lines[:3]
    assert list(mle.get_ydata()) == pytest.approx([r.mle_ce for r in result.rows], rel=1e-12)
    assert list(bayes.get_ydata()) == pytest.approx([r.bayes_ce for r in result.rows], rel=1e-12)
    assert len(pnml.get_xdata()) == sum(r.pnml_ce is not None for r in result.rows) == 2  # pNML needs p < n


def test_minhash_simulate_plot_bars_are_the_variances():
    spec, result = run("minhash.simulate", {"intersection": 5, "union": 10, "universe": 31, "num_perm": 8})
    ax = spec.plot(result).axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([e.variance for e in result.estimators if e.target == "jaccard"], rel=1e-12)
    assert ax.lines[0].get_ydata()[0] == pytest.approx(0.5 * 0.5 / 8)  # J(1-J)/K
