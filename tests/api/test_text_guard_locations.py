"""The text guard's scan (api/text_guard.py) locates a NUL or lone surrogate without parsing the body: its answer
equals a reference walk over the parsed JSON written here, on seeded random documents, and a hostile body costs
about what an ordinary body of the same size costs (docs/security.md, "Text in requests")."""

import json
import re
import time
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.text_guard import bad_text_loc, bad_text_offset

BAD = re.compile("[\x00\ud800-\udfff]")


def reference_loc(value: Any, loc: tuple[str | int, ...] = ()) -> tuple[str | int, ...] | None:
    """The first string (object key or value, in document order) holding a NUL or a lone surrogate."""
    if isinstance(value, str):
        return loc if BAD.search(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            found = (*loc, k) if BAD.search(k) else reference_loc(v, (*loc, k))
            if found is not None:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = reference_loc(v, (*loc, i))
            if found is not None:
                return found
    return None


TEXTS = ["a", "b,c", "d:e", "[{", '"q"', "\\", "\\u0000", "😀", "é", "", "x\\\\y", "}]"]
BADS = ["\x00", "\ud800", "\udfff", "k\ud83d", "\udc00\ud800"]


def document(rng: np.random.Generator, depth: int = 0) -> Any:
    kind = rng.integers(0, 5 if depth < 4 else 2)
    if kind == 0:
        return TEXTS[rng.integers(len(TEXTS))]
    if kind == 1:
        return [None, True, 1, -2.5e3][rng.integers(4)]
    if kind in (2, 3):
        return [document(rng, depth + 1) for _ in range(rng.integers(0, 4))]
    return {f"{TEXTS[rng.integers(len(TEXTS))]}{i}": document(rng, depth + 1) for i in range(rng.integers(0, 4))}


def plant(rng: np.random.Generator, value: Any) -> Any:
    """``value`` with one string (key or value) replaced by a bad one, somewhere random."""
    bad = BADS[rng.integers(len(BADS))]
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = int(rng.integers(len(value)))
        return [*value[:i], plant(rng, value[i]), *value[i + 1 :]]
    if isinstance(value, dict) and value and rng.random() < 0.8:
        keys = list(value)
        k = keys[int(rng.integers(len(keys)))]
        if rng.random() < 0.3:
            return {(bad if key == k else key): v for key, v in value.items()}
        return {key: (plant(rng, v) if key == k else v) for key, v in value.items()}
    return bad


@pytest.mark.parametrize("seed", range(4))
def test_the_scan_finds_what_a_walk_over_the_parsed_document_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(150):
        doc = {"body": document(rng)}
        planted = plant(rng, doc) if rng.random() < 0.7 else doc
        for text in (json.dumps(planted), json.dumps(planted, ensure_ascii=False, indent=1)):
            raw = text.encode("utf-8", "surrogatepass")
            offset = bad_text_offset(raw)
            expected = reference_loc(planted)
            assert (offset is None) == (expected is None), text
            if offset is not None:
                assert bad_text_loc(raw, offset) == expected, text


def test_a_hostile_body_costs_about_what_an_ordinary_one_of_its_size_costs(client: TestClient) -> None:
    """``{"X": [[], [], ...], "y": "\\u0000"}`` (8.4 MB) cost 5.0-5.4 s of CPU when it was parsed and walked; the
    same body without the NUL, which the guard lets through, is the baseline."""
    rows = b"[]," * 2_790_000
    hostile = b'{"X":[' + rows + b'[]],"y":"\\u0000"}'
    ordinary = b'{"X":[' + rows + b'[]],"y":"u0000"}'
    headers = {"content-type": "application/json"}

    def cpu(body: bytes) -> tuple[float, Any]:
        start = time.process_time()
        r = client.post("/v1/no-such-route", content=body, headers=headers)
        return time.process_time() - start, r

    baseline, passed = cpu(ordinary)
    spent, refused = cpu(hostile)
    assert passed.status_code == 404
    assert refused.status_code == 422 and refused.json()["errors"][0]["loc"] == ["body", "y"]
    assert spent < 3 * baseline + 0.5, (spent, baseline)
