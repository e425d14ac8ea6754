"""``--fields NAME[:TYPE[?]],...`` of ``streamproof conformance --operator`` (docs/cli.md;
conformance/oplus/user_cases.py): the types ``str``, ``int``, ``float``, ``bool``, each nullable
with ``?``; every drawn value reaches the user's operator in the Python form the live front
end gives its Spark type (StringType ``str``, LongType ``int``, DoubleType ``float``,
BooleanType ``bool``, a null ``None``: docs/production/types.md), on the reference and
through the live run; a bad type is one stderr line naming the field, exit 2."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from streamproof.main import main

from conformance.oplus import user_cases
from conformance.oplus.user_suite import LIVE, fields_text, load_under, run_operator_suite
from support.oplus_conformance_operators import TYPED_FIELDS
from support.paths import TESTS

TYPED = f"{TESTS / 'support' / 'oplus_conformance_operators.py'}:TYPED"


def test_fields_take_float_bool_and_a_nullable_variant_of_every_type() -> None:
    fields = user_cases.parse_fields("key,price:float,ok:bool,count:int?,label:str?,x:float?,y:bool?")
    assert [(f.name, f.base, f.nullable, f.spark_type) for f in fields] == [
        ("key", "str", False, "string"), ("price", "float", False, "double"), ("ok", "bool", False, "boolean"),
        ("count", "int", True, "long"), ("label", "str", True, "string"), ("x", "float", True, "double"),
        ("y", "bool", True, "boolean")]
    assert user_cases.parse_fields("key:str,value:int") == user_cases.parse_fields("key,value")  # still valid
    # a saved case records its fields as text (user_suite.fields_text) and --replay parses them back
    assert user_cases.parse_fields(fields_text(fields)) == fields


def test_drawn_values_are_of_each_fields_documented_type_and_nullable_fields_get_none() -> None:
    under = load_under(TYPED, TYPED_FIELDS)
    seen: dict[str, set[type]] = {f.name: set() for f in under.fields}
    for seed in range(60):
        for items in user_cases.build(random.Random(seed), under.op, under.fields)["inputs"]:
            for item in items:
                for name in seen:
                    seen[name].add(type(item[name]))
    assert seen == {"key": {str}, "price": {float}, "ok": {bool}, "count": {int, type(None)},
                    "label": {str, type(None)}}


def test_a_float_fields_integer_in_a_saved_case_reaches_the_operator_as_a_float() -> None:
    """A hand-written case's ``3`` in a double column is read by Spark as ``3.0``."""
    price = user_cases.Field("price", "float")
    assert type(user_cases.documented(price, 3)) is float
    assert user_cases.documented(user_cases.Field("ok", "bool"), True) is True
    assert user_cases.documented(user_cases.Field("n", "int?"), None) is None


def test_every_field_type_reaches_the_operator_as_documented_on_the_reference(tmp_path: Path, capsys: Any) -> None:
    """The operator raises TypeError on a field not in its documented type: a pass is the proof."""
    code = main(["conformance", "--operator", TYPED, "--fields", TYPED_FIELDS, "--engine", "reference",
                 "--cases", "40", "--json", "--save-dir", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    assert out["fields"] == TYPED_FIELDS and out["suites"][0]["checks"][0]["cases"] == 40


@pytest.mark.parametrize("fields, named", [
    ("key:str,price:decimal", "'price'"), ("key,ok:boolean", "'ok'"), ("key,n:int??", "'n'"), ("key,n:?", "'n'"),
])
def test_a_bad_field_type_is_one_line_naming_the_field_exit_2(fields: str, named: str, capsys: Any) -> None:
    assert main(["conformance", "--operator", TYPED, "--fields", fields, "--engine", "reference"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--fields" in err and named in err, err


@pytest.mark.slow
def test_every_field_type_reaches_the_operator_as_documented_through_the_live_run(spark: Any, tmp_path: Path) -> None:
    """Through the live front end (JSON files, Spark's double/boolean/nullable columns, the
    workers): the operator refuses a wrong type, and its outputs (sums of prices, counts of
    ``ok`` and of nulls) must equal the sequential reference's."""
    result = run_operator_suite(load_under(TYPED, TYPED_FIELDS), cases=4, seed=1, spark_check=True,
                                save_dir=str(tmp_path), shrink_budget=10, spark=spark)
    live = next(c for c in result.checks if c.name == LIVE)
    assert live.status == "ran" and live.cases == 4 and result.failed == 0, [f.explanation for f in result.failures]
