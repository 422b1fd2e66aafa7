"""Leaderboard CSV: a model name that starts like a spreadsheet formula is prefixed with ``'`` (OWASP, CSV
injection), in ``leaderboard.csv`` and ``leaderboard?format=csv``; numeric cells are the JSON values unchanged."""

import csv
import io

from tests.factories import ADMIN, api_key, film_key_items, film_predictions

NAMES = {
    '=HYPERLINK("http://example.invalid","x")': '\'=HYPERLINK("http://example.invalid","x")',
    "+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
    "-2+3": "'-2+3",
    "@SUM(1+1)": "'@SUM(1+1)",
    "\tlead tab": "'\tlead tab",
    "\rlead cr": "'\rlead cr",
    "model=plain": "model=plain",
    "a-b": "a-b",
}


def test_formula_names_are_text_and_numbers_are_unchanged(client):
    bench = client.post(
        "/v1/benchmarks",
        json={"name": "films", "scorer": "film_mcq", "description": "d", "answer_key": {"items": film_key_items()}},
        headers=ADMIN,
    ).json()["id"]
    writer = api_key(client, "submissions:write")
    for i, name in enumerate(NAMES):
        r = client.post(
            f"/v1/benchmarks/{bench}/submissions",
            json={"model": name, "predictions": film_predictions(correct_public=i + 1)},
            headers=writer,
        )
        assert r.status_code == 201, r.text
    rows = client.get(f"/v1/benchmarks/{bench}/leaderboard").json()["items"]
    for url, params in (
        (f"/v1/benchmarks/{bench}/leaderboard.csv", {}),
        (f"/v1/benchmarks/{bench}/leaderboard", {"format": "csv"}),
    ):
        answer = client.get(url, params=params)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
        table = list(csv.DictReader(io.StringIO(answer.text, newline="")))
        assert [t["model"] for t in table] == [NAMES[r["model"]] for r in rows]
        assert [float(t["accuracy"]) for t in table] == [r["scores"]["accuracy"]["value"] for r in rows]
        assert [float(t["accuracy_ci_low"]) for t in table] == [r["scores"]["accuracy"]["ci_low"] for r in rows]
        assert [t["submission_id"] for t in table] == [r["submission_id"] for r in rows]
