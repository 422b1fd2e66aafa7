"""Prometheus metrics at ``/metrics`` (prometheus-client): requests and latencies by route and status, jobs by
status and queue depth (read at scrape time). With ``PROMETHEUS_MULTIPROC_DIR`` set (``uvicorn --workers N``) the
counters of every process are aggregated through prometheus-client's multi-process mode.
"""

import os
import time
from collections.abc import Iterator

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from usecases.jobs import JobQueue

BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class JobCollector:
    """Gauges computed on scrape: ``estibench_jobs{status}`` from the job table and ``estibench_queue_depth``."""

    def __init__(self, jobs: JobQueue) -> None:
        self.jobs = jobs

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("estibench_jobs", "Jobs by status (job table).", labels=["status"])
        for status, count in self.jobs.counts_by_status().items():
            family.add_metric([status], count)
        yield family
        depth = self.jobs.queue_depth()
        if depth is not None:
            yield GaugeMetricFamily("estibench_queue_depth", "Messages waiting in the job queue.", value=depth)


class Metrics:
    def __init__(self, jobs: JobQueue) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "estibench_http_requests", "HTTP requests.", ["method", "route", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "estibench_http_request_duration_seconds",
            "HTTP request latency.",
            ["method", "route"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.jobs = JobCollector(jobs)
        self.registry.register(self.jobs)

    def render(self) -> bytes:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            registry = CollectorRegistry()
            MultiProcessCollector(registry)
            registry.register(self.jobs)
            return generate_latest(registry)
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts each request under its route template (``/v1/jobs/{job_id}``), never the raw path."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = {"code": 500}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            self.metrics.requests.labels(method, template, str(status["code"])).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - start)


router = APIRouter()


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus text exposition."""
    return Response(request.app.state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
