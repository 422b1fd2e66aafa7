"""The scorer platform over HTTP: per-metric item scores and paired tests, scorer cost caps and jobs, uploaded
arrays inside scorer items, run artifacts and RAVEN-Bench's cross-modal route."""

import dataclasses
import hashlib
import io
import json
from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from db.item_arrays import decode_predictions, decode_values
from service.registry import ESTIMATORS, SCORERS
from tests.factories import ADMIN, api_key, array, benchmark, serving, submission
from tests.service.test_scoring_raven import TABLE as RAVEN_TABLE
from tests.service.test_scoring_raven import answers, video_key
from tests.service.test_scoring_zbb import FIXTURE, TABLE
from tests.service.test_ubench import MODEL, UNET
from usecases.settings import Settings


@pytest.fixture
def immediate(settings: Settings) -> Iterator[TestClient]:
    """A client whose job queue runs every job inside the request."""
    with serving(settings, queue="immediate") as c:
        yield c


def db_rows(settings: Settings, sql: str) -> list:
    eng = create_engine(settings.database_url, poolclass=NullPool)
    with eng.connect() as conn:
        rows = conn.execute(text(sql)).all()
    eng.dispose()
    return rows


# -- per-metric item scores and paired tests ---------------------------------------------------------------------

ZBB_KEY = [{"item_id": r[0], "user_text": r[1], "reference": r[2], "aliases": r[3]} for r in FIXTURE]


def zbb_preds(column: int) -> list[dict]:
    return [
        {"item_id": r[0], "response_text": r[column], "judge_correct": r[column + 1]}
        for r in FIXTURE
        if r[column] is not None
    ]


def flags(items: list[dict]) -> str:
    got = {i["item_id"]: i["value"] for i in items}
    return "".join("-" if r[0] not in got else str(int(got[r[0]])) for r in FIXTURE)


@pytest.mark.slow
def test_every_metric_is_stored_per_item_and_compared_by_mcnemar(client: TestClient, settings: Settings) -> None:
    """The zbb baseline/steered fixture: per-item flags of both metrics and the McNemar figures of its table."""
    bench = benchmark(client, scorer="zbb", items=ZBB_KEY)
    alice = api_key(client, "submissions:write", name="alice")
    base = submission(client, bench, alice, "baseline", predictions={"items": zbb_preds(4)})
    steer = submission(client, bench, alice, "steered", predictions={"items": zbb_preds(6)})
    for metric in ("correctness", "iwor"):
        items = client.get(f"/v1/submissions/{base['id']}/items", params={"metric": metric}, headers=alice).json()
        assert items["metric"] == metric and flags(items["items"]) == TABLE[metric][1][0]
        assert (
            flags(client.get(f"/v1/submissions/{steer['id']}/items?metric={metric}", headers=alice).json()["items"])
            == (TABLE[metric][2][0])
        )
        r = client.get(
            f"/v1/benchmarks/{bench['id']}/compare", params={"a": base["id"], "b": steer["id"], "metric": metric}
        ).json()
        b, c, p = TABLE[metric][3]
        assert (r["metric"], r["test"], r["n_common"]) == (metric, "mcnemar_exact", 14)
        assert (r["result"]["b"], r["result"]["c"]) == (b, c)
        assert r["result"]["p_value"] == pytest.approx(p, rel=1e-12, abs=0)
    default = client.get(f"/v1/submissions/{base['id']}/items", headers=alice).json()
    assert default["metric"] == "correctness" and flags(default["items"]) == TABLE["correctness"][1][0]
    # q15 has no baseline prediction: no row for it under either metric; 14 rows per metric otherwise.
    counts: dict[str, int] = {}
    for metric, data, n in db_rows(
        settings, "SELECT a.metric, a.data, o.n FROM item_score_array a JOIN item_order o ON o.split = a.split"
    ):
        counts[metric] = counts.get(metric, 0) + int((~np.isnan(decode_values(data, n))).sum())
    assert counts == {"correctness": 14 + 15, "iwor": 14 + 15}


def test_metric_without_item_values_is_422_naming_metric(client: TestClient) -> None:
    bench = benchmark(client, scorer="zbb", items=ZBB_KEY)
    alice = api_key(client, "submissions:write", name="alice")
    a = submission(client, bench, alice, "baseline", predictions={"items": zbb_preds(4)})
    for metric in ("nope", "coverage"):
        for r in (
            client.get(f"/v1/submissions/{a['id']}/items", params={"metric": metric}, headers=alice),
            client.get(f"/v1/benchmarks/{bench['id']}/compare", params={"a": a["id"], "b": a["id"], "metric": metric}),
        ):
            assert r.status_code == 422, r.text
            assert r.json()["errors"][0]["loc"] == ["query", "metric"]


def subset_mask_items(ious: list[float]) -> tuple[list[dict], list[dict]]:
    """Cases whose IoU is exactly k/100: gt a 10×10 square in a 12×12 image, the prediction its first k pixels."""
    gt = np.zeros((12, 12), dtype=int)
    gt[1:11, 1:11] = 1
    inside = np.argwhere(gt == 1)
    keys, preds = [], []
    for i, iou in enumerate(ious):
        p = np.zeros_like(gt)
        k = round(iou * 100)
        p[inside[:k, 0], inside[:k, 1]] = 1
        keys.append({"item_id": f"c{i}", "mask": gt.tolist()})
        preds.append({"item_id": f"c{i}", "mask": p.tolist()})
    return keys, preds


def test_graded_metric_uses_the_declared_wilcoxon(client: TestClient) -> None:
    """U-Bench IoU per case equal to the U-Net and model lists: Wilcoxon W = 1.5, exact p = 6/1024; HD95 is
    stored only for cases where it is defined."""
    keys, unet = subset_mask_items(UNET)
    _, model = subset_mask_items(MODEL)
    bench = benchmark(client, scorer="ubench", items=keys, scorer_params={"n_resamples": 0})
    alice = api_key(client, "submissions:write", name="alice")
    model[0]["mask"] = np.zeros((12, 12), dtype=int).tolist()  # case c0: empty prediction, IoU 0, no HD95
    s_model = submission(client, bench, alice, "model", predictions={"items": model})
    s_unet = submission(client, bench, alice, "unet", predictions={"items": unet})
    iou = client.get(f"/v1/submissions/{s_unet['id']}/items?metric=iou", headers=alice).json()["items"]
    assert [i["value"] for i in iou] == pytest.approx(UNET, abs=1e-12)
    hd = client.get(f"/v1/submissions/{s_model['id']}/items?metric=hd95", headers=alice).json()["items"]
    assert [i["item_id"] for i in hd] == [f"c{i}" for i in range(1, 10)]
    # Restore case c0 to the model list: re-submit and compare on IoU.
    _, model = subset_mask_items(MODEL)
    s_model = submission(client, bench, alice, "model", predictions={"items": model})
    url = f"/v1/benchmarks/{bench['id']}/compare"
    r = client.get(url, params={"a": s_model["id"], "b": s_unet["id"], "metric": "iou"}).json()
    assert (r["test"], r["metric"], r["n_common"]) == ("wilcoxon_signed_rank", "iou", 10)
    assert r["result"]["statistic"] == 1.5 and r["result"]["n_nonzero"] == 10
    assert r["result"]["p_value"] == pytest.approx(6 / 1024, rel=1e-12, abs=0)
    assert r["result"]["mean_diff"] == pytest.approx(np.mean(MODEL) - np.mean(UNET), abs=1e-12)
    same = client.get(url, params={"a": s_unet["id"], "b": s_unet["id"], "metric": "dice"})
    assert same.status_code == 422 and same.json()["errors"][0]["type"] == "degenerate"


def test_default_paired_tests_follow_the_values(client: TestClient) -> None:
    """Scorers declaring nothing get the primary metric with the bootstrap; 0/1 values always get McNemar."""
    assert SCORERS["vimu"].paired_tests == {"all_avg": "bootstrap"}
    spec = dataclasses.replace(SCORERS["vimu"], paired_tests={})
    assert spec.paired_tests == {"all_avg": "bootstrap"}
    with pytest.raises(ValueError, match="primary metric"):
        dataclasses.replace(spec, paired_tests={"ssu_avg": "bootstrap"})
    with pytest.raises(ValueError, match="not one of"):
        dataclasses.replace(spec, paired_tests={"all_avg": "ttest"})
    detail = client.get("/v1/scorers/ubench").json()
    assert detail["paired_tests"]["hd95"] == "wilcoxon" and detail["cost_unit"] == SCORERS["ubench"].cost_unit


# -- scorer cost: jobs above the synchronous budget, 422 above the hard cap ----------------------------------------


def film_key(n: int) -> list[dict]:
    return [{"item_id": f"q{i}", "num_options": 4, "answer_idx": i % 4, "film_id": f"f{i % 3}"} for i in range(n)]


def film_preds(n: int, correct: int) -> list[dict]:
    return [{"item_id": f"q{i}", "choice_idx": i % 4 if i < correct else (i + 1) % 4} for i in range(n)]


@pytest.fixture
def tight_film(monkeypatch: pytest.MonkeyPatch) -> None:
    """film_mcq with a synchronous budget of 15 items and a hard cap of 40 (its cost: key plus prediction items)."""
    monkeypatch.setitem(SCORERS, "film_mcq", dataclasses.replace(SCORERS["film_mcq"], sync_budget=15, hard_cap=40))


def score_body(n: int, correct: int) -> dict:
    return {"answer_key": {"items": film_key(n)}, "predictions": {"items": film_preds(n, correct)}}


@pytest.mark.slow
@pytest.mark.usefixtures("tight_film")
def test_stateless_scoring_over_the_budget_is_a_job(settings: Settings) -> None:
    url = "/v1/scorers/film_mcq/score"
    with serving(settings, queue="immediate") as c:
        small = c.post(url, json=score_body(5, 4))
        assert small.status_code == 200 and small.json()["result"]["scores"]["accuracy"]["value"] == 0.8
        queued = c.post(url, json=score_body(10, 7))  # cost 20 > 15
        assert queued.status_code == 202, queued.text
        job = c.get(queued.headers["location"]).json()
        assert (job["kind"], job["name"], job["status"]) == ("scorer", "film_mcq", "succeeded")
        run = c.get(f"/v1/runs/{job['run_id']}").json()
        assert run["kind"] == "scorer" and run["result"]["scores"]["accuracy"]["value"] == pytest.approx(0.7)
        again = c.post(url, json=score_body(10, 7))  # the stored run answers at once
        assert again.status_code == 200 and again.json()["id"] == run["id"] and again.json()["cached"]
        huge = c.post(url, json=score_body(25, 1))  # cost 50 > 40
        assert huge.status_code == 422
        assert huge.json()["errors"] == [
            {"loc": ["body"], "msg": "cost 50 > hard_cap 40 items (answer key plus predictions)", "type": "cost_cap"}
        ]
        explicit = c.post("/v1/jobs", json={"kind": "scorer", "name": "film_mcq", "params": score_body(6, 3)})
        assert explicit.status_code == 202 and explicit.json()["status"] == "succeeded"
        result = c.get(f"/v1/runs/{explicit.json()['run_id']}").json()["result"]
        assert result == c.post(url, json=score_body(6, 3)).json()["result"]
        assert result["scores"]["accuracy"]["value"] == 0.5
        bad = c.post("/v1/jobs", json={"kind": "scorer", "name": "film_mcq", "params": {"answer_key": {}}})
        assert bad.status_code == 422 and bad.json()["errors"][0]["loc"][:3] == ["body", "params", "answer_key"]
        capped = c.post("/v1/jobs", json={"kind": "scorer", "name": "film_mcq", "params": score_body(25, 1)})
        assert capped.status_code == 422 and capped.json()["errors"][0]["type"] == "cost_cap"
    with serving(settings, queue="off") as c:
        r = c.post(url, json=score_body(9, 2))  # cost 18 > 15 with no queue
        assert r.status_code == 422 and r.json()["errors"][0]["type"] == "cost_budget"


@pytest.mark.usefixtures("tight_film")
def test_submissions_and_answer_keys_respect_the_hard_cap(client: TestClient) -> None:
    owner = api_key(client, "benchmarks:write", name="maintainer")
    too_big = {"name": "big", "scorer": "film_mcq", "answer_key": {"items": film_key(41)}}
    r = client.post("/v1/benchmarks", json=too_big, headers=owner)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "answer_key", "items"]
    assert r.json()["errors"][0]["type"] == "cost_cap"
    bench = benchmark(client, owner, scorer="film_mcq", items=film_key(18))
    alice = api_key(client, "submissions:write", name="alice")
    inline = submission(
        client, bench, alice, "m", predictions={"items": film_preds(18, 9)[:10]}
    )  # cost 28: over the budget, runs inline
    assert inline["scores"]["accuracy"]["value"] == pytest.approx(9 / 18)
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions",
        json={"model": "m", "predictions": {"items": film_preds(18, 9) + [{"item_id": "x", "choice_idx": 0}] * 5}},
        headers=alice,
    )
    assert r.status_code == 422 and r.json()["errors"][0]["type"] == "cost_cap"  # 18 + 23 > 40, before any check
    assert r.json()["errors"][0]["loc"] == ["body", "predictions", "items"]
    put = client.put(f"/v1/benchmarks/{bench['id']}/answer-key", json={"items": film_key(41)}, headers=owner)
    assert put.status_code == 422 and put.json()["errors"][0]["type"] == "cost_cap"


# -- uploaded arrays inside scorer items ---------------------------------------------------------------------------


@pytest.mark.slow
def test_npy_references_in_items_score_like_lists(client: TestClient, settings: Settings) -> None:
    keys, preds = subset_mask_items(MODEL[:3])
    listed = client.post(
        "/v1/scorers/ubench/score",
        json={"answer_key": {"items": keys}, "predictions": {"items": preds}, "params": {"n_resamples": 0}},
    )
    assert listed.status_code == 200, listed.text
    ref_keys = [{**k, "mask": {"array": array(client, np.array(k["mask"], dtype=np.uint8))["id"]}} for k in keys]
    ref_preds = [{**p, "mask": {"array": array(client, np.array(p["mask"], dtype=np.float32))["id"]}} for p in preds]
    referenced = client.post(
        "/v1/scorers/ubench/score",
        json={"answer_key": {"items": ref_keys}, "predictions": {"items": ref_preds}, "params": {"n_resamples": 0}},
    )
    assert referenced.status_code == 200, referenced.text
    assert referenced.json()["result"] == listed.json()["result"]
    assert referenced.json()["result"]["scores"]["iou"]["value"] == pytest.approx(np.mean(MODEL[:3]), abs=1e-12)

    bench = benchmark(client, scorer="ubench", items=ref_keys, scorer_params={"n_resamples": 0})
    alice = api_key(client, "submissions:write", name="alice")
    sub = submission(client, bench, alice, "model", predictions={"items": ref_preds})
    assert sub["scores"]["iou"]["value"] == pytest.approx(np.mean(MODEL[:3]), abs=1e-12)
    rescored = client.post(f"/v1/benchmarks/{bench['id']}/rescore", headers=ADMIN)  # resolves the stored references
    assert rescored.status_code == 200 and rescored.json()["rescored"] == 1
    assert client.get(f"/v1/submissions/{sub['id']}", headers=alice).json()["scores"] == sub["scores"]
    (stored_key,) = db_rows(settings, "SELECT items FROM answer_key_version")[0]
    stored_preds = decode_predictions(db_rows(settings, "SELECT data FROM submission_predictions")[0][0])
    assert [k["mask"] for k in json.loads(stored_key)] == [k["mask"] for k in ref_keys]  # references kept
    assert [p["mask"] for p in json.loads(stored_preds)] == [p["mask"] for p in ref_preds]

    float_gt = [{**ref_keys[0], "mask": {"array": array(client, np.array(keys[0]["mask"], dtype=np.float64))["id"]}}]
    r = client.post("/v1/scorers/ubench/score", json={"answer_key": {"items": float_gt}, "predictions": {"items": []}})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "answer_key", "items", 0, "mask"]
    missing = {"array": "sha256:" + "0" * 64}
    r = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions",
        json={"model": "m", "predictions": {"items": [{"item_id": "c1", "mask": missing}]}},
        headers=alice,
    )
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "predictions", "items", 0, "mask"]


# -- run artifacts -----------------------------------------------------------------------------------------------

SAE_BODY = {
    "x": np.random.default_rng(0).normal(size=(64, 8)).round(3).tolist(),
    "n_parents": 4,
    "n_children": 2,
    "subspace": 2,
    "k": 2,
    "steps": 20,
    "batch": 16,
}


def test_artifacts_are_stored_and_served_with_the_runs_visibility(settings: Settings) -> None:
    assert "sae.hierarchical_train" in ESTIMATORS
    with serving(settings, queue="immediate", require_keys=True) as c:
        alice = api_key(c, "estimators:run", name="alice")
        bob = api_key(c, "estimators:run", name="bob")
        run = c.post("/v1/estimators/sae.hierarchical_train", json=SAE_BODY, headers=alice).json()
        assert run["artifacts"] == ["weights"] and not run["cached"]
        declared = run["result"]["artifacts"][0]["arrays"]
        url = f"/v1/runs/{run['id']}/artifacts/weights"
        r = c.get(url, headers=alice)
        assert r.status_code == 200 and r.headers["content-type"] == "application/x-npz"
        assert r.headers["etag"] == f'"{hashlib.sha256(r.content).hexdigest()}"'
        with np.load(io.BytesIO(r.content)) as npz:
            assert {name: list(npz[name].shape) for name in npz.files} == declared
        assert c.get(url, headers=bob).status_code == 404
        assert c.get(url, headers=ADMIN).content == r.content
        assert c.get(f"/v1/runs/{run['id']}/artifacts/nope", headers=alice).status_code == 404
        assert c.get(f"/v1/runs/{run['id']}", headers=alice).json()["artifacts"] == ["weights"]
        cached = c.post("/v1/estimators/sae.hierarchical_train", json=SAE_BODY, headers=alice).json()
        assert cached["cached"] and cached["artifacts"] == ["weights"]
        listed = c.get("/v1/runs", headers=alice).json()["items"]
        assert [r["artifacts"] for r in listed] == [["weights"]]

        job = c.post(
            "/v1/jobs",
            json={"kind": "estimator", "name": "sae.hierarchical_train", "params": {**SAE_BODY, "seed": 1}},
            headers=alice,
        ).json()
        assert job["status"] == "succeeded", job
        by_job = c.get(f"/v1/runs/{job['run_id']}", headers=alice).json()
        assert by_job["artifacts"] == ["weights"]
        other = c.get(f"/v1/runs/{job['run_id']}/artifacts/weights", headers=alice).content
        assert other != r.content  # another seed, other weights
        plain = c.post(
            "/v1/estimators/minhash.variance",
            json={"intersection": 5, "union": 10, "universe": 100, "num_perm": 16},
            headers=alice,
        ).json()
        assert plain["artifacts"] == []
        assert c.get(f"/v1/runs/{plain['id']}/artifacts/weights", headers=alice).status_code == 404
    rows = db_rows(settings, "SELECT name, media_type, nbytes, sha256 FROM run_artifact ORDER BY created_at")
    assert [(n, m) for n, m, _, _ in rows] == [("weights", "application/x-npz")] * 2
    assert rows[0][2] == len(r.content) and rows[0][3] == hashlib.sha256(r.content).hexdigest()


# -- RAVEN-Bench cross-modal route -------------------------------------------------------------------------------


@pytest.mark.slow
def test_raven_cross_modal_from_three_submissions(client: TestClient) -> None:
    """The synthetic three-setting table: G_cm = 0.833333 − 0.738095 = 0.0952381; each submission is scored with
    its metadata's setting."""
    keys = video_key("v")
    bench = benchmark(
        client, scorer="raven", items=[k.model_dump(mode="json") for k in keys], scorer_params={"n_resamples": 0}
    )
    alice = api_key(client, "submissions:write", name="alice")
    ids = {}
    for setting, (c1, h1, *_) in RAVEN_TABLE.items():
        preds = [p.model_dump(mode="json", exclude_none=True) for p in answers(keys, c1 + h1)]
        r = client.post(
            f"/v1/benchmarks/{bench['id']}/submissions",
            json={"model": "m", "predictions": {"items": preds}, "metadata": {"setting": setting}},
            headers=alice,
        )
        assert r.status_code == 201, r.text
        assert r.json()["breakdown"]["setting"] == setting
        ids[setting] = r.json()["id"]
    url = f"/v1/benchmarks/{bench['id']}/raven/cross_modal"
    r = client.get(url, params={"submissions": ",".join(ids.values())})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["submissions"] == ids and out["missing_settings"] == []
    assert out["g_cm"] == pytest.approx(0.0952381, abs=5e-8)
    assert {s: out["s_main"][s] for s in ids} == pytest.approx({s: row[4] for s, row in RAVEN_TABLE.items()}, abs=5e-7)
    assert out["reliance_eo"] == pytest.approx(0.738095 / 0.833333, abs=1e-6)
    partial = client.get(url, params={"submissions": ids["eo_ir"]}).json()
    assert partial["g_cm"] is None and partial["missing_settings"] == ["eo_only", "ir_only"]

    again = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions",
        json={"model": "m2", "predictions": {"items": []}, "metadata": {"setting": "eo_ir"}},
        headers=alice,
    ).json()
    dup = client.get(url, params={"submissions": f"{ids['eo_ir']},{again['id']}"})
    assert dup.status_code == 422 and dup.json()["errors"][0]["loc"] == ["query", "submissions"]
    bad = client.post(
        f"/v1/benchmarks/{bench['id']}/submissions",
        json={"model": "m", "predictions": {"items": []}, "metadata": {"setting": "rgb"}},
        headers=alice,
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["body", "metadata", "setting"]
    films = benchmark(client, scorer="film_mcq", items=film_key(4))
    other = client.get(f"/v1/benchmarks/{films['id']}/raven/cross_modal", params={"submissions": ids["eo_ir"]})
    assert other.status_code == 422 and other.json()["errors"][0]["loc"] == ["path", "benchmark_id"]
