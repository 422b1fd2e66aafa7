"""``estibench`` command line: the HTTP API from a shell. URL and key from ``--url``/``--key`` or
``ESTIBENCH_URL``/``ESTIBENCH_API_KEY``. JSON arguments accept ``@file.json``.

    estibench estimators
    estibench run minhash.variance '{"intersection": 50, "union": 100, "universe": 1009, "num_perm": 64}'
    estibench benchmark-create films film_mcq @key.json
    estibench submit <benchmark-id> my-model @predictions.json
    estibench leaderboard <benchmark-id> --format csv
"""

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from client import ApiError, Client


def _json_arg(text: str) -> Any:
    return json.loads(Path(text[1:]).read_text() if text.startswith("@") else text)


def _items(text: str) -> list[dict[str, Any]]:
    value = _json_arg(text)
    return value["items"] if isinstance(value, dict) else value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="estibench", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--url", default=os.environ.get("ESTIBENCH_URL", "http://127.0.0.1:8000"))
    p.add_argument("--key", default=os.environ.get("ESTIBENCH_API_KEY"))
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("health")
    e = sub.add_parser("estimators", help="list estimators, or show one")
    e.add_argument("name", nargs="?")
    r = sub.add_parser("run", help="run an estimator (waits for a job when over budget)")
    r.add_argument("name")
    r.add_argument("params", help="JSON object or @file")
    r.add_argument("--no-wait", action="store_true")
    j = sub.add_parser("job", help="show a job")
    j.add_argument("id")
    c = sub.add_parser("cancel", help="cancel a job")
    c.add_argument("id")
    rs = sub.add_parser("runs", help="list stored runs")
    rs.add_argument("--name")
    rs.add_argument("--limit", type=int, default=20)
    k = sub.add_parser("key-create", help="admin: create an API key")
    k.add_argument("name")
    k.add_argument("scopes", nargs="+")
    b = sub.add_parser("benchmark-create", help="register a benchmark")
    b.add_argument("name")
    b.add_argument("scorer")
    b.add_argument("answer_key", help="JSON list / {items: [...]} or @file")
    b.add_argument("--scorer-params", default="{}")
    b.add_argument("--description", default="")
    s = sub.add_parser("submit", help="submit predictions to a benchmark")
    s.add_argument("benchmark_id")
    s.add_argument("model")
    s.add_argument("predictions", help="JSON list / {items: [...]} or @file")
    s.add_argument("--idempotency-key")
    lb = sub.add_parser("leaderboard", help="show a leaderboard")
    lb.add_argument("benchmark_id")
    lb.add_argument("--format", choices=("json", "csv", "ndjson"), default="json")
    lb.add_argument("--split", default="public")
    lb.add_argument("--rank-by", default="best")
    return p


def run_command(args: argparse.Namespace, client: Client) -> Any:
    match args.command:
        case "health":
            return client.health()
        case "estimators":
            return client.estimator(args.name) if args.name else client.estimators()
        case "run":
            return client.run(args.name, _json_arg(args.params), wait=not args.no_wait)
        case "job":
            return client.job(args.id)
        case "cancel":
            return client.cancel_job(args.id)
        case "runs":
            return client.runs(name=args.name, limit=args.limit)
        case "key-create":
            return client.create_key(args.name, args.scopes)
        case "benchmark-create":
            return client.create_benchmark(
                args.name,
                args.scorer,
                _items(args.answer_key),
                scorer_params=_json_arg(args.scorer_params),
                description=args.description,
            )
        case "submit":
            return client.submit(
                args.benchmark_id, args.model, _items(args.predictions), idempotency_key=args.idempotency_key
            )
        case "leaderboard":
            return client.leaderboard(args.benchmark_id, fmt=args.format, split=args.split, rank_by=args.rank_by)
    raise AssertionError(args.command)


def main(argv: list[str] | None = None, client: Client | None = None) -> int:
    args = build_parser().parse_args(argv)
    client = client or Client(args.url, args.key)
    try:
        out = run_command(args, client)
    except ApiError as exc:
        print(json.dumps(exc.body, indent=2), file=sys.stderr)
        return 1
    print(out if isinstance(out, str) else json.dumps(out, indent=2), end="" if isinstance(out, str) else "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
