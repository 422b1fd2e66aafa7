"""User-provided text as it is drawn in figures: one line, at most ``MAX_LABEL`` characters."""

MAX_LABEL = 60
"""Characters of a name drawn in a figure; a longer one is cut and ends with "…"."""


def plain_label(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` on one line (line breaks as spaces), cut to ``limit`` characters with "…" as the last one."""
    line = " ".join(text.splitlines())
    return line if len(line) <= limit else line[: limit - 1] + "…"
