"""``estibench.Local`` against the HTTP ``client.Client``: the same calls give the same envelopes (apart from run
ids and times), the same errors, bit-identical results for one example per estimator
(tests/fixtures/estimator_examples.json), and work over the synchronous budget runs in the caller with progress."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from client import ApiError, Client
from estibench import Local
from service.registry import ESTIMATORS, load_all
from tests.api.test_cost import HUGE
from tests.factories import film_key_items, film_predictions
from usecases.errors import InvalidFields

EXAMPLES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "estimator_examples.json").read_text()
)["estimators"]
VARIANCE = {"intersection": 50, "union": 100, "num_perm": 64}
PER_RUN = {"id", "created_at", "duration_ms"}
"""What differs between two stores' runs of the same call."""


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Local]:
    with Local(tmp_path / "local.db") as store:
        yield store


@pytest.fixture
def http(client: TestClient) -> Client:
    """The HTTP client over the app, anonymous like ``Local``."""
    return Client(http=client)


def _same(a: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in a.items() if k not in PER_RUN}


def _calls(api: Local | Client) -> list[Any]:
    """One sequence of calls, made alike on either."""
    first = api.run("minhash.variance", VARIANCE)
    again = api.run("minhash.variance", VARIANCE)
    items = film_key_items(n_public=8, n_private=0)
    scored = api.score("film_mcq", items, film_predictions(6, n_public=8, n_private=0)["items"])
    listed = api.runs(name="minhash.variance") + api.runs(name="minhash.variance", filters=["param.num_perm>=64"])
    listed += api.runs(name="minhash.variance", filters=["param.num_perm<64"])
    with pytest.raises((ApiError, InvalidFields)) as bad:
        api.run("minhash.variance", {**VARIANCE, "num_perm": 0})
    return [first, again, api.get_run(first["id"]), scored, listed, bad.value.errors]


def test_local_and_http_answer_the_same_calls_alike(local: Local, http: Client) -> None:
    here, there = _calls(local), _calls(http)
    first, again, read, scored, listed, errors = here
    # J = 50/100, classical MinHash variance J(1-J)/K = 0.25/64
    assert first["result"]["jaccard"] == 0.5 and first["result"]["var_classical"] == 0.25 / 64
    assert (first["cached"], again["cached"], read["cached"]) == (False, True, False)
    assert again["id"] == first["id"] and read == {
        **first,
        "cached": False,
        "params": read["params"],
        "tags": {},
        "note": None,
    }
    assert {k: read["params"][k] for k in VARIANCE} == VARIANCE  # the canonical params: the call's, defaults added
    assert scored["result"]["scores"]["accuracy"]["value"] == pytest.approx(6 / 8)
    assert [r["id"] for r in listed] == [first["id"], first["id"]]
    assert errors[0]["loc"] == ["body", "num_perm"]
    assert [_same(a) for a in (first, again, read, scored)] == [_same(a) for a in there[:4]]
    assert [_same(r) for r in listed] == [_same(r) for r in there[4]] and errors == there[5]


@pytest.mark.slow
def test_plots_are_the_http_plots(local: Local, http: Client) -> None:
    params = EXAMPLES["moead.omm_scaling"]
    svg = local.plot(local.run("moead.omm_scaling", params, progress=False)["id"])
    assert svg.lstrip().startswith(b"<?xml") and b"<svg" in svg
    assert svg == http.plot(http.run("moead.omm_scaling", params)["id"])
    png = local.plot(local.runs(name="moead.omm_scaling")[0]["id"], "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_every_estimator_example_gives_bit_identical_results(local: Local, http: Client) -> None:
    load_all()
    assert set(EXAMPLES) == set(ESTIMATORS)
    for name, params in EXAMPLES.items():
        mine, theirs = local.run(name, params, progress=False), http.run(name, params)
        assert mine["params_sha256"] == theirs["params_sha256"], name
        assert json.dumps(mine["result"]) == json.dumps(theirs["result"]), name


def test_work_over_the_budget_runs_here_with_progress(test_estimator: str, local: Local) -> None:
    params = {"values": [1.0, 2.0], "steps": 4, "step_s": 0.2}  # 0.8 s > sync_budget 0.5 s
    seen: list[tuple[float, str]] = []
    run = local.run(test_estimator, params, progress=lambda f, m="": seen.append((f, m)))
    assert run["result"] == {"total": 3.0, "n": 2, "steps": 4} and not run["cached"]
    assert seen == [(k / 4, f"step {k} of 4") for k in range(1, 5)]
    assert local.run(test_estimator, params, progress=False)["cached"]


def test_the_hard_cap_still_applies(local: Local) -> None:
    with pytest.raises(InvalidFields) as exc:
        local.run("compression.double_descent", HUGE)
    assert [e["type"] for e in exc.value.errors] == ["cost_cap"]
    assert local.runs() == []


def test_progress_bar_by_default(test_estimator: str, local: Local, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    local.run(test_estimator, {"values": [1.0], "steps": 3, "step_s": 0.0})
    err = capsys.readouterr().err
    assert "test.slow_sum" in err and "100%" in err and "step 3 of 3" in err
    local.run(test_estimator, {"values": [2.0], "steps": 3}, progress=False)
    assert capsys.readouterr().err == ""


def test_in_memory_store_is_removed_on_close() -> None:
    store = Local()
    run = store.run("minhash.variance", VARIANCE, progress=False)
    assert store.get_run(run["id"])["result"] == run["result"]
    assert store.path.exists()
    store.close()
    assert not store.path.exists()


def _frames(api: Local | Client) -> tuple[Any, Any, str, str, dict[str, Any]]:
    """One sequence of notebook calls, made alike on either."""
    a = api.run("minhash.variance", VARIANCE)
    b = api.run("minhash.variance", {**VARIANCE, "num_perm": 128})
    frame = api.runs_dataframe(name="minhash.variance", sort="result.var_classical", order="asc")
    run = api.get_run(a["id"])
    html_page = run._repr_html_()
    return frame, api.runs_dataframe(name="nothing.here"), html_page, b["id"], api.compare_runs([a["id"], b["id"]])


@pytest.mark.slow
def test_dataframes_run_display_and_compare_alike(local: Local, http: Client) -> None:
    import pandas as pd

    here, there = _frames(local), _frames(http)
    frame, empty, page, b_id, compared = here
    # two runs by var_classical ascending: J(1-J)/K = 0.25/128 before 0.25/64
    assert list(frame["param.num_perm"]) == [128, 64] and list(frame["param.union"]) == [100, 100]
    assert list(frame["result.var_classical"]) == [0.25 / 128, 0.25 / 64] and frame["id"].iloc[0] == b_id
    assert list(frame.columns[:7]) == ["id", "kind", "name", "version", "created_at", "duration_ms", "note"]
    assert isinstance(frame["created_at"].dtype, pd.DatetimeTZDtype) and str(frame["created_at"].dt.tz) == "UTC"
    assert len(empty) == 0
    assert all(not isinstance(v, list) for c in frame.columns if c.startswith("result.") for v in frame[c])
    per_run = ["id", "created_at", "duration_ms"]
    pd.testing.assert_frame_equal(frame.drop(columns=per_run), there[0].drop(columns=per_run))
    assert list(empty.columns) == list(there[1].columns)
    assert "<h4>params</h4>" in page and "<th>num_perm</th><td>64</td>" in page and "<th>var_classical</th>" in page
    assert page.count('src="data:image/svg+xml;base64,') == 0  # minhash.variance draws no plot
    assert compared["params"] == {"num_perm": [64, 128]} == there[4]["params"]


@pytest.mark.slow
def test_compare_plots_alike(local: Local, http: Client) -> None:
    overlays = []
    for api in (local, http):
        quiet: dict[str, Any] = {"progress": False} if isinstance(api, Local) else {}
        ids = [api.run("moead.omm_scaling", {"ns": ns, "reps": 2}, **quiet)["id"] for ns in ([4, 6], [4, 8])]
        overlays.append(api.compare_plot(ids))
    assert [o.count(b'id="overlay-run') for o in overlays] == [2, 2]


def test_run_display_shows_the_plot_and_stays_a_dict(local: Local) -> None:
    import pickle

    run = local.get_run(local.run("moead.omm_scaling", {"ns": [4, 6], "reps": 2}, progress=False)["id"])
    page = run._repr_html_()
    assert page.count('<img alt="plot" src="data:image/svg+xml;base64,') == 1 and "<th>ns</th><td>[4, 6]</td>" in page
    assert isinstance(run, dict) and json.loads(json.dumps(run)) == dict(run)
    assert type(pickle.loads(pickle.dumps(run))) is dict
    assert "&lt;b&gt;" in display_html({**run, "note": "<b>x</b>"})


def display_html(run: dict[str, Any]) -> str:
    from client.display import run_html

    return run_html(run, None)
