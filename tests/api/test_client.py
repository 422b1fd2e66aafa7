"""The Python client and the ``estibench`` CLI against the app (through the test client's transport): round trips,
job progress, Ctrl-C, one-line errors with their exit status, readable problems, the cost-cap sentence, --help."""

import csv
import io
import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from client import ApiError, Client
from client.cli import Waiter, build_parser, main
from service.registry import ESTIMATORS
from tests.api.test_cost import HUGE
from tests.api.test_jobs import ctx_of, job_body, queued  # noqa: F401 (fixtures)
from tests.factories import ADMIN
from tests.reliability.procs import free_port


@pytest.fixture
def api(client: TestClient) -> Client:
    c = Client(http=client)
    c.headers = dict(ADMIN)
    return c


def test_client_round_trip(api: Client) -> None:
    assert api.health()["status"] == "ok"
    assert "compression.nml_regret" in {e["name"] for e in api.estimators()}
    run = api.run("compression.nml_regret", {"num_symbols": 2, "n": 2})
    assert run["result"]["log_c_nats"] == pytest.approx(0.9162907318741551)  # log 2.5
    assert api.get_run(run["id"])["id"] == run["id"]
    with pytest.raises(ApiError) as exc:
        api.run("compression.nml_regret", {"num_symbols": 0, "n": 2})
    assert exc.value.status == 422 and exc.value.errors[0]["loc"] == ["body", "num_symbols"]


def test_cli_benchmark_flow(api: Client, tmp_path, capsys) -> None:
    key = [{"item_id": f"q{i}", "num_options": 2, "answer_idx": 0, "film_id": "f"} for i in range(4)]
    preds = [{"item_id": f"q{i}", "choice_idx": 0 if i < 3 else 1} for i in range(4)]
    (tmp_path / "key.json").write_text(json.dumps({"items": key}))
    (tmp_path / "preds.json").write_text(json.dumps(preds))
    assert main(["benchmark-create", "cli-films", "film_mcq", f"@{tmp_path / 'key.json'}"], client=api) == 0
    bench = json.loads(capsys.readouterr().out)
    assert main(["submit", bench["id"], "m", f"@{tmp_path / 'preds.json'}"], client=api) == 0
    assert json.loads(capsys.readouterr().out)["scores"]["accuracy"]["value"] == pytest.approx(0.75)
    assert main(["leaderboard", bench["id"], "--format", "csv"], client=api) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[1][1] == "m" and float(rows[1][5]) == pytest.approx(0.75)
    assert main(["run", "compression.nml_regret", '{"num_symbols": 0, "n": 1}'], client=api) == 1
    err = capsys.readouterr().err
    assert err.startswith("estibench: 422 ") and "body.num_symbols: Input should be greater than or equal to" in err
    assert err.count("\n") == 1


def test_env_names_the_server_and_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESTIBENCH_URL", "http://example.test:9000")
    monkeypatch.setenv("ESTIBENCH_KEY", "ek_from_env")
    c = Client()
    assert str(c.http.base_url) == "http://example.test:9000"
    assert c.headers == {"Authorization": "Bearer ek_from_env"}
    assert Client("http://other:1", "ek_given").headers == {"Authorization": "Bearer ek_given"}


@pytest.fixture
def running_job(queued: TestClient) -> Iterator[tuple[Client, str]]:  # noqa: F811
    """A 40-step job of the support estimator executed by a worker thread while the test polls it."""
    job = queued.post("/v1/jobs", json=job_body(steps=40, step_s=0.01)).json()
    worker = threading.Thread(target=ctx_of(queued).execute, args=(job["id"],))
    worker.start()
    yield Client(http=queued), job["id"]
    worker.join(10)


def test_wait_reports_progress(running_job: tuple[Client, str]) -> None:
    client, job_id = running_job
    seen: list[tuple[float, str | None]] = []
    run = client.wait_job(job_id, poll_s=0.02, progress=lambda f, m: seen.append((f, m)))
    assert run["result"]["steps"] == 40
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and seen[-1] == (1.0, "step 40 of 40")
    assert len(seen) >= 3 and len(set(seen)) == len(seen)


def test_ctrl_c_while_waiting_leaves_the_job_running(queued: TestClient, capsys) -> None:  # noqa: F811
    job = queued.post("/v1/jobs", json=job_body(steps=3)).json()

    class Interrupting(Client):
        def job(self, job_id: str) -> dict:
            raise KeyboardInterrupt

    assert main(["wait", job["id"]], client=Interrupting(http=queued)) == 130
    out = capsys.readouterr()
    assert out.out == "" and "Traceback" not in out.err and out.err.count("\n") == 1
    assert f"job {job['id']} goes on" in out.err
    assert f"estibench wait {job['id']}" in out.err and f"estibench cancel {job['id']}" in out.err
    assert queued.get(f"/v1/jobs/{job['id']}").json()["status"] == "queued"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "x", '{"n": 1,'], "estibench: params: not valid JSON (Expecting property name enclosed in double"),
        (["run", "x", "@/nonexistent/params.json"], "estibench: params: cannot read /nonexistent/params.json: No such"),
        (["run", "x", "[1, 2]"], "estibench: params: expected a JSON object"),
        (["submit", "b", "m", '{"items": 3}'], "estibench: predictions: expected a JSON list of items"),
        (["submissions", "b", "--limit", "0"], "estibench: --limit: at least 1"),
        (["audit", "b", "--limit", "0"], "estibench: --limit: at least 1"),
        (["answer-key-versions", "b", "--limit", "0"], "estibench: --limit: at least 1"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(argv: list[str], message: str, capsys) -> None:
    assert main(argv, client=Client("http://127.0.0.1:9")) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_server_down_is_one_line_and_status_3(capsys) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["--url", url, "health"]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"estibench: cannot reach {url} (") and "is the server running?" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_no_answer_in_time_is_one_line_and_status_3(capsys) -> None:
    with socket.socket() as silent:  # accepts connections (backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        assert main(["--url", f"http://127.0.0.1:{free_port()}", "health"]) == 3
        refused = time.monotonic() - start  # the command's own cost on this machine now: no server, no wait
        capsys.readouterr()
        start = time.monotonic()
        assert main(["--url", url, "--timeout", "0.3", "health"]) == 3
        assert time.monotonic() - start < 3 * (0.3 + refused)  # the 0.3 s timeout, not a hang
    assert capsys.readouterr().err == f"estibench: no answer from {url} within 0.3 s\n"


def test_wait_timeout_says_how_to_follow(queued: TestClient, capsys) -> None:  # noqa: F811
    job = queued.post("/v1/jobs", json=job_body(steps=3)).json()
    assert main(["wait", job["id"], "--wait-timeout", "0"], client=Client(http=queued)) == 4
    err = capsys.readouterr().err
    assert err == (
        f"estibench: job {job['id']} is still queued after 0 s; it goes on: estibench wait {job['id']}, "
        f"or estibench cancel {job['id']}\n"
    )


def test_problems_print_readably(capsys) -> None:
    problem = {"title": "Unprocessable Content", "detail": "B·n must not exceed 5×10⁷", "status": 422, "errors": []}

    class Refusing(Client):
        def health(self) -> dict:
            raise ApiError(422, problem)

    assert main(["health"], client=Refusing("http://127.0.0.1:9")) == 1
    assert capsys.readouterr().err == "estibench: 422 Unprocessable Content: B·n must not exceed 5×10⁷\n"


def test_cost_cap_is_one_sentence_naming_cost_cap_and_unit(api: Client, capsys) -> None:
    spec = ESTIMATORS["compression.double_descent"]
    cost = spec.cost(spec.params_model.model_validate(HUGE))
    assert main(["run", "compression.double_descent", json.dumps(HUGE)], client=api) == 1
    assert capsys.readouterr().err == (
        f"estibench: 422 refused: the call would cost {cost:.4g} {spec.cost_unit}, over the hard cap of "
        f"{spec.hard_cap:.4g} {spec.cost_unit}\n"
    )


def test_help_is_plain_text_for_every_command(capsys) -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert len(commands) >= 10
    for argv in [[], *([c] for c in commands)]:
        with pytest.raises(SystemExit) as done:
            main([*argv, "--help"])
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert text.startswith(f"usage: estibench {' '.join(argv)}".rstrip())
        for markup in ("``", ":class:", ":func:", "**", "\\u"):
            assert markup not in text, (argv, markup)


def test_progress_bar_shows_the_jobs_message_on_a_terminal(running_job: tuple[Client, str]) -> None:
    client, job_id = running_job
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    run = Waiter(client, console).wait(job_id, timeout_s=30)
    assert run["result"]["steps"] == 40
    assert "step 40 of 40" in screen.getvalue() and "100%" in screen.getvalue()
