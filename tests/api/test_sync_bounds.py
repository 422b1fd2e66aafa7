"""Bounds on synchronous work: at most ``sync_concurrency`` computations at once (the rest wait ``sync_wait_s``,
then 503 with Retry-After), and a large body that will be rejected is refused by a structural pre-check that
costs little CPU and memory."""

import json
import subprocess
import sys
import threading

import pytest

from service.registry import ESTIMATORS, load_all
from tests import support_estimators
from tests.factories import serving
from tests.reliability.procs import ROOT
from usecases import budgets, json_bounds
from usecases.errors import InvalidFields
from usecases.run_requests import parse as parse_params
from usecases.settings import Settings

MiB = 1024 * 1024


def test_synchronous_computations_beyond_the_bound_get_503_with_retry_after(
    settings: Settings, test_estimator: str
) -> None:
    bounded = settings.model_copy(update={"sync_concurrency": 1, "sync_wait_s": 0.3})
    with serving(bounded) as c:
        services = c.app.state.services
        taken, release = threading.Event(), threading.Event()

        def hold() -> None:  # another computation holds the only slot until the test lets it go
            with budgets.sync_slot(services, large=False):
                taken.set()
                release.wait(60)

        holder = threading.Thread(target=hold)
        holder.start()
        assert taken.wait(30)
        busy = c.post(f"/v1/estimators/{support_estimators.NAME}", json={"values": [1], "tag": 1})
        release.set()
        holder.join(30)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1", busy.text
        r = c.post(f"/v1/estimators/{support_estimators.NAME}", json={"values": [1], "tag": 1})
        assert r.status_code == 200  # the slot was given back


def empty_lists_body(size: int = 8 * MiB) -> bytes:
    """``compression.batch_regret`` with X made of about 2.8 million empty rows (the issue's 8 MB body)."""
    head, tail = b'{"model":"gaussian_linear","X":[', b"[]]}"
    return head + b"[]," * ((size - len(head) - len(tail)) // 3) + tail


MEASURE = """
import json, resource, sys, time
from service.registry import ESTIMATORS, load_all
from usecases.errors import InvalidFields
from usecases.run_requests import parse as parse_params
from tests.api.test_sync_bounds import empty_lists_body
load_all()
model = ESTIMATORS["compression.batch_regret"].params_model
parse_params(model, b'{"model":"multinomial","counts":[1]}')
body = empty_lists_body()
before = int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0])
start = time.process_time()
try:
    parse_params(model, body)
    status = 200
except InvalidFields as exc:
    status = exc.status
cpu = time.process_time() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
print(json.dumps({"status": status, "cpu_s": cpu, "peak_growth_mb": (peak - before) / 1024}))
"""


@pytest.mark.slow
def test_an_8_mib_body_of_empty_lists_is_refused_under_half_a_second_and_50_mb() -> None:
    out = subprocess.run([sys.executable, "-c", MEASURE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    measured = json.loads(out.stdout.strip().splitlines()[-1])
    assert measured["status"] == 422
    assert measured["cpu_s"] < 0.5, measured
    assert measured["peak_growth_mb"] < 50, measured


def test_the_pre_check_names_the_depth_and_bound() -> None:
    load_all()
    model = ESTIMATORS["compression.batch_regret"].params_model
    assert json_bounds.level_bounds(model)[:4] == (1, 6, 100_000 + 5000 + 5000 + 5000, 2 * 5000 * 500)
    with pytest.raises(InvalidFields) as err:
        parse_params(model, empty_lists_body(MiB))
    assert err.value.errors[0]["loc"] == ["body"] and err.value.errors[0]["type"] == "too_many_values"
    assert "at nesting depth 3" in err.value.errors[0]["msg"] and "at most 115000" in err.value.errors[0]["msg"]


def test_large_valid_bodies_pass_the_pre_check() -> None:
    load_all()
    model = ESTIMATORS["compression.batch_regret"].params_model
    counts = json.dumps({"model": "multinomial", "counts": [7] * 100_000}).encode()
    assert len(counts) > json_bounds.MIN_CHECKED_BYTES
    assert len(parse_params(model, counts).counts) == 100_000
    rows = [[0.5] * 500 for _ in range(200)]
    design = json.dumps({"model": "gaussian_linear", "X": rows, "X_test": rows, "y": [1.0] * 200}).encode()
    assert len(parse_params(model, design).X) == 200


def test_nesting_deeper_than_the_parser_accepts_is_undecodable() -> None:
    load_all()
    model = ESTIMATORS["compression.batch_regret"].params_model
    body = b'{"model":"multinomial","counts":[' + b"1," * 40_000 + b"[" * 300 + b"]" * 300 + b"]}"
    with pytest.raises(InvalidFields) as err:
        parse_params(model, body)
    assert err.value.status == 400 and err.value.errors[0]["type"] == "json_invalid"
