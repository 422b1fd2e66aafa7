"""``Local``: the service's catalog, validation, cost caps, runs and envelopes in the calling process, over an
embedded SQLite store, with the method names and signatures of ``client.Client`` and its answers as dicts."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from client.display import Run, runs_frame
from service.registry import Progress, no_progress
from usecases import figures, run_requests, runs
from usecases.clock import utc_iso
from usecases.embedded import EmbeddedStore
from usecases.errors import NotFound, invalid
from usecases.run_search import SearchQuery

MAX_LIMIT = 100
"""The most runs one listing returns (as ``GET /v1/runs``)."""


class ProgressBar:
    """A tqdm bar (0-100 %) opened on the first progress report of a computation, so a stored run shows none."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._bar: Any = None

    def __call__(self, fraction: float, message: str = "") -> None:
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=100, desc=self.label, unit="%")
        self._bar.n = round(100 * min(max(fraction, 0.0), 1.0))
        if message:
            self._bar.set_postfix_str(message, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.n = self._bar.total
            self._bar.close()


class Local:
    """Runs in this process, stored in the SQLite file ``path`` (created and migrated on first use) or, without
    one, in a temporary file removed by ``close``. Runs are anonymous; work above an estimator's synchronous
    budget runs here with a progress bar (``progress=False``: none) instead of as a job, under the hard cap.
    Errors are the use cases' (``usecases.errors``: ``InvalidFields`` with the same ``errors`` as a 422)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._store = EmbeddedStore(None if path is None else Path(path))
        self.services = self._store.services

    @property
    def path(self) -> Path:
        """The store's SQLite file."""
        return self._store.path

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Local:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, kind: str, name: str, body: dict[str, Any], progress: bool | Progress) -> dict[str, Any]:
        spec = run_requests.find_spec(kind, name)
        try:
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except ValueError as exc:
            raise invalid("NaN and infinities are not JSON", ("body",), "finite_number") from exc
        request = run_requests.make_request(spec, run_requests.parse(run_requests.body_model(spec), text), None)
        sink: Progress = ProgressBar(name) if progress is True else progress or no_progress
        try:
            outcome = run_requests.run(self.services, request, client=None, progress=sink, in_job=True)
        finally:
            if isinstance(sink, ProgressBar):
                sink.close()
        assert isinstance(outcome, run_requests.Answered)
        return runs.envelope(outcome.run, cached=outcome.cached)

    def run(self, name: str, params: dict[str, Any], *, progress: bool | Progress = True) -> dict[str, Any]:
        """Run estimator ``name`` on ``params`` (the JSON body of ``POST /v1/estimators/{name}``); its run
        envelope. ``progress``: a tqdm bar (True), none (False), or a ``progress(fraction, message)`` callable."""
        return self._run("estimator", name, params, progress)

    def score(
        self,
        scorer: str,
        answer_key: list[dict],
        predictions: list[dict],
        params: dict[str, Any] | None = None,
        *,
        progress: bool | Progress = True,
    ) -> dict[str, Any]:
        """Score ``predictions`` against ``answer_key`` with ``scorer``; its run envelope."""
        body = {"answer_key": {"items": answer_key}, "predictions": {"items": predictions}, "params": params or {}}
        return self._run("scorer", scorer, body, progress)

    def get_run(self, run_id: str) -> Run:
        """One stored run (``cached`` false, no tags, as ``GET /v1/runs/{id}`` answers an anonymous caller): a dict,
        shown in a notebook as tables with its plot inline (``client.display.Run``)."""
        view = runs.view(runs.get_run(self.services, None, run_id), runs.NO_ANNOTATION)
        return Run(view, lambda: self._plot_or_none(run_id))

    def _plot_or_none(self, run_id: str) -> bytes | None:
        try:
            return self.plot(run_id)
        except NotFound:
            return None

    def runs(
        self,
        *,
        name: str | None = None,
        kind: Literal["estimator", "scorer"] | None = None,
        limit: int = 50,
        filters: list[str] | None = None,
        sort: str = "created_at",
        order: Literal["asc", "desc"] = "desc",
        owner: Literal["me", "anonymous"] | None = None,
        created_from: datetime | None = None,
        created_to: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """The first page of stored runs, as ``GET /v1/runs`` answers it (filters, sort, time range, owner)."""
        if not 1 <= limit <= MAX_LIMIT:
            raise invalid(f"limit must be between 1 and {MAX_LIMIT}", ("query", "limit"), "value_error")
        query = SearchQuery(kind, name, tuple(filters or ()), sort, order, created_from, created_to, owner)
        page = runs.search_runs(self.services, None, query, limit=limit, cursor=None)
        return [runs.view(row, runs.NO_ANNOTATION) for row in page.items]

    def plot(self, run_id: str, format: Literal["svg", "png"] = "svg") -> bytes:
        """The figure of an estimator run (``GET /v1/runs/{id}/plot``): SVG or PNG bytes."""
        return figures.run_plot(self.services, None, run_id, format).data

    def runs_dataframe(self, **query: Any) -> Any:
        """The first page of runs (the arguments of ``runs``) as a pandas DataFrame, as ``client.Client``'s."""
        return runs_frame(self.runs(**query))

    def compare_runs(self, ids: list[str]) -> dict[str, Any]:
        """2 to 8 runs of one estimator side by side, as ``GET /v1/runs/compare`` answers it."""
        found = runs.compare_runs(self.services, None, ids)
        return {
            "kind": found.kind,
            "name": found.name,
            "runs": [
                {"id": r.id, "version": r.version, "code_version": r.code_version, "created_at": utc_iso(r.created_at)}
                for r in found.runs
            ],
            "versions_differ": found.versions_differ,
            "params": found.params,
            "result": found.result,
        }

    def compare_plot(self, ids: list[str], format: Literal["svg", "png"] = "svg") -> bytes:
        """The curves of 2 to 8 runs of one estimator on one figure (``GET /v1/runs/compare/plot``)."""
        return figures.compare_plot(self.services, None, ids, format).data
