"""The command line and the Python client over the routes a benchmark's maintainer and its participants use:
submitting JSON Lines (a file or any iterable), the submissions listing, one submission, per-item values, the paired
comparison, withdrawal, answer-key versions (putting an earlier one back), and figures saved to files."""

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from client import Client
from client.cli import main
from tests.factories import api_key, benchmark, film_key_items, film_predictions


@pytest.fixture
def owner(client: TestClient) -> Client:
    c = Client(http=client)
    c.headers = dict(api_key(client, "benchmarks:write", "submissions:write", name="olivia"))
    return c


@pytest.fixture
def bench(client: TestClient, owner: Client) -> dict:
    return benchmark(client, owner.headers, name="cli-routes", max_submissions_per_day=20)


@pytest.fixture
def run(capsys: pytest.CaptureFixture) -> Any:
    def go(c: Client, *argv: str) -> Any:
        code = main(list(argv), client=c)
        captured = capsys.readouterr()
        assert code == 0, captured.err
        return json.loads(captured.out)

    return go


def test_submit_a_jsonl_file_an_iterable_and_a_json_file_alike(
    owner: Client, bench: dict, run: Any, tmp_path: Path
) -> None:
    preds = film_predictions(7, 3)["items"]
    lines = tmp_path / "preds.jsonl"
    lines.write_text("".join(json.dumps(p) + "\n" for p in preds))
    whole = tmp_path / "preds.json"
    whole.write_text(json.dumps({"items": preds}))
    from_lines = run(owner, "submit", bench["id"], "a", f"@{lines}", "--metadata", '{"run": 1}')
    from_json = run(owner, "submit", bench["id"], "b", f"@{whole}")
    streamed = owner.submit(bench["id"], "c", (p for p in preds), metadata={"run": 3})
    json_path = owner.submit(bench["id"], "d", whole)
    assert from_lines["scores"] == from_json["scores"] == streamed["scores"] == json_path["scores"]
    assert from_lines["scores"]["accuracy"]["value"] == pytest.approx(0.7)  # 7 of 10 public items
    assert from_lines["private"]["scores"]["accuracy"]["value"] == pytest.approx(0.75)  # 3 of 4 private
    assert (from_lines["metadata"], streamed["metadata"]) == ({"run": 1}, {"run": 3})
    assert [s["model"] for s in run(owner, "submissions", bench["id"])] == ["d", "c", "b", "a"]
    assert [s["model"] for s in run(owner, "submissions", bench["id"], "--limit", "1")] == ["d"]


def test_a_bad_jsonl_line_is_reported_on_one_line(
    owner: Client, bench: dict, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "q0", "choice_idx": 0}\n{"item_id": "q1", "choice_idx": "x"}\n')
    assert main(["submit", bench["id"], "m", f"@{bad}"], client=owner) == 1
    assert "body.2.choice_idx" in capsys.readouterr().err
    assert main(["submit", bench["id"], "m", f"@{tmp_path / 'missing.jsonl'}"], client=owner) == 2
    assert "cannot read" in capsys.readouterr().err


def test_show_items_compare_and_withdraw(owner: Client, bench: dict, run: Any) -> None:
    a = owner.submit(bench["id"], "a", film_predictions(8)["items"])
    b = owner.submit(bench["id"], "b", film_predictions(5)["items"])
    shown = run(owner, "submission-show", a["id"])
    assert (shown["id"], shown["scores"]["accuracy"]["value"]) == (a["id"], pytest.approx(0.8))
    per_item = run(owner, "items", a["id"])
    values = {i["item_id"]: i["value"] for i in per_item["items"]}
    assert values == {f"q{i}": 1.0 if i < 8 else 0.0 for i in range(10)} | {f"p{i}": 0.0 for i in range(4)}
    compared = run(owner, "compare", bench["id"], a["id"], b["id"])
    # a is right on q5, q6, q7 where b is wrong; b never right where a is wrong: exact McNemar p = 2 * 0.5^3
    assert (compared["test"], compared["n_common"]) == ("mcnemar_exact", 10)
    assert (compared["result"]["b"], compared["result"]["c"]) == (3, 0)
    assert compared["result"]["p_value"] == pytest.approx(0.25)
    assert compared == owner.compare(bench["id"], a["id"], b["id"])
    withdrawn = run(owner, "submission-withdraw", b["id"])
    assert withdrawn["withdrawn_at"] is not None
    board = owner.leaderboard(bench["id"])["items"]
    assert [r["model"] for r in board] == ["a"]


def test_answer_key_put_restores_an_earlier_version_and_benchmark_show_lists_them(
    owner: Client, bench: dict, run: Any, tmp_path: Path
) -> None:
    first = tmp_path / "v1.json"
    first.write_text(json.dumps(film_key_items()))
    changed = film_key_items()
    changed[0]["answer_idx"] = 3
    second = tmp_path / "v2.json"
    second.write_text(json.dumps({"items": changed}))
    v2 = run(owner, "answer-key-put", bench["id"], f"@{second}")
    v3 = run(owner, "answer-key-put", bench["id"], f"@{first}")
    assert (v2["answer_key_version"], v2["created"], v3["answer_key_version"]) == (2, True, 3)
    versions = run(owner, "benchmark-show", bench["id"])["versions"]
    assert [v["version"] for v in versions] == [1, 2, 3]
    assert versions[0]["sha256"] == versions[2]["sha256"] == v3["answer_key_sha256"] != versions[1]["sha256"]
    assert [b["id"] for b in run(owner, "benchmarks")] == [bench["id"]]


def test_plot_saves_a_leaderboard_figure(
    owner: Client, bench: dict, run: Any, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    owner.submit(bench["id"], "a", film_predictions(8)["items"])
    svg, png = tmp_path / "board.svg", tmp_path / "board.png"
    assert run(owner, "plot", "leaderboard", bench["id"], str(svg), "--top", "5")["format"] == "svg"
    assert b"<svg" in svg.read_bytes()[:2000]
    written = run(owner, "plot", "leaderboard", bench["id"], str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and written["bytes"] == png.stat().st_size
    assert main(["plot", "run", "no-such-run", str(svg)], client=owner) == 1
    assert capsys.readouterr().err.startswith("estibench: 404 ")
