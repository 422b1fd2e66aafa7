"""Security headers: every HTML and SVG answer carries a Content-Security-Policy that loads only this origin's
assets and forbids framing, with nosniff on every answer; the Swagger UI page's one inline script is allowed by
its hash and no other; ``HEAD`` answers wherever ``GET`` does, with the GET's headers and no body."""

import base64
import hashlib
from html.parser import HTMLParser

import pytest


class InlineScripts(HTMLParser):
    """The text of every ``<script>`` without ``src``."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._inside = tag == "script" and not dict(attrs).get("src")
        if self._inside:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._inside = False

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.scripts[-1] += data


def directives(policy: str) -> dict[str, list[str]]:
    parts = [d.split() for d in policy.split(";") if d.strip()]
    return {p[0]: p[1:] for p in parts}


@pytest.mark.parametrize("path", ["/", "/docs", "/redoc", "/reproductions"])
def test_html_pages_load_only_local_assets_and_cannot_be_framed(client, path):
    page = client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = directives(page.headers["content-security-policy"])
    assert policy["default-src"] == ["'self'"] and policy["frame-ancestors"] == ["'none'"]
    assert policy["object-src"] == ["'none'"] and "'unsafe-inline'" not in policy["script-src"]
    assert page.headers["x-frame-options"] == "DENY" and page.headers["x-content-type-options"] == "nosniff"
    parser = InlineScripts()
    parser.feed(page.text)
    hashes = sorted(
        f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in parser.scripts
    )
    assert sorted(policy["script-src"]) == sorted(["'self'", *hashes])  # each inline script by its hash, no other
    assert (path == "/docs") == (len(hashes) == 1)


def test_svg_figures_run_nothing_and_json_is_not_sniffed(client):
    run = client.post("/v1/estimators/moead.omm_scaling", json={"r": 1, "reps": 5, "ns": [8, 16]}).json()
    svg = client.get(f"/v1/runs/{run['id']}/plot")
    assert svg.headers["content-type"] == "image/svg+xml" and b"<style" in svg.content
    policy = directives(svg.headers["content-security-policy"])
    assert policy == {"default-src": ["'none'"], "style-src": ["'unsafe-inline'"], "frame-ancestors": ["'none'"]}
    assert svg.headers["x-frame-options"] == "DENY" and svg.headers["x-content-type-options"] == "nosniff"
    health = client.get("/v1/health")
    assert health.headers["x-content-type-options"] == "nosniff" and "content-security-policy" not in health.headers


@pytest.mark.slow
def test_head_answers_wherever_get_does(client):
    run = client.post("/v1/estimators/moead.omm_scaling", json={"r": 1, "reps": 5, "ns": [8, 16]}).json()
    for path in ("/", "/v1/health", "/openapi.json", "/static/web/style.css", f"/v1/runs/{run['id']}/plot", "/docs"):
        got, head = client.get(path), client.head(path)
        assert (head.status_code, head.content) == (200, b""), path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert int(head.headers["content-length"]) == len(got.content), path
    missing = client.head("/v1/runs/nope")
    assert missing.status_code == 404 and missing.content == b""
    assert client.head("/v1/jobs").status_code == client.get("/v1/jobs").status_code
