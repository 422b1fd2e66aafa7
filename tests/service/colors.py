"""Colours of drawn figures, compared as matplotlib's RGBA."""


def rgba(color: object) -> tuple[float, float, float, float]:
    """matplotlib's RGBA of a colour (imported here, so that collecting a test module does not import matplotlib)."""
    from matplotlib.colors import to_rgba

    return to_rgba(color)
