"""``GET /v1/scorers/{name}`` lists each scorer's conventions: params where reference implementations disagree."""

from typing import Any

from service.registry import SCORERS
from service.scoring.raven_parse import VLMEVALKIT_COMMIT


def test_raven_names_the_vlmevalkit_commit_followed(client: Any) -> None:
    (conv,) = client.get("/v1/scorers/raven").json()["conventions"]
    assert conv["param"] == "parse_rule" and conv["default"] == "raven"
    by_value = {o["value"]: o["upstreams"] for o in conv["options"]}
    assert set(by_value) == {"raven", "vlmevalkit", "vlmevalkit_verbose", "guarded"}
    assert by_value["vlmevalkit"] == [
        {"name": "VLMEvalKit can_infer (open-compass/VLMEvalKit)", "version": VLMEVALKIT_COMMIT}
    ]
    assert by_value["guarded"] == by_value["vlmevalkit_verbose"] == by_value["vlmevalkit"]


def test_every_scorer_lists_its_conventions_with_defaults_among_the_options(client: Any) -> None:
    for name, spec in SCORERS.items():
        convs = client.get(f"/v1/scorers/{name}").json()["conventions"]
        assert [c["param"] for c in convs] == [c.param for c in spec.conventions], name
        for conv in convs:
            assert conv["default"] in {o["value"] for o in conv["options"]}
            assert spec.params_model.model_fields[conv["param"]].default == conv["default"], (name, conv["param"])
    ubench = client.get("/v1/scorers/ubench").json()["conventions"]
    assert {c["param"]: c["default"] for c in ubench} == {"surface_convention": "medpy", "empty_cases": "exclude"}
    monai = next(o for o in ubench[0]["options"] if o["value"] == "monai")
    assert monai["upstreams"] == [{"name": "MONAI", "version": "1.5.0"}]
    assert client.get("/v1/scorers/zbb").json()["conventions"] == []
