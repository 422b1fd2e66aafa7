"""Python client for the estibench HTTP API (``pip install -e .`` provides it and the ``estibench`` CLI)."""

import json
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import httpx

from client.display import Run, runs_frame

DEFAULT_URL = "http://127.0.0.1:8000"

COST_TYPES = {"cost_cap": "hard cap", "cost_budget": "synchronous budget (no job queue runs)"}
COST_MSG = re.compile(r"cost (?P<cost>\S+) > (?:hard_cap|sync_budget) (?P<limit>\S+) (?P<unit>.+)")
"""The field error of a refused cost (``usecases/budgets.check_caps``): ``cost 2e+10 > hard_cap 1e+09 unit``."""

Progress = Callable[[float, str | None], None]
"""Called with a job's ``fraction`` (0..1) and ``message`` whenever a poll sees them change."""


class ApiError(Exception):
    """A problem+json answer: ``status``, ``detail`` and the per-field ``errors`` of a 422."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        self.errors = body.get("errors") or []
        super().__init__(self.sentence())

    def sentence(self) -> str:
        """The problem in a line: status, title and detail, then the field errors; a refused cost as one sentence
        naming the cost, the cap and the unit."""
        for e in self.errors:
            cost = COST_MSG.fullmatch(str(e.get("msg", ""))) if e.get("type") in COST_TYPES else None
            if cost:
                value, limit, unit = cost.group("cost", "limit", "unit")
                return (
                    f"{self.status} refused: the call would cost {value} {unit}, over the {COST_TYPES[e['type']]} "
                    f"of {limit} {unit}"
                )
        head = f"{self.status} {self.body.get('title', '')}: {self.body.get('detail', '')}"
        fields = [e for e in self.errors if e.get("msg") != self.body.get("detail")]
        where = "; ".join(f"{'.'.join(map(str, e.get('loc', [])))}: {e.get('msg', '')}" for e in fields)
        return head + (f" ({where})" if where else "")


class Unreachable(Exception):
    """The server could not be reached, or did not answer in time (``timeout`` true)."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class JobStillRunning(TimeoutError):
    """``wait_job`` gave up before the job ended; the job goes on (``job_id``)."""

    def __init__(self, job_id: str, status: str, waited_s: float) -> None:
        super().__init__(f"job {job_id} is still {status} after {waited_s:g} s")
        self.job_id = job_id


class Client:
    """Thin wrapper over the HTTP contract. ``base_url`` defaults to ``ESTIBENCH_URL``, ``api_key`` to
    ``ESTIBENCH_KEY``; ``http`` may be any ``httpx.Client`` (e.g. a test client)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url or os.environ.get("ESTIBENCH_URL") or DEFAULT_URL
        api_key = api_key or os.environ.get("ESTIBENCH_KEY")
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = timeout
        self.http = http or httpx.Client(base_url=self.base_url, timeout=timeout)

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            r = self.http.request(method, path, headers={**self.headers, **kw.pop("headers", {})}, **kw)
        except httpx.TimeoutException:
            raise Unreachable(f"no answer from {self.base_url} within {self.timeout:g} s", timeout=True) from None
        except httpx.TransportError as exc:
            reason = str(exc) or type(exc).__name__
            raise Unreachable(f"cannot reach {self.base_url} ({reason}); is the server running?") from None
        if r.status_code >= 400:
            try:
                body = r.json()
            except ValueError:
                body = {"title": r.reason_phrase, "detail": r.text}
            raise ApiError(r.status_code, body if isinstance(body, dict) else {"detail": str(body)})
        return r

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/v1/health").json()

    def estimators(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/estimators").json()["items"]

    def estimator(self, name: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/estimators/{name}").json()

    def run(
        self,
        name: str,
        params: dict[str, Any],
        *,
        wait: bool = True,
        poll_s: float = 0.5,
        timeout_s: float = 3600.0,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """Run an estimator. An over-budget call becomes a job (202): with ``wait`` it is polled to its run
        (``progress`` sees its fraction and message), else the job is returned."""
        r = self._call("POST", f"/v1/estimators/{name}", json=params)
        if r.status_code != 202:
            return r.json()
        job = r.json()
        return self.wait_job(job["id"], poll_s=poll_s, timeout_s=timeout_s, progress=progress) if wait else job

    def submit_job(self, name: str, params: dict[str, Any], kind: str = "estimator") -> dict[str, Any]:
        return self._call("POST", "/v1/jobs", json={"kind": kind, "name": name, "params": params}).json()

    def job(self, job_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/jobs/{job_id}").json()

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/v1/jobs/{job_id}").json()

    def wait_job(
        self, job_id: str, *, poll_s: float = 0.5, timeout_s: float = 3600.0, progress: Progress | None = None
    ) -> dict[str, Any]:
        """Poll a job until it ends; returns its run, raises ``ApiError`` with the job's problem, or
        ``JobStillRunning`` after ``timeout_s``. ``progress(fraction, message)`` is called when either changes."""
        start = time.monotonic()
        seen: tuple[float, str | None] | None = None
        while True:
            job = self.job(job_id)
            state = job.get("progress") or {}
            now = (float(state.get("fraction") or 0.0), state.get("message"))
            if progress is not None and now != seen:
                progress(*now)
                seen = now
            if job["status"] == "succeeded":
                return self.get_run(job["run_id"])
            if job["status"] in ("failed", "cancelled"):
                problem = job.get("problem") or {"title": job["status"], "detail": f"job {job_id} {job['status']}"}
                raise ApiError(int(problem.get("status", 500)), problem)
            if time.monotonic() - start > timeout_s:
                raise JobStillRunning(job_id, job["status"], timeout_s)
            time.sleep(poll_s)

    def get_run(self, run_id: str) -> Run:
        """One stored run with its params and this key's tags and note: a dict, shown in a notebook as tables with
        its plot inline (``client.display.Run``)."""
        return Run(self._call("GET", f"/v1/runs/{run_id}").json(), lambda: self._plot_or_none(run_id))

    def _plot_or_none(self, run_id: str) -> bytes | None:
        try:
            return self.plot(run_id)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def runs(
        self,
        *,
        name: str | None = None,
        kind: str | None = None,
        limit: int = 50,
        filters: list[str] | None = None,
        sort: str = "created_at",
        order: str = "desc",
        owner: str | None = None,
        created_from: str | None = None,
        created_to: str | None = None,
    ) -> list[dict[str, Any]]:
        """The first page of runs (newest first unless sorted otherwise); ``filters`` as ``GET /v1/runs`` takes
        them: ``["param.num_perm>=64", 'tag.exp="a"']`` (docs/runs.md)."""
        query = {
            "name": name,
            "kind": kind,
            "limit": limit,
            "filter": filters or None,
            "sort": sort,
            "order": order,
            "owner": owner,
            "created_from": created_from,
            "created_to": created_to,
        }
        params = {k: v for k, v in query.items() if v is not None}
        return self._call("GET", "/v1/runs", params=params).json()["items"]

    def runs_dataframe(self, **query: Any) -> Any:
        """The first page of runs (the arguments of ``runs``) as a pandas DataFrame: id, kind, name, version,
        created_at, duration_ms, note, then ``tag.*``, ``param.*`` (flattened by dotted path) and the result's scalar
        ``result.*`` columns. Needs pandas (the ``local`` extra)."""
        return runs_frame(self.runs(**query))

    def annotate_run(self, run_id: str, *, tags: dict[str, str] | None = None, **note: str | None) -> dict[str, Any]:
        """Set this key's ``tags`` (replacing them) and/or ``note=`` (None clears it) on a run."""
        body: dict[str, Any] = {"tags": tags} if tags is not None else {}
        if "note" in note:
            body["note"] = note.pop("note")
        if note:
            raise TypeError(f"unexpected arguments {sorted(note)}")
        return self._call("PATCH", f"/v1/runs/{run_id}", json=body).json()

    def plot(self, run_id: str, format: str = "svg") -> bytes:
        """The figure of an estimator run: SVG or PNG bytes."""
        return self._call("GET", f"/v1/runs/{run_id}/plot", params={"format": format}).content

    def compare_runs(self, ids: list[str]) -> dict[str, Any]:
        """2 to 8 runs of one estimator side by side: the params that differ and the scalar result fields."""
        return self._call("GET", "/v1/runs/compare", params={"ids": ",".join(ids)}).json()

    def compare_plot(self, ids: list[str], format: str = "svg") -> bytes:
        """The curves of 2 to 8 runs of one estimator on one figure: SVG or PNG bytes."""
        return self._call("GET", "/v1/runs/compare/plot", params={"ids": ",".join(ids), "format": format}).content

    def upload_array(self, npy: bytes) -> dict[str, Any]:
        """Upload an .npy file's bytes; pass ``{"array": <id>}`` in place of an array-valued parameter."""
        return self._call("POST", "/v1/arrays", content=npy, headers={"Content-Type": "application/x-npy"}).json()

    def score(
        self, scorer: str, answer_key: list[dict], predictions: list[dict], params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        body = {"answer_key": {"items": answer_key}, "predictions": {"items": predictions}, "params": params or {}}
        return self._call("POST", f"/v1/scorers/{scorer}/score", json=body).json()

    def create_key(self, name: str, scopes: list[str]) -> dict[str, Any]:
        return self._call("POST", "/v1/api-keys", json={"name": name, "scopes": scopes}).json()

    def create_benchmark(
        self,
        name: str,
        scorer: str,
        answer_key: list[dict],
        *,
        scorer_params: dict[str, Any] | None = None,
        description: str = "",
        max_submissions_per_day: int = 0,
    ) -> dict[str, Any]:
        body = {
            "name": name,
            "scorer": scorer,
            "description": description,
            "scorer_params": scorer_params or {},
            "max_submissions_per_day": max_submissions_per_day,
            "answer_key": {"items": answer_key},
        }
        return self._call("POST", "/v1/benchmarks", json=body).json()

    def benchmarks(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/benchmarks").json()["items"]

    def submit(
        self,
        benchmark_id: str,
        model: str,
        predictions: list[dict] | str | os.PathLike[str] | Iterable[dict],
        *,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Submit predictions: a list of items (a JSON body), the path of a ``.jsonl`` file (sent as it is: one item
        a line) or of a ``.json`` file (a list of items or an object with ``items``), or any other iterable of
        items (streamed as JSON Lines, one item a line, without holding them all)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        path = f"/v1/benchmarks/{benchmark_id}/submissions"
        if isinstance(predictions, str | os.PathLike):
            file = Path(predictions)
            if file.suffix != ".jsonl":
                loaded = json.loads(file.read_text())
                items = loaded.get("items") if isinstance(loaded, dict) else loaded
                return self.submit(benchmark_id, model, items, metadata=metadata, idempotency_key=idempotency_key)
            lines: bytes | Iterable[bytes] = file.read_bytes()
        elif not isinstance(predictions, list):
            lines = (json.dumps(item, separators=(",", ":")).encode() + b"\n" for item in predictions)
        else:
            body = {"model": model, "predictions": {"items": predictions}, "metadata": metadata or {}}
            return self._call("POST", path, json=body, headers=headers).json()
        query = {"model": model} | ({"metadata": json.dumps(metadata)} if metadata else {})
        headers["Content-Type"] = "application/x-ndjson"
        return self._call("POST", path, params=query, content=lines, headers=headers).json()

    def submissions(self, benchmark_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        """Your submissions to a benchmark, newest first (every submission for its owners), every page or the newest
        ``limit``."""
        return self._pages(f"/v1/benchmarks/{benchmark_id}/submissions", limit)

    def submission(self, submission_id: str) -> dict[str, Any]:
        """One submission with its scores (the private split's too for the benchmark's owners)."""
        return self._call("GET", f"/v1/submissions/{submission_id}").json()

    def items(self, submission_id: str, *, metric: str | None = None) -> dict[str, Any]:
        """Per-item values of ``metric`` (default the primary) in a submission's latest scoring."""
        params = {"metric": metric} if metric else {}
        return self._call("GET", f"/v1/submissions/{submission_id}/items", params=params).json()

    def withdraw_submission(self, submission_id: str) -> dict[str, Any]:
        """Take a submission off the leaderboards for good (its rows are kept)."""
        return self._call("DELETE", f"/v1/submissions/{submission_id}").json()

    def compare(
        self,
        benchmark_id: str,
        a: str,
        b: str,
        *,
        split: str = "public",
        metric: str | None = None,
        n_resamples: int = 2000,
        seed: int = 0,
    ) -> dict[str, Any]:
        """Paired test of two submissions on their common items, with the items whose values differ."""
        params = {"a": a, "b": b, "split": split, "n_resamples": n_resamples, "seed": seed}
        params |= {"metric": metric} if metric else {}
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}/compare", params=params).json()

    def cross_modal(self, benchmark_id: str, submission_ids: list[str], *, split: str = "public") -> dict[str, Any]:
        """RAVEN-Bench's cross-modal gain from up to three submissions of one model."""
        params = {"submissions": ",".join(submission_ids), "split": split}
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}/raven/cross_modal", params=params).json()

    def benchmark(self, benchmark_id: str) -> dict[str, Any]:
        """One benchmark with every answer-key version (hash and split sizes)."""
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}").json()

    def put_answer_key(self, benchmark_id: str, answer_key: list[dict]) -> dict[str, Any]:
        """A new answer-key version (an earlier version's content too: restoring it), and the re-scoring of every
        stored submission (inline, or the job in ``rescore_job_id``)."""
        body = {"items": answer_key}
        return self._call("PUT", f"/v1/benchmarks/{benchmark_id}/answer-key", json=body).json()

    def answer_key_versions(self, benchmark_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        """A benchmark's answer-key versions, newest first, the current one marked (every one, or the newest
        ``limit``; owners and admins)."""
        return self._pages(f"/v1/benchmarks/{benchmark_id}/answer-key/versions", limit)

    def answer_key_version(self, benchmark_id: str, version: int) -> dict[str, Any]:
        """One answer-key version with its items, both splits' (owners and admins)."""
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}/answer-key/versions/{version}").json()

    def restore_answer_key(self, benchmark_id: str, version: int) -> dict[str, Any]:
        """Make an earlier version's items current, as ``put_answer_key`` of them does (a new version, re-scored)."""
        return self._call("POST", f"/v1/benchmarks/{benchmark_id}/answer-key/versions/{version}/restore").json()

    def rescore(self, benchmark_id: str) -> dict[str, Any]:
        """Admin: score every submission again against the current answer-key version."""
        return self._call("POST", f"/v1/benchmarks/{benchmark_id}/rescore").json()

    def leaderboard_plot(
        self,
        benchmark_id: str,
        *,
        split: str = "public",
        metric: str | None = None,
        top: int | None = None,
        format: str = "svg",
    ) -> bytes:
        """The leaderboard's figure: SVG or PNG bytes."""
        query = {"split": split, "format": format, "metric": metric, "top": top}
        params = {k: v for k, v in query.items() if v is not None}
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}/leaderboard/plot", params=params).content

    def leaderboard(self, benchmark_id: str, *, fmt: str = "json", **params: Any) -> Any:
        r = self._call("GET", f"/v1/benchmarks/{benchmark_id}/leaderboard", params={"format": fmt, **params})
        return r.json() if fmt == "json" else r.text

    # -- challenges: owners, participants, keys, submission flags, audit (docs/challenges.md) ----------------------

    def whoami(self) -> dict[str, Any]:
        """The key this client uses (its id, scopes and, for a participant's key, its benchmark)."""
        return self._call("GET", "/v1/api-keys/self").json()

    def rotate_key(self) -> dict[str, Any]:
        """A new secret for this client's key (shown once in ``key``); the client uses it from now on."""
        out = self._call("POST", "/v1/api-keys/self/rotate").json()
        self.headers = {"Authorization": f"Bearer {out['key']}"}
        return out

    def owners(self, benchmark_id: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}/owners").json()["items"]

    def add_owner(self, benchmark_id: str, key_id: str) -> dict[str, Any]:
        return self._call("POST", f"/v1/benchmarks/{benchmark_id}/owners", json={"key_id": key_id}).json()

    def remove_owner(self, benchmark_id: str, key_id: str) -> None:
        self._call("DELETE", f"/v1/benchmarks/{benchmark_id}/owners/{key_id}")

    def invite_participant(self, benchmark_id: str, display_name: str, *, team: str | None = None) -> dict[str, Any]:
        """A new participant; its API key is in ``key``, shown only in this answer."""
        body = {"display_name": display_name} | ({"team": team} if team else {})
        return self._call("POST", f"/v1/benchmarks/{benchmark_id}/participants", json=body).json()

    def participants(self, benchmark_id: str) -> list[dict[str, Any]]:
        """Every participant of a benchmark (all pages), oldest first."""
        return self._pages(f"/v1/benchmarks/{benchmark_id}/participants")

    def revoke_participant(self, benchmark_id: str, participant_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/v1/benchmarks/{benchmark_id}/participants/{participant_id}").json()

    def patch_submission(
        self, submission_id: str, *, baseline: bool | None = None, public: bool | None = None
    ) -> dict[str, Any]:
        """Set a submission's ``baseline`` (owners) and/or ``public`` (its maker) flag."""
        body = {k: v for k, v in (("baseline", baseline), ("public", public)) if v is not None}
        return self._call("PATCH", f"/v1/submissions/{submission_id}", json=body).json()

    def audit(self, benchmark_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        """A benchmark's audit log, newest first (every entry, or the newest ``limit``)."""
        return self._pages(f"/v1/benchmarks/{benchmark_id}/audit", limit)

    def create_phase(
        self, benchmark_id: str, name: str, starts_at: str, ends_at: str, **settings: Any
    ) -> dict[str, Any]:
        """A new phase; ``settings`` are the optional fields (``splits``, ``max_submissions_per_day``,
        ``max_submissions_total``, ``leaderboard_visibility``, ``late_submissions``)."""
        body = {"name": name, "starts_at": starts_at, "ends_at": ends_at} | settings
        return self._call("POST", f"/v1/benchmarks/{benchmark_id}/phases", json=body).json()

    def phases(self, benchmark_id: str) -> list[dict[str, Any]]:
        """A benchmark's phases, earliest first."""
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}/phases").json()["items"]

    def phase(self, benchmark_id: str, phase_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/benchmarks/{benchmark_id}/phases/{phase_id}").json()

    def update_phase(self, benchmark_id: str, phase_id: str, **changes: Any) -> dict[str, Any]:
        """Change the given settings of a phase (None clears a limit)."""
        return self._call("PATCH", f"/v1/benchmarks/{benchmark_id}/phases/{phase_id}", json=changes).json()

    def delete_phase(self, benchmark_id: str, phase_id: str) -> None:
        self._call("DELETE", f"/v1/benchmarks/{benchmark_id}/phases/{phase_id}")

    def phase_leaderboard(self, benchmark_id: str, phase_id: str, **params: Any) -> dict[str, Any]:
        """Every row of a phase's board (all pages) with the first page's fields (``frozen_at``...)."""
        path = f"/v1/benchmarks/{benchmark_id}/phases/{phase_id}/leaderboard"
        query = {k: v for k, v in params.items() if v is not None} | {"limit": 100}
        first = self._call("GET", path, params=query).json()
        body = first
        while body["next_cursor"] is not None:
            body = self._call("GET", path, params=query | {"cursor": body["next_cursor"]}).json()
            first["items"] += body["items"]
        first["next_cursor"] = None
        return first

    def _pages(self, path: str, limit: int | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = None
        while limit is None or len(out) < limit:
            size = 100 if limit is None else min(100, limit - len(out))
            body = self._call("GET", path, params={"limit": size} | ({"cursor": cursor} if cursor else {})).json()
            out += body["items"]
            cursor = body["next_cursor"]
            if cursor is None:
                break
        return out
