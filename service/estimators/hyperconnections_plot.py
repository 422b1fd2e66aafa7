"""Figure of a ``hyperconnections.token_dynamics`` result: spectrum, RK4 norm and sweep abscissa."""

from typing import Any


def plot_token_dynamics(result: Any) -> Any:
    """Eigenvalues at H = 0 in the complex plane; ‖H(t)‖ on a log scale (with a run); spectral abscissa along the
    sweep with its crossings (with a sweep). ``result`` is the result model or its JSON dict."""
    from matplotlib.figure import Figure

    data = result if isinstance(result, dict) else result.model_dump()
    panels = 1 + (data["simulation"] is not None) + (data["sweep_curve"] is not None)
    fig = Figure(figsize=(4.2 * panels, 3.6))
    axes = fig.subplots(1, panels, squeeze=False)[0]
    ax = axes[0]
    ax.scatter([e["re"] for e in data["eigenvalues"]], [e["im"] for e in data["eigenvalues"]], s=12)
    ax.axvline(0.0, color="0.6", lw=0.8)
    ax.set_xlabel("Re λ")
    ax.set_ylabel("Im λ")
    ax.set_title(f"spectrum at H = 0 ({data['linear_label']})")
    k = 1
    if data["simulation"] is not None:
        sim = data["simulation"]
        ax = axes[k]
        ax.semilogy(sim["norm_series"]["t"], sim["norm_series"]["norm"])
        ax.set_xlabel("t")
        ax.set_ylabel("‖H(t)‖")
        ax.set_title(f"RK4: {sim['regime']}")
        k += 1
    if data["sweep_curve"] is not None:
        ax = axes[k]
        ax.plot([p["value"] for p in data["sweep_curve"]], [p["spectral_abscissa"] for p in data["sweep_curve"]])
        ax.axhline(0.0, color="0.6", lw=0.8)
        for c in data["crossings"]:
            ax.axvline(c["value"], color="C3" if c["type"] == "hopf" else "C2", ls="--", lw=1)
        ax.set_xlabel(data["crossings"][0]["param"] if data["crossings"] else "sweep value")
        ax.set_ylabel("max Re λ")
        ax.set_title("continuation")
    fig.tight_layout()
    return fig
