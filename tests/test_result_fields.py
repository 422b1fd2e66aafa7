"""Every result field of every registered estimator and scorer is named by a value test (result_field_coverage).

The walker takes each estimator's ``result_model`` down to its leaves (nested models and the items of lists of
models: ``rows[].width``) and each scorer's metrics plus ``coverage``; a leaf must be COVERED by a test whose
assertions name it, an ECHO of the params with its reason, or listed as PENDING (the known gap). A named test must
exist in its file (found by AST, nothing is imported from it) and name the leaf in an ``assert`` or an assertion
call (approx, allclose, isclose, assert_*).
"""

import ast
import functools
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from service.registry import ESTIMATORS, SCORERS, load_all
from tests.result_field_coverage import COVERED, ECHOES, PENDING

ROOT = Path(__file__).resolve().parent.parent
ASSERTION_CALLS = ("assert", "approx", "isclose", "allclose", "equal")


def model_leaves(model: type[BaseModel], prefix: str = "") -> list[str]:
    """The dotted leaf paths of ``model``; ``[]`` marks the items of a list (or tuple, dict values) of models."""
    out: list[str] = []
    for name, info in model.model_fields.items():
        out += _annotation_leaves(info.annotation, prefix + name)
    return out


def _annotation_leaves(annotation: object, path: str) -> list[str]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_leaves(annotation, path + ".")
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None) and a is not Ellipsis]
    models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
    if not models:
        nested = [leaf for a in args if typing.get_origin(a) is not None for leaf in _annotation_leaves(a, path)]
        return nested if any(leaf != path for leaf in nested) else [path]
    sep = "." if origin in (typing.Union, types.UnionType) else "[]."
    return [leaf for m in models for leaf in model_leaves(m, path + sep)]


def all_leaves() -> dict[str, list[str]]:
    load_all()
    table = {name: model_leaves(spec.result_model) for name, spec in ESTIMATORS.items() if not name.startswith("test.")}
    table |= {f"scorer:{name}": [*spec.metrics, "coverage"] for name, spec in SCORERS.items()}
    return table


@functools.cache
def asserted_names(path: str) -> dict[str, frozenset[str]]:
    """Per test function of ``path``: the attribute names and string constants inside its assertions."""
    tree = ast.parse((ROOT / path).read_text())
    found: dict[str, frozenset[str]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or not fn.name.startswith("test"):
            continue
        names: set[str] = set()
        for node in ast.walk(fn):
            call_name = ""
            if isinstance(node, ast.Call):
                func = node.func
                call_name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if isinstance(node, ast.Assert) or any(k in call_name.lower() for k in ASSERTION_CALLS):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Attribute):
                        names.add(sub.attr)
                    elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                        names.add(sub.value)
        found[fn.name] = frozenset(names)
    return found


def test_model_leaves_walks_nested_models_and_list_items() -> None:
    class Inner(BaseModel):
        a: float
        b: list[float]

    class Outer(BaseModel):
        x: int
        rows: list[Inner]
        one: Inner | None
        by_key: dict[str, Inner]

    assert model_leaves(Outer) == ["x", "rows[].a", "rows[].b", "one.a", "one.b", "by_key[].a", "by_key[].b"]


def test_every_leaf_is_covered_echoed_or_pending() -> None:
    unlisted, stale, doubled = [], [], []
    for owner, leaves in all_leaves().items():
        groups = [set(COVERED.get(owner, {})), set(ECHOES.get(owner, {})), set(PENDING.get(owner, ()))]
        unlisted += [f"{owner}.{leaf}" for leaf in leaves if not any(leaf in g for g in groups)]
        doubled += [f"{owner}.{leaf}" for leaf in leaves if sum(leaf in g for g in groups) > 1]
        stale += [f"{owner}.{leaf}" for g in groups for leaf in g - set(leaves)]
    assert not unlisted, f"result fields that no value test names (add a test, then list it): {unlisted}"
    assert not stale, f"listed fields that are not in the result model any more: {stale}"
    assert not doubled, f"fields listed twice: {doubled}"
    owners = set(all_leaves())
    assert set(COVERED) | set(ECHOES) | set(PENDING) <= owners


def test_named_tests_exist_and_assert_the_field() -> None:
    problems = []
    for owner, fields in COVERED.items():
        for leaf, tests in fields.items():
            assert tests, f"{owner}.{leaf} names no test"
            name = leaf.rsplit(".", 1)[-1].removesuffix("[]")
            for test_id in tests:
                path, _, func = test_id.partition("::")
                if not (ROOT / path).is_file() or func not in asserted_names(path):
                    problems.append(f"{owner}.{leaf}: {test_id} does not exist")
                elif name not in asserted_names(path)[func]:
                    problems.append(f"{owner}.{leaf}: {test_id} asserts nothing named {name!r}")
    assert not problems, problems


@pytest.mark.parametrize("owner", sorted(ECHOES))
def test_echoes_give_a_reason(owner: str) -> None:
    assert all(reason.strip() for reason in ECHOES[owner].values())
