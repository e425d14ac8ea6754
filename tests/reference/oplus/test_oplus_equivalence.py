"""Sequential, SN, VSN and elastic VSN runs of O+ all produce O+'s output multiset
(STRETCH Def. 1, Observation 2, Theorem 3), for random operators, inputs, watermarks,
key-to-instance mappings, reconfiguration points and interleavings."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings, strategies as st, find

from spec.oplus.semantics import expected_outputs, multiset_difference
from reference.oplus.executors import all_tuples, run_sequential
from reference.oplus.sn import run_sn
from reference.oplus.vsn import Request, run_vsn

from support.oplus_gen import Case, cases, mapping_factories, requests


def _explain(case: Case, mode: str, observed: list) -> str:  # type: ignore[type-arg]
    missing, extra = multiset_difference(expected_outputs(case.op, all_tuples(case.sources)),
                                         observed)
    return f"{mode} on {case.kind}: missing {missing[:5]}, extra {extra[:5]}"


@settings(max_examples=100)
@given(cases())
def test_sequential_equals_spec(case: Case) -> None:
    observed = run_sequential(case.op, case.sources).outputs
    assert Counter(observed) == expected_outputs(case.op, all_tuples(case.sources)), \
        _explain(case, "sequential", observed)


@settings(max_examples=100)
@given(cases(), st.integers(1, 4), mapping_factories(), st.integers(0, 2**16))
def test_sn_equals_spec(case: Case, parallelism: int, factory, seed: int) -> None:  # type: ignore[no-untyped-def]
    result = run_sn(case.op, case.sources, parallelism, factory(0, parallelism),
                    random.Random(seed))
    assert Counter(result.outputs) == expected_outputs(case.op, all_tuples(case.sources)), \
        _explain(case, "sn", result.outputs)


@settings(max_examples=100)
@given(cases(), st.integers(1, 4), mapping_factories(), st.integers(0, 2**16))
def test_static_vsn_equals_spec(case: Case, parallelism: int, factory, seed: int) -> None:  # type: ignore[no-untyped-def]
    result = run_vsn(case.op, case.sources, parallelism, factory, rng=random.Random(seed))
    assert result.duplicated == 0 and result.copies == result.tuples
    assert Counter(result.outputs) == expected_outputs(case.op, all_tuples(case.sources)), \
        _explain(case, "vsn", result.outputs)


@settings(max_examples=150)
@given(cases(max_len=9), st.integers(1, 4), mapping_factories(), requests(),
       st.integers(0, 2**16))
def test_elastic_vsn_equals_spec(case: Case, parallelism: int, factory, points, seed: int) -> None:  # type: ignore[no-untyped-def]
    reqs = [Request(mark, size) for mark, size in points]
    result = run_vsn(case.op, case.sources, parallelism, factory, reqs, random.Random(seed))
    assert Counter(result.outputs) == expected_outputs(case.op, all_tuples(case.sources)), \
        _explain(case, "elastic vsn", result.outputs)


def test_reconfigurations_do_happen() -> None:
    """Guard against a vacuous elastic property: most generated runs with requests apply
    at least one reconfiguration, growing and shrinking."""
    grow = find(st.tuples(cases(["sliding-sum"], 9), requests(), st.integers(0, 99)),
                lambda x: any(e.after > e.before for e in run_vsn(
                    x[0].op, x[0].sources, 1, lambda e, n: (lambda k: hash(k) % n),
                    [Request(m, s) for m, s in x[1]], random.Random(x[2])).reconfigurations))
    assert grow is not None
    shrink = find(st.tuples(cases(["sliding-sum"], 9), requests(), st.integers(0, 99)),
                  lambda x: any(e.after < e.before for e in run_vsn(
                      x[0].op, x[0].sources, 4, lambda e, n: (lambda k: hash(k) % n),
                      [Request(m, s) for m, s in x[1]], random.Random(x[2])).reconfigurations))
    assert shrink is not None
