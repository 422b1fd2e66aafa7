"""The ``estibench`` command line: the HTTP API from a shell (docs/cli.md)."""

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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
  estibench submit BENCHMARK_ID my-model @predictions.json   (or @predictions.jsonl: one item a line)
  estibench leaderboard BENCHMARK_ID --format csv
  estibench participant-invite BENCHMARK_ID "Ada" --team "Team A"   (a challenge: docs/challenges.md)"""


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


def _predictions(text: str) -> list[dict[str, Any]] | Path:
    """A ``@FILE.jsonl`` argument as its path (sent as JSON Lines); anything else as ``_items`` reads it."""
    if text.startswith("@") and text.endswith(".jsonl"):
        path = Path(text[1:])
        if not path.is_file():
            raise UsageError(f"predictions: cannot read {path}: no such file")
        return path
    return _items(text, "predictions")


def _save_plot(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    """Write the figure ``plot`` asks for to its output file; what was written."""
    out = Path(args.output)
    fmt = args.format or ("png" if out.suffix.lower() == ".png" else "svg")
    if args.kind == "run":
        image = client.plot(args.id, format=fmt)
    else:
        image = client.leaderboard_plot(args.id, split=args.split, metric=args.metric, top=args.top, format=fmt)
    try:
        out.write_bytes(image)
    except OSError as exc:
        raise UsageError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return {"written": str(out), "format": fmt, "bytes": len(image)}


def _answer_key_get(client: Client, args: argparse.Namespace) -> dict[str, Any]:
    """An answer-key version; with a file, its items written there as ``{"items": [...]}`` and what was written."""
    got = client.answer_key_version(args.benchmark_id, args.version)
    if args.file is None:
        return got
    out = Path(args.file)
    try:
        out.write_text(json.dumps({"items": got["items"]}, indent=1, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise UsageError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return {"written": str(out), "version": got["version"], "items": len(got["items"])}


def _pairs(texts: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` arguments as a dict (``--tag``)."""
    pairs = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise UsageError(f"--tag {text!r}: expected KEY=VALUE")
        pairs[key] = value
    return pairs


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


Handler = Callable[[Client, argparse.Namespace, Waiter], Any]
Arg = tuple[tuple[str, ...], dict[str, Any]]


def arg(*flags: str, **options: Any) -> Arg:
    """One ``add_argument`` call: its name or flags and its keywords."""
    return flags, options


@dataclass(frozen=True)
class Command:
    """A sub-command: its name, the summary its ``--help`` and the command list show, its arguments and what it
    does with them (the answer to print)."""

    name: str
    summary: str
    args: tuple[Arg, ...]
    run: Handler


BENCHMARK = arg("benchmark_id", help="a benchmark id")
SUBMISSION = arg("submission_id", help="a submission id")
PHASE = arg("phase_id", help="a phase id")
JOB = arg("id", help="a job id")
ANSWER_KEY = arg("answer_key", help="the answer-key items: a JSON list, an object with items, or @FILE")
ITEM_METRIC = arg("--metric", help="a metric with per-item values (default the primary)")
PHASE_SETTINGS = (
    arg("--splits", help="the splits the phase's board scores and shows, e.g. public,private"),
    arg("--max-per-day", type=int, help="submissions per participant (team) and UTC day"),
    arg("--max-total", type=int, help="submissions per participant (team) over the phase"),
    arg("--visibility", choices=["public", "hidden_until_end"], help="who sees the board before the end"),
    arg("--late", choices=["refuse", "accept"], help="what happens to a submission after the end"),
)


def _split(text: str | None = None) -> Arg:
    return arg("--split", choices=("public", "private"), default="public", help=text)


def _rank_by(text: str | None = None) -> Arg:
    return arg("--rank-by", choices=("best", "latest"), default="best", help=text)


def _limit(value: int | None) -> int | None:
    """``--limit`` as given, refused below 1."""
    if value is not None and value < 1:
        raise UsageError("--limit: at least 1")
    return value


def _phase_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The phase settings given on the command line, under their API names."""
    fields = {
        "name": getattr(args, "new_name", None),
        "starts_at": getattr(args, "starts_at_opt", None),
        "ends_at": getattr(args, "ends_at_opt", None),
        "splits": args.splits.split(",") if args.splits else None,
        "max_submissions_per_day": args.max_per_day,
        "max_submissions_total": args.max_total,
        "leaderboard_visibility": args.visibility,
        "late_submissions": args.late,
    }
    return {k: v for k, v in fields.items() if v is not None}


def _flag(text: str | None) -> bool | None:
    return None if text is None else text == "true"


def _run(client: Client, args: argparse.Namespace, waiter: Waiter) -> Any:
    out = client.run(args.name, _object(args.params, "params"), wait=False)
    if "result" in out or args.no_wait:
        return out
    return waiter.wait(out["id"], args.wait_timeout)


def _runs(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    tags = [f"tag.{key}={json.dumps(value)}" for key, value in _pairs(args.tag).items()]
    return client.runs(name=args.name, limit=args.limit, filters=args.filter + tags, sort=args.sort, order=args.order)


def _run_tag(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    note = {} if args.note is None else {"note": args.note or None}
    return client.annotate_run(args.id, tags=_pairs(args.tag) if args.tag else None, **note)


def _benchmark_create(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    return client.create_benchmark(
        args.name,
        args.scorer,
        _items(args.answer_key, "answer_key"),
        scorer_params=_object(args.scorer_params, "--scorer-params"),
        description=args.description,
    )


def _submit(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    metadata = None if args.metadata is None else _object(args.metadata, "--metadata")
    predictions = _predictions(args.predictions)
    return client.submit(
        args.benchmark_id, args.model, predictions, metadata=metadata, idempotency_key=args.idempotency_key
    )


def _compare(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    return client.compare(
        args.benchmark_id,
        args.a,
        args.b,
        split=args.split,
        metric=args.metric,
        n_resamples=args.n_resamples,
        seed=args.seed,
    )


def _owner_remove(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    client.remove_owner(args.benchmark_id, args.key_id)
    return {"removed": args.key_id}


def _submission_patch(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    if args.baseline is None and args.public is None:
        raise UsageError("submission-patch: give --baseline and/or --public")
    return client.patch_submission(args.submission_id, baseline=_flag(args.baseline), public=_flag(args.public))


def _phase_update(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    changes = _phase_fields(args)
    if not changes:
        raise UsageError("phase-update: give at least one setting to change")
    return client.update_phase(args.benchmark_id, args.phase_id, **changes)


def _phase_delete(client: Client, args: argparse.Namespace, _: Waiter) -> Any:
    client.delete_phase(args.benchmark_id, args.phase_id)
    return {"deleted": args.phase_id}


COMMANDS: tuple[Command, ...] = (
    Command("health", "show the server's health", (), lambda c, a, w: c.health()),
    Command(
        "estimators",
        "list the estimators, or show one with its params schema",
        (arg("name", nargs="?", help="an estimator name, e.g. minhash.variance"),),
        lambda c, a, w: c.estimator(a.name) if a.name else c.estimators(),
    ),
    Command(
        "run",
        "run an estimator; a call over the synchronous budget becomes a job, waited for with a progress bar",
        (
            arg("name", help="an estimator name"),
            arg("params", help="the params: a JSON object or @FILE"),
            arg("--no-wait", action="store_true", help="print the job at once instead of waiting for it"),
            arg("--wait-timeout", type=float, default=3600.0, help="seconds to wait for a job (default 3600)"),
        ),
        _run,
    ),
    Command(
        "wait",
        "wait for a job with a progress bar, then print its run",
        (JOB, arg("--wait-timeout", type=float, default=3600.0, help="seconds to wait (default 3600)")),
        lambda c, a, w: w.wait(a.id, a.wait_timeout),
    ),
    Command("job", "show a job (status, progress, run id)", (JOB,), lambda c, a, w: c.job(a.id)),
    Command("cancel", "cancel a queued or running job", (JOB,), lambda c, a, w: c.cancel_job(a.id)),
    Command(
        "runs",
        "list stored runs, newest first",
        (
            arg("--name", help="only runs of this estimator or scorer"),
            arg("--limit", type=int, default=20, help="how many (default 20)"),
            arg(
                "--filter",
                action="append",
                default=[],
                help="<field><op><value>, e.g. 'param.num_perm>=64' or 'result.loss<0.1' (needs --name); repeatable",
            ),
            arg("--tag", action="append", default=[], help="KEY=VALUE: only runs your key tagged so; repeatable"),
            arg("--sort", default="created_at", help="created_at (default) or result.<path> (needs --name)"),
            arg("--order", choices=("asc", "desc"), default="desc", help="sort order (default desc)"),
        ),
        _runs,
    ),
    Command(
        "run-tag",
        "set your key's tags and note on a run",
        (
            arg("id", help="the run id"),
            arg("--tag", action="append", default=[], help="KEY=VALUE; repeatable; replaces the run's tags"),
            arg("--note", help="a note (an empty string clears it)"),
        ),
        _run_tag,
    ),
    Command(
        "run-compare",
        "put 2 to 8 runs of one estimator side by side",
        (arg("ids", nargs="+", help="the run ids"),),
        lambda c, a, w: c.compare_runs(a.ids),
    ),
    Command(
        "key-create",
        "create an API key (needs an admin key)",
        (
            arg("name", help="a label for the key"),
            arg("scopes", nargs="+", help="estimators:run, benchmarks:write, submissions:write or admin"),
        ),
        lambda c, a, w: c.create_key(a.name, a.scopes),
    ),
    Command(
        "benchmark-create",
        "register a benchmark with its answer key",
        (
            arg("name", help="a unique benchmark name"),
            arg("scorer", help="a scorer name, e.g. film_mcq"),
            ANSWER_KEY,
            arg("--scorer-params", default="{}", help="the scorer's params: a JSON object or @FILE"),
            arg("--description", default="", help="a description"),
        ),
        _benchmark_create,
    ),
    Command(
        "submit",
        "submit a model's predictions to a benchmark",
        (
            BENCHMARK,
            arg("model", help="the model's name on the leaderboard"),
            arg(
                "predictions",
                help="the prediction items: a JSON list, an object with items, or @FILE (@FILE.jsonl: one item a "
                "line, sent as JSON Lines)",
            ),
            arg("--metadata", default=None, help="free-form metadata: a JSON object or @FILE (at most 16 KiB)"),
            arg("--idempotency-key", help="a retry with the same key replays the first answer"),
        ),
        _submit,
    ),
    Command(
        "leaderboard",
        "show a benchmark's leaderboard",
        (
            BENCHMARK,
            arg("--format", choices=("json", "csv", "ndjson"), default="json", help="output format"),
            _split("which split's scores"),
            _rank_by("each model's best or latest"),
        ),
        lambda c, a, w: c.leaderboard(a.benchmark_id, fmt=a.format, split=a.split, rank_by=a.rank_by),
    ),
    Command("benchmarks", "list the benchmarks", (), lambda c, a, w: c.benchmarks()),
    Command(
        "benchmark-show",
        "show a benchmark with its answer-key versions (hash and split sizes)",
        (BENCHMARK,),
        lambda c, a, w: c.benchmark(a.benchmark_id),
    ),
    Command(
        "answer-key-put",
        "put a new answer key (an earlier version's file restores that content as a new version); every submission "
        "is re-scored",
        (BENCHMARK, ANSWER_KEY),
        lambda c, a, w: c.put_answer_key(a.benchmark_id, _items(a.answer_key, "answer_key")),
    ),
    Command(
        "answer-key-versions",
        "list a benchmark's answer-key versions, newest first (owners and admins)",
        (BENCHMARK, arg("--limit", type=int, help="how many (default every one)")),
        lambda c, a, w: c.answer_key_versions(a.benchmark_id, limit=_limit(a.limit)),
    ),
    Command(
        "answer-key-get",
        "show an answer-key version with its items, or save its items to a file",
        (
            BENCHMARK,
            arg("version", type=int, help="a version number"),
            arg("file", nargs="?", help='write {"items": [...]} here (answer-key-put reads it back as @FILE)'),
        ),
        lambda c, a, w: _answer_key_get(c, a),
    ),
    Command(
        "answer-key-restore",
        "make an earlier answer-key version's items current again; every submission is re-scored",
        (BENCHMARK, arg("version", type=int, help="the version to restore")),
        lambda c, a, w: c.restore_answer_key(a.benchmark_id, a.version),
    ),
    Command(
        "rescore",
        "score every submission again against the current answer key (admin)",
        (BENCHMARK,),
        lambda c, a, w: c.rescore(a.benchmark_id),
    ),
    Command(
        "submissions",
        "list your submissions to a benchmark, newest first (every one for its owners)",
        (BENCHMARK, arg("--limit", type=int, default=50, help="how many (default 50)")),
        lambda c, a, w: c.submissions(a.benchmark_id, limit=_limit(a.limit)),
    ),
    Command(
        "submission-show",
        "show a submission with its scores",
        (SUBMISSION,),
        lambda c, a, w: c.submission(a.submission_id),
    ),
    Command(
        "items",
        "show a submission's per-item values of a metric",
        (SUBMISSION, ITEM_METRIC),
        lambda c, a, w: c.items(a.submission_id, metric=a.metric),
    ),
    Command(
        "submission-withdraw",
        "withdraw a submission: off the leaderboards for good, its rows kept",
        (SUBMISSION,),
        lambda c, a, w: c.withdraw_submission(a.submission_id),
    ),
    Command(
        "compare",
        "paired test of two submissions on their common items, with the items that differ",
        (
            BENCHMARK,
            arg("a", help="a submission id"),
            arg("b", help="another submission id"),
            _split("which split's items"),
            ITEM_METRIC,
            arg("--n-resamples", type=int, default=2000, help="bootstrap resamples (100-10000, default 2000)"),
            arg("--seed", type=int, default=0, help="the bootstrap's seed (default 0)"),
        ),
        _compare,
    ),
    Command(
        "cross-modal",
        "RAVEN-Bench's cross-modal gain from up to three submissions of one model",
        (
            BENCHMARK,
            arg("submission_ids", nargs="+", help="one submission per input setting"),
            _split("which split's scores"),
        ),
        lambda c, a, w: c.cross_modal(a.benchmark_id, a.submission_ids, split=a.split),
    ),
    Command(
        "plot",
        "save the figure of a run or of a benchmark's leaderboard to a file",
        (
            arg("kind", choices=("run", "leaderboard"), help="a run's figure or a leaderboard's"),
            arg("id", help="the run id or the benchmark id"),
            arg("output", help="the file to write (.png writes PNG, anything else SVG, unless --format)"),
            arg("--format", choices=("svg", "png"), help="the image format (default from the file name)"),
            _split("leaderboard: which split"),
            arg("--metric", help="leaderboard: the metric (default the primary)"),
            arg("--top", type=int, help="leaderboard: how many ranks to draw (default 30)"),
        ),
        lambda c, a, w: _save_plot(c, a),
    ),
    Command("key-show", "show the key in use (its id, scopes and benchmark)", (), lambda c, a, w: c.whoami()),
    Command(
        "key-rotate",
        "give the key in use a new secret, printed once; the old one stops working at once",
        (),
        lambda c, a, w: c.rotate_key(),
    ),
    Command(
        "owner-list",
        "list a benchmark's owners (owners and admins)",
        (BENCHMARK,),
        lambda c, a, w: c.owners(a.benchmark_id),
    ),
    Command(
        "owner-add",
        "make a key a co-owner of a benchmark (its creator or an admin)",
        (BENCHMARK, arg("key_id", help="the key's id (its holder reads it with key-show)")),
        lambda c, a, w: c.add_owner(a.benchmark_id, a.key_id),
    ),
    Command(
        "owner-remove",
        "remove a co-owner of a benchmark (its creator or an admin)",
        (BENCHMARK, arg("key_id", help="the co-owner's key id")),
        _owner_remove,
    ),
    Command(
        "participant-invite",
        "add a participant; its key (bound to the benchmark) is printed once",
        (
            BENCHMARK,
            arg("display_name", help="how its submissions are shown (unless it has a team)"),
            arg("--team", help="a team name, shown in place of the display name"),
        ),
        lambda c, a, w: c.invite_participant(a.benchmark_id, a.display_name, team=a.team),
    ),
    Command(
        "participant-list",
        "list a benchmark's participants (never their keys)",
        (BENCHMARK,),
        lambda c, a, w: c.participants(a.benchmark_id),
    ),
    Command(
        "participant-revoke",
        "revoke a participant's key; its submissions stay",
        (BENCHMARK, arg("participant_id", help="the participant's id")),
        lambda c, a, w: c.revoke_participant(a.benchmark_id, a.participant_id),
    ),
    Command(
        "submission-patch",
        "mark a submission a baseline (owners) or take it off the boards (its maker)",
        (
            SUBMISSION,
            arg("--baseline", choices=("true", "false"), help="list it without a rank (owners and admins)"),
            arg("--public", choices=("true", "false"), help="false takes it off the leaderboards (its maker)"),
        ),
        _submission_patch,
    ),
    Command(
        "audit",
        "show a benchmark's audit log, newest first (owners and admins)",
        (BENCHMARK, arg("--limit", type=int, default=50, help="how many entries (default 50)")),
        lambda c, a, w: c.audit(a.benchmark_id, limit=_limit(a.limit)),
    ),
    Command(
        "phase-create",
        "add a phase to a benchmark (owners and admins)",
        (
            BENCHMARK,
            arg("name", help="the phase's name"),
            arg("starts_at", help="RFC 3339 time with an offset, e.g. 2027-01-10T00:00:00Z"),
            arg("ends_at", help="RFC 3339 time with an offset, after starts_at"),
            *PHASE_SETTINGS,
        ),
        lambda c, a, w: c.create_phase(a.benchmark_id, a.name, a.starts_at, a.ends_at, **_phase_fields(a)),
    ),
    Command(
        "phase-list",
        "a benchmark's phases, earliest first",
        (BENCHMARK,),
        lambda c, a, w: c.phases(a.benchmark_id),
    ),
    Command("phase-show", "one phase", (BENCHMARK, PHASE), lambda c, a, w: c.phase(a.benchmark_id, a.phase_id)),
    Command("phase-delete", "delete a phase without submissions", (BENCHMARK, PHASE), _phase_delete),
    Command(
        "phase-update",
        "change a phase's settings (only those given)",
        (
            BENCHMARK,
            PHASE,
            arg("--name", dest="new_name", help="the phase's name"),
            arg("--starts-at", dest="starts_at_opt", help="RFC 3339 time (before the phase starts only)"),
            arg("--ends-at", dest="ends_at_opt", help="RFC 3339 time"),
            *PHASE_SETTINGS,
        ),
        _phase_update,
    ),
    Command(
        "phase-leaderboard",
        "a phase's board: live while open, frozen after its end",
        (
            BENCHMARK,
            PHASE,
            _split(),
            arg("--metric", help="the metric ranked by (default the scorer's primary)"),
            _rank_by(),
        ),
        lambda c, a, w: c.phase_leaderboard(
            a.benchmark_id, a.phase_id, split=a.split, metric=a.metric, rank_by=a.rank_by
        ),
    ),
)
"""Every sub-command, in the order ``--help`` lists them: ``build_parser`` and ``run_command`` both read it."""
_BY_NAME = {c.name: c for c in COMMANDS}


def build_parser() -> argparse.ArgumentParser:
    plain = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(prog="estibench", description=DESCRIPTION, formatter_class=plain)
    p.add_argument("--url", default=None, help="server URL (default: ESTIBENCH_URL, else " + DEFAULT_URL + ")")
    p.add_argument("--key", default=None, help="API key (default: ESTIBENCH_KEY)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for one HTTP answer (default 60)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        c = sub.add_parser(command.name, help=command.summary, description=command.summary, formatter_class=plain)
        for flags, options in command.args:
            c.add_argument(*flags, **options)
    return p


def run_command(args: argparse.Namespace, client: Client, waiter: Waiter) -> Any:
    return _BY_NAME[args.command].run(client, args, waiter)


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
