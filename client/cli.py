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
    rs.add_argument(
        "--filter",
        action="append",
        default=[],
        help="<field><op><value>, e.g. 'param.num_perm>=64' or 'result.loss<0.1' (needs --name); repeatable",
    )
    rs.add_argument("--tag", action="append", default=[], help="KEY=VALUE: only runs your key tagged so; repeatable")
    rs.add_argument("--sort", default="created_at", help="created_at (default) or result.<path> (needs --name)")
    rs.add_argument("--order", choices=("asc", "desc"), default="desc", help="sort order (default desc)")
    rt = command("run-tag", "set your key's tags and note on a run")
    rt.add_argument("id", help="the run id")
    rt.add_argument("--tag", action="append", default=[], help="KEY=VALUE; repeatable; replaces the run's tags")
    rt.add_argument("--note", help="a note (an empty string clears it)")
    rc = command("run-compare", "put 2 to 8 runs of one estimator side by side")
    rc.add_argument("ids", nargs="+", help="the run ids")
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
    s.add_argument(
        "predictions",
        help="the prediction items: a JSON list, an object with items, or @FILE (@FILE.jsonl: one item a line, sent "
        "as JSON Lines)",
    )
    s.add_argument("--metadata", default=None, help="free-form metadata: a JSON object or @FILE (at most 16 KiB)")
    s.add_argument("--idempotency-key", help="a retry with the same key replays the first answer")
    lb = command("leaderboard", "show a benchmark's leaderboard")
    lb.add_argument("benchmark_id", help="a benchmark id")
    lb.add_argument("--format", choices=("json", "csv", "ndjson"), default="json", help="output format")
    lb.add_argument("--split", choices=("public", "private"), default="public", help="which split's scores")
    lb.add_argument("--rank-by", choices=("best", "latest"), default="best", help="each model's best or latest")
    command("benchmarks", "list the benchmarks")
    bs = command("benchmark-show", "show a benchmark with its answer-key versions (hash and split sizes)")
    bs.add_argument("benchmark_id", help="a benchmark id")
    ak = command(
        "answer-key-put",
        "put a new answer key (an earlier version's file restores that content as a new version); every submission "
        "is re-scored",
    )
    ak.add_argument("benchmark_id", help="a benchmark id")
    ak.add_argument("answer_key", help="the answer-key items: a JSON list, an object with items, or @FILE")
    akv = command("answer-key-versions", "list a benchmark's answer-key versions, newest first (owners and admins)")
    akv.add_argument("benchmark_id", help="a benchmark id")
    akv.add_argument("--limit", type=int, help="how many (default every one)")
    akg = command("answer-key-get", "show an answer-key version with its items, or save its items to a file")
    akg.add_argument("benchmark_id", help="a benchmark id")
    akg.add_argument("version", type=int, help="a version number")
    akg.add_argument("file", nargs="?", help='write {"items": [...]} here (answer-key-put reads it back as @FILE)')
    akr = command(
        "answer-key-restore", "make an earlier answer-key version's items current again; every submission is re-scored"
    )
    akr.add_argument("benchmark_id", help="a benchmark id")
    akr.add_argument("version", type=int, help="the version to restore")
    rsc = command("rescore", "score every submission again against the current answer key (admin)")
    rsc.add_argument("benchmark_id", help="a benchmark id")
    sl = command("submissions", "list your submissions to a benchmark, newest first (every one for its owners)")
    sl.add_argument("benchmark_id", help="a benchmark id")
    sl.add_argument("--limit", type=int, default=50, help="how many (default 50)")
    ss = command("submission-show", "show a submission with its scores")
    ss.add_argument("submission_id", help="a submission id")
    it = command("items", "show a submission's per-item values of a metric")
    it.add_argument("submission_id", help="a submission id")
    it.add_argument("--metric", help="a metric with per-item values (default the primary)")
    sw = command("submission-withdraw", "withdraw a submission: off the leaderboards for good, its rows kept")
    sw.add_argument("submission_id", help="a submission id")
    cp = command("compare", "paired test of two submissions on their common items, with the items that differ")
    cp.add_argument("benchmark_id", help="a benchmark id")
    cp.add_argument("a", help="a submission id")
    cp.add_argument("b", help="another submission id")
    cp.add_argument("--split", choices=("public", "private"), default="public", help="which split's items")
    cp.add_argument("--metric", help="a metric with per-item values (default the primary)")
    cp.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (100-10000, default 2000)")
    cp.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    cm = command("cross-modal", "RAVEN-Bench's cross-modal gain from up to three submissions of one model")
    cm.add_argument("benchmark_id", help="a benchmark id")
    cm.add_argument("submission_ids", nargs="+", help="one submission per input setting")
    cm.add_argument("--split", choices=("public", "private"), default="public", help="which split's scores")
    pt = command("plot", "save the figure of a run or of a benchmark's leaderboard to a file")
    pt.add_argument("kind", choices=("run", "leaderboard"), help="a run's figure or a leaderboard's")
    pt.add_argument("id", help="the run id or the benchmark id")
    pt.add_argument("output", help="the file to write (.png writes PNG, anything else SVG, unless --format)")
    pt.add_argument("--format", choices=("svg", "png"), help="the image format (default from the file name)")
    pt.add_argument("--split", choices=("public", "private"), default="public", help="leaderboard: which split")
    pt.add_argument("--metric", help="leaderboard: the metric (default the primary)")
    pt.add_argument("--top", type=int, help="leaderboard: how many ranks to draw (default 30)")
    command("key-show", "show the key in use (its id, scopes and benchmark)")
    command("key-rotate", "give the key in use a new secret, printed once; the old one stops working at once")
    ow = command("owner-list", "list a benchmark's owners (owners and admins)")
    ow.add_argument("benchmark_id", help="a benchmark id")
    oa = command("owner-add", "make a key a co-owner of a benchmark (its creator or an admin)")
    oa.add_argument("benchmark_id", help="a benchmark id")
    oa.add_argument("key_id", help="the key's id (its holder reads it with key-show)")
    orm = command("owner-remove", "remove a co-owner of a benchmark (its creator or an admin)")
    orm.add_argument("benchmark_id", help="a benchmark id")
    orm.add_argument("key_id", help="the co-owner's key id")
    pi = command("participant-invite", "add a participant; its key (bound to the benchmark) is printed once")
    pi.add_argument("benchmark_id", help="a benchmark id")
    pi.add_argument("display_name", help="how its submissions are shown (unless it has a team)")
    pi.add_argument("--team", help="a team name, shown in place of the display name")
    pl = command("participant-list", "list a benchmark's participants (never their keys)")
    pl.add_argument("benchmark_id", help="a benchmark id")
    pr = command("participant-revoke", "revoke a participant's key; its submissions stay")
    pr.add_argument("benchmark_id", help="a benchmark id")
    pr.add_argument("participant_id", help="the participant's id")
    sp = command("submission-patch", "mark a submission a baseline (owners) or take it off the boards (its maker)")
    sp.add_argument("submission_id", help="a submission id")
    sp.add_argument("--baseline", choices=("true", "false"), help="list it without a rank (owners and admins)")
    sp.add_argument("--public", choices=("true", "false"), help="false takes it off the leaderboards (its maker)")
    au = command("audit", "show a benchmark's audit log, newest first (owners and admins)")
    au.add_argument("benchmark_id", help="a benchmark id")
    au.add_argument("--limit", type=int, default=50, help="how many entries (default 50)")
    _phase_commands(command)
    return p


def _phase_settings(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--splits", help="the splits the phase's board scores and shows, e.g. public,private")
    cmd.add_argument("--max-per-day", type=int, help="submissions per participant (team) and UTC day")
    cmd.add_argument("--max-total", type=int, help="submissions per participant (team) over the phase")
    cmd.add_argument("--visibility", choices=["public", "hidden_until_end"], help="who sees the board before the end")
    cmd.add_argument("--late", choices=["refuse", "accept"], help="what happens to a submission after the end")


def _phase_commands(command: Any) -> None:
    """phase-create, phase-list, phase-show, phase-update, phase-delete, phase-leaderboard."""
    pc = command("phase-create", "add a phase to a benchmark (owners and admins)")
    for name, text in (("benchmark_id", "a benchmark id"), ("name", "the phase's name")):
        pc.add_argument(name, help=text)
    pc.add_argument("starts_at", help="RFC 3339 time with an offset, e.g. 2027-01-10T00:00:00Z")
    pc.add_argument("ends_at", help="RFC 3339 time with an offset, after starts_at")
    _phase_settings(pc)
    command("phase-list", "a benchmark's phases, earliest first").add_argument("benchmark_id", help="a benchmark id")
    for verb, text in (("phase-show", "one phase"), ("phase-delete", "delete a phase without submissions")):
        c = command(verb, text)
        c.add_argument("benchmark_id", help="a benchmark id")
        c.add_argument("phase_id", help="a phase id")
    pu = command("phase-update", "change a phase's settings (only those given)")
    pu.add_argument("benchmark_id", help="a benchmark id")
    pu.add_argument("phase_id", help="a phase id")
    pu.add_argument("--name", dest="new_name", help="the phase's name")
    pu.add_argument("--starts-at", dest="starts_at_opt", help="RFC 3339 time (before the phase starts only)")
    pu.add_argument("--ends-at", dest="ends_at_opt", help="RFC 3339 time")
    _phase_settings(pu)
    pl = command("phase-leaderboard", "a phase's board: live while open, frozen after its end")
    pl.add_argument("benchmark_id", help="a benchmark id")
    pl.add_argument("phase_id", help="a phase id")
    pl.add_argument("--split", choices=["public", "private"], default="public")
    pl.add_argument("--metric", help="the metric ranked by (default the scorer's primary)")
    pl.add_argument("--rank-by", choices=["best", "latest"], default="best")


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
            tags = [f"tag.{key}={json.dumps(value)}" for key, value in _pairs(args.tag).items()]
            return client.runs(
                name=args.name, limit=args.limit, filters=args.filter + tags, sort=args.sort, order=args.order
            )
        case "run-tag":
            note = {} if args.note is None else {"note": args.note or None}
            return client.annotate_run(args.id, tags=_pairs(args.tag) if args.tag else None, **note)
        case "run-compare":
            return client.compare_runs(args.ids)
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
            metadata = None if args.metadata is None else _object(args.metadata, "--metadata")
            predictions = _predictions(args.predictions)
            return client.submit(
                args.benchmark_id, args.model, predictions, metadata=metadata, idempotency_key=args.idempotency_key
            )
        case "benchmarks":
            return client.benchmarks()
        case "benchmark-show":
            return client.benchmark(args.benchmark_id)
        case "answer-key-put":
            return client.put_answer_key(args.benchmark_id, _items(args.answer_key, "answer_key"))
        case "answer-key-versions":
            if args.limit is not None and args.limit < 1:
                raise UsageError("--limit: at least 1")
            return client.answer_key_versions(args.benchmark_id, limit=args.limit)
        case "answer-key-get":
            return _answer_key_get(client, args)
        case "answer-key-restore":
            return client.restore_answer_key(args.benchmark_id, args.version)
        case "rescore":
            return client.rescore(args.benchmark_id)
        case "submissions":
            if args.limit < 1:
                raise UsageError("--limit: at least 1")
            return client.submissions(args.benchmark_id, limit=args.limit)
        case "submission-show":
            return client.submission(args.submission_id)
        case "items":
            return client.items(args.submission_id, metric=args.metric)
        case "submission-withdraw":
            return client.withdraw_submission(args.submission_id)
        case "compare":
            return client.compare(
                args.benchmark_id,
                args.a,
                args.b,
                split=args.split,
                metric=args.metric,
                n_resamples=args.n_resamples,
                seed=args.seed,
            )
        case "cross-modal":
            return client.cross_modal(args.benchmark_id, args.submission_ids, split=args.split)
        case "plot":
            return _save_plot(client, args)
        case "leaderboard":
            return client.leaderboard(args.benchmark_id, fmt=args.format, split=args.split, rank_by=args.rank_by)
        case "key-show":
            return client.whoami()
        case "key-rotate":
            return client.rotate_key()
        case "owner-list":
            return client.owners(args.benchmark_id)
        case "owner-add":
            return client.add_owner(args.benchmark_id, args.key_id)
        case "owner-remove":
            client.remove_owner(args.benchmark_id, args.key_id)
            return {"removed": args.key_id}
        case "participant-invite":
            return client.invite_participant(args.benchmark_id, args.display_name, team=args.team)
        case "participant-list":
            return client.participants(args.benchmark_id)
        case "participant-revoke":
            return client.revoke_participant(args.benchmark_id, args.participant_id)
        case "submission-patch":
            if args.baseline is None and args.public is None:
                raise UsageError("submission-patch: give --baseline and/or --public")
            return client.patch_submission(args.submission_id, baseline=_flag(args.baseline), public=_flag(args.public))
        case "audit":
            if args.limit < 1:
                raise UsageError("--limit: at least 1")
            return client.audit(args.benchmark_id, limit=args.limit)
        case "phase-create":
            return client.create_phase(
                args.benchmark_id, args.name, args.starts_at, args.ends_at, **_phase_fields(args)
            )
        case "phase-list":
            return client.phases(args.benchmark_id)
        case "phase-show":
            return client.phase(args.benchmark_id, args.phase_id)
        case "phase-update":
            changes = _phase_fields(args)
            if not changes:
                raise UsageError("phase-update: give at least one setting to change")
            return client.update_phase(args.benchmark_id, args.phase_id, **changes)
        case "phase-delete":
            client.delete_phase(args.benchmark_id, args.phase_id)
            return {"deleted": args.phase_id}
        case "phase-leaderboard":
            return client.phase_leaderboard(
                args.benchmark_id, args.phase_id, split=args.split, metric=args.metric, rank_by=args.rank_by
            )
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
