"""Migration 0005: stored benchmarks get today's value of every new convention param; the downgrade removes the
params fields it added."""

import json
from datetime import UTC, datetime

from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from db.migrate import downgrade, upgrade
from service.registry import SCORERS, load_all

NOW = datetime(2026, 12, 1, tzinfo=UTC)
BEFORE = {
    "ub": ("ubench", {"confidence": 0.95, "hd95": True, "n_resamples": 1000, "seed": 0, "threshold": 0.5}),
    "ub_monai": ("ubench", {"hd95": False, "surface_convention": "monai"}),
    "grd": ("scene3d_grounding", {"op": "ge", "task": "multi3drefer", "thresholds": [0.25, 0.5]}),
    "qa_old": ("scene3d_qa", {"seed": 3}),
    "qa_none": ("scene3d_qa", {"normalize": "none"}),
    "rv": ("raven", {"parse_rule": "guarded"}),
}


def _params(conn) -> dict[str, str]:
    return dict(conn.execute(text("SELECT id, scorer_params FROM benchmark")).all())


def test_upgrade_writes_todays_conventions_and_downgrade_removes_the_new_fields(db_url: str) -> None:
    downgrade(db_url, "0004")
    eng = create_engine(db_url, poolclass=NullPool)
    with eng.begin() as conn:
        for bench, (scorer, params) in BEFORE.items():
            conn.execute(
                text(
                    "INSERT INTO benchmark (id, name, scorer, description, scorer_params, max_submissions_per_day, "
                    "owner_key_id, current_version, created_at) VALUES (:b, :b, :s, '', :p, 10, NULL, 1, :t)"
                ),
                {"b": bench, "s": scorer, "p": json.dumps(params, sort_keys=True, separators=(",", ":")), "t": NOW},
            )
        before = _params(conn)
    upgrade(db_url)
    with eng.connect() as conn:
        after = {bench: json.loads(value) for bench, value in _params(conn).items()}
        assert _params(conn)["ub"] == json.dumps(after["ub"], sort_keys=True, separators=(",", ":"))
    assert after["ub"] == {**BEFORE["ub"][1], "surface_convention": "medpy", "empty_cases": "exclude"}
    assert after["ub_monai"] == {"hd95": False, "surface_convention": "monai", "empty_cases": "exclude"}
    assert after["grd"] == {**BEFORE["grd"][1], "iou_eps": "reference"}
    assert after["qa_old"] == {"seed": 3, "normalize": "scanqa_clean"}
    assert after["qa_none"] == {"normalize": "none"}
    assert after["rv"] == {"parse_rule": "guarded"}
    load_all()
    for bench, (scorer, _) in BEFORE.items():
        SCORERS[scorer].params_model.model_validate(after[bench])  # every written value is accepted
    with eng.begin() as conn:  # a benchmark created after the upgrade stores every field
        conn.execute(
            text("UPDATE benchmark SET scorer_params = :p WHERE id = 'grd'"),
            {"p": json.dumps({**after["grd"], "iou_eps": "none"}, sort_keys=True, separators=(",", ":"))},
        )
    downgrade(db_url, "0004")
    with eng.connect() as conn:
        back = _params(conn)
    assert back["ub"] == before["ub"] and back["grd"] == before["grd"] and back["rv"] == before["rv"]
    assert json.loads(back["ub_monai"]) == {"hd95": False}
    assert json.loads(back["qa_old"]) == {"seed": 3, "normalize": "scanqa_clean"}
    upgrade(db_url)
    eng.dispose()
