"""The Python client and the ``estibench`` CLI against the app (through the test client's transport)."""

import csv
import io
import json

import pytest
from fastapi.testclient import TestClient

from client import ApiError, Client
from client.cli import main
from tests.api.conftest import ADMIN


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
    assert json.loads(capsys.readouterr().err)["status"] == 422
