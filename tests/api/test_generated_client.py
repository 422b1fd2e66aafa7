"""A client generated with openapi-python-client from the app's OpenAPI document drives a live server: an estimator
call, a job run by a worker, an array upload used as a parameter, a benchmark with a submission, and the JSON and
CSV leaderboard. Every operation is generated (no skipped endpoint) and no schema is dropped."""

import csv
import importlib
import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.reliability import procs
from usecases.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
ADMIN_KEY = "ek_admin_reliability_key"
PACKAGE = "estibench_generated_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, str]]:
    """The generated package (imported) and the generator's output."""
    from api.app import create_app  # here, not at collection

    where = tmp_path_factory.mktemp("generated")
    app = create_app(Settings(database_url="sqlite://", secret_key="openapi", log_level="WARNING"))
    (where / "openapi.json").write_text(json.dumps(app.openapi()))
    venv_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")}
    args = ["openapi-python-client", "generate", "--path", "openapi.json", "--output-path", PACKAGE, "--meta", "none"]
    done = subprocess.run(
        [str(Path(venv_bin) / args[0]), *args[1:]], cwd=where, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module(PACKAGE), done.stdout + done.stderr
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated SQLite store, an API process and a worker process on it."""
    from db.migrate import upgrade

    where = tmp_path_factory.mktemp("server")
    url = f"sqlite:///{where / 'estibench.db'}"
    upgrade(url)
    env = procs.env_for(url, where / "data")
    port = procs.free_port()
    with procs.running("worker", env, log=where / "worker.log"), procs.running("api", env, port, where / "api.log"):
        yield f"http://127.0.0.1:{port}"


def _op(package: ModuleType, path: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.api.{path}")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_every_operation_and_schema_is_generated(generated: tuple[ModuleType, str]) -> None:
    package, output = generated
    assert "Endpoint will not be generated" not in output
    assert "Unable to parse schema" not in output and "Unable to process schema" not in output
    scorers = {p.stem for p in (Path(package.__file__).parent / "api" / "scorers").glob("score_*.py")}
    from service.registry import SCORERS, load_all

    load_all()
    assert scorers == {f"score_{name.replace('.', '_')}" for name in SCORERS}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_generated_client_drives_a_live_server(generated: tuple[ModuleType, str], server: str) -> None:
    package, _ = generated
    models = importlib.import_module(f"{PACKAGE}.models")
    types = importlib.import_module(f"{PACKAGE}.types")
    admin = package.AuthenticatedClient(base_url=server, token=ADMIN_KEY, raise_on_unexpected_status=True)
    anonymous = package.Client(base_url=server, raise_on_unexpected_status=True)

    run = _op(package, "estimators.run_compression_nml_regret").sync(
        client=anonymous, body=models.NmlRegretParams(num_symbols=2, n=2)
    )
    assert isinstance(run, models.CompressionNmlRegretRun) and run.cached is False
    assert run.result.log_c_nats == pytest.approx(np.log(2.5), rel=1e-12)

    params = models.JobRequestParams.from_dict({"num_symbols": 3, "n": 7})
    job = _op(package, "jobs.create_job_v1_jobs_post").sync(
        client=admin,
        body=models.JobRequest(kind=models.JobRequestKind.ESTIMATOR, name="compression.nml_regret", params=params),
    )
    get_job = _op(package, "jobs.get_job_v1_jobs_job_id_get")
    deadline = time.monotonic() + 60
    while (polled := get_job.sync(job.id, client=admin)).status.value not in ("succeeded", "failed", "cancelled"):
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.2)
    assert polled.status.value == "succeeded"
    again = _op(package, "estimators.run_compression_nml_regret").sync(
        client=anonymous, body=models.NmlRegretParams(num_symbols=3, n=7)
    )
    # the admin's job stored the run; an anonymous call with the same params gets a run of its own, result reused
    assert again.cached is True and again.id != polled.run_id
    stored = _op(package, "runs.get_run_v1_runs_run_id_get").sync(polled.run_id, client=admin)
    assert stored.cached is False and stored.result.to_dict() == again.result.to_dict()

    buffer = io.BytesIO()
    np.save(buffer, np.array([90, 5, 5], dtype=np.int64))
    buffer.seek(0)
    uploaded = _op(package, "arrays.upload_array_v1_arrays_post").sync(client=admin, body=types.File(payload=buffer))
    assert isinstance(uploaded, models.ArrayOut) and uploaded.shape == [3] and uploaded.dtype == "<i8"
    codelength = _op(package, "estimators.run_compression_codelength")
    by_ref = codelength.sync(
        client=admin, body=models.CodelengthParams.from_dict({"counts": {"array": uploaded.id}, "method": "nml"})
    )
    by_list = codelength.sync(
        client=admin, body=models.CodelengthParams.from_dict({"counts": [90, 5, 5], "method": "nml"})
    )
    assert by_ref.result.to_dict() == by_list.result.to_dict()

    key = [{"item_id": f"q{i}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 2}"} for i in range(8)]
    bench = _op(package, "benchmarks.create_benchmark_v1_benchmarks_post").sync(
        client=admin,
        body=models.BenchmarkIn.from_dict({"name": "generated", "scorer": "film_mcq", "answer_key": {"items": key}}),
    )
    preds = [{"item_id": f"q{i}", "choice_idx": i % 4 if i < 6 else (i + 1) % 4} for i in range(8)]
    submitted = _op(package, "submissions.create_submission_v1_benchmarks_benchmark_id_submissions_post").sync(
        bench.id, client=admin, body=models.SubmissionIn.from_dict({"model": "m", "predictions": {"items": preds}})
    )
    assert submitted.scores["accuracy"]["value"] == pytest.approx(0.75, abs=1e-12)

    board = _op(package, "benchmarks.leaderboard_v1_benchmarks_benchmark_id_leaderboard_get").sync(
        bench.id, client=admin
    )
    assert isinstance(board, models.Leaderboard) and [r.model for r in board.items] == ["m"]
    assert board.items[0].scores["accuracy"]["value"] == pytest.approx(0.75, abs=1e-12)
    text = _op(package, "benchmarks.leaderboard_csv_v1_benchmarks_benchmark_id_leaderboard_csv_get").sync(
        bench.id, client=admin
    )
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:5] == ["rank", "model", "submission_id", "submitted_at", "answer_key_version"]
    assert rows[1][1] == "m" and rows[1][2] == submitted.id and float(rows[1][5]) == pytest.approx(0.75, abs=1e-12)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT.*Z", rows[1][3])
