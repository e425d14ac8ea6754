"""Def. 1 (``spec.oplus.semantics.is_correct``): an execution is correct iff its outputs are,
as a multiset, the expected outputs of the operator on its input; ``payloads_at`` reads the
payloads of one output timestamp. Checked on an aggregate's outputs, a reordering of them, and
hand-built wrong ones (a missing, a duplicated and a changed output)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, strategies as st

from spec.oplus.instances import aggregate
from spec.oplus.model import OutputTuple, StreamTuple
from spec.oplus.semantics import expected_outputs, is_correct, payloads_at
from spec.oplus.windows import WindowSpec

SUM = aggregate("sum", WindowSpec(2, 4), lambda t: t.payload[0], lambda key, ts: ((key, sum(t.payload[1] for t in ts)),))


@given(st.lists(st.tuples(st.integers(0, 12), st.sampled_from("ab"), st.integers(1, 9)), min_size=1, max_size=8),
       st.randoms())
def test_an_execution_is_correct_iff_its_outputs_are_the_expected_multiset(
        rows: list[tuple[int, str, int]], rnd: random.Random) -> None:
    tuples = [StreamTuple(ts, 0, seq, (key, value)) for seq, (ts, key, value) in enumerate(sorted(rows))]
    expected = list(expected_outputs(SUM, tuples).elements())
    shuffled = list(expected)
    rnd.shuffle(shuffled)
    assert expected and is_correct(SUM, tuples, shuffled)
    assert not is_correct(SUM, tuples, shuffled[1:])
    assert not is_correct(SUM, tuples, shuffled + shuffled[:1])
    first = shuffled[0]
    changed = OutputTuple(first.ts, (first.payload[0], first.payload[1] + 1))
    assert not is_correct(SUM, tuples, [changed] + shuffled[1:])


def test_payloads_at_reads_one_timestamps_payloads() -> None:
    tuples = [StreamTuple(0, 0, 0, ("a", 1)), StreamTuple(1, 0, 1, ("b", 2)), StreamTuple(3, 0, 2, ("a", 4))]
    outputs = list(expected_outputs(SUM, tuples).elements())
    # windows [0, 4) and [2, 6): the first holds all three tuples, the second only ts 3
    assert Counter(payloads_at(outputs, 4)) == Counter([("a", 5), ("b", 2)])
    assert payloads_at(outputs, 6) == [("a", 4)]
    assert payloads_at(outputs, 5) == []
