"""The run pages' frames: an unknown run id is an HTML 404 page; a run's page names it and links the job that made
it; the runs and compare pages load only this origin's script (their data comes from the API, with the page's key)."""

from fastapi.testclient import TestClient

from tests.factories import serving
from usecases.settings import Settings


def test_unknown_run_is_an_html_404(client: TestClient) -> None:
    r = client.get("/runs/00000000-0000-4000-8000-000000000000")
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in r.text and "script-src 'self'" in r.headers["content-security-policy"]


def test_run_page_links_the_job_that_made_it(client: TestClient, settings: Settings) -> None:
    direct = client.post("/v1/estimators/compression.nml_regret", json={"num_symbols": 2, "n": 2}).json()
    page = client.get(f"/runs/{direct['id']}")
    assert page.status_code == 200 and f'data-run="{direct["id"]}"' in page.text and "run-job" not in page.text
    with serving(settings, queue="immediate") as immediate:
        body = {"kind": "estimator", "name": "compression.nml_regret", "params": {"num_symbols": 3, "n": 4}}
        job = immediate.post("/v1/jobs", json=body).json()
        done = immediate.get(f"/v1/jobs/{job['id']}").json()
        assert done["status"] == "succeeded", done
        page = immediate.get(f"/runs/{done['run_id']}")
    assert f'<a id="run-job" href="/jobs/{job["id"]}">' in page.text


def test_list_and_compare_pages_are_frames_for_the_script(client: TestClient) -> None:
    runs = client.get("/runs")
    assert runs.status_code == 200 and '<script src="/static/web/runs.js" defer></script>' in runs.text
    assert "<option>moead.omm_scaling</option>" in runs.text
    compare = client.get("/runs/compare", params={"ids": 'a,"><script>'})
    assert compare.status_code == 200 and 'data-ids="a,&#34;&gt;&lt;script&gt;"' in compare.text
    assert client.get("/static/web/runs.js").status_code == 200
