"""The seeded O+ faults apply to a user-defined operator as to the catalogue's.

spark_impl/faults.py: ``window-off-by-one`` (window instances include their right boundary) and
``drop-near-watermark`` (a tuple at exactly the previous watermark is dropped as late) are bugs
switched on in the O+ front end's code path, "catalogue and user-defined operators alike", so
``streamproof conformance --operator --inject-fault`` can show its check has teeth. Off, the
user path keeps O+'s meaning (spark_impl/oplus/user_operator.py).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from spec.oplus.scenario import instance_of
from spark_impl.oplus.instance import ScenarioRound, process
from spark_impl.oplus.operators import OperatorConfig
from spark_impl.oplus.user_operator import UserOperator, process_key
from support.oplus_conformance_operators import KEY_SUM
from spark_impl.oplus.streaming_jobs import oplus_job
from spec.oplus.model import OPlus, StreamTuple, WindowSet, WindowType
from spec.oplus.windows import WindowSpec


def _windows(off_by_one: bool) -> dict[int, Any]:
    emitted: list[tuple[int, Any, Any]] = []
    # one tuple at ts 6 of key "a", value 5; WA 2, WS 6: instances [2, 8), [4, 10), [6, 12) hold it
    process_key(KEY_SUM, "a", None, [(6, 0, 0, ("a", 5), 0)], float("inf"), emitted, off_by_one)
    return {ts - 6: value for ts, _, value in emitted}


def test_a_user_operators_windows_end_before_their_right_boundary() -> None:
    assert sorted(_windows(False)) == [2, 4, 6]


def test_window_off_by_one_puts_a_tuple_at_the_right_boundary_in_the_window_too() -> None:
    assert sorted(_windows(True)) == [0, 2, 4, 6]  # [0, 6) takes the tuple at 6: the seeded bug


def _user() -> UserOperator:
    return UserOperator("key-sum", 2, 6, False, 1, (("key", "value"),), target=None, shipped=None)


def _round(drop: bool) -> list[Any]:
    user = _user()
    object.__setattr__(user, "operator", lambda: KEY_SUM)  # the operator without shipping it
    plan = ScenarioRound(OperatorConfig("user:key-sum", 2, 6, False, typed_keys=True), 1, previous=6,
                         watermark=float("inf"), drop_near_watermark=drop, route=instance_of, user=user)
    items: list[tuple[int, tuple[int, int, int, Mapping[str, Any]]]] = [
        (0, (6, 0, 0, {"key": "a", "value": 5})), (0, (7, 0, 1, {"key": "a", "value": 1}))]
    _, outputs = process(0, {}, items, {0: plan})
    return sorted(value for _, _, _, value in outputs)


def test_a_tuple_at_the_previous_watermark_is_kept_for_a_user_operator() -> None:
    # ts 6 (value 5) and ts 7 (value 1) both fall in [2, 8), [4, 10), [6, 12)
    assert _round(False) == [("a", 6)] * 3


def test_drop_near_watermark_drops_it_for_a_user_operator_too() -> None:
    assert _round(True) == [("a", 1)] * 3  # the tuple at ts 6 == the previous watermark is gone


def test_the_user_config_carries_the_window_fault() -> None:
    job = oplus_job(KEY_SUM, fields=("key", "value"))
    assert job.config(True).off_by_one and not job.config(False).off_by_one
    assert replace(job.config(True), off_by_one=False) == job.config(False)



def _chain_outputs(off_by_one: bool) -> list[tuple[int, Any]]:
    def update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return (ws.states[0] + (t.ts,),), ()

    def output(ws: WindowSet) -> tuple[Any, ...]:  # trusts the front end: every tuple it was given
        return ((ws.key, len(ws.states[0])),)

    def slide(ws: WindowSet, new_left: int) -> tuple[Any, ...]:
        return (tuple(ts for ts in ws.states[0] if ts >= new_left),)

    count = OPlus(name="count", windows=WindowSpec(3, 6), inputs=1, keys=lambda t: frozenset({t.payload[0]}),
                  window_type=WindowType.SINGLE, update=update, output=output, slide=slide)
    emitted: list[tuple[int, Any, Any]] = []
    # ts 1 opens the chain at [-3, 3); ts 6 is at the right boundary of [0, 6)
    process_key(count, "a", None, [(1, 0, 0, ("a", 5), 0), (6, 0, 1, ("a", 7), 0)], float("inf"), emitted,
                off_by_one)
    return sorted((ts, value) for ts, _, value in emitted)


def test_a_single_type_chain_hands_a_tuple_only_to_instances_that_contain_it() -> None:
    assert (6, ("a", 2)) not in _chain_outputs(False)  # [0, 6) never sees the tuple at 6


def test_window_off_by_one_hands_it_to_the_instance_ending_at_it_in_a_single_type_chain() -> None:
    assert (6, ("a", 2)) in _chain_outputs(True)
