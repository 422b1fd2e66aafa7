"""The HTTP part of scripts/container_check.sh, against a running container (standard library only, so the host's
python3 runs it without the project installed).

    python3 scripts/container_walkthrough.py before   estimator call, benchmark created with the admin key, a
                                                      submission, the leaderboard; saves what it saw
    python3 scripts/container_walkthrough.py after    (after a restart) the same run, a cached repeat, the same
                                                      leaderboard
    python3 scripts/container_walkthrough.py java     scene3d_qa with tokenizer=ptb_java and meteor=true, when the
                                                      scorer's params schema offers ptb_java

Environment: ESTIBENCH_CHECK_URL, ESTIBENCH_CHECK_ADMIN (the admin key), ESTIBENCH_CHECK_STATE (a JSON file).
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ESTIMATOR = "minhash.variance"
ESTIMATOR_PARAMS = {"intersection": 50, "union": 100, "universe": 1009, "num_perm": 64}
FILM_KEY = [{"item_id": f"q{i}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 2}"} for i in range(8)]
# Six of eight answers right: accuracy 0.75.
FILM_PREDICTIONS = [{"item_id": f"q{i}", "choice_idx": i % 4 if i < 6 else (i + 1) % 4} for i in range(8)]


def call(method: str, path: str, body: Any = None, key: str | None = None) -> tuple[int, Any]:
    headers = {"content-type": "application/json"} if body is not None else {}
    if key:
        headers["authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(os.environ["ESTIBENCH_CHECK_URL"] + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def expect(what: str, ok: bool, seen: Any) -> None:
    if not ok:
        raise SystemExit(f"{what}: got {json.dumps(seen)[:600]}")
    print(f"  ok: {what}")


def wait_for_job(job_id: str, timeout_s: float = 300.0) -> dict | None:
    """The run of a succeeded job (None on failure or after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, job = call("GET", f"/v1/jobs/{job_id}")
        if status == 200 and job["status"] == "succeeded":
            return call("GET", f"/v1/runs/{job['run_id']}")[1]
        if status != 200 or job["status"] in ("failed", "cancelled"):
            print(f"  job {job_id}: {json.dumps(job)[:600]}")
            return None
        time.sleep(1)
    return None


def before(state: Path, admin: str) -> None:
    status, run = call("POST", f"/v1/estimators/{ESTIMATOR}", ESTIMATOR_PARAMS)
    expect(f"POST /v1/estimators/{ESTIMATOR} answers a fresh run", status == 200 and run["cached"] is False, run)
    body = {"name": "container-check", "scorer": "film_mcq", "answer_key": {"items": FILM_KEY}}
    status, bench = call("POST", "/v1/benchmarks", body, admin)
    expect("the admin key creates a benchmark", status == 201, bench)
    submission = {"model": "check-model", "predictions": {"items": FILM_PREDICTIONS}}
    status, sub = call("POST", f"/v1/benchmarks/{bench['id']}/submissions", submission, admin)
    expect("a submission is scored", status == 201, sub)
    status, board = call("GET", f"/v1/benchmarks/{bench['id']}/leaderboard")
    rows = board.get("items", [])
    expect(
        "the leaderboard ranks it at accuracy 0.75 (6 of 8)",
        status == 200
        and len(rows) == 1
        and rows[0]["model"] == "check-model"
        and rows[0]["scores"]["accuracy"]["value"] == 0.75,
        board,
    )
    state.write_text(json.dumps({"run": run, "benchmark": bench["id"], "leaderboard": board}))


def after(state: Path) -> None:
    saved = json.loads(state.read_text())
    status, run = call("GET", f"/v1/runs/{saved['run']['id']}")
    same = ("id", "params_sha256", "created_at", "result")
    expect(
        "the run is still there after the restart",
        status == 200 and all(run[k] == saved["run"][k] for k in same),
        run,
    )
    status, again = call("POST", f"/v1/estimators/{ESTIMATOR}", ESTIMATOR_PARAMS)
    expect("the same call is answered from the store", status == 200 and again["id"] == run["id"], again)
    status, board = call("GET", f"/v1/benchmarks/{saved['benchmark']}/leaderboard")
    expect("the leaderboard is unchanged", status == 200 and board == saved["leaderboard"], board)


def java() -> None:
    status, scorer = call("GET", "/v1/scorers/scene3d_qa")
    if status != 200 or "ptb_java" not in json.dumps(scorer.get("params_schema", {})):
        print("  skipped: scene3d_qa offers no tokenizer=ptb_java in this build")
        return
    key = [
        {"item_id": "a", "refs": ["chair", "wooden chair"]},
        {"item_id": "b", "refs": ["two"]},
        {"item_id": "c", "refs": ["on the left side of the bed"]},
    ]
    preds = [
        {"item_id": "a", "pred": "chair"},
        {"item_id": "b", "pred": "three"},
        {"item_id": "c", "pred": "left of the bed"},
    ]
    body = {
        "answer_key": {"items": key},
        "predictions": {"items": preds},
        "params": {"tokenizer": "ptb_java", "meteor": True},
    }
    status, out = call("POST", "/v1/scorers/scene3d_qa/score", body)
    if status == 202:  # the JVMs' start-up cost is above the synchronous budget: a job, run by the worker
        out = wait_for_job(out["id"])
        status = 200 if out else 504
    expect("scene3d_qa scores with tokenizer=ptb_java and meteor=true", status == 200, out)
    result = out["result"]
    breakdown = result["breakdown"]
    expect(
        "the CoreNLP PTB tokenizer jar ran (no fallback)",
        breakdown["tokenizer"] == "ptb_java" and "tokenizer_note" not in breakdown,
        breakdown,
    )
    meteor = result["scores"].get("meteor", {}).get("value")
    expect("METEOR 1.5 ran in Java (a value in (0, 1))", meteor is not None and 0 < meteor < 1, breakdown["meteor"])
    expect("EM@1 is 1 of 3", abs(result["scores"]["em_at_1"]["value"] - 1 / 3) < 1e-12, result["scores"])


def main() -> None:
    mode = sys.argv[1]
    state = Path(os.environ.get("ESTIBENCH_CHECK_STATE", "/tmp/estibench-check-state.json"))
    if mode == "before":
        before(state, os.environ["ESTIBENCH_CHECK_ADMIN"])
    elif mode == "after":
        after(state)
    elif mode == "java":
        java()
    else:
        raise SystemExit(f"unknown mode {mode!r}: before, after or java")


if __name__ == "__main__":
    main()
