"""``oplus_job`` with a user-defined O+ (spark_impl.oplus.streaming_jobs.oplus_job and
spark_impl.oplus.user_operator; docs/production/oplus.md "Your own operators"): what it
accepts, what it refuses (one InputError naming the argument or file), and the payload and
input a stream row becomes."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from spec.errors import InputError
from spec.oplus.model import OPlus, StreamTuple, WindowType
from spec.oplus.windows import WindowSpec
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.user_operator import UserOperator, load_operator
from support.paths import TESTS

OPERATORS = os.path.join(str(TESTS), "support", "oplus_user_operators.py")


def _pair_op(inputs: int = 1) -> OPlus:
    return OPlus(name="pairs", windows=WindowSpec(2, 4), inputs=inputs, keys=lambda t: frozenset({t.payload[0]}),
                 window_type=WindowType.SINGLE)


def test_a_file_target_and_an_object_give_a_job_with_the_operators_windows() -> None:
    by_file = oplus_job(f"{OPERATORS}:DISTINCT", parallelism=3, fields=("key", "value"))
    assert by_file.user is not None and by_file.scenario is None
    assert (by_file.parallelism, by_file.sources, by_file.user.wa, by_file.user.ws, by_file.user.single) == (3, 1, 2, 6, True)
    assert by_file.required_fields(0) == ("key", "value") and by_file.config().name == "user:distinct"
    by_object = oplus_job(_pair_op(), fields=("key", "value"))
    assert by_object.user is not None and by_object.user.shipped and by_object.user.target is None
    assert by_object.user.operator().name == "pairs"  # unpickled from the shipped bytes


def test_the_payload_is_the_fields_value_or_tuple_and_input_is_the_source_for_several_inputs() -> None:
    one = UserOperator("x", 1, 1, False, 1, (("value",),))
    assert one.stream_tuple(5, 0, 2, {"value": 7, "key": "a"}) == StreamTuple(5, 0, 2, 7, 0)
    two = UserOperator("x", 1, 1, False, 2, (("key", "value"), ("k", "w")))
    assert two.stream_tuple(5, 1, 0, {"k": "a", "w": 3}) == StreamTuple(5, 1, 0, ("a", 3), 1)
    assert oplus_job(_pair_op(2), fields=[("key", "value"), ("k", "w")]).sources == 2


@pytest.mark.parametrize("call, where", [
    (lambda: oplus_job(f"{OPERATORS}:NOPE", fields=("key",)), "oplus_user_operators.py:NOPE"),
    (lambda: oplus_job("/no/such/file.py:OP", fields=("key",)), "/no/such/file.py"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX"), "fields"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX", fields=("key", "ts")), "fields"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX", fields="key"), "fields"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX", 5, fields=("key",)), "WA"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX", WT="single", fields=("key",)), "WT"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX", params={"keys": 2}, fields=("key",)), "params"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX", parallelism=0, fields=("key",)), "parallelism"),
    (lambda: oplus_job(_pair_op(2), sources=1, fields=("key",)), "sources"),
    (lambda: oplus_job(_pair_op(2), fields=[("key",), ("a",), ("b",)]), "fields"),
    (lambda: oplus_job("sliding-sum", 5, 10, fields=("key",)), "fields"),
    (lambda: oplus_job(f"{OPERATORS}:KEY_MAX", fields=[("key",), 3]), "fields"),
    (lambda: oplus_job("sliding-sum", 5), "WS"),
])
def test_a_bad_user_job_is_refused_naming_the_argument(call: Any, where: str) -> None:
    with pytest.raises(InputError) as caught:
        call()
    assert where in str(caught.value), caught.value


def test_an_operator_that_cannot_be_shipped_is_refused_with_the_way_out() -> None:
    lock = threading.Lock()
    op = OPlus(name="locked", windows=WindowSpec(1, 1), inputs=1, keys=lambda t: frozenset({lock}),
               window_type=WindowType.MULTI)
    with pytest.raises(InputError, match="cannot be shipped to the workers .*give it as 'file.py:NAME'"):
        oplus_job(op, fields=("key",))


def test_a_file_whose_name_is_not_an_oplus_is_refused(tmp_path: Any) -> None:
    path = tmp_path / "ops.py"
    path.write_text("OP = 3\nBAD = 1 / 0 if False else None\n", encoding="utf-8")
    with pytest.raises(InputError, match="'OP' is int, expected a spec.oplus.model.OPlus"):
        load_operator(f"{path}:OP")
    broken = tmp_path / "broken.py"
    broken.write_text("raise ValueError('boom')\n", encoding="utf-8")
    with pytest.raises(InputError, match="cannot load: ValueError: boom"):
        load_operator(f"{broken}:OP")


def test_a_relative_target_is_made_absolute_for_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's working directory may differ from the driver's: the job keeps the absolute path."""
    monkeypatch.chdir(os.path.dirname(OPERATORS))
    job = oplus_job("oplus_user_operators.py:FIRST", fields=("key", "value"))
    assert job.user is not None and job.user.target == f"{OPERATORS}:FIRST"
