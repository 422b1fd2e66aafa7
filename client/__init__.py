"""Python client for the estibench HTTP API (``pip install -e .`` provides it and the ``estibench`` CLI)."""

import time
from typing import Any

import httpx


class ApiError(Exception):
    """A problem+json answer: ``status``, ``detail`` and the per-field ``errors`` of a 422."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        self.errors = body.get("errors") or []
        where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in self.errors)
        super().__init__(
            f"{status} {body.get('title', '')}: {body.get('detail', '')}" + (f" ({where})" if where else "")
        )


class Client:
    """Thin wrapper over the HTTP contract. ``http`` may be any ``httpx.Client`` (e.g. a test client)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        http: httpx.Client | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = http or httpx.Client(base_url=base_url, timeout=timeout)
        self.headers = headers

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        r = self.http.request(method, path, headers={**self.headers, **kw.pop("headers", {})}, **kw)
        if r.status_code >= 400:
            try:
                body = r.json()
            except ValueError:
                body = {"title": r.reason_phrase, "detail": r.text}
            raise ApiError(r.status_code, body)
        return r

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/v1/health").json()

    def estimators(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/estimators").json()["items"]

    def estimator(self, name: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/estimators/{name}").json()

    def run(
        self, name: str, params: dict[str, Any], *, wait: bool = True, poll_s: float = 0.5, timeout_s: float = 3600.0
    ) -> dict[str, Any]:
        """Run an estimator. An over-budget call becomes a job (202); with ``wait`` it is polled to the run."""
        r = self._call("POST", f"/v1/estimators/{name}", json=params)
        if r.status_code != 202:
            return r.json()
        job = r.json()
        return self.wait_job(job["id"], poll_s=poll_s, timeout_s=timeout_s) if wait else job

    def submit_job(self, name: str, params: dict[str, Any], kind: str = "estimator") -> dict[str, Any]:
        return self._call("POST", "/v1/jobs", json={"kind": kind, "name": name, "params": params}).json()

    def job(self, job_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/jobs/{job_id}").json()

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/v1/jobs/{job_id}").json()

    def wait_job(self, job_id: str, *, poll_s: float = 0.5, timeout_s: float = 3600.0) -> dict[str, Any]:
        """Poll a job until it ends; returns its run, or raises ``ApiError`` with the job's problem."""
        deadline = time.monotonic() + timeout_s
        while True:
            job = self.job(job_id)
            if job["status"] == "succeeded":
                return self.get_run(job["run_id"])
            if job["status"] in ("failed", "cancelled"):
                problem = job.get("problem") or {"title": job["status"], "detail": f"job {job_id} {job['status']}"}
                raise ApiError(int(problem.get("status", 500)), problem)
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {job['status']} after {timeout_s} s")
            time.sleep(poll_s)

    def get_run(self, run_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/runs/{run_id}").json()

    def runs(self, *, name: str | None = None, kind: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        params = {k: v for k, v in {"name": name, "kind": kind, "limit": limit}.items() if v is not None}
        return self._call("GET", "/v1/runs", params=params).json()["items"]

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
