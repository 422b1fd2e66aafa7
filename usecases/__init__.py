"""The use-case layer: running estimators, jobs, benchmarks, submissions and leaderboards over ``service/`` and
``db/``, shared by the HTTP API and the job worker (see docs/architecture.md)."""
