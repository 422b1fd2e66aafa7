"""The README walkthrough as a test (README.md, the maintainer's session with the synthetic film-MCQ set and the
paragraph after it): a maintainer creates keys, registers the four benchmarks from the synthetic answer keys,
submits the synthetic predictions, and reads the published figures back from the leaderboard in JSON and CSV
(tolerances: the printed precision)."""

import csv
import io
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.factories import api_key

FIXTURES = Path(__file__).resolve().parents[1] / "service" / "fixtures"

EXPECTED = {
    "film_mcq": {"accuracy": (0.60, 1e-9), "p_value_vs_chance": (0.019728, 5e-7), "clustered_se": (0.21071, 5e-6)},
    "vimu": {
        "oe": (56.667, 1e-3),
        "eg": (37.5, 1e-9),
        "rm": (50.0, 1e-9),
        "sv": (50.0, 1e-9),
        "all_avg": (48.5417, 1e-4),
    },
    "televal": {
        "choice_accuracy": (80.0, 1e-9),
        "acoustic_robustness": (25.0, 1e-9),
        "modal_consistency": (90.0, 1e-9),
    },
    "stakebench": {
        "directed_accuracy": (0.5, 1e-9),
        "stake_weighted_da": (0.9032, 5e-5),
        "action_macro_f1": (0.3167, 5e-5),
        "odds_skill": (1 / 6, 1e-9),
    },
}


def _load(name: str) -> list[dict]:
    return json.loads((FIXTURES / name).read_text())["items"]


@pytest.mark.parametrize("scorer", sorted(EXPECTED))
def test_register_submit_and_read_the_leaderboard(client: TestClient, scorer: str) -> None:
    maintainer = api_key(client, "benchmarks:write", name="maintainer")
    author = api_key(client, "submissions:write", name="author")
    bench = client.post(
        "/v1/benchmarks",
        json={"name": f"{scorer}-synthetic", "scorer": scorer, "answer_key": {"items": _load(f"{scorer}_key.json")}},
        headers=maintainer,
    )
    assert bench.status_code == 201, bench.text
    bid = bench.json()["id"]
    sub = client.post(
        f"/v1/benchmarks/{bid}/submissions",
        json={"model": "synthetic-model", "predictions": {"items": _load(f"{scorer}_predictions.json")}},
        headers=author,
    )
    assert sub.status_code == 201, sub.text
    board = client.get(f"/v1/benchmarks/{bid}/leaderboard").json()
    assert board["metric"] == bench.json()["primary_metric"]
    (row,) = board["items"]
    assert (row["rank"], row["model"], row["submission_id"]) == (1, "synthetic-model", sub.json()["id"])
    table = list(csv.DictReader(io.StringIO(client.get(f"/v1/benchmarks/{bid}/leaderboard?format=csv").text)))
    assert len(table) == 1
    for metric, (value, tol) in EXPECTED[scorer].items():
        assert row["scores"][metric]["value"] == pytest.approx(value, abs=tol), metric
        assert float(table[0][metric]) == pytest.approx(value, abs=tol), metric
    stateless = client.post(
        f"/v1/scorers/{scorer}/score",
        json={
            "answer_key": {"items": _load(f"{scorer}_key.json")},
            "predictions": {"items": _load(f"{scorer}_predictions.json")},
        },
    )
    assert stateless.status_code == 200, stateless.text
    assert stateless.json()["result"]["scores"] == sub.json()["scores"]
