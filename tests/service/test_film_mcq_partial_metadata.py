"""film_mcq breakdowns when only some answer-key items carry a metadata field: those items are tabulated, the
others left out, and a field no item carries gives an empty table (counts by hand)."""

from service.scoring import film_mcq as fm


def _key() -> list[fm.AnswerKeyItem]:
    rows = [  # (narrative_element, release_year)
        ("emotion", 1931),
        ("emotion", None),
        (None, 1938),
        ("setting", 1945),
        (None, None),
        ("setting", None),
    ]
    return [
        fm.AnswerKeyItem(
            item_id=f"q{i}", num_options=4, answer_idx=0, film_id=f"f{i % 2}", narrative_element=n, release_year=y
        )
        for i, (n, y) in enumerate(rows)
    ]


def test_only_the_items_with_a_label_are_tabulated() -> None:
    right = {0, 2, 3, 4}  # q1 and q5 answered wrong
    preds = [fm.PredictionItem(item_id=f"q{i}", choice_idx=0 if i in right else 1) for i in range(6)]
    out = fm.score(_key(), preds, fm.Params())["breakdown"]
    by_element = {k: (v["correct"], v["n"]) for k, v in out["by_narrative_element"].items()}
    assert by_element == {"emotion": (1, 2), "setting": (1, 2)}  # q2 and q4 have none
    by_decade = {k: (v["correct"], v["n"]) for k, v in out["by_decade"].items()}
    assert by_decade == {"1930s": (2, 2), "1940s": (1, 1)}  # q1, q4, q5 have no year
    assert out["by_modality"] == {}
    assert out["overall"]["correct"] == 4 and out["overall"]["n"] == 6
