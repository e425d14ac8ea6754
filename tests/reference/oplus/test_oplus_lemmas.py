"""STRETCH Lemma 2 (each instance emits in timestamp order), Lemma 3 (the triggering
tuple's timestamp bounds what newly provisioned instances emit) and Theorem 3's exclusive key
ownership, on random runs; plus the counterexamples that fix the preconditions we state."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import assume, given, settings, strategies as st

from spec.oplus.instances import join_plus
from spec.oplus.model import StreamTuple, WindowType, lemma2_applies
from spec.oplus.windows import WindowSpec
from reference.oplus.executors import RunResult, run_sequential
from reference.oplus.sn import run_sn
from reference.oplus.operators.sliding_sum import sliding_sum
from reference.oplus.tuple_buffer import UnsortedSource
from reference.oplus.vsn import Request, run_vsn

from support.oplus_gen import Case, cases, mapping_factories, requests


def _in_order(result: RunResult) -> list[str]:
    problems = []
    for ident, outputs in result.per_instance.items():
        stamps = [o.ts for _, o in outputs]
        for before, after in zip(stamps, stamps[1:]):
            if after < before:
                problems.append(f"instance {ident} emitted ts {after} after ts {before}")
    return problems


@settings(max_examples=120)
@given(cases(), st.integers(1, 4), mapping_factories(), requests(), st.integers(0, 2**16))
def test_lemma2_each_instance_emits_in_timestamp_order(case: Case, parallelism: int, factory: Any,
                                                      points: Any, seed: int) -> None:
    assume(lemma2_applies(case.op))
    rng = random.Random(seed)
    runs = [run_sequential(case.op, case.sources),
            run_sn(case.op, case.sources, parallelism, factory(0, parallelism), rng),
            run_vsn(case.op, case.sources, parallelism, factory,
                    [Request(m, s) for m, s in points], rng)]
    for result in runs:
        assert _in_order(result) == []


def test_lemma2_needs_single_windows_or_no_update_outputs() -> None:
    """The counterexample behind :func:`lemma2_applies`: a sliding J+ (WT = multi) whose f_U
    emits matches and f_O emits at expiry. l at 5 and r at 6 share [0, 10) and [5, 15): f_U
    emits at 10 and 15; r2 at 12 then expires [0, 10) and f_O emits at 10 < 15."""
    base = join_plus("j", WindowSpec(5, 10), lambda t: frozenset({0}),
                     lambda k, a, b: (a.ts, b.ts))
    op = dataclasses.replace(base, output=lambda ws: ("expired",) if ws.states[0] else ())
    assert not lemma2_applies(op)
    result = run_sequential(op, ((StreamTuple(5, 0, 0, "l", input=0),),
                                 (StreamTuple(6, 1, 0, "r", input=1),
                                  StreamTuple(12, 1, 1, "r2", input=1))))
    assert [o.ts for _, o in result.per_instance[0]][:3] == [10, 15, 10]
    assert _in_order(result) != []


@settings(max_examples=100)
@given(cases(max_len=9), st.integers(1, 3), mapping_factories(), requests(), st.integers(0, 2**16))
def test_lemma3_new_instances_emit_at_or_after_the_trigger(case: Case, parallelism: int,
                                                           factory: Any, points: Any,
                                                           seed: int) -> None:
    result = run_vsn(case.op, case.sources, parallelism, factory,
                     [Request(m, s) for m, s in points], random.Random(seed))
    for event in result.reconfigurations:
        for ident in event.after - event.before:
            for step, output in result.per_instance.get(ident, []):
                if step >= event.step:
                    assert output.ts >= event.trigger_ts, (
                        f"instance {ident} provisioned at ts {event.trigger_ts} emitted "
                        f"{output}")
        # every instance: nothing emitted after the switch is at or before W-bar
        for ident, outputs in result.per_instance.items():
            for step, output in outputs:
                if step > event.step and lemma2_applies(case.op):
                    assert output.ts > event.w_bar


def _gap_case() -> tuple[Any, Any]:
    op = sliding_sum(WindowSpec(10, 10), WindowType.MULTI)
    source = (StreamTuple(1, 0, 0, ("a", 1)), StreamTuple(3, 0, 1, ("b", 1)),
              StreamTuple(25, 0, 2, ("a", 1)))
    return op, (source,)


def _gap_mapping(epoch: int, parallelism: int) -> Any:
    return lambda key: 1 if (parallelism == 2 and key == "a") else 0


def test_lemma3_counterexample_for_alg4_as_printed() -> None:
    """Alg. 4 expires after the barrier with the new mapping: key a moves to the new
    instance 1 at t.ts = 25 (W-bar = 3) and instance 1 emits [0, 10) at ts 10 < 25."""
    op, sources = _gap_case()
    with pytest.raises(UnsortedSource):
        run_vsn(op, sources, 1, _gap_mapping, [Request(2, 2)], expire_before_barrier=False)
    fixed = run_vsn(op, sources, 1, _gap_mapping, [Request(2, 2)])
    assert [(e.trigger_ts, e.w_bar) for e in fixed.reconfigurations] == [(25, 3)]
    assert sorted((o.ts, o.payload) for o in fixed.outputs) == [
        (10, ("a", 1)), (10, ("b", 1)), (30, ("a", 1))]


@settings(max_examples=100)
@given(cases(max_len=9), st.integers(1, 4), mapping_factories(), requests(), st.integers(0, 2**16))
def test_theorem3_one_writer_per_key_at_a_time(case: Case, parallelism: int, factory: Any,
                                               points: Any, seed: int) -> None:
    result = run_vsn(case.op, case.sources, parallelism, factory,
                     [Request(m, s) for m, s in points], random.Random(seed), audit=True)
    last: dict[Any, tuple[int, int]] = {}
    for write in result.writes:
        if write.key in last:
            epoch, writer = last[write.key]
            assert write.epoch >= epoch, f"key {write.key!r} written back in epoch {write.epoch}"
            if write.epoch == epoch:
                assert write.writer == writer, f"key {write.key!r} written by two instances"
        last[write.key] = (write.epoch, write.writer)
