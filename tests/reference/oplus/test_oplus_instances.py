"""Theorem 2: A, A+, J, J+ as O+ instances have the directly defined semantics; the
shipped operators are those instances."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from hypothesis import given, settings, strategies as st

from spec.oplus.instances import (
    aggregate,
    aggregate_plus,
    direct_aggregate_plus,
    direct_join_plus,
    direct_sliding_join,
    join,
    join_plus,
)
from spec.oplus.model import StreamTuple, WindowType
from spec.oplus.semantics import expected_outputs
from spec.oplus.windows import WindowSpec
from reference.oplus.executors import all_tuples, run_sequential
from reference.oplus.operators.joins import band_match, forward, scalejoin
from reference.oplus.operators.sliding_sum import sliding_sum
from reference.oplus.operators.text import (
    hashtags_of,
    longest_tweet,
    pairs_of,
    paircount,
    wordcount,
    words_of,
)

from support.oplus_gen import sources, windows

wts = st.sampled_from([WindowType.SINGLE, WindowType.MULTI])


def _sum(key: Any, tuples: Sequence[StreamTuple]) -> tuple[Any, ...]:
    return ((key, sum(t.payload[1] for t in tuples)),)


def _ordered(key: Any, tuples: Sequence[StreamTuple]) -> tuple[Any, ...]:
    return ((key, tuple(t.payload for t in tuples)),)  # order-sensitive f_A


@settings(max_examples=150)
@given(windows(), wts, st.integers(1, 3).flatmap(lambda n: sources("sliding-sum", n)))
def test_aggregate_as_oplus(spec: WindowSpec, wt: WindowType, srcs: Any) -> None:
    tuples = all_tuples(srcs)
    for f_a in (_sum, _ordered):
        op = aggregate("A", spec, lambda t: t.payload[0], f_a, wt)
        direct = direct_aggregate_plus(spec, lambda t: frozenset({t.payload[0]}), f_a, tuples)
        assert expected_outputs(op, tuples) == direct
        assert Counter(run_sequential(op, srcs).outputs) == direct


@settings(max_examples=150)
@given(windows(), wts, st.integers(1, 3).flatmap(lambda n: sources("wordcount", n)))
def test_aggregate_plus_as_oplus(spec: WindowSpec, wt: WindowType, srcs: Any) -> None:
    tuples = all_tuples(srcs)

    def count(key: Any, group: Sequence[StreamTuple]) -> tuple[Any, ...]:
        return ((str(key), len(group)),)

    def longest(key: Any, group: Sequence[StreamTuple]) -> tuple[Any, ...]:
        return ((str(key), max(len(t.payload) for t in group)),)

    op = aggregate_plus("A+", spec, words_of, count, wt)
    assert expected_outputs(op, tuples) == direct_aggregate_plus(spec, words_of, count, tuples)
    # the shipped operators (incremental states) are the same A+
    assert expected_outputs(wordcount(spec, wt), tuples) == direct_aggregate_plus(
        spec, words_of, count, tuples)
    assert expected_outputs(longest_tweet(spec, wt), tuples) == direct_aggregate_plus(
        spec, hashtags_of, longest, tuples)
    pairs = paircount(spec, wt, 2)
    assert expected_outputs(pairs, tuples) == direct_aggregate_plus(
        spec, lambda t: pairs_of(t.payload, 2), count, tuples)


@settings(max_examples=150)
@given(windows(), wts, st.integers(1, 3).flatmap(lambda n: sources("sliding-sum", n)))
def test_sliding_sum_is_the_sum_aggregate(spec: WindowSpec, wt: WindowType, srcs: Any) -> None:
    tuples = all_tuples(srcs)
    assert expected_outputs(sliding_sum(spec, wt), tuples) == direct_aggregate_plus(
        spec, lambda t: frozenset({t.payload[0]}), _sum, tuples)


def _match(key: Any, left: StreamTuple, right: StreamTuple) -> Any:
    return (key, left.ts, right.ts) if abs(left.payload[0] - right.payload[0]) <= 2 else None


@settings(max_examples=150)
@given(windows(), sources("join-plus", 2))
def test_join_and_join_plus_as_oplus(spec: WindowSpec, srcs: Any) -> None:
    tuples = all_tuples(srcs)
    j = join("J", spec, lambda t: t.payload[1] % 2, _match)
    assert expected_outputs(j, tuples) == direct_join_plus(
        spec, lambda t: frozenset({t.payload[1] % 2}), _match, tuples)

    def keys(t: StreamTuple) -> frozenset[int]:
        return frozenset({t.payload[1] % 2, t.payload[1] % 3 + 10})

    jp = join_plus("J+", spec, keys, _match)
    assert expected_outputs(jp, tuples) == direct_join_plus(spec, keys, _match, tuples)
    assert Counter(run_sequential(jp, srcs).outputs) == direct_join_plus(spec, keys, _match,
                                                                         tuples)


@settings(max_examples=150)
@given(st.integers(1, 8), st.integers(1, 5), st.integers(0, 3), sources("scalejoin", 2))
def test_scalejoin_is_the_band_join(size: int, keys: int, band: int, srcs: Any) -> None:
    tuples = all_tuples(srcs)

    def pair(left: StreamTuple, right: StreamTuple) -> Any:
        if not band_match(left, right, band):
            return None
        return ("match", ((left.ts, *left.payload), (right.ts, *right.payload)))

    assert expected_outputs(scalejoin(size, keys, band), tuples) == direct_sliding_join(
        size, pair, tuples)


@settings(max_examples=100)
@given(st.integers(1, 4), sources("forward", 2))
def test_forward_outputs_each_tuple_once_per_key(keys: int, srcs: Any) -> None:
    tuples = all_tuples(srcs)
    expected = Counter({})
    for t in tuples:
        for k in range(keys):
            expected[(t.ts + 1, (str(k), t.payload))] += 1
    got = Counter((o.ts, o.payload) for o in expected_outputs(forward(keys), tuples).elements())
    assert got == expected


def test_paircount_distances() -> None:
    assert pairs_of("a b c d", 1) == {"a b", "b c", "c d"}
    assert pairs_of("a b c d", 3) == {"a b", "a c", "a d", "b c", "b d", "c d"}
    assert pairs_of("a b c d e", None) == pairs_of("a b c d e", 4)
    assert hashtags_of(StreamTuple(0, 0, 0, "#a # b #a #c")) == {"#a", "#c"}
