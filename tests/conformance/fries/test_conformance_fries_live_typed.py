"""The live Fries engine is fed nested keys and values of mixed types through the front end's
encoding (conformance/fries/engines/typed.py; docs/conformance.md, "The live path", mode
``live-typed``; docs/production/types.md: structs and arrays reach user functions as tuples,
maps as sorted pairs, decimals as Decimal, timestamps UTC-aware, nulls as None, and every such
value can be a key).

The encoded keys route like the scenario's integers (so placement and schedules are judged
unchanged), ``None`` keys sit beside tuple keys, a value that is not exactly the documented
form (a list for a tuple, a float for a Decimal, a naive timestamp) is refused by the
operators, and on Spark a correct run passes while a seeded fault is still caught.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

import spark_impl.keys as spark_keys
from spark_impl.values import from_json, to_json

from conformance.fries.engines import typed
from conformance.fries.suite import judge_batch, streaming_cases
from conformance.fries.engines.live import StreamingEngine


def test_encoded_keys_route_like_the_integers_they_stand_for() -> None:
    for k in range(-3, 70):
        key = typed.encode_key(k)
        assert typed.decode_key(key) == k
        assert all(spark_keys.route(key, p) == k % p for p in range(1, 6))
    assert typed.encode_key(typed.NONE_RESIDUE) is None
    assert isinstance(typed.encode_key(1), tuple) and typed.encode_key(1)[0] is None  # a null inside a key


def test_the_documented_forms_survive_the_input_log_exactly() -> None:
    for v in range(-4, 12):
        value, key = typed.encode_value(v), typed.encode_key(v)
        assert typed.same(from_json(to_json(value)), value) and typed.same(from_json(to_json(key)), key)
        assert typed.decode_value(value) == v


@pytest.mark.parametrize("broken", [
    lambda v: list(v),                                                       # a struct as a list
    lambda v: (v[0], float(v[1]), *v[2:]),                                   # a Decimal as a float
    lambda v: (*v[:2], v[2].replace(tzinfo=None), *v[3:]),                   # a naive timestamp
    lambda v: (*v[:4], list(v[4]), *v[5:]),                                  # an array as a list
    lambda v: (*v[:5], dict(v[5]), v[6]),                                    # a map as a dict
])
def test_an_operator_refuses_a_value_that_is_not_the_documented_form(broken: Any) -> None:
    logic = typed.TypedLogic(inner=None)
    with pytest.raises(TypeError, match="reached the operator"):
        logic.process(None, typed.encode_key(2), broken(typed.encode_value(3)))
    with pytest.raises(TypeError, match="reached the operator"):
        typed.decode_key([None, 1, 0])


def test_the_typed_section_takes_crash_cases_first_and_keeps_the_case_count() -> None:
    drawn = streaming_cases(12, 0)
    chosen, rest = typed.typed_section(drawn)
    assert len(chosen) == typed.TYPED and len(chosen) + len(rest) == len(drawn)
    assert all(c.timing.restarts for c in chosen) or all(not r.timing.restarts for r in rest)
    keys = {t.key for c in chosen for tuples in c.sources.values() for t in tuples}
    assert 0 not in keys and typed.NONE_RESIDUE in keys  # key 0 renamed: None beside tuples


def _typed_cases(count: int) -> list[Any]:
    chosen, _ = typed.typed_section(streaming_cases(12, 0))
    return chosen[:count]


@pytest.mark.slow
def test_nested_mixed_type_values_run_live_equal_to_the_reference(spark: Any) -> None:
    engine = StreamingEngine("fries", frozenset(), spark=spark, mode="live-typed")
    judged = judge_batch(engine, _typed_cases(2))
    assert [j.ok for _, j, _ in judged] == [True, True], [j.failed_oracles for _, j, _ in judged]


@pytest.mark.slow
def test_a_seeded_fault_is_caught_on_nested_mixed_type_values(spark: Any) -> None:
    engine = StreamingEngine("fries", frozenset({"double-transform"}), spark=spark, mode="live-typed")
    judged = judge_batch(engine, _typed_cases(4))
    assert any(not j.ok for _, j, _ in judged)
    assert all("engine" not in j.failed_oracles for _, j, _ in judged)


def test_a_utc_timestamp_is_a_documented_form_and_another_zone_is_not() -> None:
    value = typed.encode_value(2)
    other = value[2].astimezone(dt.timezone(dt.timedelta(hours=2)))
    assert not typed.same((*value[:2], other, *value[3:]), value)
    assert typed.same(replace_at(value, 2, value[2]), value)


def replace_at(value: tuple[Any, ...], index: int, part: Any) -> tuple[Any, ...]:
    return (*value[:index], part, *value[index + 1:])
