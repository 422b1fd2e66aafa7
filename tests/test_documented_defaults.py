"""Every default a params description or a docs params table states is the params model's default.

A description's ``(default X)`` / ``default X`` / ``defaults to X`` is parsed (numbers, ``10,000``, ``1/3``,
lists, ``true``/``false``/``none``, comma-separated words; the text up to the first ``;``, ``:`` or `` = ``)
and compared with the field's default. A default computed at run time (the field's default is None and the
description names the rule) is listed in DERIVED with its sentence, so a new stated default cannot go unread.
"""

import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from service.registry import ESTIMATORS, SCORERS, load_all

ROOT = Path(__file__).resolve().parent.parent
STATED = re.compile(r"\(default:? ([^()]*?)\)|\bdefault:? ([^ .;,)]+)|\b[Dd]efaults? to ([^ .;,)]+)")
THOUSANDS = re.compile(r"-?\d{1,3}(,\d{3})+")

# Stated defaults a parser cannot read as a value: the sentence and the value it states.
READ_BY_HAND: dict[tuple[str, str], tuple[str, Any]] = {
    ("moead.omm_runtime", "tie_rule"): ("('<=', default: ties go to the offspring)", "<="),
    ("moead.omm_scaling", "tie_rule"): ("('<=', default: ties go to the offspring)", "<="),
}

# Defaults computed at run time: the model's default is None and the description names the rule.
DERIVED: dict[tuple[str, str], str] = {
    ("axial_slr.pgd", "log_every"): "default: iterations/200, at least 1",
    ("axial_slr.risk", "lambda_c"): "default λ_r",
    ("axial_slr.risk", "k"): "default k*",
    ("axial_slr.risk", "v"): "default v*",
    ("fdslm.perception_vector", "layers"): "default all",
    ("hyperconnections.token_dynamics", "w"): "default the ...",
    ("hyperconnections.token_dynamics", "v"): "default minus ...",
    ("hyperconnections.token_dynamics", "h0"): "default init_scale·N(0, 1)",
    ("minhash.jaccard", "scheme"): "Items form only (default cminhash_sigma_pi)",
    ("minhash.jaccard", "num_perm"): "Items form only: K (default 128)",
    ("minhash.jaccard", "seed"): "Items form only (default 0)",
    ("minhash.jaccard", "hash_version"): "Items form only (default 3)",
    ("minhash.minner", "stored_size"): "default the ...",
    ("minhash.simulate", "union"): "default query_size",
    ("moead.omm_runtime", "num_subproblems"): "default n",
    ("moead.omm_runtime", "max_evals"): "default ceil(50·n²·ln n)",
    ("sae.hierarchical_recovery", "theta"): "(default 1/√d)",
    ("sae.hierarchical_train", "theta"): "(default 1/√d)",
    ("sae.hierarchical_train", "x_eval"): "default: a held-out split",
    ("snn.gradient_mismatch", "width"): "per surrogate: gaussian default 0.5, sigmoid 4, atan 2, rect 1",
    ("snn.threshold_tail", "width"): "per surrogate: gaussian default 0.5, sigmoid 4, atan 2, rect 1",
    ("snn.gradient_mismatch", "theta"): "default drawn",
    ("snn.gradient_mismatch", "w_scale"): "default drawn",
    ("snn.gradient_mismatch", "x"): "default Bernoulli(p)",
    ("snn.gradient_mismatch", "p"): "default drawn",
    ("snn.gradient_mismatch", "y"): "default one-hot",
    ("snn.gradient_mismatch", "labels"): "default drawn",
    ("unrolling.jacobian_error", "x0"): "default zeros",
}


def _atom(text: str) -> Any:
    s = text.strip().strip("'\"`")
    if s.lower() in ("true", "false"):
        return s.lower() == "true"
    if s.lower() in ("none", "null"):
        return None
    if THOUSANDS.fullmatch(s):
        return int(s.replace(",", ""))
    for kind in (int, float):
        try:
            return kind(s)
        except ValueError:
            pass
    if re.fullmatch(r"\d+/\d+", s):
        return float(Fraction(s))
    return s


def parse_stated(text: str) -> Any:
    """The value a stated default names: ``[0.5, 1]`` → [0.5, 1]; ``uh, um`` → ["uh", "um"]; ``80 ms`` → 80."""
    text = re.split(r"[;:]| = ", text)[0].strip()
    text = re.sub(r"^(-?[\d.]+) (ms|s)$", r"\1", text)
    if text.startswith("["):
        return [_atom(x) for x in text.strip("[]").split(",")]
    if ", " in text and not THOUSANDS.fullmatch(text):
        return [_atom(x) for x in text.split(", ")]
    return _atom(text)


def model_default(info: Any) -> Any:
    value = info.default
    if value is PydanticUndefined:
        value = info.default_factory() if info.default_factory else PydanticUndefined
    if isinstance(value, BaseModel):
        value = list(value.model_dump().values())
    return list(value) if isinstance(value, tuple) else value


def same(stated: Any, actual: Any) -> bool:
    """Equal as stated: numbers to 1e-12 relative, lists element-wise, a scalar stated for a list of equal values."""
    if isinstance(actual, list) and not isinstance(stated, list):
        return bool(actual) and all(same(stated, x) for x in actual)
    if isinstance(stated, list) and isinstance(actual, list):
        return len(stated) == len(actual) and all(same(a, b) for a, b in zip(stated, actual, strict=True))
    if isinstance(stated, bool) or isinstance(actual, bool) or stated is None or actual is None:
        return stated is actual
    if isinstance(stated, int | float) and isinstance(actual, int | float):
        return math.isclose(stated, actual, rel_tol=1e-12)
    return stated == actual


def stated_defaults() -> list[tuple[str, str, str, Any]]:
    """(owner, field, the stated text, the model's default) for every description stating a default."""
    load_all()
    found = []
    for name, spec in sorted({**ESTIMATORS, **SCORERS}.items()):
        if name.startswith("test."):
            continue
        for field, info in spec.params_model.model_fields.items():
            match = STATED.search(info.description or "")
            if match:
                text = next(g for g in match.groups() if g is not None)
                found.append((name, field, text, model_default(info)))
    return found


def test_parser_reads_the_forms_the_descriptions_use() -> None:
    assert parse_stated("10,000") == 10_000 and parse_stated("1/3") == pytest.approx(1 / 3)
    assert parse_stated("[0.05, 0.1, 1]") == [0.05, 0.1, 1] and parse_stated("uh, um, oh") == ["uh", "um", "oh"]
    assert parse_stated("0.39, 4.32: U-Bench's zoo") == [0.39, 4.32] and parse_stated("1000; 0 disables") == 1000
    assert parse_stated("0.5 = Krichevsky–Trofimov") == 0.5 and parse_stated("80 ms") == 80
    assert parse_stated("true") is True and parse_stated("none") is None
    assert same(1 / 3, [1 / 3] * 3) and not same(1 / 3, [1 / 3, 0.5]) and not same([1, 2], [2, 1])
    assert not same(True, 1) and not same(0.1, 0.1000001)


def test_every_stated_default_is_the_models_default() -> None:
    wrong, derived_seen = [], set()
    stated = stated_defaults()
    assert len(stated) > 100
    for name, field, text, actual in stated:
        key = (name, field)
        if key in DERIVED:
            derived_seen.add(key)
            assert actual is None, f"{name}.{field}: listed as derived at run time but its default is {actual!r}"
            continue
        expected = READ_BY_HAND[key][1] if key in READ_BY_HAND else parse_stated(text)
        if not same(expected, actual):
            wrong.append(f"{name}.{field}: {text!r} states {expected!r}, the model's default is {actual!r}")
    assert not wrong, wrong
    assert derived_seen == set(DERIVED), f"DERIVED lists fields that state no default: {set(DERIVED) - derived_seen}"


def test_docs_params_tables_state_the_models_defaults() -> None:
    """A docs table headed ``| params | default |`` on ``docs/<scorer>.md`` lists that scorer's defaults."""
    load_all()
    checked = 0
    for page in sorted((ROOT / "docs").glob("*.md")):
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            if not re.match(r"\|\s*params\s*\|\s*default\s*\|", line):
                continue
            model = SCORERS[page.stem].params_model
            for row in lines[i + 2 :]:
                cells = [c.strip() for c in row.strip("|").split("|")] if row.startswith("|") else None
                if not cells:
                    break
                field = cells[0].strip("`")
                stated = parse_stated(cells[1].strip("`").replace('"', ""))
                actual = model_default(model.model_fields[field])
                assert same(stated, actual), f"{page.name}: {field} stated {stated!r}, default {actual!r}"
                checked += 1
    assert checked >= 3  # docs/zbb.md: n_initial, skip_fillers, fillers
