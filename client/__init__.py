"""Python client for the estibench HTTP API (``pip install -e .`` provides it and the ``estibench`` CLI)."""

import os
import re
import time
from collections.abc import Callable
from typing import Any

import httpx

DEFAULT_URL = "http://127.0.0.1:8000"

COST_TYPES = {"cost_cap": "hard cap", "cost_budget": "synchronous budget (no job queue runs)"}
COST_MSG = re.compile(r"cost (?P<cost>\S+) > (?:hard_cap|sync_budget) (?P<limit>\S+) (?P<unit>.+)")
"""The field error of a refused cost (``usecases/estimator_runs.check_caps``): ``cost 2e+10 > hard_cap 1e+09 unit``."""

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

    def get_run(self, run_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/runs/{run_id}").json()

    def runs(self, *, name: str | None = None, kind: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        params = {k: v for k, v in {"name": name, "kind": kind, "limit": limit}.items() if v is not None}
        return self._call("GET", "/v1/runs", params=params).json()["items"]

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
        predictions: list[dict],
        *,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        body = {"model": model, "predictions": {"items": predictions}, "metadata": metadata or {}}
        return self._call("POST", f"/v1/benchmarks/{benchmark_id}/submissions", json=body, headers=headers).json()

    def leaderboard(self, benchmark_id: str, *, fmt: str = "json", **params: Any) -> Any:
        r = self._call("GET", f"/v1/benchmarks/{benchmark_id}/leaderboard", params={"format": fmt, **params})
        return r.json() if fmt == "json" else r.text
