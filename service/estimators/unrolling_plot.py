"""Figure of an ``unrolling.jacobian_error`` result: error curves per truncation point with their bounds."""

from typing import Any

from service.plot_overlay import Curve, Curves


def plot_jacobian_error(result: Any) -> Any:
    """Relative (absolute when J* = 0) Jacobian error against t on log-log axes, one line per k0, the bound
    dashed in the same colour. ``result`` is the result model or its JSON dict."""
    from matplotlib.figure import Figure

    data = result if isinstance(result, dict) else result.model_dump()
    relative = data["j_star_norm"] > 0
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    for i, curve in enumerate(data["curves"]):
        color = f"C{i % 10}"
        ax.loglog(
            curve["t"], curve["rel_error"] if relative else curve["abs_error"], color=color, label=f"k0 = {curve['k0']}"
        )
        if relative:
            ax.loglog(curve["t"], curve["bound"], color=color, ls="--", lw=0.8)
    ax.set_xlabel("iteration t")
    ax.set_ylabel("‖J_t − J*‖ / ‖J*‖" if relative else "‖J_t − J*‖")
    ax.set_title(f"h = {data['step']:.3g}, κ = {data['kappa']:.3g}, ρ = {data['rho']:.4f} (dashed: bound)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def jacobian_error_curves(result: Any) -> Curves:
    """The plot's error curve per k0 against t (log-log, relative unless J* = 0; the bounds left out), for
    overlaying runs."""
    relative = result.j_star_norm > 0
    curves = tuple(
        Curve(f"k0 = {c.k0}", c.t, c.rel_error if relative and c.rel_error is not None else c.abs_error)
        for c in result.curves
    )
    label = "‖J_t − J*‖ / ‖J*‖" if relative else "‖J_t − J*‖"
    return Curves("iteration t", label, curves, x_log=True, y_log=True)
