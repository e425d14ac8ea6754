"""A bounded, exhaustive check of STRETCH Theorem 3 (with the corrected Alg. 4): an elastic
VSN run of O+ outputs O+'s output multiset, for every small input and reconfiguration.

Theorem 3 says VSN, with reconfigurations at any watermark, is equivalent to sequential O+
(Def. 1). The property tests sample operators, inputs, mappings and reconfiguration points;
this enumerates, for one operator:

* inputs: every assignment of at most ``max_tuples`` tuples to the sources, each with a
  timestamp in ``0..times-1`` (sorted per source) and a key from ``keys`` (payload
  ``(key, 1)``, or ``(x, y)`` = ``(key index, 0)`` for two-input joins);
* the initial parallelism 1..``max_parallelism``;
* requests: none, or one or two reconfigurations (a watermark in ``-1..times-1`` each,
  increasing, and any parallelism 1..``max_parallelism`` + 1);
* two key-to-instance mappings per epoch (all keys on instance 0; keys spread by a hash that
  changes per epoch) and ``seeds`` scheduling seeds (VSN's thread interleavings are drawn by
  the seed: these are samples, not every interleaving).

Each run's output multiset is compared with :func:`spec.oplus.semantics.expected_outputs`; a
counterexample is the first run that differs.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass
from itertools import product
from typing import Any, Callable, Iterator, Sequence

from reference.oplus.executors import all_tuples
from reference.oplus.vsn import Request, run_vsn
from spec.oplus.model import OPlus, StreamTuple
from spec.oplus.semantics import expected_outputs
from spec.oplus.watermarks import SourceItem

Mapping = Callable[[Any], int]
Factory = Callable[[int, int], Mapping]


def _everything_on_zero(epoch: int, parallelism: int) -> Mapping:
    return lambda key: 0


def _spread(epoch: int, parallelism: int) -> Mapping:
    return lambda key: (sum(map(ord, repr(key))) + epoch) % parallelism


FACTORIES: tuple[Factory, ...] = (_everything_on_zero, _spread)


@dataclass(frozen=True)
class ElasticCheck:
    """``runs`` VSN runs over ``inputs`` inputs; ``reconfigured`` runs applied at least one
    reconfiguration; ``complete`` when the bound was covered within the budget;
    ``counterexample`` = (sources, parallelism, requests, seed) of a differing run."""

    inputs: int
    runs: int
    reconfigured: int
    complete: bool
    counterexample: tuple[Any, int, list[Request], int] | None


def inputs(sources: int, max_tuples: int, times: int, keys: Sequence[str],
           two_inputs: bool) -> Iterator[tuple[tuple[SourceItem, ...], ...]]:
    """Every input of the bound (module docstring)."""
    for count in range(1, max_tuples + 1):
        for placed in product(range(sources), repeat=count):
            for stamps in product(range(times), repeat=count):
                for chosen in product(range(len(keys)), repeat=count):
                    per: list[list[tuple[int, int]]] = [[] for _ in range(sources)]
                    for source, ts, key in zip(placed, stamps, chosen):
                        per[source].append((ts, key))
                    if any(p != sorted(p) for p in per):
                        continue  # each source is sorted; the other orders are duplicates
                    yield tuple(tuple(
                        StreamTuple(ts, index, position,
                                    (key, 0) if two_inputs else (keys[key], 1),
                                    input=index if two_inputs else 0)
                        for position, (ts, key) in enumerate(p)) for index, p in enumerate(per))


def request_lists(times: int, max_parallelism: int) -> list[list[Request]]:
    """No request, one, or two at increasing watermarks."""
    marks = range(-1, times)
    sizes = range(1, max_parallelism + 2)
    out: list[list[Request]] = [[]]
    out += [[Request(m, p)] for m in marks for p in sizes]
    out += [[Request(a, p), Request(b, q)] for a in marks for b in marks if a < b
            for p in sizes for q in sizes]
    return out


def check_theorem_3(op: OPlus, *, sources: int = 1, max_tuples: int = 2, times: int = 3,
                    keys: Sequence[str] = ("a", "b"), max_parallelism: int = 2, seeds: int = 2,
                    budget: float = 20.0) -> ElasticCheck:
    """Every run of the bound (module docstring) against the spec."""
    deadline = time.monotonic() + budget
    requests = request_lists(times, max_parallelism)
    cases = list(inputs(sources, max_tuples, times, keys, op.inputs == 2))
    runs = reconfigured = 0
    for srcs in cases:
        expected = expected_outputs(op, all_tuples(srcs))
        for parallelism, reqs, factory, seed in product(range(1, max_parallelism + 1), requests,
                                                        FACTORIES, range(seeds)):
            if time.monotonic() > deadline:
                return ElasticCheck(len(cases), runs, reconfigured, False, None)
            result = run_vsn(op, srcs, parallelism, factory, reqs, random.Random(seed))
            runs += 1
            reconfigured += bool(result.reconfigurations)
            if Counter(result.outputs) != expected:
                return ElasticCheck(len(cases), runs, reconfigured, False,
                                    (srcs, parallelism, reqs, seed))
    return ElasticCheck(len(cases), runs, reconfigured, True, None)
