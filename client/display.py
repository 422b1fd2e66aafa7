"""Runs for notebooks: a page of runs as a pandas DataFrame and a run as an HTML table with its plot. Shared with
``estibench.Local`` (the one module of the client it imports); ``tests/usecases/test_local.py`` drives both with
the same calls and compares their frames and pages."""

import base64
import html
import json
from collections.abc import Callable
from typing import Any

HEAD = ("id", "kind", "name", "version", "created_at", "duration_ms", "note")
"""The first columns of a runs frame; then ``tag.*``, ``param.*`` and scalar ``result.*`` columns."""
MAX_CELL = 200
"""Characters of a value shown in a run's HTML table (longer ones are cut and end with "…")."""


def leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    """A JSON object flattened to dotted paths (lists are leaves)."""
    if not isinstance(value, dict):
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, inner in value.items():
        out.update(leaves(inner, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def runs_frame(items: list[dict[str, Any]]) -> Any:
    """The runs as a DataFrame, one row per run: ``HEAD``, ``tag.<key>``, ``param.<path>`` (every param, lists as
    lists) and ``result.<path>`` (the result's scalar leaves); ``created_at`` as UTC timestamps."""
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError("runs_dataframe needs pandas: pip install -e '.[local]' (the local extra)") from exc
    rows, columns = [], {c: None for c in HEAD}
    for run in items:
        row = {c: run.get(c) for c in HEAD}
        row |= {f"tag.{k}": v for k, v in sorted(run.get("tags", {}).items())}
        row |= {f"param.{p}": v for p, v in leaves(run.get("params", {})).items()}
        row |= {f"result.{p}": v for p, v in leaves(run["result"]).items() if _scalar(v)}
        columns |= dict.fromkeys(row)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(columns))
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    return frame


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return html.escape(text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…")


def _table(title: str, values: dict[str, Any]) -> str:
    rows = "".join(f"<tr><th>{html.escape(p)}</th><td>{_cell(v)}</td></tr>" for p, v in values.items())
    return f"<h4>{html.escape(title)}</h4><table>{rows}</table>" if rows else ""


def run_html(run: dict[str, Any], svg: bytes | None) -> str:
    """A run as HTML: its name and id, tags and note, params and result as tables, and ``svg`` (its plot) inline as
    an image; every text escaped."""
    head = f"<p><b>{html.escape(run['name'])}</b> {html.escape(run['kind'])} v{html.escape(run['version'])} · "
    head += f"<code>{html.escape(run['id'])}</code> · {html.escape(run['created_at'])}</p>"
    tags = ", ".join(f"{k}={v}" for k, v in run.get("tags", {}).items())
    notes = f"<p>{html.escape(tags)}{' · ' if tags and run.get('note') else ''}{html.escape(run.get('note') or '')}</p>"
    image = ""
    if svg is not None:
        image = f'<img alt="plot" src="data:image/svg+xml;base64,{base64.b64encode(svg).decode()}">'
    params = _table("params", leaves(run.get("params", {})))
    result = _table("result", {p: v for p, v in leaves(run["result"]).items() if _scalar(v)})
    return f"<div>{head}{notes if tags or run.get('note') else ''}{params}{result}{image}</div>"


class Run(dict[str, Any]):
    """A run as ``get_run`` answers it: a dict (every key, comparison and ``json.dumps`` as before) that a notebook
    shows as tables of its params and result with its plot inline (``_repr_html_``). Pickled or copied, it is a
    plain dict."""

    def __init__(self, data: dict[str, Any], plot: Callable[[], bytes | None]) -> None:
        super().__init__(data)
        self._plot = plot

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))

    def _repr_html_(self) -> str:
        return run_html(self, self._plot() if self.get("kind") == "estimator" else None)
