"""A run search's query parsed without HTTP or a database (``usecases.run_search``): each filter's field, path,
operator and value (values read as JSON by Python's ``json`` module), every refusal with the part of the query
it names, the sort, the owner and time range, and the keyset cursor. Written for the mutation run of
``usecases.run_search``."""

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from db.repositories.runs import JsonFilter, RunSearch, SearchTooSlow
from usecases import cursors, run_search
from usecases.api_keys import Principal
from usecases.errors import InvalidFields, Unauthorized
from usecases.run_search import SearchQuery, parse_filter, plan

KEY = Principal("key-1", "someone", frozenset({"runs"}))


def refused(call: Any, *args: Any) -> dict[str, Any]:
    with pytest.raises(InvalidFields) as err:
        call(*args)
    assert err.value.status == 422
    (error,) = err.value.errors
    return error


# --- parse_filter ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "source", "path", "op", "value"),
    [
        ("param.a.b=3", "params", ("a", "b"), "=", 3),
        ("result.loss<0.1", "result", ("loss",), "<", 0.1),
        ("result.loss<=-2.5e3", "result", ("loss",), "<=", -2500.0),
        ("result.x>1", "result", ("x",), ">", 1),
        ("result.x>=1", "result", ("x",), ">=", 1),
        ("param.x!=null", "params", ("x",), "!=", None),
        ("param.flag=true", "params", ("flag",), "=", True),
        ("param.flag!=false", "params", ("flag",), "!=", False),
        ('param.s="a=b<c"', "params", ("s",), "=", "a=b<c"),
        ('param.s>=""', "params", ("s",), ">=", ""),
        ('tag.lr="3e-4"', "tag", ("lr",), "=", "3e-4"),
        ('tag.a.b-c_1="x"', "tag", ("a.b-c_1",), "=", "x"),
        ('tag.v!="1"', "tag", ("v",), "!=", "1"),
        ("param._A9.b_=0", "params", ("_A9", "b_"), "=", 0),
        ("param.x= 7 ", "params", ("x",), "=", 7),
        ('param.x="line\\nbreak"', "params", ("x",), "=", "line\nbreak"),
    ],
)
def test_a_filter_is_split_into_field_path_operator_and_a_json_value(
    text: str, source: str, path: tuple[str, ...], op: str, value: Any
) -> None:
    got = parse_filter(text, 0)
    assert got == JsonFilter(source, path, op, value)
    assert type(got.value) is type(json.loads(text.split(op, 1)[1]))  # 3 stays an int, 0.1 a float, true a bool


def test_the_first_operator_after_the_path_splits_the_filter() -> None:
    """The path takes the fewest characters: ``<=`` after it is one operator, and the value may hold operators."""
    assert parse_filter("result.a<=1", 0) == JsonFilter("result", ("a",), "<=", 1)
    assert parse_filter('param.a="<="', 0) == JsonFilter("params", ("a",), "=", "<=")
    assert parse_filter("param.a!=2", 0) == JsonFilter("params", ("a",), "!=", 2)
    assert parse_filter("param.a>=2", 0).op == ">="


def test_a_filter_multiline_value_is_read_whole() -> None:
    assert parse_filter('param.a="x"\n', 0).value == "x"
    assert parse_filter("param.a=\n1", 0).value == 1


@pytest.mark.parametrize(
    "text",
    [
        "",
        "params.a=1",  # the field is param, not params
        "param=1",
        "param.=1",
        "param.a",  # no operator
        "param.a==1",  # "=" then "=1", not JSON
        "other.a=1",
        "param.a b=1",
        "param." + "a" * 257 + "=1",
        "Param.a=1",
    ],
)
def test_a_filter_that_is_not_field_op_value_is_refused(text: str) -> None:
    error = refused(parse_filter, text, 3)
    assert error["loc"] == ["query", "filter", "3"] and error["type"] == "value_error"


def test_a_filter_of_at_most_1024_characters() -> None:
    longest = 'param.a="' + "x" * (1024 - 10) + '"'
    assert len(longest) == 1024
    assert parse_filter(longest, 0).value == "x" * 1014
    error = refused(parse_filter, longest[:-1] + 'x"', 1)
    assert error["loc"] == ["query", "filter", "1"] and error["type"] == "string_too_long"


@pytest.mark.parametrize(
    "path",
    [
        "1a",  # a name starts with a letter or _
        "a..b",
        "a.",
        ".a",
        "a-b",  # "-" only in tag keys
        "a" * 65,
        ".".join("abcdefghi"),  # 9 names
    ],
)
def test_a_param_or_result_path_is_up_to_8_names(path: str) -> None:
    for field in ("param", "result"):
        error = refused(parse_filter, f"{field}.{path}=1", 2)
        assert error["loc"] == ["query", "filter", "2"] and error["type"] == "value_error"


def test_the_longest_paths_are_taken() -> None:
    assert parse_filter("param." + "a" * 64 + "=1", 0).path == ("a" * 64,)
    eight = tuple("abcdefgh")
    assert parse_filter("result." + ".".join(eight) + "=1", 0).path == eight


@pytest.mark.parametrize("key", ["a" * 65, "a b", "a/b", "é"])
def test_a_tag_key_is_1_to_64_characters(key: str) -> None:
    error = refused(parse_filter, f'tag.{key}="x"', 0)
    assert error["loc"] == ["query", "filter", "0"] and error["type"] == "value_error"


def test_the_longest_tag_key_is_taken() -> None:
    assert parse_filter("tag." + "k" * 64 + '="x"', 0).path == ("k" * 64,)
    assert parse_filter('tag.1.2="x"', 0).path == ("1.2",)  # a tag key is no path


@pytest.mark.parametrize(
    "text",
    [
        "param.a=abc",  # a string must be quoted
        "param.a=[1]",
        'param.a={"b": 1}',
        "param.a=NaN",
        "param.a=Infinity",
        "param.a=-Infinity",
        "param.a=1e999",  # json reads inf
        "param.a=",
        f"param.a={2**53 + 1}",
        f"param.a={-(2**53) - 1}",
        "param.a<null",
        "param.a>true",
        "param.a<=false",
        "param.a>=null",
        "tag.a=1",
        "tag.a=true",
        "tag.a=null",
    ],
)
def test_a_value_that_is_not_a_comparable_json_scalar_is_refused(text: str) -> None:
    error = refused(parse_filter, text, 5)
    assert error["loc"] == ["query", "filter", "5"] and error["type"] == "value_error"


def test_integers_up_to_2_to_the_53_are_taken() -> None:
    assert parse_filter(f"param.a={2**53}", 0).value == 2**53
    assert parse_filter(f"param.a={-(2**53)}", 0).value == -(2**53)
    assert parse_filter(f"param.a={float(2**60)}", 0).value == 2.0**60  # a float is not bounded
    assert parse_filter("param.a=true", 0).value is True  # a bool is no integer here


# --- plan -----------------------------------------------------------------------------------------------------


def test_a_default_query_plans_every_visible_run_newest_first() -> None:
    assert plan(SearchQuery(), None, None) == RunSearch(
        kind=None,
        name=None,
        filters=(),
        caller=None,
        created_from=None,
        created_to=None,
        sort_path=None,
        descending=True,
        after=None,
    )


def test_a_full_query_is_planned() -> None:
    start, end = datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 2, 1, tzinfo=timezone(timedelta(hours=2)))
    query = SearchQuery(
        kind="estimator",
        name="compression.nml_regret",
        filters=("param.n>=3", 'tag.x="y"'),
        sort="result.log_c.value",
        order="asc",
        created_from=start,
        created_to=end,
        owner="me",
    )
    got = plan(query, KEY, cursors.encode([1.5, 7]))
    assert got == RunSearch(
        kind="estimator",
        name="compression.nml_regret",
        filters=(JsonFilter("params", ("n",), ">=", 3), JsonFilter("tag", ("x",), "=", "y")),
        caller="key-1",
        created_from=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        created_to=end,
        sort_path=("log_c", "value"),
        descending=False,
        after=(1.5, 7),
    )
    assert got.created_from is not None and got.created_from.tzinfo is UTC
    assert got.created_to is not None and got.created_to.utcoffset() == timedelta(hours=2)


def test_at_most_8_filters() -> None:
    eight = tuple(f"param.a{i}={i}" for i in range(8))
    assert len(plan(SearchQuery(name="n", filters=eight), None, None).filters) == 8
    error = refused(plan, SearchQuery(name="n", filters=(*eight, "param.b=1")), None, None)
    assert error["loc"] == ["query", "filter"] and error["type"] == "too_long"


def test_each_filter_is_located_by_its_index() -> None:
    error = refused(plan, SearchQuery(name="n", filters=("param.a=1", "param.b=1", "bad")), None, None)
    assert error["loc"] == ["query", "filter", "2"]


@pytest.mark.parametrize("sort", ["result", "result.", "param.a", "created", "results.a", "result.a..b", "-a"])
def test_sort_is_created_at_or_a_result_path(sort: str) -> None:
    error = refused(plan, SearchQuery(name="n", sort=sort), None, None)
    assert error["loc"] == ["query", "sort"] and error["type"] == "value_error"


def test_a_param_or_result_filter_or_a_result_sort_needs_a_name() -> None:
    for query in (
        SearchQuery(filters=("param.a=1",)),
        SearchQuery(filters=('tag.a="1"', "result.b=1")),
        SearchQuery(sort="result.a"),
    ):
        error = refused(plan, query, KEY, None)
        assert error["loc"] == ["query", "name"] and error["type"] == "missing", query
    tags_only = plan(SearchQuery(filters=('tag.a="1"',)), KEY, None)
    assert tags_only.filters == (JsonFilter("tag", ("a",), "=", "1"),) and tags_only.name is None
    assert plan(SearchQuery(kind="scorer"), None, None).kind == "scorer"


def test_tags_and_owner_me_need_a_key() -> None:
    for query in (SearchQuery(owner="me"), SearchQuery(filters=('tag.a="1"',))):
        with pytest.raises(Unauthorized):
            plan(query, None, None)
        assert plan(query, KEY, None).caller == "key-1"
    assert plan(SearchQuery(owner="anonymous"), None, None).caller is None
    assert plan(SearchQuery(name="n", filters=("param.a=1",)), None, None).caller is None


def test_the_time_range_must_be_increasing() -> None:
    t = datetime(2026, 5, 1, 12, tzinfo=UTC)
    for start, end in [(t, t), (t + timedelta(microseconds=1), t), (t.replace(tzinfo=None), t)]:
        error = refused(plan, SearchQuery(created_from=start, created_to=end), None, None)
        assert error["loc"] == ["query", "created_from"] and error["type"] == "value_error"
    ok = plan(SearchQuery(created_from=t, created_to=t + timedelta(microseconds=1)), None, None)
    assert (ok.created_from, ok.created_to) == (t, t + timedelta(microseconds=1))
    # without an offset a time is UTC: 12:00 UTC is after 13:00+02:00 (11:00 UTC)
    east = datetime(2026, 5, 1, 13, tzinfo=timezone(timedelta(hours=2)))
    refused(plan, SearchQuery(created_from=datetime(2026, 5, 1, 12), created_to=east), None, None)
    ok = plan(SearchQuery(created_from=east, created_to=datetime(2026, 5, 1, 12)), None, None)
    assert ok.created_to == t
    # one end alone
    assert plan(SearchQuery(created_from=t), None, None).created_from == t
    assert plan(SearchQuery(created_to=datetime(2026, 5, 1, 12)), None, None).created_to == t


# --- the cursor -------------------------------------------------------------------------------------------------


def test_a_creation_cursor_is_a_sequence_number() -> None:
    for seq in (0, 1, 41):
        assert plan(SearchQuery(), None, cursors.encode(seq)).after == (None, seq)
    for bad in (cursors.encode(-1), cursors.encode("3"), cursors.encode([1.0, 2]), "%%"):
        error = refused(plan, SearchQuery(), None, bad)
        assert error["loc"] == ["query", "cursor"]


def test_a_result_cursor_is_a_value_and_a_sequence_number() -> None:
    query = SearchQuery(name="n", sort="result.x")
    assert plan(query, None, cursors.encode([2, 5])).after == (2.0, 5)
    assert isinstance(plan(query, None, cursors.encode([2, 5])).after[0], float)  # type: ignore[index]
    assert plan(query, None, cursors.encode([-0.25, 0])).after == (-0.25, 0)
    for bad in ([1.0], [1.0, 2, 3], [True, 2], [1.0, False], ["1", 2], [1.0, 2.0], [None, 2], {"a": 1}, 3):
        error = refused(plan, query, None, cursors.encode(bad))
        assert error["loc"] == ["query", "cursor"] and error["type"] == "value_error", bad


# --- the bounds' errors -----------------------------------------------------------------------------------------


def test_the_bounds_errors_name_the_query() -> None:
    rows = run_search.too_many_rows()
    assert rows.status == 422 and rows.errors == [{"loc": ["query"], "msg": rows.detail, "type": "too_many_rows"}]
    assert "100000 runs" in rows.detail
    slow = run_search.too_slow(SearchTooSlow("interrupted after 2 s"))
    assert slow.status == 422
    assert slow.errors == [{"loc": ["query"], "msg": "interrupted after 2 s", "type": "too_slow"}]
    assert "longer than 2 s" in slow.detail
