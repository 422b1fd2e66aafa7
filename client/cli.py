"""The ``estibench`` command line: the HTTP API from a shell (docs/cli.md)."""

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from client import DEFAULT_URL, ApiError, Client, JobStillRunning, Unreachable

DESCRIPTION = """\
The estibench HTTP API from a shell. Answers print as JSON on stdout; errors print as one line on stderr.

The server is --url or ESTIBENCH_URL (default http://127.0.0.1:8000); the API key is --key or ESTIBENCH_KEY.
A JSON argument is the JSON text itself or @FILE to read it from a file.

exit status: 0 done, 1 the server refused (problem on stderr), 2 bad arguments (bad JSON, missing @FILE),
3 server unreachable or no answer in time, 4 still running after --timeout, 130 interrupted (the job goes on).

examples:
  estibench estimators
  estibench run minhash.variance '{"intersection": 50, "union": 100, "universe": 1009, "num_perm": 64}'
  estibench benchmark-create films film_mcq @key.json
  estibench submit BENCHMARK_ID my-model @predictions.json
  estibench leaderboard BENCHMARK_ID --format csv"""


class UsageError(Exception):
    """A bad command-line argument (exit status 2)."""


def _json_arg(text: str, what: str) -> Any:
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text()
        except OSError as exc:
            raise UsageError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None


def _object(text: str, what: str) -> dict[str, Any]:
    value = _json_arg(text, what)
    if not isinstance(value, dict):
        raise UsageError(f"{what}: expected a JSON object")
    return value


def _items(text: str, what: str) -> list[dict[str, Any]]:
    value = _json_arg(text, what)
    items = value.get("items") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise UsageError(f"{what}: expected a JSON list of items or an object with an items list")
    return items


def build_parser() -> argparse.ArgumentParser:
    plain = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(prog="estibench", description=DESCRIPTION, formatter_class=plain)
    p.add_argument("--url", default=None, help="server URL (default: ESTIBENCH_URL, else " + DEFAULT_URL + ")")
    p.add_argument("--key", default=None, help="API key (default: ESTIBENCH_KEY)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for one HTTP answer (default 60)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=summary, description=summary, formatter_class=plain)

    command("health", "show the server's health")
    e = command("estimators", "list the estimators, or show one with its params schema")
    e.add_argument("name", nargs="?", help="an estimator name, e.g. minhash.variance")
    r = command(
        "run",
        "run an estimator; a call over the synchronous budget becomes a job, waited for with a progress bar",
    )
    r.add_argument("name", help="an estimator name")
    r.add_argument("params", help="the params: a JSON object or @FILE")
    r.add_argument("--no-wait", action="store_true", help="print the job at once instead of waiting for it")
    r.add_argument("--wait-timeout", type=float, default=3600.0, help="seconds to wait for a job (default 3600)")
    w = command("wait", "wait for a job with a progress bar, then print its run")
    w.add_argument("id", help="a job id")
    w.add_argument("--wait-timeout", type=float, default=3600.0, help="seconds to wait (default 3600)")
    command("job", "show a job (status, progress, run id)").add_argument("id", help="a job id")
    command("cancel", "cancel a queued or running job").add_argument("id", help="a job id")
    rs = command("runs", "list stored runs, newest first")
    rs.add_argument("--name", help="only runs of this estimator or scorer")
    rs.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    k = command("key-create", "create an API key (needs an admin key)")
    k.add_argument("name", help="a label for the key")
    k.add_argument("scopes", nargs="+", help="estimators:run, benchmarks:write, submissions:write or admin")
    b = command("benchmark-create", "register a benchmark with its answer key")
    b.add_argument("name", help="a unique benchmark name")
    b.add_argument("scorer", help="a scorer name, e.g. film_mcq")
    b.add_argument("answer_key", help="the answer-key items: a JSON list, an object with items, or @FILE")
    b.add_argument("--scorer-params", default="{}", help="the scorer's params: a JSON object or @FILE")
    b.add_argument("--description", default="", help="a description")
    s = command("submit", "submit a model's predictions to a benchmark")
    s.add_argument("benchmark_id", help="a benchmark id")
    s.add_argument("model", help="the model's name on the leaderboard")
    s.add_argument("predictions", help="the prediction items: a JSON list, an object with items, or @FILE")
    s.add_argument("--idempotency-key", help="a retry with the same key replays the first answer")
    lb = command("leaderboard", "show a benchmark's leaderboard")
    lb.add_argument("benchmark_id", help="a benchmark id")
    lb.add_argument("--format", choices=("json", "csv", "ndjson"), default="json", help="output format")
    lb.add_argument("--split", choices=("public", "private"), default="public", help="which split's scores")
    lb.add_argument("--rank-by", choices=("best", "latest"), default="best", help="each model's best or latest")
    return p


class Waiter:
    """Waits for jobs with a progress bar on stderr (rich; none when stderr is not a terminal); Ctrl-C leaves the
    job running."""

    def __init__(self, client: Client, console: Console) -> None:
        self.client = client
        self.console = console

    @contextmanager
    def bar(self) -> Iterator[Any]:
        columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn())
        quiet = not self.console.is_terminal
        with Progress(*columns, console=self.console, transient=True, disable=quiet) as bar:
            yield bar

    def wait(self, job_id: str, timeout_s: float) -> dict[str, Any]:
        with self.bar() as bar:
            task = bar.add_task(f"job {job_id}", total=1.0)

            def show(fraction: float, message: str | None) -> None:
                bar.update(task, completed=fraction, description=message or f"job {job_id}")

            try:
                return self.client.wait_job(job_id, timeout_s=timeout_s, progress=show)
            except KeyboardInterrupt:
                raise Interrupted(job_id) from None


class Interrupted(Exception):
    """Ctrl-C while waiting for ``job_id``, which goes on running."""

    def __init__(self, job_id: str) -> None:
        super().__init__(job_id)
        self.job_id = job_id


def run_command(args: argparse.Namespace, client: Client, waiter: Waiter) -> Any:
    match args.command:
        case "health":
            return client.health()
        case "estimators":
            return client.estimator(args.name) if args.name else client.estimators()
        case "run":
            out = client.run(args.name, _object(args.params, "params"), wait=False)
            if "result" in out or args.no_wait:
                return out
            return waiter.wait(out["id"], args.wait_timeout)
        case "wait":
            return waiter.wait(args.id, args.wait_timeout)
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
                _items(args.answer_key, "answer_key"),
                scorer_params=_object(args.scorer_params, "--scorer-params"),
                description=args.description,
            )
        case "submit":
            predictions = _items(args.predictions, "predictions")
            return client.submit(args.benchmark_id, args.model, predictions, idempotency_key=args.idempotency_key)
        case "leaderboard":
            return client.leaderboard(args.benchmark_id, fmt=args.format, split=args.split, rank_by=args.rank_by)
    raise AssertionError(args.command)


def main(argv: list[str] | None = None, client: Client | None = None) -> int:
    args = build_parser().parse_args(argv)
    client = client or Client(args.url, args.key, timeout=args.timeout)
    waiter = Waiter(client, Console(stderr=True))

    def fail(message: str, status: int) -> int:
        print(f"estibench: {message}", file=sys.stderr)
        return status

    try:
        out = run_command(args, client, waiter)
    except UsageError as exc:
        return fail(str(exc), 2)
    except ApiError as exc:
        return fail(exc.sentence(), 1)
    except Unreachable as exc:
        hint = "" if exc.timeout else " (set --url or ESTIBENCH_URL)"
        return fail(f"{exc}{hint}", 3)
    except JobStillRunning as exc:
        return fail(f"{exc}; it goes on: estibench wait {exc.job_id}, or estibench cancel {exc.job_id}", 4)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except Interrupted as exc:
        job = exc.job_id
        return fail(
            f"stopped waiting; job {job} goes on: estibench wait {job} to follow it, estibench cancel {job}", 130
        )
    if isinstance(out, str):
        sys.stdout.write(out)
    else:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
