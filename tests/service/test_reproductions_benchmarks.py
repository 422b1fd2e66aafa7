"""The benchmark papers' checks (service/reproductions/benchmark_checks.py) on their published tables and on
hand-made results: each figure against a hand computation or the published value, each finding's status both
ways, and the drawn bars, lines and labels (written for the mutation run's survivors, docs/testing.md)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2 as chi2_dist

from service.reproductions import benchmark_checks as bench

DATA = Path(__file__).resolve().parents[2] / "service" / "reproductions" / "data"


def _rows() -> list[dict]:
    return json.loads((DATA / "vimu_published_rows.json").read_text())["rows"]


def test_vimu_rows_are_the_published_table() -> None:
    rows = bench.vimu_rows()
    assert rows == _rows() and len(rows) == 16
    assert rows[0]["model"] == "Ministral-8B" and rows[0]["all_avg"] == 34.79


def test_vimu_judge_recomputes_both_averages() -> None:
    rows = _rows()
    worst = max(
        max(
            abs((r["rm"] + r["sv"]) / 2 - r["ssu_avg"]), abs((r["oe"] + r["eg"] + r["rm"] + r["sv"]) / 4 - r["all_avg"])
        )
        for r in rows
    )
    out = bench.vimu_judge([])
    assert out.figures == {
        "models": 16,
        "best_model": "o4-mini",
        "best_all_avg": 46.91,
        "best_ssu_avg": 31.82,
        "max_recompute_error": pytest.approx(worst, abs=1e-12),
    }
    assert 0 < worst <= 0.01  # the table's rounding
    (found,) = out.findings.values()
    assert list(out.findings) == ["below-50"]
    assert (found.status, found.expected_source, found.tolerance) == (
        "implementation_verified",
        "published_table",
        0.01,
    )
    assert found.expected == {"ssu_avg_and_all_avg": "the published rows", "best_all_avg": 46.91}
    assert found.measured == {"max_recompute_error": pytest.approx(worst, abs=1e-12)}
    assert found.computation.startswith("ViMU's published results table (16 MLLMs")
    assert out.reason == (
        f"the best of 16 models (o4-mini) has a published All-Avg of 46.91 < 50; both averages recompute from the "
        f"task scores within {worst:.3f}"
    )


def test_vimu_judge_contradicted_by_a_row_off_by_more_than_the_rounding(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows()
    rows[3] = {**rows[3], "all_avg": rows[3]["all_avg"] + 0.02}
    monkeypatch.setattr(bench, "vimu_rows", lambda: rows)
    assert bench.vimu_judge([]).findings["below-50"].status == "contradicted"
    rows[3] = {**_rows()[3], "ssu_avg": _rows()[3]["ssu_avg"] - 0.02}  # either average counts
    assert bench.vimu_judge([]).findings["below-50"].status == "contradicted"


def test_vimu_plot_draws_both_averages_per_model_sorted() -> None:
    rows = sorted(_rows(), key=lambda r: r["all_avg"])
    fig = bench.vimu_plot([], bench.vimu_judge([]))
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((7, 4.5))
    all_avg, ssu = ax.containers
    assert [p.get_width() for p in all_avg] == [r["all_avg"] for r in rows]
    assert [p.get_width() for p in ssu] == [r["ssu_avg"] for r in rows]
    assert [p.get_y() + p.get_height() / 2 for p in all_avg] == pytest.approx([i + 0.2 for i in range(16)])
    assert [p.get_y() + p.get_height() / 2 for p in ssu] == pytest.approx([i - 0.2 for i in range(16)])
    assert [p.get_height() for p in (*all_avg, *ssu)] == pytest.approx([0.4] * 32)
    assert [t.get_text() for t in ax.get_yticklabels()] == [r["model"] for r in rows]
    assert list(ax.get_yticks()) == list(range(16))
    assert {t.get_fontsize() for t in ax.get_yticklabels()} == {7}
    (line,) = ax.lines
    assert list(line.get_xdata()) == [50, 50] and line.get_linestyle() == "--" and line.get_color() == "k"
    assert line.get_linewidth() == 1
    assert ax.get_xlabel() == "score (0-100)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["All-Avg", "SSU-Avg"]
    assert {t.get_fontsize() for t in ax.get_legend().get_texts()} == {8}


def test_televal_judge_recomputes_the_published_group_means() -> None:
    """Σ score·size / Σ size by hand; the published means agree after rounding to two decimals."""

    def wmean(scores: list[float], sizes: list[int]) -> float:
        return sum(s * n for s, n in zip(scores, sizes, strict=True)) / sum(sizes)

    bk = wmean([80.67, 68.33, 73.60, 58.54, 61.35, 50.77, 34.49, 55.45], [300, 300, 837, 837, 1938, 1938, 2668, 827])
    sizes = [659, 564, 615, 542, 674]
    dg = wmean([32.93, 10.82, 38.70, 2.58, 17.21], sizes)
    dq = wmean([48.10, 34.75, 46.99, 24.72, 44.81], sizes)
    out = bench.televal_judge([])
    expected = {"basic_knowledge_gpt4o": bk, "dialect_gpt4o": dg, "dialect_qwen": dq}
    assert out.figures == pytest.approx(expected, abs=1e-9)
    assert [round(v, 2) for v in out.figures.values()] == [52.93, 21.15, 40.54]  # the published means
    found = out.findings["degradation"]
    assert (found.status, found.expected_source) == ("implementation_verified", "published_table")
    assert found.expected == {"basic_knowledge_gpt4o": 52.93, "dialect_gpt4o": 21.15, "dialect_qwen": 40.54}
    assert found.measured == out.figures and found.tolerance == "equal after rounding to two decimals"
    assert found.computation.startswith("TELEVAL's per-dataset table")
    assert out.reason == (
        f"weighted group means {bk:.3f} (published 52.93), {dg:.3f} (published 21.15), {dq:.3f} (published 40.54)"
    )


def test_televal_judge_contradicted_when_one_mean_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bench.TELEVAL_PUBLISHED, "dialect_qwen", 40.55)
    assert bench.televal_judge([]).findings["degradation"].status == "contradicted"


def test_televal_plot_bars() -> None:
    out = bench.televal_judge([])
    fig = bench.televal_plot([], out)
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((6, 3.5))
    published, recomputed = ax.containers
    assert [p.get_height() for p in published] == [52.93, 21.15, 40.54]
    assert [p.get_height() for p in recomputed] == list(out.figures.values())
    assert [p.get_x() + p.get_width() / 2 for p in published] == pytest.approx([-0.2, 0.8, 1.8])
    assert [p.get_x() + p.get_width() / 2 for p in recomputed] == pytest.approx([0.2, 1.2, 2.2])
    assert [p.get_width() for p in (*published, *recomputed)] == pytest.approx([0.4] * 6)
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "Basic Knowledge\nGPT-4o-Audio",
        "Dialect\nGPT-4o-Audio",
        "Dialect\nQwen2.5-Omni",
    ]
    assert list(ax.get_xticks()) == [0, 1, 2]
    assert ax.get_ylabel() == "weighted mean score"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["published", "recomputed"]
    assert {t.get_fontsize() for t in ax.get_legend().get_texts()} == {8}


# Friedman over FRIEDMAN_SCORES by hand: per-dataset ranks (1 = highest) sum to 7, 12, 18, 23 over N = 6, so
# R̄ = 7/6, 2, 3, 23/6 and χ² = 12/(6·4·5)·(7² + 12² + 18² + 23²) − 3·6·5 = 104.6 − 90 = 14.6 on 3 degrees of freedom;
# Nemenyi CD = q·√(4·5/36) with Demšar's q₀.₀₅ = 2.569 for k = 4.
RANKS = [7 / 6, 2.0, 3.0, 23 / 6]
CHI2 = 14.6
CD = 2.569 * math.sqrt(20 / 36)


def _ubench_results(mid: float = 50.0, **friedman_overrides) -> list[dict]:
    unet = {"a": 0.9, "p": 0.2, "g": 0.3, "s": 0.6, "eff": 0.4, "uscore_100": 41.5}
    friedman = {"avg_ranks": RANKS, "chi2": CHI2, "p": float(chi2_dist.sf(CHI2, 3)), "models": ["A", "B", "C", "D"]}
    friedman["cd"] = bench.ref_ubench.friedman_nemenyi(bench.FRIEDMAN_SCORES)["cd"]
    friedman.update(friedman_overrides)
    return [unet, {"uscore_100": mid}, friedman]


def test_ubench_judge_on_the_hand_values() -> None:
    results = _ubench_results()
    assert results[2]["cd"] == pytest.approx(CD, abs=1e-3)
    out = bench.ubench_judge(results)
    found = out.findings["u-score"]
    assert (found.status, found.expected_source) == ("implementation_verified", "reference_library")
    assert out.figures["uscore_unet_busi"] == 41.5 and out.figures["uscore_midpoint"] == 50.0
    assert out.figures["avg_ranks"] == RANKS and out.figures["chi2"] == CHI2 and out.figures["cd"] == results[2]["cd"]
    assert out.figures["p"] == results[2]["p"]
    ref = out.figures["reference"]
    assert ref["avg_ranks"] == pytest.approx(RANKS) and ref["chi2"] == pytest.approx(CHI2)
    assert found.expected == {**ref, "uscore_midpoint": 50.0}
    assert found.measured == {"avg_ranks": RANKS, "chi2": CHI2, "p": results[2]["p"], "cd": results[2]["cd"]} | {
        "uscore_midpoint": 50.0
    }
    assert found.tolerance == {"friedman_nemenyi": 1e-9, "uscore_midpoint": 0.01}
    assert found.computation.startswith("reference.ubench: scipy.stats.friedmanchisquare")
    off = max(abs(a - b) for a, b in zip([*RANKS, CHI2], [*ref["avg_ranks"], ref["chi2"]], strict=True))
    assert out.reason == (
        f"Friedman chi2 14.60, p {results[2]['p']:.6f}, Nemenyi CD {results[2]['cd']:.4f} against SciPy's 14.60, "
        f"{ref['p']:.6f}, {ref['cd']:.4f} (largest difference {max(off, 0.0):.2g}); U-Score 50.0000 at the midpoint "
        f"(50 by hand) and 41.5000 for U-Net on BUSI"
    )


@pytest.mark.parametrize(
    ("mid", "overrides", "status"),
    [
        (50.009, {}, "implementation_verified"),
        (49.991, {}, "implementation_verified"),
        (50.02, {}, "contradicted"),
        (49.98, {}, "contradicted"),
        (50.0, {"chi2": CHI2 + 1e-6}, "contradicted"),
        (50.0, {"avg_ranks": [7 / 6, 2.0, 3.0 + 1e-6, 23 / 6]}, "contradicted"),
        (50.0, {"p": float(chi2_dist.sf(CHI2, 3)) + 1e-6}, "contradicted"),
        (50.0, {"cd": CD + 0.01}, "contradicted"),
    ],
)
def test_ubench_judge_tolerances(mid: float, overrides: dict, status: str) -> None:
    assert bench.ubench_judge(_ubench_results(mid, **overrides)).findings["u-score"].status == status


def test_ubench_plot() -> None:
    results = _ubench_results()
    fig = bench.ubench_plot(results, bench.ubench_judge(results))
    left, right = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((8, 3.5))
    assert [p.get_height() for p in left.patches] == [0.9, 0.2, 0.3, 0.6, 0.4]
    assert [t.get_text() for t in left.get_xticklabels()] == ["a", "p", "g", "s", "eff"]
    assert left.get_ylim() == pytest.approx((0, 1.05))
    assert left.get_title() == "U-Net on BUSI: U-Score 41.50"
    (points,) = right.lines[:1]
    assert list(points.get_xdata()) == pytest.approx(RANKS) and list(points.get_ydata()) == [0, 1, 2, 3]
    assert points.get_marker() == "o" and points.get_linestyle() == "None"
    (bars,) = right.collections
    segs = bars.get_segments()
    cd = results[2]["cd"]
    assert [s[0][0] for s in segs] == pytest.approx([r - cd / 2 for r in RANKS])
    assert [s[1][0] for s in segs] == pytest.approx([r + cd / 2 for r in RANKS])
    caps = right.lines[1:]
    assert len(caps) == 2 and all(c.get_markersize() == 8 for c in caps)  # capsize 4 is a marker of size 8
    assert [t.get_text() for t in right.get_yticklabels()] == ["A", "B", "C", "D"]
    assert list(right.get_yticks()) == [0, 1, 2, 3]
    assert right.get_xlabel() == "average rank (bars: CD/2 either side)"
    assert right.get_title() == f"Friedman p = {results[2]['p']:.4f}, CD = {cd:.3f}"
    # side by side, one row: the same height, the right one to the right
    assert left.get_position().y0 == pytest.approx(right.get_position().y0) and right.get_position().x0 > 0.5
    zeros = _ubench_results()
    zeros[0].update(dict.fromkeys(["a", "p", "g", "s", "eff"], 0.0))  # all bars 0: the lower limit is still 0
    assert bench.ubench_plot(zeros, bench.ubench_judge(zeros)).axes[0].get_ylim() == pytest.approx((0, 1.05))
    unnamed = _ubench_results()
    del unnamed[2]["models"]
    fig = bench.ubench_plot(unnamed, bench.ubench_judge(unnamed))
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == ["0", "1", "2", "3"]


def _table() -> dict:
    return json.loads((DATA / "raven_synthetic_table.json").read_text())


def test_raven_table_is_the_fixture() -> None:
    assert bench.raven_table() == _table()


def test_raven_judge_matches_the_fixtures_reference_metrics() -> None:
    """The fixture stores, per setting, the metrics of its own re-implementation (rounded); G_cm by hand from
    them: S_main(eo_ir) − max(S_main(eo_only), S_main(ir_only)) = 0.833333 − 0.738095."""
    table = _table()
    out = bench.raven_judge([], table)
    for setting, row in table["settings"].items():
        for metric in bench.RAVEN_METRICS:
            assert out.figures[f"{setting}_{metric}"] == pytest.approx(row[metric], abs=5e-4), (setting, metric)
    assert out.figures["g_cm"] == pytest.approx(0.833333 - 0.738095, abs=1e-5)
    assert out.figures["hand_g_cm"] == out.figures["g_cm"] and out.figures["max_abs_difference"] == 0.0
    found = out.findings["diagnostics"]
    assert (found.status, found.expected_source, found.tolerance) == (
        "implementation_verified",
        "independent_computation",
        1e-12,
    )
    assert found.expected["g_cm"] == out.figures["g_cm"]
    assert found.expected["eo_ir_s_cons"] == pytest.approx(0.765625)
    assert set(found.expected) == {"g_cm", *(f"eo_ir_{m}" for m in bench.RAVEN_METRICS)}
    assert found.measured == {"g_cm": out.figures["g_cm"], "max_abs_difference": 0.0}
    assert found.computation.startswith("reference.raven.metrics by hand")
    assert out.reason == (
        "on the hand-built fixture (model answers on the real videos are not public) the scorer gives EO+IR accuracy "
        "0.8333 with strict group pass 0, S_main 0.833333 / 0.738095 / 0.488095 (EO+IR / EO / IR) and G_cm "
        "0.0952381; every metric is within 0 of the hand computation"
    )
    assert bench.raven_judge([]).figures == out.figures  # the committed fixture by default


def test_raven_scores_mark_every_wrong_answer_wrong() -> None:
    """A setting with every answer right scores 1 everywhere; one with every answer wrong 0 everywhere."""
    table = _table()
    table["settings"] = {
        "eo_ir": {"correct": "11111111|1111"},
        "eo_only": {"correct": "00000000|0000"},
        "ir_only": {"correct": "10000000|0000"},
    }
    scored = bench._raven_scores(table)
    assert all(scored["eo_ir"]["scores"][m]["value"] == 1.0 for m in bench.RAVEN_METRICS)
    assert all(scored["eo_only"]["scores"][m]["value"] == 0.0 for m in bench.RAVEN_METRICS)
    assert scored["ir_only"]["scores"]["overall_acc"]["value"] == pytest.approx(1 / 12)
    assert scored["ir_only"]["scores"]["s_l1"]["value"] == 1.0  # the first C1 step is the only L1 question
    out = bench.raven_judge([], table)
    assert out.findings["diagnostics"].status == "implementation_verified"
    assert out.figures["g_cm"] == pytest.approx(1.0 - 1 / 3)  # S_main 1 against max(0, (1 + 0 + 0)/3)


def test_raven_judge_contradicted_when_a_hand_value_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    real = bench.ref_raven.metrics

    def off(groups, correct):
        out = dict(real(groups, correct))
        out["s_coh"] += 1e-9
        return out

    monkeypatch.setattr(bench.ref_raven, "metrics", off)
    assert bench.raven_judge([]).findings["diagnostics"].status == "contradicted"


def test_raven_plot_bars() -> None:
    out = bench.raven_judge([])
    f = out.figures
    fig = bench.raven_plot([], out)
    (ax,) = fig.axes
    assert tuple(fig.get_size_inches()) == pytest.approx((7, 3.8))
    metrics = ["overall_acc", "s_main", "s_cons", "s_coh", "strict_pass"]
    for i, (bars, setting) in enumerate(zip(ax.containers, ("eo_ir", "eo_only", "ir_only"), strict=True)):
        assert [p.get_height() for p in bars] == [f[f"{setting}_{m}"] for m in metrics]
        centres = [p.get_x() + p.get_width() / 2 for p in bars]
        assert centres == pytest.approx([j + (i - 1) * 0.27 for j in range(5)])
        assert [p.get_width() for p in bars] == pytest.approx([0.27] * 5)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["accuracy", "S_main", "S_cons", "S_coh", "strict pass"]
    assert list(ax.get_xticks()) == [0, 1, 2, 3, 4]
    assert ax.get_ylim() == pytest.approx((0, 1.05))
    assert ax.get_title() == f"G_cm = {f['g_cm']:.4f}"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["eo_ir", "eo_only", "ir_only"]
    assert {t.get_fontsize() for t in ax.get_legend().get_texts()} == {8}
    table = _table()
    for row in table["settings"].values():
        row["correct"] = "00000000|0000"  # every bar 0: the lower limit is still 0
    wrong = bench.raven_judge([], table)
    assert bench.raven_plot([], wrong).axes[0].get_ylim() == pytest.approx((0, 1.05))


def test_plots_are_laid_out_tight() -> None:
    """tight_layout moves the axes off matplotlib's default subplot margins (left 0.125)."""
    figs = [
        bench.vimu_plot([], bench.vimu_judge([])),
        bench.televal_plot([], bench.televal_judge([])),
        bench.raven_plot([], bench.raven_judge([])),
        bench.ubench_plot(_ubench_results(), bench.ubench_judge(_ubench_results())),
    ]
    for fig in figs:
        assert fig.axes[0].get_position().x0 != pytest.approx(0.125)
    assert np.isfinite([fig.get_size_inches() for fig in figs]).all()


def test_each_finding_names_its_source_in_full() -> None:
    """The report prints these sentences beside the status: the source of each expected value, word for word."""
    assert bench.vimu_judge([]).findings["below-50"].computation == (
        "ViMU's published results table (16 MLLMs, task scores OE, EG, RM, SV and both averages): the scorer's "
        "aggregation recomputes the averages; the below-50 figures themselves are read from the table, not "
        "rescored from items"
    )
    assert bench.televal_judge([]).findings["degradation"].computation == (
        "TELEVAL's per-dataset table (GPT-4o-Audio on Basic Knowledge, GPT-4o-Audio and Qwen2.5-Omni on the "
        "dialect sets) and its group means: the size-weighted means recompute; the degradation itself is read "
        "from the published scores, not rescored from items"
    )
    assert bench.ubench_judge(_ubench_results()).findings["u-score"].computation == (
        "reference.ubench: scipy.stats.friedmanchisquare and studentized_range on a 6 x 4 score matrix; the "
        "midpoint U-Score by hand; a unit test of the formulas, not a reproduction of the paper's findings"
    )
    assert bench.raven_judge([]).findings["diagnostics"].computation == (
        "reference.raven.metrics by hand on a hand-built fixture (one video, 8 + 4 questions, three settings); "
        "its 83 % accuracy with no group passed is built into the fixture and says nothing about real models"
    )


def test_tolerances_are_inclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error of exactly the tolerance still passes: 0.01 on a ViMU average (0.01 recomputed against a published
    0), 1e-9 on a Friedman figure and 1e-12 on a RAVEN metric (each against a reference value of 0)."""
    row = {"model": "m", "oe": 0.01, "eg": 0.01, "rm": 0.01, "sv": 0.01, "ssu_avg": 0.0}
    row["all_avg"] = bench.vimu.aggregate(0.01, 0.01, 0.01, 0.01)[1]
    monkeypatch.setattr(bench, "vimu_rows", lambda: [row])
    assert bench.vimu_judge([]).figures["max_recompute_error"] == 0.01
    assert bench.vimu_judge([]).findings["below-50"].status == "implementation_verified"

    ref = {"avg_ranks": [1.0, 2.0], "chi2": 0.0, "p": 0.5, "cd": 1.0}
    monkeypatch.setattr(bench.ref_ubench, "friedman_nemenyi", lambda scores: dict(ref))
    results = [{"uscore_100": 41.5}, {"uscore_100": 50.0}, {**ref, "chi2": 1e-9}]
    assert bench.ubench_judge(results).findings["u-score"].status == "implementation_verified"

    real = bench.ref_raven.metrics

    def shifted(groups, correct):
        out = dict(real(groups, correct))
        out["strict_pass"] = out["strict_pass"] + 1e-12  # the fixture's strict pass is 0 in every setting
        return out

    monkeypatch.setattr(bench.ref_raven, "metrics", shifted)
    out = bench.raven_judge([])
    assert out.figures["max_abs_difference"] == 1e-12
    assert out.findings["diagnostics"].status == "implementation_verified"
