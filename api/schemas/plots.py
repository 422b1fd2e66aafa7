"""Figure responses: the image media types documented in OpenAPI, the format a request asks for, the headers."""

from fastapi import Response

from usecases import figures

IMAGE_RESPONSES = {
    200: {
        "description": "The figure.",
        "content": {
            "image/svg+xml": {"schema": {"type": "string"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}},
        },
    }
}


def chosen_format(fmt: str | None, accept: str | None) -> figures.Format:
    """``format`` if given, else PNG when the Accept header prefers it, else SVG."""
    if fmt is not None:
        return "png" if fmt == "png" else "svg"
    if accept and "image/png" in accept and "image/svg+xml" not in accept:
        return "png"
    return "svg"


def plot_response(plot: figures.Plot) -> Response:
    """The figure's bytes: a shared figure cacheable by anyone for a day, any other one ``private`` and varying with
    the credentials; a placeholder marked ``X-Plot-Status: placeholder`` and never cached."""
    if plot.placeholder:
        headers = {"Cache-Control": "no-store", "X-Plot-Status": "placeholder"}
    elif plot.shared:
        headers = {"Cache-Control": "public, max-age=86400"}
    else:
        headers = {"Cache-Control": "private, no-cache", "Vary": "Authorization, X-API-Key"}
    return Response(plot.data, media_type=plot.media_type, headers=headers)
